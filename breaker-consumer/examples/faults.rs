//! What brokers and handlers do to a consumer, on a real Redis of the example's own: an
//! outage of the handler's dependency, handlers that panic on a few poison messages, and a
//! Redis restart that loses every stream and group.
//!
//! ```sh
//! cargo run --release --example faults --features redis    # needs redis-server on the PATH
//! ```
//!
//! 2 000 orders at 100 a second to 8 handlers; the carrier API is down for 20 s from 0:04; 14
//! orders panic the handler; after the backlog drains, Redis is killed and started again
//! empty, and 700 more orders are published. The table says what was handled, how often, what
//! was lost and what went to the dead letters, as the consumer and as Redis count them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_consumer::redis::RedisStream;
use breaker_consumer::{CancellationToken, Consumer, DeliveryOf, Failure, Handled, Status};
use breaker_runtime::{Breaker, Config, IsFailure, State};
use breaker_test_servers::RedisServer;
use redis::aio::MultiplexedConnection;
use tokio::time::Instant;

const STREAM: &str = "orders";
const GROUP: &str = "shipping";
const RATE: u32 = 100;

#[derive(Debug, thiserror::Error, IsFailure)]
#[error("the carrier API is down")]
struct CarrierDown;

/// Order `n` panics the handler: 14 of the first 2 000.
fn poison(n: u64) -> bool {
    n < 2_000 && n % 150 == 7
}

/// How many of `orders` panic the handler.
fn poisoned(orders: std::ops::Range<u64>) -> usize {
    orders.filter(|&n| poison(n)).count()
}

/// What the handlers did, order by order.
#[derive(Default)]
struct Ledger {
    /// Successful handlings of each order.
    shipped: Mutex<HashMap<u64, u32>>,
    carrier_down: AtomicBool,
    /// Circuit openings, and those while the carrier was up.
    openings: AtomicU64,
    openings_while_up: AtomicU64,
}

impl Ledger {
    fn shipped(&self, orders: std::ops::Range<u64>) -> (usize, usize) {
        let shipped = self.shipped.lock().unwrap();
        let once = orders
            .clone()
            .filter(|n| shipped.get(n) == Some(&1))
            .count();
        let more = orders
            .filter(|n| shipped.get(n).is_some_and(|c| *c > 1))
            .count();
        (once, more)
    }
}

/// The example's own connection, with no response timeout: on a busy machine the client's
/// default 500 ms ran out on an `XADD`.
async fn connect(server: &RedisServer) -> MultiplexedConnection {
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(None)
        .set_response_timeout(None);
    redis::Client::open(server.url())
        .unwrap()
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .expect("the example's own Redis answers")
}

/// Publishes orders `from..to` at `RATE` a second; `during` runs before each.
async fn publish(
    conn: &mut MultiplexedConnection,
    orders: std::ops::Range<u64>,
    during: impl Fn(Duration),
) {
    let start = Instant::now();
    let every = Duration::from_secs(1) / RATE;
    for (i, n) in orders.enumerate() {
        tokio::time::sleep_until(start + every * u32::try_from(i).unwrap_or(u32::MAX)).await;
        during(start.elapsed());
        let _: String = redis::cmd("XADD")
            .arg(STREAM)
            .arg("*")
            .arg("n")
            .arg(n)
            .query_async(conn)
            .await
            .expect("published");
    }
}

async fn xlen(conn: &mut MultiplexedConnection, key: &str) -> u64 {
    redis::cmd("XLEN")
        .arg(key)
        .query_async(conn)
        .await
        .unwrap_or(0)
}

/// Waits until `done`, for at most `limit`; how long it took, if it happened.
async fn until(limit: Duration, mut done: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > limit {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Some(start.elapsed())
}

#[tokio::main]
async fn main() {
    let mut server = RedisServer::start();
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .name("carrier")
            .threshold(50.0)
            .count_window(20)
            .probes(2)
            .break_duration(Duration::from_secs(1))
            .max_break_duration(Duration::from_secs(5))
            .timeout(Duration::from_secs(1))
            .build()
            .expect("a valid configuration"),
    ));
    let ledger = Arc::new(Ledger::default());
    let _openings = breaker.on_transition({
        let ledger = Arc::clone(&ledger);
        move |t| {
            if t.to == State::Open {
                ledger.openings.fetch_add(1, Ordering::SeqCst);
                if !ledger.carrier_down.load(Ordering::SeqCst) {
                    ledger.openings_while_up.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
    });
    let source = RedisStream::connect(&server.url(), STREAM, GROUP, "worker-1")
        .await
        .expect("the consumer connects")
        .redeliver_after(Duration::from_secs(3))
        .max_deliveries(3);
    let consumer = Arc::new(
        Consumer::builder(source, Arc::clone(&breaker))
            .concurrency(8)
            .build(),
    );
    let shutdown = CancellationToken::new();
    let worker = tokio::spawn({
        let (consumer, ledger, shutdown) =
            (Arc::clone(&consumer), Arc::clone(&ledger), shutdown.clone());
        async move {
            let handler = move |delivery: DeliveryOf<RedisStream>, _cancelled| {
                let ledger = Arc::clone(&ledger);
                async move {
                    let n: u64 = delivery
                        .payload
                        .get("n")
                        .and_then(|n| std::str::from_utf8(n).ok()?.parse().ok())
                        .unwrap_or(u64::MAX);
                    if poison(n) {
                        panic!("order {n} has no address");
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    if ledger.carrier_down.load(Ordering::SeqCst) {
                        return Err(Failure::Retry(CarrierDown));
                    }
                    *ledger.shipped.lock().unwrap().entry(n).or_default() += 1;
                    Ok(Handled::Done)
                }
            };
            consumer.run(handler, shutdown).await
        }
    });

    // The outage, then the poison among steady traffic.
    let mut conn = connect(&server).await;
    publish(&mut conn, 0..2_000, |at| {
        let down = at >= Duration::from_secs(4) && at < Duration::from_secs(24);
        ledger.carrier_down.store(down, Ordering::SeqCst);
    })
    .await;
    ledger.carrier_down.store(false, Ordering::SeqCst);
    let drained = until(Duration::from_secs(60), || {
        let (once, more) = ledger.shipped(0..2_000);
        let poisoned = poisoned(0..2_000);
        once + more + poisoned >= 2_000 && consumer.stats().dead_letters() >= poisoned as u64
    })
    .await;
    let before = consumer.stats();
    let dead_on_redis = xlen(&mut conn, &format!("{STREAM}:dead")).await;

    // Redis loses everything.
    server.restart();
    let restarted = Instant::now();
    let mut conn = connect(&server).await;
    // When the consumer was first seen degraded after the restart, why, and when it was
    // first seen running again after that.
    let degraded = Arc::new(Mutex::new((None, None)));
    let watch = tokio::spawn({
        let (consumer, degraded) = (Arc::clone(&consumer), Arc::clone(&degraded));
        async move {
            loop {
                let status = consumer.status();
                {
                    let mut seen = degraded.lock().unwrap();
                    match status {
                        Status::Degraded { reason, .. } => {
                            seen.0.get_or_insert((restarted.elapsed(), reason));
                        }
                        _ if seen.0.is_some() => {
                            seen.1.get_or_insert(restarted.elapsed());
                        }
                        _ => {}
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    });
    publish(&mut conn, 2_000..2_700, |_| {}).await;
    let recovered = until(Duration::from_secs(60), || {
        let (once, more) = ledger.shipped(2_000..2_700);
        once + more == 700
    })
    .await;
    watch.abort();
    shutdown.cancel();
    let stats = worker.await.expect("the worker ends");

    let (once, twice) = ledger.shipped(0..2_000);
    let (once_after, twice_after) = ledger.shipped(2_000..2_700);
    let row = |name: &str, value: String| println!("{name:<58}{value:>16}");
    let secs =
        |d: Option<Duration>| d.map_or("never".to_owned(), |d| format!("{:.1} s", d.as_secs_f64()));
    row("orders published before the restart", "2000".into());
    row("  shipped exactly once", once.to_string());
    row("  shipped more than once", twice.to_string());
    let dead = usize::try_from(before.dead_letters()).unwrap_or(usize::MAX);
    let lost = 2_000_usize
        .saturating_sub(once + twice)
        .saturating_sub(dead);
    row(
        "  lost (neither shipped nor dead-lettered)",
        lost.to_string(),
    );
    row(
        "  all settled after the last order (0:20; carrier up at 0:24)",
        secs(drained),
    );
    row(
        "circuit openings, all / while the carrier was up",
        format!(
            "{} / {}",
            ledger.openings.load(Ordering::SeqCst),
            ledger.openings_while_up.load(Ordering::SeqCst)
        ),
    );
    row("handler panics", before.panics.to_string());
    row(
        "dead letters: consumer / XLEN orders:dead",
        format!("{} / {dead_on_redis}", before.dead_letters()),
    );
    row(
        "  of those at the delivery limit",
        before.limit_reached.to_string(),
    );
    let (degraded, running) = degraded.lock().unwrap().clone();
    row(
        "Redis restarted empty: degraded from / to",
        format!(
            "{} / {}",
            secs(degraded.as_ref().map(|d| d.0)),
            secs(running)
        ),
    );
    if let Some((_, reason)) = &degraded {
        println!("  reason: {reason}");
    }
    row("orders published after the restart", "700".into());
    row(
        "  shipped exactly once / more than once",
        format!("{once_after} / {twice_after}"),
    );
    row(
        "  all shipped after the restart within",
        secs(recovered.map(|_| restarted.elapsed())),
    );
    row("source errors", stats.source_errors.to_string());
}
