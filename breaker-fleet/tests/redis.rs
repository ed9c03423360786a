//! The Redis transport against a real `redis-server`, with members in one process: its
//! scripts, its feed, and what happens when Redis goes away and comes back.

#![cfg(feature = "redis-server-tests")]

use std::sync::Arc;
use std::time::Duration;

use breaker_fleet::{Connection, Decision, Fleet, News, Options, RedisFleet, Tally, Transport};
use breaker_runtime::{Breaker, Config, State, Verdict};
use breaker_test_servers::RedisServer;
use tokio::sync::mpsc::unbounded_channel;

/// The longest a member leaves between two attempts to reach Redis: its connection tries
/// again once after 100 ms and a jitter of up to as much, then anew at the member's next flush
/// (20 ms); rounded up to the 250 ms cap `RedisFleet` puts on that backoff.
const RETRY: Duration = Duration::from_millis(250);

fn breaker() -> Arc<Breaker> {
    Arc::new(Breaker::new(
        Config::builder()
            .name("payments")
            .count_window(20)
            .min_calls(10)
            .probes(1)
            .break_duration(Duration::from_millis(300))
            .build()
            .unwrap(),
    ))
}

async fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_counts_finished_buckets_and_the_lease_is_fenced() {
    let server = RedisServer::start();
    let fleet = RedisFleet::new(&server.url()).unwrap();
    let bucket = Duration::from_millis(50);
    // The window holds a bucket for far longer than this test takes between two flushes (the
    // longest span whose buckets stay 50 ms wide): its claim is which buckets count, not how
    // long they last.
    let span = Duration::from_secs(30);
    let delta = Tally {
        calls: 10,
        failures: 4,
        slow: 1,
    };
    let now = fleet.flush("payments", span, bucket, delta).await.unwrap();
    assert_eq!(
        now,
        Tally::default(),
        "the bucket still filling is not judged"
    );
    tokio::time::sleep(Duration::from_millis(120)).await;
    let later = fleet
        .flush("payments", span, bucket, Tally::default())
        .await
        .unwrap();
    assert_eq!(later, delta, "a finished bucket is");
    fleet.clear("payments").await.unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    let cleared = fleet
        .flush("payments", span, bucket, Tally::default())
        .await
        .unwrap();
    assert_eq!(cleared, Tally::default());

    // Held for longer than this test could take, so that only the holder's own acts end it...
    let held = Duration::from_secs(600);
    let first = fleet.lease("payments", 1, held).await.unwrap();
    assert!(first.is_some(), "a free lease is taken");
    assert_eq!(
        fleet.lease("payments", 2, held).await.unwrap(),
        None,
        "a held one is not"
    );
    assert_eq!(
        fleet.lease("payments", 1, held).await.unwrap(),
        first,
        "its holder renews it"
    );
    fleet.release("payments", 2).await.unwrap();
    assert_eq!(
        fleet.lease("payments", 2, held).await.unwrap(),
        None,
        "only its holder gives it back"
    );
    // ...and renewed for a short while, to run out.
    let ttl = Duration::from_millis(300);
    assert_eq!(fleet.lease("payments", 1, ttl).await.unwrap(), first);
    tokio::time::sleep(ttl + Duration::from_millis(50)).await;
    let second = fleet.lease("payments", 2, ttl).await.unwrap();
    assert!(
        second > first,
        "expired, it goes to another with a greater token: {second:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn news_is_published_and_the_stored_opening_tells_the_time_left() {
    let server = RedisServer::start();
    let fleet = RedisFleet::new(&server.url()).unwrap();
    let (inbox, mut heard) = unbounded_channel();
    let _listening = fleet.listen(inbox);
    assert_eq!(
        heard.recv().await,
        Some(breaker_fleet::Heard::Connected(true))
    );
    let open = News {
        breaker: "payments".into(),
        origin: 9,
        generation: fleet.generation("payments").await.unwrap(),
        decision: Decision::Open {
            remaining: Duration::from_secs(30),
        },
    };
    let announced = std::time::Instant::now();
    fleet.announce(&open).await.unwrap();
    assert_eq!(
        heard.recv().await,
        Some(breaker_fleet::Heard::News(open.clone()))
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stored = fleet.latest("payments").await.unwrap().unwrap();
    let since = announced.elapsed();
    let Decision::Open { remaining } = stored.decision else {
        panic!("{stored:?}");
    };
    // Less the 200 ms slept at least, and at most all this test waited since it announced
    // (Redis counts what is left in whole milliseconds).
    let (most, least) = (
        Duration::from_millis(29_800),
        Duration::from_secs(30).saturating_sub(since + Duration::from_millis(1)),
    );
    assert!(
        remaining <= most && remaining >= least,
        "{remaining:?} left, {since:?} after it was announced"
    );

    let older = News {
        generation: open.generation - 1,
        decision: Decision::Close,
        ..open.clone()
    };
    fleet.announce(&older).await.unwrap();
    assert_eq!(
        fleet
            .latest("payments")
            .await
            .unwrap()
            .map(|n| n.generation),
        Some(open.generation),
        "older news does not replace the stored decision"
    );

    // A member's own decision, on a reading from before the stored one: dropped, neither
    // stored nor published. On a reading that has it: announced.
    let closing = |origin| News {
        origin,
        generation: open.generation + 1,
        decision: Decision::Close,
        ..open.clone()
    };
    let behind = fleet
        .announce_unless_decided(&closing(1), open.generation - 1)
        .await
        .unwrap();
    assert!(!behind, "a decision it has not heard of is stored");
    let up_to_date = fleet
        .announce_unless_decided(&closing(2), open.generation)
        .await
        .unwrap();
    assert!(up_to_date);
    assert_eq!(fleet.latest("payments").await.unwrap(), Some(closing(2)));
    assert_eq!(heard.recv().await, Some(breaker_fleet::Heard::News(older)));
    assert_eq!(
        heard.recv().await,
        Some(breaker_fleet::Heard::News(closing(2))),
        "the dropped one was not published"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_meeting_in_redis_open_together_and_probe_once() {
    let server = RedisServer::start();
    let breakers: Vec<Arc<Breaker>> = (0..3).map(|_| breaker()).collect();
    let members: Vec<Fleet> = breakers
        .iter()
        .map(|b| {
            let transport = RedisFleet::new(&server.url()).unwrap();
            let options = Options::default()
                .flush(Duration::from_millis(20))
                .lease(Duration::from_millis(500))
                .with(Arc::clone(b));
            Fleet::start(transport, options)
        })
        .collect();
    wait_until(Duration::from_secs(5), "every member connected", || {
        members.iter().all(|m| m.stats().connected)
    })
    .await;
    // Four failures in each: twelve in the fleet, over its min_calls, while each stays under.
    for b in &breakers {
        for _ in 0..4 {
            b.try_acquire().unwrap().record(Verdict::Failure);
        }
    }
    wait_until(Duration::from_secs(2), "the fleet open everywhere", || {
        breakers.iter().all(|b| b.state() == State::Open)
    })
    .await;
    // The break ends: exactly one member probes; its success closes every member.
    let mut probes = 0;
    wait_until(
        Duration::from_secs(5),
        "the probe to close the fleet",
        || {
            for b in &breakers {
                if let Ok(permit) = b.try_acquire() {
                    if permit.is_probe() {
                        probes += 1;
                    }
                    permit.record(Verdict::Success);
                }
            }
            breakers.iter().all(|b| b.state() == State::Closed)
        },
    )
    .await;
    assert_eq!(probes, 1, "one probe for the fleet");
    let leases: u64 = members.iter().map(|m| m.stats().leases).sum();
    assert_eq!(leases, 1);
    for m in members {
        m.leave().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_gone_leaves_every_breaker_to_itself_and_the_member_rejoins_when_it_is_back() {
    let mut server = RedisServer::start();
    let b = breaker();
    let member = Fleet::start(
        RedisFleet::new(&server.url()).unwrap(),
        Options::default()
            .flush(Duration::from_millis(20))
            .with(Arc::clone(&b)),
    );
    wait_until(Duration::from_secs(5), "connected", || {
        member.stats().connected
    })
    .await;
    let killed = std::time::Instant::now();
    server.kill();
    wait_until(Duration::from_secs(3), "the loss seen", || {
        !member.stats().connected
    })
    .await;
    let seen_lost = killed.elapsed();
    // What waiting on the gone Redis costs, now: one call of the same transport.
    let asked = std::time::Instant::now();
    let answer = RedisFleet::new(&server.url())
        .unwrap()
        .generation("payments")
        .await;
    let waiting = asked.elapsed();
    assert!(answer.is_err(), "Redis is gone: {answer:?}");
    // Calls go on, decided locally, without waiting on anything.
    let started = std::time::Instant::now();
    for _ in 0..10 {
        b.try_acquire().unwrap().record(Verdict::Failure);
    }
    let took = started.elapsed();
    assert_eq!(b.state(), State::Open, "opened on its own evidence");
    // A caller that waited on the fleet would wait about as long as that call did.
    assert!(
        took < waiting / 2,
        "10 calls took {took:?}, a call to the gone Redis {waiting:?}"
    );
    server.restart();
    let back = std::time::Instant::now();
    wait_until(Duration::from_secs(5), "rejoined", || {
        member.stats().connected
    })
    .await;
    // Seeing the loss and the return both take the member's flushes, its runtime and this
    // test's polling, as long as the loss took to be seen here; only the pause before the next
    // attempt to connect is the rejoining's own.
    let rejoined = back.elapsed();
    assert!(
        rejoined <= seen_lost + RETRY,
        "rejoined {rejoined:?} after Redis answered, the loss seen {seen_lost:?} after it went"
    );
    member.leave().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_tells_when_redis_goes_and_comes_back() {
    let mut server = RedisServer::start();
    let member = Fleet::start(
        RedisFleet::new(&server.url()).unwrap(),
        Options::default()
            .flush(Duration::from_millis(20))
            .with(breaker()),
    );
    let mut connection = member.connection();
    // Each change as it comes, with the time it took from the moment waited for.
    let mut next = async |limit: Duration| {
        let started = std::time::Instant::now();
        tokio::time::timeout(limit, connection.changed())
            .await
            .unwrap_or_else(|_| panic!("no change within {limit:?}"))
            .expect("the member is there");
        (*connection.borrow_and_update(), started.elapsed())
    };
    assert_eq!(next(Duration::from_secs(5)).await.0, Connection::Connected);
    server.kill();
    let (lost, seen_lost) = next(Duration::from_secs(3)).await;
    assert_eq!(lost, Connection::Disconnected);
    server.restart();
    let (back, rejoined) = next(Duration::from_secs(5)).await;
    assert_eq!(back, Connection::Connected);
    assert!(
        rejoined <= seen_lost + RETRY,
        "rejoined {rejoined:?} after Redis answered, the loss seen {seen_lost:?} after it went"
    );
    // Back for good: no loss after it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stats = member.stats();
    assert_eq!(
        (stats.connection, stats.disconnects),
        (Connection::Connected, 1),
        "{stats:?}"
    );
    member.leave().await;
    assert_eq!(next(Duration::from_secs(1)).await.0, Connection::Left);
}
