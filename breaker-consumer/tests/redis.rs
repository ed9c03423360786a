//! The scenario against a real Redis: 500 entries, a downstream that fails for a
//! stretch and recovers, and the broker's own records as the judge.

#![cfg(feature = "redis")]

mod support;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_consumer::redis::{Fields, RedisStream};
use breaker_consumer::{CancellationToken, Consumer, Delivery, Handled, Status};
use breaker_runtime::{Breaker, Config, State};
use breaker_test_servers::RedisServer;
use redis::AsyncConnectionConfig;
use redis::aio::MultiplexedConnection;
use redis::streams::{StreamInfoGroupsReply, StreamPendingCountReply};
use support::{Downstream, ProbeWatch, Running, Skipped, quiet_while_open, wait_until};

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
