//! The worker demo: a queue worker whose downstream fails for a minute, without and with the
//! breaker.
//!
//! ```sh
//! cargo run --release --example worker                      # in memory, on tokio's paused clock
//! cargo run --release --example worker --features redis -- --redis redis://127.0.0.1:6379/
//! cargo run --release --example worker --features amqp -- --amqp amqp://guest:guest@127.0.0.1:5672/%2f
//! ```
//!
//! Orders arrive at 20 a second for three minutes; shipping each takes 50 ms against a carrier
//! API that is down from 0:40 to 1:40. The queue dead-letters a message after 5 deliveries.
//! Without the breaker the worker keeps taking messages and failing them, and every message
//! that arrives during the outage burns its deliveries and is dead-lettered. With it, the
//! worker stops pulling while the circuit is open, probes with a couple of messages after each
//! break, and drains the backlog once the carrier is back. Against Redis or RabbitMQ the same
//! runs ten times faster on the real clock (on RabbitMQ, quorum queues with a delivery limit
//! and a dead-letter queue, made afresh for each run).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use breaker_consumer::{
    CancellationToken, Consumer, Delivery, Failure, Handled, MemoryQueue, Source, Stats,
};
use breaker_runtime::{Breaker, Config, IsFailure};
use tokio::time::Instant;

#[derive(Debug, IsFailure)]
enum ShipError {
    CarrierDown,
}

impl std::fmt::Display for ShipError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the carrier API is down")
    }
}

impl std::error::Error for ShipError {}

/// The scenario's clock: every duration is divided by `speedup`.
#[derive(Debug, Clone, Copy)]
struct Scenario {
    speedup: u32,
    messages_per_second: u32,
    run_for: Duration,
    outage: (Duration, Duration),
    work: Duration,
    max_deliveries: u32,
}

impl Scenario {
    fn default_speed() -> Scenario {
        Scenario {
            speedup: 1,
            messages_per_second: 20,
            run_for: Duration::from_secs(180),
            outage: (Duration::from_secs(40), Duration::from_secs(100)),
            work: Duration::from_millis(50),
            max_deliveries: 5,
        }
    }

    fn scaled(self, d: Duration) -> Duration {
        d / self.speedup
    }
}

/// What one run of the scenario shows.
#[derive(Debug, Clone, Copy)]
struct Figures {
    published: u64,
    dead_lettered: u64,
    burned: u64,
    calls_during_outage: u64,
    drained_after: Option<Duration>,
    stats: Stats,
}

/// The carrier API: down during the outage, counting the calls that reach it then.
struct Carrier {
    down: AtomicBool,
    calls_while_down: AtomicU64,
    work: Duration,
}

impl Carrier {
    async fn ship(&self) -> Result<(), ShipError> {
        let down = self.down.load(Ordering::SeqCst);
        if down {
            self.calls_while_down.fetch_add(1, Ordering::SeqCst);
        }
        tokio::time::sleep(self.work).await;
        if down {
            Err(ShipError::CarrierDown)
        } else {
            Ok(())
        }
    }
}

type Publish = Box<dyn Fn(u64) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;
type Count = Box<dyn Fn() -> Pin<Box<dyn Future<Output = u64> + Send>> + Send + Sync>;

/// Runs the scenario over `source`: `publish` adds message n, `dead` counts dead letters.
async fn run<S: Source>(
    scenario: Scenario,
    source: S,
    publish: Publish,
    dead: Count,
    with_breaker: bool,
) -> Figures {
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .threshold(50.0)
            .count_window(20)
            .probes(2)
            .break_duration(scenario.scaled(Duration::from_secs(5)))
            .max_break_duration(scenario.scaled(Duration::from_secs(20)))
            // Ten times a shipment, and shorter than Redis's idle time before a claim, so that
            // no message still being shipped is claimed by another consumer.
            .timeout(scenario.scaled(Duration::from_millis(500)))
            .build()
            .expect("a valid configuration"),
    ));
    if !with_breaker {
        breaker.disable();
    }
    let carrier = Arc::new(Carrier {
        down: AtomicBool::new(false),
        calls_while_down: AtomicU64::new(0),
        work: scenario.scaled(scenario.work),
    });
    let consumer = Arc::new(Consumer::builder(source, breaker).concurrency(8).build());
    let shutdown = CancellationToken::new();
    let worker = tokio::spawn({
        let (consumer, carrier, shutdown) = (
            Arc::clone(&consumer),
            Arc::clone(&carrier),
            shutdown.clone(),
        );
        async move {
            consumer
                .run(
                    move |_d: Delivery<S::Payload, S::Id>, _cancel| {
                        let carrier = Arc::clone(&carrier);
                        async move {
                            carrier.ship().await?;
                            Ok::<_, Failure<ShipError>>(Handled::Done)
                        }
                    },
                    shutdown,
                )
                .await
        }
    });

    let start = Instant::now();
    let every = scenario.scaled(Duration::from_secs(1)) / scenario.messages_per_second;
    let total = u64::from(scenario.messages_per_second) * scenario.run_for.as_secs();
    let (down_at, up_at) = (
        start + scenario.scaled(scenario.outage.0),
        start + scenario.scaled(scenario.outage.1),
    );
    let mut drained_after = None;
    for n in 0..total {
        tokio::time::sleep_until(start + every * u32::try_from(n).unwrap_or(u32::MAX)).await;
        let now = Instant::now();
        carrier
            .down
            .store(now >= down_at && now < up_at, Ordering::SeqCst);
        publish(n).await;
        let backlog = consumer.stats().acked + dead().await + 8 < n;
        if drained_after.is_none() && now >= up_at && !backlog {
            drained_after = Some(now - up_at);
        }
    }
    carrier.down.store(false, Ordering::SeqCst);
    // Let what is left drain, then stop.
    let settle_by = Instant::now() + scenario.scaled(Duration::from_secs(60));
    while consumer.stats().acked + dead().await < total && Instant::now() < settle_by {
        tokio::time::sleep(scenario.scaled(Duration::from_millis(100))).await;
    }
    shutdown.cancel();
    let stats = worker.await.expect("the worker ends");
    let dead_lettered = dead().await;
    Figures {
        published: total,
        dead_lettered,
        burned: stats.delivered.saturating_sub(stats.acked),
        calls_during_outage: carrier.calls_while_down.load(Ordering::SeqCst),
        drained_after,
        stats,
    }
}

async fn in_memory(scenario: Scenario, with_breaker: bool) -> Figures {
    let queue = MemoryQueue::new(scenario.max_deliveries)
        .redeliver_after(scenario.scaled(Duration::from_secs(1)));
    let (publisher, counter) = (queue.clone(), queue.clone());
    run(
        scenario,
        queue,
        Box::new(move |n| {
            publisher.publish(n);
            Box::pin(async {})
        }),
        Box::new(move || {
            let dead = counter.stats().dead as u64;
            Box::pin(async move { dead })
        }),
        with_breaker,
    )
    .await
}

fn print(without: &Figures, with: &Figures) {
    let row = |name: &str, a: String, b: String| println!("{name:<42}{a:>16}{b:>16}");
    row("", "without breaker".into(), "with breaker".into());
    row(
        "messages published",
        without.published.to_string(),
        with.published.to_string(),
    );
    row(
        "messages dead-lettered",
        without.dead_lettered.to_string(),
        with.dead_lettered.to_string(),
    );
    row(
        "delivery attempts burned",
        without.burned.to_string(),
        with.burned.to_string(),
    );
    row(
        "downstream calls during the outage",
        without.calls_during_outage.to_string(),
        with.calls_during_outage.to_string(),
    );
    let drained = |f: &Figures| {
        f.drained_after.map_or_else(
            || "not drained".to_owned(),
            |d| format!("{:.1} s", d.as_secs_f64()),
        )
    };
    row(
        "time to drain after recovery",
        drained(without),
        drained(with),
    );
    row(
        "times the worker paused",
        without.stats.pauses.to_string(),
        with.stats.pauses.to_string(),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    match (value("--redis"), value("--amqp")) {
        (None, None) => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .expect("a tokio runtime");
            let scenario = Scenario::default_speed();
            let without = runtime.block_on(in_memory(scenario, false));
            let with = runtime.block_on(in_memory(scenario, true));
            print(&without, &with);
        }
        (Some(url), _) => over_redis(&url),
        (None, Some(url)) => over_amqp(&url),
    }
}

/// The real-clock speed against a broker: ten times the paused clock's scenario.
#[cfg(any(feature = "redis", feature = "amqp"))]
fn against_a_broker() -> (tokio::runtime::Runtime, Scenario) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let scenario = Scenario {
        speedup: 10,
        ..Scenario::default_speed()
    };
    (runtime, scenario)
}

#[cfg(not(feature = "redis"))]
fn over_redis(_url: &str) {
    eprintln!(
        "--redis needs the redis feature: cargo run --release --example worker --features redis -- --redis URL"
    );
    std::process::exit(2);
}

#[cfg(feature = "redis")]
fn over_redis(url: &str) {
    use breaker_consumer::redis::RedisStream;

    async fn against(
        url: &str,
        scenario: Scenario,
        with_breaker: bool,
    ) -> redis::RedisResult<Figures> {
        let stream = format!(
            "worker-demo-{}",
            if with_breaker { "with" } else { "without" }
        );
        let client = redis::Client::open(url)?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        let _: () = redis::cmd("DEL")
            .arg(&stream)
            .arg(format!("{stream}:dead"))
            .query_async(&mut conn)
            .await?;
        let source = RedisStream::connect(url, &stream, "shipping", "worker-1")
            .await?
            .block(Duration::from_millis(100))
            .redeliver_after(scenario.scaled(Duration::from_secs(1)))
            .max_deliveries(scenario.max_deliveries);
        let (publisher, counter, key) = (conn.clone(), conn, stream.clone());
        Ok(run(
            scenario,
            source,
            Box::new(move |n| {
                let (mut conn, key) = (publisher.clone(), key.clone());
                Box::pin(async move {
                    let _: redis::RedisResult<String> = redis::cmd("XADD")
                        .arg(&key)
                        .arg("*")
                        .arg("n")
                        .arg(n)
                        .query_async(&mut conn)
                        .await;
                })
            }),
            Box::new(move || {
                let (mut conn, key) = (counter.clone(), format!("{stream}:dead"));
                Box::pin(async move {
                    redis::cmd("XLEN")
                        .arg(&key)
                        .query_async(&mut conn)
                        .await
                        .unwrap_or(0)
                })
            }),
            with_breaker,
        )
        .await)
    }

    let (runtime, scenario) = against_a_broker();
    let figures = runtime.block_on(async {
        Ok::<_, redis::RedisError>((
            against(url, scenario, false).await?,
            against(url, scenario, true).await?,
        ))
    });
    match figures {
        Ok((without, with)) => print(&without, &with),
        Err(error) => {
            eprintln!("Redis at {url}: {error}");
            std::process::exit(1);
        }
    }
}

#[cfg(not(feature = "amqp"))]
fn over_amqp(_url: &str) {
    eprintln!(
        "--amqp needs the amqp feature: cargo run --release --example worker --features amqp -- --amqp URL"
    );
    std::process::exit(2);
}

#[cfg(feature = "amqp")]
fn over_amqp(url: &str) {
    use breaker_consumer::amqp::AmqpQueue;
    use lapin::options::{BasicPublishOptions, QueueDeclareOptions, QueueDeleteOptions};
    use lapin::types::{AMQPValue, FieldTable};
    use lapin::{BasicProperties, Connection, ConnectionProperties};

    type Failed = Box<dyn std::error::Error + Send + Sync>;

    async fn against(url: &str, scenario: Scenario, with_breaker: bool) -> Result<Figures, Failed> {
        let queue = format!(
            "worker-demo-{}",
            if with_breaker { "with" } else { "without" }
        );
        let dead = format!("{queue}.dead");
        let properties = ConnectionProperties::default()
            .with_executor(tokio_executor_trait::Tokio::current())
            .with_reactor(tokio_reactor_trait::Tokio::current());
        let connection = Connection::connect(url, properties).await?;
        let channel = connection.create_channel().await?;
        for name in [&queue, &dead] {
            channel
                .queue_delete(name, QueueDeleteOptions::default())
                .await?;
        }
        let durable = QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        };
        channel
            .queue_declare(&dead, durable, FieldTable::default())
            .await?;
        // A quorum queue dead-letters a message returned more than `x-delivery-limit` times:
        // its last delivery is the limit's plus one.
        let mut arguments = FieldTable::default();
        let limit = i32::try_from(scenario.max_deliveries.saturating_sub(1)).unwrap_or(i32::MAX);
        arguments.insert(
            "x-queue-type".into(),
            AMQPValue::LongString("quorum".into()),
        );
        arguments.insert("x-delivery-limit".into(), AMQPValue::LongInt(limit));
        arguments.insert(
            "x-dead-letter-exchange".into(),
            AMQPValue::LongString("".into()),
        );
        arguments.insert(
            "x-dead-letter-routing-key".into(),
            AMQPValue::LongString(dead.as_str().into()),
        );
        channel.queue_declare(&queue, durable, arguments).await?;
        // Told the limit, the consumer counts the broker's dead letters as the broker does.
        let source = AmqpQueue::connect(url, &queue)
            .await?
            .wait(Duration::from_millis(100))
            .redeliver_after(scenario.scaled(Duration::from_secs(1)))
            .delivery_limit(u32::try_from(limit).unwrap_or(0));
        let (publisher, counter) = (channel.clone(), channel);
        let figures = run(
            scenario,
            source,
            Box::new(move |n| {
                let (channel, queue) = (publisher.clone(), queue.clone());
                Box::pin(async move {
                    let _ = channel
                        .basic_publish(
                            "",
                            &queue,
                            BasicPublishOptions::default(),
                            n.to_string().as_bytes(),
                            BasicProperties::default(),
                        )
                        .await;
                })
            }),
            Box::new(move || {
                let (channel, dead) = (counter.clone(), dead.clone());
                Box::pin(async move {
                    let passive = QueueDeclareOptions {
                        passive: true,
                        ..QueueDeclareOptions::default()
                    };
                    channel
                        .queue_declare(&dead, passive, FieldTable::default())
                        .await
                        .map_or(0, |q| u64::from(q.message_count()))
                })
            }),
            with_breaker,
        )
        .await;
        // Its channels are closing as their handles drop; the close may say so, which is fine.
        let _ = connection.close(200, "demo done").await;
        Ok(figures)
    }

    let (runtime, scenario) = against_a_broker();
    let figures = runtime.block_on(async {
        Ok::<_, Failed>((
            against(url, scenario, false).await?,
            against(url, scenario, true).await?,
        ))
    });
    match figures {
        Ok((without, with)) => print(&without, &with),
        Err(error) => {
            eprintln!("RabbitMQ at {url}: {error}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_breaker_keeps_the_outage_from_dead_lettering_messages() {
        let scenario = Scenario::default_speed();
        let without = in_memory(scenario, false).await;
        let with = in_memory(scenario, true).await;
        assert!(without.dead_lettered > 1000, "{without:?}");
        assert_eq!(with.dead_lettered, 0, "{with:?}");
        assert!(with.burned * 10 < without.burned, "{with:?} {without:?}");
        assert!(with.calls_during_outage * 10 < without.calls_during_outage);
        assert!(with.drained_after.is_some(), "{with:?}");
        assert_eq!(with.stats.acked, with.published);
    }
}
