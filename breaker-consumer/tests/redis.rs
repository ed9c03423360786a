//! The issue's scenario against a real Redis: 500 entries, a downstream that fails for a
//! stretch and recovers, and the broker's own records as the judge. Then Redis losing its data
//! under a running consumer (a restart without persistence, a `FLUSHALL`), and the dead letters
//! counted on every path against the dead-letter stream's length.

#![cfg(feature = "redis")]

mod support;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_consumer::redis::{Fields, RedisStream, StartFrom};
use breaker_consumer::{
    CancellationToken, Consumer, Delivery, Failure, Handled, Settlement, Source, Status, Want,
};
use breaker_runtime::{Breaker, Config, State};
use breaker_test_servers::RedisServer;
use redis::AsyncConnectionConfig;
use redis::aio::MultiplexedConnection;
use redis::streams::{
    StreamInfoGroup, StreamInfoGroupsReply, StreamPendingCountReply, StreamRangeReply,
};
use support::logs::Logs;
use support::{
    Downstream, DownstreamError, ProbeWatch, Running, Skipped, quiet_while_open, wait_until,
};

const STREAM: &str = "orders";
const GROUP: &str = "shipping";

/// What Redis says of the group: deliveries counted on pending entries, the last entry
/// handed out, entries pending.
#[derive(Debug, PartialEq, Eq)]
struct OnRecord {
    deliveries: usize,
    last_delivered: String,
    pending: usize,
}

async fn on_record(conn: &mut MultiplexedConnection) -> OnRecord {
    let pending: StreamPendingCountReply = redis::cmd("XPENDING")
        .arg(STREAM)
        .arg(GROUP)
        .arg("-")
        .arg("+")
        .arg(100_000)
        .query_async(conn)
        .await
        .unwrap();
    let groups: StreamInfoGroupsReply = redis::cmd("XINFO")
        .arg("GROUPS")
        .arg(STREAM)
        .query_async(conn)
        .await
        .unwrap();
    OnRecord {
        deliveries: pending.ids.iter().map(|p| p.times_delivered).sum(),
        last_delivered: groups.groups[0].last_delivered_id.clone(),
        pending: pending.ids.len(),
    }
}

/// The test's own connection, for Redis's records. It has no response timeout: it judges what
/// Redis holds, not how fast Redis answers, and the client's 500 ms default once ran out on a
/// machine busy with other work.
async fn connect(server: &RedisServer) -> MultiplexedConnection {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(None)
        .set_response_timeout(None);
    redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .unwrap()
}

/// Adds entries 0 to `count` - 1 to the stream, each with its number under `n`.
async fn publish(conn: &mut MultiplexedConnection, count: u32) {
    for n in 0..count {
        let _: String = redis::cmd("XADD")
            .arg(STREAM)
            .arg("*")
            .arg("n")
            .arg(n)
            .query_async(conn)
            .await
            .unwrap();
    }
}

/// Calls the downstream for entry `n` and notes `n` as handled once it succeeds.
fn handler(
    downstream: &Arc<Downstream>,
    handled: &Arc<Mutex<HashSet<u32>>>,
) -> impl Fn(Delivery<Fields, String>, CancellationToken) -> support::Answer + Send + Sync + 'static
{
    let (downstream, handled) = (Arc::clone(downstream), Arc::clone(handled));
    move |d, cancel| {
        let (downstream, handled) = (Arc::clone(&downstream), Arc::clone(&handled));
        Box::pin(async move {
            let n: u32 = std::str::from_utf8(&d.payload["n"])
                .unwrap()
                .parse()
                .unwrap();
            downstream.call(Some(&cancel)).await?;
            handled.lock().unwrap().insert(n);
            Ok(Handled::Done)
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_on_redis_moves_no_delivery_count_and_dead_letters_nothing() {
    let server = RedisServer::start();
    let mut conn = connect(&server).await;
    let source = RedisStream::connect(&server.url(), STREAM, GROUP, "worker-1")
        .await
        .unwrap()
        .block(Duration::from_millis(100))
        .redeliver_after(Duration::from_millis(300))
        .max_deliveries(4);
    publish(&mut conn, 500).await;

    let probes = 2;
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .count_window(10)
            .probes(probes)
            .break_duration(Duration::from_millis(800))
            .max_break_duration(Duration::from_secs(2))
            .no_timeout()
            .build()
            .unwrap(),
    ));
    let downstream = Downstream::new(Duration::from_millis(3));
    let watch = ProbeWatch::install(&breaker, &downstream);
    let handled = Arc::new(Mutex::new(HashSet::new()));
    let consumer = Arc::new(
        Consumer::builder(source, Arc::clone(&breaker))
            .concurrency(8)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream, &handled));

    wait_until(Duration::from_secs(30), "100 handled", || {
        handled.lock().unwrap().len() >= 100
    })
    .await;
    downstream.set_healthy(false);
    let mut breaks_checked = 0;
    let mut pauses = consumer.stats().pauses;
    let mut skipped = Skipped::default();
    let mut looked_at = None;
    let outage = std::time::Instant::now();
    // Until two breaks were read whole: a break the consumer was not quiet in before its end
    // (a busy machine) is skipped, not judged.
    while breaks_checked < 2 && outage.elapsed() < Duration::from_secs(30) {
        // A break is known by the probe rounds before it: one skipped is not looked at again.
        wait_until(Duration::from_secs(5), "an opening", || {
            breaker.state() == State::Open && Some(watch.rounds()) != looked_at
        })
        .await;
        let round = watch.rounds();
        looked_at = Some(round);
        // Judged from the consumer's own pause on, not from a guess at how long a read sent
        // just before the opening takes to land: once a busy machine took longer than 50 ms.
        if !quiet_while_open(&consumer, &breaker, &mut pauses).await {
            skipped.not_quiet += 1;
            continue;
        }
        let Status::Paused {
            resumes_at: Some(at),
        } = consumer.status()
        else {
            skipped.not_quiet += 1;
            continue;
        };
        let before = on_record(&mut conn).await;
        tokio::time::sleep_until(at - Duration::from_millis(100)).await;
        let after = on_record(&mut conn).await;
        // Read while the circuit was still open, with no probe round in between.
        if breaker.state() != State::Open || watch.rounds() != round {
            skipped.round_between += 1;
            continue;
        }
        assert_eq!(before, after, "while open, nothing read, nothing claimed");
        breaks_checked += 1;
        wait_until(Duration::from_secs(1), "the probe round", || {
            watch.rounds() > round
        })
        .await;
    }
    eprintln!("  checked {breaks_checked} breaks whole; skipped {skipped:?}");
    assert!(
        breaks_checked >= 2,
        "checked {breaks_checked} breaks; skipped {skipped:?}"
    );
    downstream.set_healthy(true);

    wait_until(Duration::from_secs(60), "every entry handled", || {
        handled.lock().unwrap().len() == 500
    })
    .await;
    wait_until(Duration::from_secs(10), "every entry acked", || {
        consumer.stats().acked >= 500
    })
    .await;
    let stats = running.stop().await;

    let dead: usize = redis::cmd("XLEN")
        .arg("orders:dead")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(dead, 0, "no entry dead-lettered because of the outage");
    let record = on_record(&mut conn).await;
    assert_eq!(record.pending, 0, "every entry acked: {record:?} {stats:?}");
    assert!(
        watch.peak() <= probes as usize,
        "half-open ran {} at once",
        watch.peak()
    );
    assert!(stats.pauses >= 2, "{stats:?}");
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_connection_to_redis_records_nothing_and_loses_nothing() {
    let server = RedisServer::start();
    let mut conn = connect(&server).await;
    let source = RedisStream::connect(&server.url(), STREAM, GROUP, "worker-1")
        .await
        .unwrap()
        .block(Duration::from_millis(100))
        .redeliver_after(Duration::from_millis(300));
    publish(&mut conn, 200).await;
    let breaker = support::breaker(10, 2, 30);
    let handled = Arc::new(Mutex::new(HashSet::new()));
    let downstream = Downstream::new(Duration::from_millis(5));
    let consumer = Arc::new(
        Consumer::builder(source, Arc::clone(&breaker))
            .concurrency(4)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream, &handled));
    wait_until(Duration::from_secs(30), "50 handled", || {
        handled.lock().unwrap().len() >= 50
    })
    .await;
    // Every client but this one loses its connection, as in a failover or a network cut.
    let killed: u64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .arg("SKIPME")
        .arg("yes")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(
        killed >= 2,
        "the consumer's two connections were cut ({killed})"
    );
    wait_until(Duration::from_secs(60), "every entry handled", || {
        handled.lock().unwrap().len() == 200
    })
    .await;
    // Judged by Redis: an ack whose reply the cut lost took effect all the same, so the
    // consumer's own count of acks may stay short.
    let start = std::time::Instant::now();
    let mut record = on_record(&mut conn).await;
    while record.pending > 0 && start.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        record = on_record(&mut conn).await;
    }
    let stats = running.stop().await;
    assert_eq!(record.pending, 0, "none lost: {record:?} {stats:?}");
    assert_eq!(breaker.state(), State::Closed);
    let snapshot = breaker.snapshot();
    assert_eq!(
        snapshot.failures, 0,
        "the cut recorded nothing: {snapshot:?}"
    );
    assert!(snapshot.last_opened.is_none(), "never opened: {snapshot:?}");
}

/// Adds entries 0 to `count` - 1 to the stream, each with its number under `n` and `phase`
/// under `phase`, and returns the last one's id.
async fn publish_phase(conn: &mut MultiplexedConnection, phase: &str, count: u32) -> String {
    let mut last = String::new();
    for n in 0..count {
        last = redis::cmd("XADD")
            .arg(STREAM)
            .arg("*")
            .arg("phase")
            .arg(phase)
            .arg("n")
            .arg(n)
            .query_async(conn)
            .await
            .unwrap();
    }
    last
}

/// What Redis says of the group, `None` if the stream or the group does not exist.
async fn group(conn: &mut MultiplexedConnection) -> Option<StreamInfoGroup> {
    let groups: redis::RedisResult<StreamInfoGroupsReply> = redis::cmd("XINFO")
        .arg("GROUPS")
        .arg(STREAM)
        .query_async(conn)
        .await;
    // "ERR no such key" once the stream is gone.
    groups.ok()?.groups.into_iter().find(|g| g.name == GROUP)
}

async fn xlen(conn: &mut MultiplexedConnection, stream: &str) -> usize {
    redis::cmd("XLEN")
        .arg(stream)
        .query_async(conn)
        .await
        .unwrap()
}

/// How many times each entry was handled, by its `phase` and `n`.
type Seen = Arc<Mutex<HashMap<(String, u32), u32>>>;

fn text(d: &Delivery<Fields, String>, field: &str) -> String {
    String::from_utf8(d.payload[field].clone()).unwrap()
}

/// Notes each entry it handles in `seen`, and answers `Done`.
fn counting(
    seen: &Seen,
) -> impl Fn(Delivery<Fields, String>, CancellationToken) -> support::Answer + Send + Sync + 'static
{
    let seen = Arc::clone(seen);
    move |d, _cancel| {
        let seen = Arc::clone(&seen);
        Box::pin(async move {
            let key = (text(&d, "phase"), text(&d, "n").parse().unwrap());
            *seen.lock().unwrap().entry(key).or_default() += 1;
            Ok(Handled::Done)
        })
    }
}

fn handled_of(seen: &Seen, phase: &str) -> usize {
    seen.lock()
        .unwrap()
        .keys()
        .filter(|(p, _)| p == phase)
        .count()
}

/// How Redis loses the stream and its group under a running consumer.
#[derive(Debug, Clone, Copy)]
enum Loss {
    /// The server killed and started again on its port. `RedisServer` runs it with
    /// `--save "" --appendonly no`, so it comes back empty: checked by a key set before.
    Restart,
    /// `FLUSHALL` on the same process.
    Flushall,
}

/// A consumer running while Redis loses its data, then 700 entries published: every one
/// handled once, and the group there again with nothing pending.
async fn data_lost_under_a_running_consumer(loss: Loss) {
    let mut server = RedisServer::start();
    let mut conn = connect(&server).await;
    // Claims after 5 s: an entry handled twice would be a second read, not a slow ack.
    let source = RedisStream::connect(&server.url(), STREAM, GROUP, "worker-1")
        .await
        .unwrap()
        .block(Duration::from_millis(100))
        .redeliver_after(Duration::from_secs(5));
    publish_phase(&mut conn, "before", 100).await;
    // A window that holds every call of the run, to show that none was a failure.
    let breaker = support::breaker(1000, 2, 30);
    let consumer = Arc::new(
        Consumer::builder(source, Arc::clone(&breaker))
            .concurrency(4)
            .build(),
    );
    let seen = Seen::default();
    let running = Running::start(Arc::clone(&consumer), counting(&seen));
    wait_until(Duration::from_secs(30), "the first 100 handled", || {
        handled_of(&seen, "before") == 100 && consumer.stats().acked >= 100
    })
    .await;

    let _: () = redis::cmd("SET")
        .arg("kept?")
        .arg(1)
        .query_async(&mut conn)
        .await
        .unwrap();
    match loss {
        Loss::Restart => {
            tokio::task::block_in_place(|| server.kill());
            // Redis down: the circuit stays closed, but nothing can be fetched, and the
            // status says so, and why.
            wait_until(Duration::from_secs(30), "the consumer degraded", || {
                matches!(consumer.status(), Status::Degraded { .. })
            })
            .await;
            let status = consumer.status();
            assert!(
                matches!(&status, Status::Degraded { reason, .. }
                    if reason.contains("unreachable") && reason.contains(STREAM)),
                "{status:?}"
            );
            tokio::task::block_in_place(|| server.restart());
            conn = connect(&server).await;
        }
        Loss::Flushall => {
            let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
        }
    }
    let kept: bool = redis::cmd("EXISTS")
        .arg("kept?")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(!kept, "{loss:?}: Redis came back with its data");

    let last = publish_phase(&mut conn, "after", 700).await;
    let start = std::time::Instant::now();
    while handled_of(&seen, "after") < 700 && start.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let handled = handled_of(&seen, "after");
    if handled < 700 {
        let stats = running.stop().await;
        panic!(
            "{loss:?}: {handled} of the 700 entries published after the loss handled in 60 s; \
             the group on record: {:?}; {stats:?}",
            group(&mut conn).await
        );
    }
    assert_eq!(
        consumer.status(),
        Status::Running,
        "{loss:?}: fetching again"
    );
    // Judged by Redis: the group exists again, was handed the last entry, holds none pending.
    let start = std::time::Instant::now();
    let mut record = group(&mut conn).await;
    while record.as_ref().is_none_or(|g| g.pending > 0) && start.elapsed() < Duration::from_secs(10)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
        record = group(&mut conn).await;
    }
    let stats = running.stop().await;
    let record = record.unwrap_or_else(|| panic!("{loss:?}: no group `{GROUP}` on `{STREAM}`"));
    assert_eq!(record.last_delivered_id, last, "{loss:?}: {record:?}");
    assert_eq!(record.pending, 0, "{loss:?}: {record:?} {stats:?}");
    let twice: Vec<_> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|((phase, _), times)| phase == "after" && **times > 1)
        .map(|(key, times)| (key.clone(), *times))
        .collect();
    assert!(
        twice.is_empty(),
        "{loss:?}: handled more than once: {twice:?}"
    );
    eprintln!("  {loss:?}: {stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_that_lost_the_data_recreates_the_group_and_consumes_what_comes_after() {
    data_lost_under_a_running_consumer(Loss::Restart).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flushall_recreates_the_group_and_consumes_what_comes_after() {
    data_lost_under_a_running_consumer(Loss::Flushall).await;
}

/// The source's own answers once the data is gone: an ack of a lost entry is settled, its
/// dead-lettering an error that writes nothing, and the next fetch re-creates the group and
/// reads what came since, in one call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settling_an_entry_lost_with_its_group() {
    let mut server = RedisServer::start();
    let mut conn = connect(&server).await;
    let source = RedisStream::connect(&server.url(), STREAM, GROUP, "worker-1")
        .await
        .unwrap()
        .block(Duration::from_millis(100));
    publish_phase(&mut conn, "before", 2).await;
    let got = source.fetch(Want::up_to(2)).await.unwrap();
    assert_eq!(got.len(), 2);
    // The source's calls below run on this thread: what they log is seen here.
    let (logs, _capturing) = Logs::capture();
    let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();

    // The entry is gone and no group will hand it out again: what an ack asks.
    source
        .settle(got[0].id.clone(), Settlement::Ack)
        .await
        .unwrap();
    // What a dead letter asks, keeping the entry, cannot be done: an error, nothing written.
    let error = source
        .settle(got[1].id.clone(), Settlement::DeadLetter)
        .await
        .expect_err("dead-lettering an entry the stream lost");
    let said = error.to_string();
    assert!(
        said.contains(&got[1].id) && said.contains("is gone"),
        "{said}"
    );
    assert_eq!(
        xlen(&mut conn, "orders:dead").await,
        0,
        "an empty dead letter"
    );

    // One fetch: the group re-created, and the entry added since read.
    publish_phase(&mut conn, "after", 1).await;
    let got = source.fetch(Want::up_to(10)).await.unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(text(&got[0], "phase"), "after");
    assert!(group(&mut conn).await.is_some(), "the group exists again");
    assert!(source.fetch(Want::up_to(10)).await.unwrap().is_empty());
    let warned = logs.take("WARN");
    assert_eq!(warned.len(), 1, "one warn for one re-creation: {warned:?}");
    for said in ["stream=orders", "group=shipping", "start=\"0\""] {
        assert!(warned[0].contains(said), "{said} in {warned:?}");
    }

    // Redis down: a fetch fails, and says so plainly.
    server.kill();
    let error = source
        .fetch(Want::up_to(10))
        .await
        .expect_err("a fetch with Redis down");
    let said = error.to_string();
    assert!(
        said.contains("unreachable") && said.contains(STREAM),
        "{said}"
    );
    assert!(
        logs.take("WARN").is_empty(),
        "no re-creation warned for an outage"
    );
}

/// A group created from new entries sees none of those before it, at connect and again when
/// Redis lost it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_started_from_new_entries_sees_only_those_added_after_its_creation() {
    let server = RedisServer::start();
    let mut conn = connect(&server).await;
    publish_phase(&mut conn, "before", 3).await;
    let source =
        RedisStream::connect_from(&server.url(), STREAM, GROUP, "worker-1", StartFrom::New)
            .await
            .unwrap()
            .block(Duration::from_millis(100));
    assert!(source.fetch(Want::up_to(10)).await.unwrap().is_empty());
    publish_phase(&mut conn, "after", 1).await;
    let got = source.fetch(Want::up_to(10)).await.unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(text(&got[0], "phase"), "after");

    let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.unwrap();
    // Added after the loss but before the group is created again: not for a group from `New`.
    publish_phase(&mut conn, "unseen", 1).await;
    assert!(source.fetch(Want::up_to(10)).await.unwrap().is_empty());
    publish_phase(&mut conn, "new", 1).await;
    let got = source.fetch(Want::up_to(10)).await.unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(text(&got[0], "phase"), "new");
}

/// A mixed run: a quarter of the entries succeed, a quarter the handler marks poison, a quarter
/// panic the handler, a quarter fail with a retry until they reach the delivery limit. The
/// consumer's dead letters are what the dead-letter stream holds, its acks what Redis acked,
/// nothing is left pending, and the panics recorded nothing in the breaker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_are_counted_on_every_path() {
    const EACH: u32 = 20;
    let server = RedisServer::start();
    let mut conn = connect(&server).await;
    let source = RedisStream::connect(&server.url(), STREAM, GROUP, "worker-1")
        .await
        .unwrap()
        .block(Duration::from_millis(100))
        // Longer than the breaker's timeout, as the consumer's rule asks: at 200 ms, a handler
        // slowed by its panic's backtrace on a busy machine had its entry claimed again while
        // it still ran, and the entry panicked twice (1 run of 10).
        .redeliver_after(Duration::from_secs(2))
        .max_deliveries(3);
    for n in 0..EACH * 4 {
        let kind = ["ok", "poison", "flaky", "panics"][(n % 4) as usize];
        let _: String = redis::cmd("XADD")
            .arg(STREAM)
            .arg("*")
            .arg("kind")
            .arg(kind)
            .arg("n")
            .arg(n)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    // A window that holds every call of the run, to show that none was a failure.
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .count_window(1000)
            .timeout(Duration::from_secs(1))
            .build()
            .unwrap(),
    ));
    let consumer = Arc::new(
        Consumer::builder(source, Arc::clone(&breaker))
            .concurrency(4)
            .build(),
    );
    // `Declined` is the downstream answering: the circuit stays closed throughout.
    let handler = |d: Delivery<Fields, String>, _cancel| -> support::Answer {
        let kind = text(&d, "kind");
        Box::pin(async move {
            match kind.as_str() {
                "ok" => Ok(Handled::Done),
                "poison" => Err(Failure::Permanent(DownstreamError::Declined)),
                "panics" => panic!("the handler cannot take this entry"),
                _ => Err(Failure::Retry(DownstreamError::Declined)),
            }
        })
    };
    let running = Running::start(Arc::clone(&consumer), handler);
    let start = std::time::Instant::now();
    let mut dead = 0;
    let mut record = group(&mut conn).await;
    while (dead < 3 * EACH as usize || record.as_ref().is_none_or(|g| g.pending > 0))
        && start.elapsed() < Duration::from_secs(30)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
        dead = xlen(&mut conn, "orders:dead").await;
        record = group(&mut conn).await;
    }
    let stats = running.stop().await;
    let record = record.unwrap();
    assert_eq!(record.pending, 0, "{record:?} {stats:?}");

    // Each poison and flaky entry dead-lettered once, with its fields.
    let letters: StreamRangeReply = redis::cmd("XRANGE")
        .arg("orders:dead")
        .arg("-")
        .arg("+")
        .query_async(&mut conn)
        .await
        .unwrap();
    let mut kinds: HashMap<String, HashSet<String>> = HashMap::new();
    for letter in &letters.ids {
        let original: String = letter.get("breaker-original-id").unwrap();
        let kind: String = letter.get("kind").unwrap();
        assert!(
            kinds.entry(kind).or_default().insert(original.clone()),
            "{original} dead-lettered twice"
        );
    }
    let count = |kind: &str| kinds.get(kind).map_or(0, HashSet::len);
    assert_eq!(
        (
            count("ok"),
            count("poison"),
            count("flaky"),
            count("panics")
        ),
        (0, EACH as usize, EACH as usize, EACH as usize),
        "{stats:?}"
    );
    assert_eq!(
        stats.dead_letters(),
        dead as u64,
        "the consumer's dead letters, against XLEN orders:dead: {stats:?}"
    );
    assert_eq!(stats.dead_lettered, u64::from(2 * EACH), "{stats:?}");
    assert_eq!(stats.panics, u64::from(EACH), "{stats:?}");
    assert_eq!(
        breaker.snapshot().failures,
        0,
        "a panic is no failure of Redis's downstream"
    );
    assert_eq!(stats.limit_reached, u64::from(EACH), "{stats:?}");
    // Redis acked every entry it handed out that is neither pending nor a dead letter.
    let read = record
        .entries_read
        .expect("Redis 7 counts the entries read");
    assert_eq!(read, 4 * EACH as usize, "{record:?}");
    assert_eq!(
        stats.acked,
        (read - record.pending - dead) as u64,
        "the consumer's acks, against Redis's: {record:?} {stats:?}"
    );
}

/// A handler that takes its own type, from the JSON in one field of each entry; an entry whose
/// field does not decode goes to the dead letters, unhandled.
#[cfg(feature = "json")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_takes_its_own_type_from_a_json_field() {
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Order {
        id: u32,
    }
    let server = RedisServer::start();
    let mut conn = connect(&server).await;
    for body in [r#"{"id": 1}"#, "{oops", r#"{"id": 3}"#] {
        let _: String = redis::cmd("XADD")
            .arg(STREAM)
            .arg("*")
            .arg("order")
            .arg(body)
            .query_async(&mut conn)
            .await
            .unwrap();
    }
    let source = RedisStream::connect(&server.url(), STREAM, GROUP, "worker-1")
        .await
        .unwrap()
        .block(Duration::from_millis(100));
    let consumer = Arc::new(Consumer::builder(source, support::breaker(100, 1, 30)).build());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let running = Running::start(
        Arc::clone(&consumer),
        breaker_consumer::json::json_field("order", {
            let seen = Arc::clone(&seen);
            move |order: Delivery<Order, _>, _cancelled| {
                seen.lock().unwrap().push(order.payload.id);
                async { Ok::<_, Failure<DownstreamError>>(Handled::Done) }
            }
        }),
    );
    let start = std::time::Instant::now();
    while xlen(&mut conn, "orders:dead").await < 1 || seen.lock().unwrap().len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{:?}",
            consumer.stats()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stats = running.stop().await;
    assert_eq!(*seen.lock().unwrap(), [1, 3]);
    assert_eq!((stats.acked, stats.dead_letters()), (2, 1));
    assert_eq!(xlen(&mut conn, "orders:dead").await, 1);
}

/// A claim that can come before the handler's timeout ends it is warned of at build, with both
/// figures; one after it is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redeliver_after_not_longer_than_the_timeout_is_warned_of() {
    let server = RedisServer::start();
    let built = |redeliver_after: u64| {
        let url = server.url();
        async move {
            let source = RedisStream::connect(&url, STREAM, GROUP, "worker-1")
                .await
                .unwrap()
                .redeliver_after(Duration::from_secs(redeliver_after));
            let breaker = Arc::new(Breaker::new(
                Config::builder()
                    .timeout(Duration::from_secs(2))
                    .build()
                    .unwrap(),
            ));
            let (logs, _capturing) = Logs::capture();
            let _consumer = Consumer::builder(source, breaker).build();
            logs.take("WARN")
        }
    };
    let warned = built(2).await;
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains("after 2s unsettled") && warned[0].contains("may run for 2s"),
        "{warned:?}"
    );
    assert_eq!(built(3).await, Vec::<String>::new());
}
