//! The scenario against a real RabbitMQ: 500 messages on a quorum queue with a delivery
//! limit and a dead-letter queue, a downstream that fails for a stretch and recovers, and the
//! broker's own records (`rabbitmqctl list_queues`, the `redelivered` flag, `x-delivery-count`)
//! as the judge.

#![cfg(feature = "amqp")]

mod support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_consumer::amqp::{AmqpQueue, Message, Tag};
use breaker_consumer::{Consumer, Delivery, Failure, Handled, Status};
use breaker_runtime::{Breaker, Config, State};
use breaker_test_servers::{QueueRecord, RabbitServer};
use lapin::options::{BasicPublishOptions, ConfirmSelectOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};
use support::{
    Downstream, DownstreamError, ProbeWatch, Running, Skipped, quiet_while_open, wait_until,
};

const QUEUE: &str = "orders";
const DEAD: &str = "orders.dead";
/// Returns after which the broker dead-letters a message; what the docs recommend.
const DELIVERY_LIMIT: i32 = 20;

async fn connect(url: &str) -> (Connection, Channel) {
    let properties = ConnectionProperties::default()
        .with_executor(tokio_executor_trait::Tokio::current())
        .with_reactor(tokio_reactor_trait::Tokio::current());
    let connection = Connection::connect(url, properties).await.unwrap();
    let channel = connection.create_channel().await.unwrap();
    (connection, channel)
}

/// What the queue answers a passive declare: messages ready, and consumers.
async fn passive(channel: &Channel) -> (u32, u32) {
    let passive = QueueDeclareOptions {
        passive: true,
        ..QueueDeclareOptions::default()
    };
    let queue = channel
        .queue_declare(QUEUE, passive, FieldTable::default())
        .await
        .unwrap();
    (queue.message_count(), queue.consumer_count())
}

/// A quorum queue that dead-letters to `orders.dead` after `DELIVERY_LIMIT` returns.
async fn declare(channel: &Channel) {
    let durable = QueueDeclareOptions {
        durable: true,
        ..QueueDeclareOptions::default()
    };
    channel
        .queue_declare(DEAD, durable, FieldTable::default())
        .await
        .unwrap();
    let mut arguments = FieldTable::default();
    arguments.insert(
        "x-queue-type".into(),
        AMQPValue::LongString("quorum".into()),
    );
    arguments.insert(
        "x-delivery-limit".into(),
        AMQPValue::LongInt(DELIVERY_LIMIT),
    );
    arguments.insert(
        "x-dead-letter-exchange".into(),
        AMQPValue::LongString("".into()),
    );
    arguments.insert(
        "x-dead-letter-routing-key".into(),
        AMQPValue::LongString(DEAD.into()),
    );
    channel
        .queue_declare(QUEUE, durable, arguments)
        .await
        .unwrap();
}

async fn publish(channel: &Channel, numbers: std::ops::Range<u32>) {
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await
        .unwrap();
    for n in numbers {
        channel
            .basic_publish(
                "",
                QUEUE,
                BasicPublishOptions::default(),
                n.to_string().as_bytes(),
                BasicProperties::default().with_delivery_mode(2),
            )
            .await
            .unwrap()
            .await
            .unwrap();
    }
}

/// The broker's record of the queue, read on a blocking thread (rabbitmqctl takes ~0.3 s).
async fn on_record(server: &Arc<RabbitServer>, queue: &'static str) -> QueueRecord {
    let server = Arc::clone(server);
    tokio::task::spawn_blocking(move || server.queue(queue))
        .await
        .unwrap()
}

/// The broker's record of the queue once it shows `settled`, or the last one read after 5 s.
async fn settled_record(
    server: &Arc<RabbitServer>,
    queue: &'static str,
    settled: impl Fn(&QueueRecord) -> bool,
) -> QueueRecord {
    let start = tokio::time::Instant::now();
    loop {
        let record = on_record(server, queue).await;
        if settled(&record) || start.elapsed() > Duration::from_secs(5) {
            return record;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What the handler saw of the broker's flags.
#[derive(Default)]
struct Seen {
    handled: Mutex<HashSet<u32>>,
    redelivered: AtomicU64,
    max_attempt: AtomicU64,
}

fn handler(
    downstream: &Arc<Downstream>,
    seen: &Arc<Seen>,
) -> impl Fn(Delivery<Message, Tag>, breaker_consumer::CancellationToken) -> support::Answer
+ Send
+ Sync
+ 'static {
    let (downstream, seen) = (Arc::clone(downstream), Arc::clone(seen));
    move |delivery, cancel| {
        let (downstream, seen) = (Arc::clone(&downstream), Arc::clone(&seen));
        Box::pin(async move {
            if delivery.payload.redelivered {
                seen.redelivered.fetch_add(1, Ordering::SeqCst);
            }
            seen.max_attempt
                .fetch_max(u64::from(delivery.attempt), Ordering::SeqCst);
            let n: u32 = std::str::from_utf8(&delivery.payload.body)
                .unwrap()
                .parse()
                .unwrap();
            downstream.call(Some(&cancel)).await?;
            seen.handled.lock().unwrap().insert(n);
            Ok::<_, Failure<DownstreamError>>(Handled::Done)
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_on_rabbitmq_fetches_nothing_while_open_and_dead_letters_nothing() {
    let server = Arc::new(RabbitServer::start());
    let (_publisher, channel) = connect(&server.url()).await;
    declare(&channel).await;
    publish(&channel, 0..500).await;
    let source = AmqpQueue::connect(&server.url(), QUEUE)
        .await
        .unwrap()
        .wait(Duration::from_millis(100))
        .redeliver_after(Duration::from_millis(100));

    let probes = 2;
    let concurrency = 8;
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .count_window(10)
            .probes(probes)
            .break_duration(Duration::from_secs(2))
            .max_break_duration(Duration::from_secs(4))
            .no_timeout()
            .build()
            .unwrap(),
    ));
    let downstream = Downstream::new(Duration::from_millis(3));
    let watch = ProbeWatch::install(&breaker, &downstream);
    let seen = Arc::new(Seen::default());
    let consumer = Arc::new(
        Consumer::builder(source, Arc::clone(&breaker))
            .concurrency(concurrency)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream, &seen));

    wait_until(Duration::from_secs(30), "100 handled", || {
        seen.handled.lock().unwrap().len() >= 100
    })
    .await;
    downstream.set_healthy(false);
    let mut breaks_checked = 0;
    let mut pauses = consumer.stats().pauses;
    let mut skipped = Skipped::default();
    let mut looked_at = None;
    let outage = std::time::Instant::now();
    // Until two breaks were read whole: on a busy machine `rabbitmqctl` can be slow enough that
    // a reading spans a probe round and must be thrown away (7 s once allowed only one).
    while breaks_checked < 2 && outage.elapsed() < Duration::from_secs(30) {
        // A break is known by the probe rounds before it: one skipped is not looked at again.
        wait_until(Duration::from_secs(5), "an opening", || {
            breaker.state() == State::Open && Some(watch.rounds()) != looked_at
        })
        .await;
        let round = watch.rounds();
        looked_at = Some(round);
        // From the consumer's own pause on (its consumer cancelled at the broker, every
        // delivery settled), not from a guess at how long that takes on a busy machine.
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
        let calls = downstream.calls();
        // Judged by the queue's own answer to a passive declare (messages ready, consumers),
        // in milliseconds, where `rabbitmqctl` boots a VM of its own: seconds on a busy
        // machine, longer than a break. Returns the consumer sent as it paused may still be on
        // their way, and a quorum queue drops a cancelled consumer on its own log's time: the
        // first reading is the one that shows no consumer and holds still for 100 ms. A
        // consumer that never leaves keeps every break from being read, and fails below. (That a pause
        // leaves nothing out, giving back what was pushed ahead, is judged by
        // `a_pause_cancels_the_consumer_and_gives_back_what_was_pushed_with_a_requeue`.)
        let mut slowest = Duration::ZERO;
        let mut read = async || {
            let reading = std::time::Instant::now();
            let answer = passive(&channel).await;
            slowest = slowest.max(reading.elapsed());
            answer
        };
        let mut before = read().await;
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let again = read().await;
            if (again == before && before.1 == 0) || watch.rounds() != round {
                break;
            }
            before = again;
        }
        // The second reading starts early enough to end before the break does, by three times
        // the slowest reading seen: a busy machine once took longer than 100 ms.
        let margin = (slowest * 3).max(Duration::from_millis(100));
        // Judged over half a second of the break at least, or not at all.
        let judged_from = tokio::time::Instant::now();
        if watch.rounds() != round || judged_from + margin + Duration::from_millis(500) > at {
            skipped.slow_readings += 1;
            continue;
        }
        tokio::time::sleep_until(at - margin).await;
        let after = passive(&channel).await;
        // Read while the circuit was still open, with no probe round in between.
        if breaker.state() != State::Open || watch.rounds() != round {
            skipped.round_between += 1;
            continue;
        }
        assert_eq!(
            before, after,
            "while open, nothing fetched, nothing returned (ready, consumers)"
        );
        assert_eq!(downstream.calls(), calls, "while open, no call downstream");
        breaks_checked += 1;
        wait_until(Duration::from_secs(2), "the probe round", || {
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

    wait_until(Duration::from_secs(60), "every message handled", || {
        seen.handled.lock().unwrap().len() == 500
    })
    .await;
    wait_until(Duration::from_secs(10), "every message acked", || {
        consumer.stats().acked >= 500
    })
    .await;
    let stats = running.stop().await;
    let source = consumer.source();
    source.close().await.unwrap();

    let queue = settled_record(&server, QUEUE, |q| q.messages == 0).await;
    let dead = on_record(&server, DEAD).await;
    assert_eq!(
        dead.messages, 0,
        "no message dead-lettered because of the outage"
    );
    assert_eq!(
        queue.messages, 0,
        "every message acked, none lost: {queue:?} {stats:?}"
    );
    assert!(
        watch.peak() <= probes as usize,
        "half-open ran {} at once",
        watch.peak()
    );
    assert!(stats.pauses >= 2, "{stats:?}");
    // Every redelivery the broker flagged is one the consumer asked for: a failed or
    // cancelled handler, a delivery released unhandled, or the prefetch given back at a pause.
    let redelivered = seen.redelivered.load(Ordering::SeqCst);
    assert!(
        redelivered <= stats.retried + source.given_back(),
        "{redelivered} redelivered, {} retried, {} given back",
        stats.retried,
        source.given_back()
    );
    // The prefetch caveat stays within what one fetch may hold, per pause.
    assert!(
        source.given_back() <= stats.pauses * concurrency as u64,
        "{} given back over {} pauses",
        source.given_back(),
        stats.pauses
    );
    let max_attempt = seen.max_attempt.load(Ordering::SeqCst);
    assert!(
        max_attempt < DELIVERY_LIMIT as u64,
        "a message came {max_attempt} times"
    );
    eprintln!(
        "outage on RabbitMQ: {stats:?}; redelivered {redelivered}, given back {}, most deliveries of one message {max_attempt}",
        source.given_back()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_connection_records_nothing_and_loses_nothing() {
    let server = Arc::new(RabbitServer::start());
    let (_publisher, channel) = connect(&server.url()).await;
    declare(&channel).await;
    publish(&channel, 0..200).await;
    let source = AmqpQueue::connect(&server.url(), QUEUE)
        .await
        .unwrap()
        .wait(Duration::from_millis(100));
    let breaker = support::breaker(10, 2, 30);
    let seen = Arc::new(Seen::default());
    let downstream = Downstream::new(Duration::from_millis(5));
    let consumer = Arc::new(
        Consumer::builder(source, Arc::clone(&breaker))
            .concurrency(4)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream, &seen));
    wait_until(Duration::from_secs(30), "50 handled", || {
        seen.handled.lock().unwrap().len() >= 50
    })
    .await;
    let cut = Arc::clone(&server);
    tokio::task::spawn_blocking(move || cut.close_all_connections())
        .await
        .unwrap();
    // More after the cut (which closed the publisher too), so that the consumer must come
    // through it to get them: on a busy machine `rabbitmqctl` once took long enough to make the
    // cut after the consumer had handled all 200, and it never saw one.
    let (_publisher, channel) = connect(&server.url()).await;
    publish(&channel, 200..300).await;
    wait_until(Duration::from_secs(60), "every message handled", || {
        seen.handled.lock().unwrap().len() == 300
    })
    .await;
    wait_until(Duration::from_secs(10), "the queue empty", || {
        consumer.stats().acked >= 300
    })
    .await;
    let stats = running.stop().await;
    let source = consumer.source();
    source.close().await.unwrap();

    let queue = settled_record(&server, QUEUE, |q| q.messages == 0).await;
    assert_eq!(queue.messages, 0, "none lost: {queue:?} {stats:?}");
    assert!(stats.source_errors >= 1, "the cut was seen: {stats:?}");
    assert_eq!(breaker.state(), State::Closed);
    let snapshot = breaker.snapshot();
    assert_eq!(
        snapshot.failures, 0,
        "the broker's failure recorded nothing: {snapshot:?}"
    );
    assert!(snapshot.last_opened.is_none(), "never opened: {snapshot:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_delivery_is_held_back_for_its_delay_then_redelivered() {
    use breaker_consumer::{Settlement, Source, Want};

    let server = Arc::new(RabbitServer::start());
    let (_publisher, channel) = connect(&server.url()).await;
    declare(&channel).await;
    publish(&channel, 0..1).await;
    let source = AmqpQueue::connect(&server.url(), QUEUE)
        .await
        .unwrap()
        .wait(Duration::from_millis(200))
        .redeliver_after(Duration::from_millis(1500));
    source.resume(1).await.unwrap();
    let first = source.fetch(Want::up_to(1)).await.unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!((first[0].attempt, first[0].payload.redelivered), (1, false));
    let retried = first.into_iter().next().unwrap();
    source.settle(retried.id, Settlement::Retry).await.unwrap();
    let settled = std::time::Instant::now();

    // Held: still out to this consumer, not handed out again.
    assert!(source.fetch(Want::up_to(1)).await.unwrap().is_empty());
    let held = on_record(&server, QUEUE).await;
    assert_eq!((held.ready, held.unacknowledged), (0, 1), "{held:?}");

    // Waited for from the end of the reading above, which can take seconds on a busy machine
    // (`rabbitmqctl` boots a VM), not from the settle: 10 s from it once ran out first.
    let waiting = std::time::Instant::now();
    let mut again = Vec::new();
    while again.is_empty() && waiting.elapsed() < Duration::from_secs(10) {
        again = source.fetch(Want::up_to(1)).await.unwrap();
    }
    // The hold began just before `settled` was read.
    assert!(
        settled.elapsed() >= Duration::from_millis(1400),
        "back after {:?}",
        settled.elapsed()
    );
    assert_eq!(again.len(), 1, "redelivered after its delay");
    assert!(again[0].payload.redelivered);
    assert_eq!(again[0].attempt, 2, "the quorum queue counted one return");
    let again = again.into_iter().next().unwrap();
    source.settle(again.id, Settlement::Ack).await.unwrap();
    source.close().await.unwrap();
    let queue = settled_record(&server, QUEUE, |q| q.messages == 0).await;
    assert_eq!(queue.messages, 0, "{queue:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_cancels_the_consumer_and_gives_back_what_was_pushed_with_a_requeue() {
    use breaker_consumer::{Settlement, Source, Want};

    let server = Arc::new(RabbitServer::start());
    let (_publisher, channel) = connect(&server.url()).await;
    declare(&channel).await;
    publish(&channel, 0..10).await;
    let source = AmqpQueue::connect(&server.url(), QUEUE).await.unwrap();
    source.resume(4).await.unwrap();
    let taken = source.fetch(Want::up_to(1)).await.unwrap();
    assert_eq!(taken.len(), 1);
    let flowing = settled_record(&server, QUEUE, |q| {
        q.unacknowledged == 4 && q.consumers == 1
    })
    .await;
    assert_eq!(
        (flowing.consumers, flowing.unacknowledged),
        (1, 4),
        "the prefetch: one taken, three pushed ahead: {flowing:?}"
    );

    source.pause().await.unwrap();
    assert_eq!(source.given_back(), 3, "the three pushed and not taken");
    let paused = settled_record(&server, QUEUE, |q| q.ready == 9).await;
    assert_eq!(
        (paused.ready, paused.unacknowledged),
        (9, 1),
        "the taken one still out, the rest back (requeued, not rejected): {paused:?}"
    );
    let dead = on_record(&server, DEAD).await;
    assert_eq!(dead.messages, 0, "nothing given back was dead-lettered");

    // The one taken is still settled normally, on its channel; then the cancelled consumer,
    // which a quorum queue keeps while it has deliveries out, is gone.
    let taken = taken.into_iter().next().unwrap();
    source.settle(taken.id, Settlement::Ack).await.unwrap();
    let idle = settled_record(&server, QUEUE, |q| q.consumers == 0 && q.messages == 9).await;
    assert_eq!(
        (idle.consumers, idle.ready, idle.unacknowledged),
        (0, 9, 0),
        "paused: no consumer, nothing out: {idle:?}"
    );
    source.resume(4).await.unwrap();
    let mut redelivered = 0;
    let mut fresh = 0;
    while redelivered + fresh < 9 {
        let batch = source.fetch(Want::up_to(4)).await.unwrap();
        assert!(!batch.is_empty(), "the nine left come back");
        for delivery in batch {
            if delivery.payload.redelivered {
                redelivered += 1;
            } else {
                fresh += 1;
            }
            source.settle(delivery.id, Settlement::Ack).await.unwrap();
        }
    }
    assert_eq!(
        (redelivered, fresh),
        (3, 6),
        "the given back carry the flag"
    );
    source.close().await.unwrap();
    let queue = settled_record(&server, QUEUE, |q| q.messages == 0).await;
    assert_eq!(queue.messages, 0, "{queue:?}");
}
