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
    declare_limited(channel, QUEUE, DEAD, DELIVERY_LIMIT.unsigned_abs()).await;
}

async fn publish(channel: &Channel, numbers: std::ops::Range<u32>) {
    publish_to(channel, QUEUE, numbers).await;
}

async fn publish_to(channel: &Channel, queue: &str, numbers: std::ops::Range<u32>) {
    channel
        .confirm_select(ConfirmSelectOptions::default())
        .await
        .unwrap();
    for n in numbers {
        channel
            .basic_publish(
                "",
                queue,
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
    on_node(server, move |server| server.queue(queue)).await
}

/// What `ask` reads of the node, on a blocking thread (rabbitmqctl boots a VM of its own).
async fn on_node<T: Send + 'static>(
    server: &Arc<RabbitServer>,
    ask: impl FnOnce(&RabbitServer) -> T + Send + 'static,
) -> T {
    let server = Arc::clone(server);
    tokio::task::spawn_blocking(move || ask(&server))
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

/// A consumer of `source` that handles every message, with what it handled.
fn consuming(source: AmqpQueue) -> (Arc<Consumer<AmqpQueue>>, Arc<Seen>, Running) {
    let seen = Arc::new(Seen::default());
    let consumer = Arc::new(
        Consumer::builder(source, support::breaker(10, 2, 30))
            .concurrency(4)
            .build(),
    );
    let running = Running::start(
        Arc::clone(&consumer),
        handler(&Downstream::new(Duration::from_millis(1)), &seen),
    );
    (consumer, seen, running)
}

fn handled(seen: &Seen) -> usize {
    seen.handled.lock().unwrap().len()
}

/// Waits (60 s at most) until the node has `queue`, declared by someone else.
async fn until_declared(server: &Arc<RabbitServer>, queue: &'static str) {
    let start = tokio::time::Instant::now();
    while !on_node(server, |server| server.queue_names())
        .await
        .iter()
        .any(|name| name == queue)
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{queue} never declared again"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the node has no more client connections than `at_most`: a consumer waiting for
/// its queue leaves none behind, and a closed one none at all.
async fn connections_at_most(server: &Arc<RabbitServer>, at_most: usize) {
    let start = tokio::time::Instant::now();
    loop {
        let open = on_node(server, RabbitServer::connections).await;
        if open <= at_most {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{open} connections open, {at_most} expected"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_deleted_and_declared_again_is_consumed_again_without_a_restart() {
    use breaker_consumer::amqp::AmqpError;
    /// Declared by its consumer, on every connection and after a cancel by the broker.
    const DECLARED: &str = "orders.declared";

    let server = Arc::new(RabbitServer::start());
    let (_publisher, channel) = connect(&server.url()).await;
    declare(&channel).await;
    publish(&channel, 0..20).await;
    let source = AmqpQueue::connect(&server.url(), QUEUE)
        .await
        .unwrap()
        .wait(Duration::from_millis(100));
    let (consumer, seen, running) = consuming(source);
    let declares = AmqpQueue::declare(
        &server.url(),
        DECLARED,
        QueueDeclareOptions::default(),
        FieldTable::default(),
    )
    .await
    .unwrap()
    .wait(Duration::from_millis(100));
    let (declaring, declaring_seen, declaring_run) = consuming(declares);
    publish_to(&channel, DECLARED, 0..20).await;
    wait_until(
        Duration::from_secs(30),
        "the first 20 of each handled",
        || {
            handled(&seen) == 20
                && consumer.stats().acked == 20
                && handled(&declaring_seen) == 20
                && declaring.stats().acked == 20
        },
    )
    .await;

    // Their owner deletes them: the broker cancels the consumers.
    on_node(&server, |server| {
        server.delete_queue(QUEUE);
        server.delete_queue(DECLARED);
    })
    .await;
    let errors = consumer.stats().source_errors;
    wait_until(
        Duration::from_secs(30),
        "the consumer finding the queue gone, again and again",
        || consumer.stats().source_errors >= errors + 3,
    )
    .await;
    // What it says of it, as a fresh source is told.
    let refused = match AmqpQueue::connect(&server.url(), QUEUE).await {
        Err(refused) => refused,
        Ok(_) => panic!("a source of a deleted queue connected"),
    };
    assert!(
        matches!(&refused, AmqpError::NoQueue { queue } if queue == QUEUE),
        "{refused:?}"
    );
    assert!(
        refused
            .to_string()
            .contains("the queue 'orders' does not exist"),
        "{refused}"
    );
    // Asking again and again leaves no connection behind: the publisher's and the declaring
    // consumer's only.
    connections_at_most(&server, 2).await;
    // The circuit is closed, but nothing can be handled: degraded, saying why.
    assert_degraded_for_want_of(&consumer.status(), QUEUE);

    // The one that declares its queue has it back by itself.
    until_declared(&server, DECLARED).await;
    publish_to(&channel, DECLARED, 20..40).await;
    // The owner declares the other again and publishes: every message is handled.
    declare(&channel).await;
    publish(&channel, 20..40).await;
    wait_until(
        Duration::from_secs(60),
        "every message published after it handled",
        || {
            handled(&seen) == 40
                && consumer.stats().acked == 40
                && handled(&declaring_seen) == 40
                && declaring.stats().acked == 40
        },
    )
    .await;
    assert_eq!(consumer.status(), Status::Running, "fetching again");
    for (consumer, running) in [(&consumer, running), (&declaring, declaring_run)] {
        let stats = running.stop().await;
        consumer.source().close().await.unwrap();
        assert_eq!(consumer.breaker().snapshot().failures, 0, "{stats:?}");
        eprintln!(
            "queue {} deleted and declared again: {stats:?}",
            consumer.source().queue()
        );
    }
    for queue in [QUEUE, DECLARED] {
        let record = settled_record(&server, queue, |q| q.messages == 0).await;
        assert_eq!(record.messages, 0, "{queue}: {record:?}");
    }
    connections_at_most(&server, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_restarted_without_a_transient_queue_is_consumed_again_once_it_is_declared() {
    /// Declared by the test, as its owner: the consumer waits for it.
    const OWNED: &str = "jobs.owned";
    /// Declared by its consumer, on every connection.
    const DECLARED: &str = "jobs.declared";
    let transient = QueueDeclareOptions::default();

    let server = Arc::new(RabbitServer::start());
    let (_publisher, channel) = connect(&server.url()).await;
    channel
        .queue_declare(OWNED, transient, FieldTable::default())
        .await
        .unwrap();
    let waits = AmqpQueue::connect(&server.url(), OWNED)
        .await
        .unwrap()
        .wait(Duration::from_millis(100));
    let declares = AmqpQueue::declare(&server.url(), DECLARED, transient, FieldTable::default())
        .await
        .unwrap()
        .wait(Duration::from_millis(100));
    let (waiting, waiting_seen, waiting_run) = consuming(waits);
    let (declaring, declaring_seen, declaring_run) = consuming(declares);
    publish_to(&channel, OWNED, 0..10).await;
    publish_to(&channel, DECLARED, 0..10).await;
    wait_until(
        Duration::from_secs(30),
        "the first 10 of each handled",
        || handled(&waiting_seen) == 10 && handled(&declaring_seen) == 10,
    )
    .await;

    // `rabbitmqctl stop_app` and `start_app`: every connection closed, non-durable queues gone.
    on_node(&server, RabbitServer::restart_app).await;
    let names = on_node(&server, RabbitServer::queue_names).await;
    assert!(
        !names.iter().any(|name| name == OWNED),
        "the restart took the transient queue: {names:?}"
    );

    // The consumer that declares its queue brings it back by itself.
    until_declared(&server, DECLARED).await;
    let (_publisher, channel) = connect(&server.url()).await;
    publish_to(&channel, DECLARED, 10..30).await;
    wait_until(
        Duration::from_secs(60),
        "every message published to the queue declared again by its consumer handled",
        || handled(&declaring_seen) == 30,
    )
    .await;

    // The other waits, until the queue's owner declares it again.
    assert_eq!(handled(&waiting_seen), 10);
    let errors = waiting.stats().source_errors;
    wait_until(
        Duration::from_secs(30),
        "the waiting consumer asking again",
        || waiting.stats().source_errors > errors,
    )
    .await;
    assert_degraded_for_want_of(&waiting.status(), OWNED);
    channel
        .queue_declare(OWNED, transient, FieldTable::default())
        .await
        .unwrap();
    publish_to(&channel, OWNED, 10..30).await;
    wait_until(
        Duration::from_secs(60),
        "every message published to the queue its owner declared again handled",
        || handled(&waiting_seen) == 30,
    )
    .await;
    assert_eq!(waiting.status(), Status::Running, "fetching again");

    for (consumer, running) in [(&waiting, waiting_run), (&declaring, declaring_run)] {
        let stats = running.stop().await;
        consumer.source().close().await.unwrap();
        assert_eq!(stats.acked, 30, "{stats:?}");
        assert!(stats.source_errors >= 1, "the restart was seen: {stats:?}");
        assert_eq!(consumer.breaker().snapshot().failures, 0, "{stats:?}");
    }
    for queue in [OWNED, DECLARED] {
        let record = settled_record(&server, queue, |q| q.messages == 0).await;
        assert_eq!(record.messages, 0, "{queue}: {record:?}");
    }
    connections_at_most(&server, 1).await;
}

/// The number in a message's body.
fn number(message: &Message) -> u32 {
    std::str::from_utf8(&message.body).unwrap().parse().unwrap()
}

/// The message's `x-delivery-count` header, as the broker sent it.
fn delivery_count(message: &Message) -> Option<i64> {
    let headers = message.properties.headers().as_ref()?;
    match headers.inner().get("x-delivery-count")? {
        AMQPValue::LongLongInt(n) => Some(*n),
        AMQPValue::LongInt(n) => Some(i64::from(*n)),
        other => panic!("x-delivery-count is {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dead_letters_counted_agree_with_the_dead_letter_queue() {
    let server = Arc::new(RabbitServer::start());
    // Each retry requeued at once, then each held back before its requeue.
    mixed_run(&server, "mixed", "mixed.dead", Duration::ZERO).await;
    mixed_run(
        &server,
        "mixed.held",
        "mixed.held.dead",
        Duration::from_millis(30),
    )
    .await;
}

/// A quorum queue that dead-letters to `dead` (declared too) past `limit` returns.
async fn declare_limited(channel: &Channel, queue: &str, dead: &str, limit: u32) {
    let durable = QueueDeclareOptions {
        durable: true,
        ..QueueDeclareOptions::default()
    };
    channel
        .queue_declare(dead, durable, FieldTable::default())
        .await
        .unwrap();
    let mut arguments = FieldTable::default();
    arguments.insert(
        "x-queue-type".into(),
        AMQPValue::LongString("quorum".into()),
    );
    arguments.insert(
        "x-delivery-limit".into(),
        AMQPValue::LongInt(i32::try_from(limit).unwrap()),
    );
    arguments.insert(
        "x-dead-letter-exchange".into(),
        AMQPValue::LongString("".into()),
    );
    arguments.insert(
        "x-dead-letter-routing-key".into(),
        AMQPValue::LongString(dead.into()),
    );
    channel
        .queue_declare(queue, durable, arguments)
        .await
        .unwrap();
}

/// A mixed run on a quorum queue with a delivery limit and a dead-letter queue: a third of the
/// messages succeed, a third are poison (`Failure::Permanent`), a third always fail with
/// `Failure::Retry` until the broker dead-letters them at the limit; judged by the broker's
/// own count of the dead-letter queue.
async fn mixed_run(
    server: &Arc<RabbitServer>,
    mixed: &'static str,
    mixed_dead: &'static str,
    redeliver_after: Duration,
) {
    /// The queue's `x-delivery-limit`.
    const LIMIT: u32 = 3;
    const MESSAGES: u32 = 90;

    let (_publisher, channel) = connect(&server.url()).await;
    declare_limited(&channel, mixed, mixed_dead, LIMIT).await;
    publish_to(&channel, mixed, 0..MESSAGES).await;

    let source = AmqpQueue::connect(&server.url(), mixed)
        .await
        .unwrap()
        .wait(Duration::from_millis(100))
        .redeliver_after(redeliver_after)
        .delivery_limit(LIMIT);
    // Every `x-delivery-count` each always-retried message arrived with, in order.
    let counts: Arc<Mutex<std::collections::HashMap<u32, Vec<Option<i64>>>>> = Arc::default();
    let consumer = Arc::new(
        Consumer::builder(source, support::breaker(10, 2, 30))
            .concurrency(4)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), {
        let counts = Arc::clone(&counts);
        move |delivery: Delivery<Message, Tag>, _cancel| {
            let counts = Arc::clone(&counts);
            async move {
                let n = number(&delivery.payload);
                match n % 3 {
                    0 => Ok(Handled::Done),
                    // Poison: the handler's own dead letter.
                    1 => Err(Failure::Permanent(DownstreamError::Declined)),
                    // Never handled: returned until the broker dead-letters it at the limit.
                    // (`Declined` counts as the downstream answering: the circuit stays closed.)
                    _ => {
                        let count = delivery_count(&delivery.payload);
                        assert_eq!(
                            i64::from(delivery.attempt),
                            count.unwrap_or(0) + 1,
                            "the attempt follows the broker's count"
                        );
                        counts.lock().unwrap().entry(n).or_default().push(count);
                        Err(Failure::Retry(DownstreamError::Declined))
                    }
                }
            }
        }
    });

    // Judged by the broker: the main queue empty, every message acked or dead-lettered.
    let start = tokio::time::Instant::now();
    loop {
        let queue = on_record(server, mixed).await;
        if queue.messages == 0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the queue never emptied: {queue:?} {:?}",
            consumer.stats()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let stats = running.stop().await;
    consumer.source().close().await.unwrap();
    let dead = settled_record(server, mixed_dead, |q| {
        q.messages >= u64::from(MESSAGES / 3 * 2)
    })
    .await;
    eprintln!("mixed run on {mixed}: {stats:?}; dead-letter queue {dead:?}");
    assert_eq!(
        stats.dead_letters(),
        dead.messages,
        "the consumer's dead letters and the dead-letter queue's: {stats:?} {dead:?}"
    );
    assert_eq!(stats.acked, u64::from(MESSAGES / 3), "{stats:?}");
    assert_eq!(stats.dead_lettered, u64::from(MESSAGES / 3), "{stats:?}");
    assert_eq!(stats.limit_reached, u64::from(MESSAGES / 3), "{stats:?}");
    // The rule `delivery_limit` counts by, as this RabbitMQ keeps it: with `x-delivery-limit`
    // N, a message is delivered N + 1 times, `x-delivery-count` absent the first time (a
    // `basic.get` says 0), then 1..=N; the return of the delivery that arrived with N
    // dead-letters it.
    let counts = counts.lock().unwrap();
    assert_eq!(counts.len(), (MESSAGES / 3) as usize);
    let expected: Vec<Option<i64>> = std::iter::once(None)
        .chain((1..=i64::from(LIMIT)).map(Some))
        .collect();
    for (n, seen) in counts.iter() {
        assert_eq!(seen, &expected, "message {n}");
    }
    assert_eq!(
        stats.retried,
        u64::from(MESSAGES / 3) * u64::from(LIMIT + 1),
        "{stats:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_at_the_limit_given_back_or_left_out_on_a_closed_channel_is_counted() {
    use breaker_consumer::amqp::AmqpError;
    use breaker_consumer::{Settlement, Source, Want};
    const EDGE: &str = "edge";
    const EDGE_DEAD: &str = "edge.dead";

    let server = Arc::new(RabbitServer::start());
    let (_publisher, channel) = connect(&server.url()).await;
    declare_limited(&channel, EDGE, EDGE_DEAD, 1).await;
    publish_to(&channel, EDGE, 0..5).await;
    let source = AmqpQueue::connect(&server.url(), EDGE)
        .await
        .unwrap()
        .wait(Duration::from_millis(200))
        .delivery_limit(1);
    source.resume(5).await.unwrap();

    // Each once, and back with a requeue: below the limit, requeued, not counted.
    let mut first = Vec::new();
    while first.len() < 5 {
        first.extend(source.fetch(Want::up_to(5)).await.unwrap());
    }
    assert!(first.iter().all(|delivery| delivery.attempt == 1));
    for delivery in first {
        source.settle(delivery.id, Settlement::Retry).await.unwrap();
    }
    assert_eq!(source.limit_reached(), 0);

    // Each again, at the limit now: one taken, four pushed ahead to the prefetch.
    let taken = source.fetch(Want::up_to(1)).await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].attempt, 2);
    let flowing = settled_record(&server, EDGE, |q| q.unacknowledged == 5).await;
    assert_eq!(flowing.unacknowledged, 5, "{flowing:?}");
    // A pause gives the four back with a requeue: the broker dead-letters them.
    source.pause().await.unwrap();
    assert_eq!(source.given_back(), 4);
    assert_eq!(
        source.limit_reached(),
        4,
        "the four given back at the limit"
    );
    // The taken one is left out when the connection closes: the broker takes it back, and
    // dead-letters it; its settlement fails, and counts it.
    on_node(&server, RabbitServer::close_all_connections).await;
    // Settled once the client has seen the close: at once, and refused.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let taken = taken.into_iter().next().unwrap();
    let settled = tokio::time::timeout(
        Duration::from_secs(5),
        source.settle(taken.id, Settlement::Ack),
    )
    .await
    .expect("a settlement on a closed channel answers at once");
    assert!(
        matches!(settled, Err(AmqpError::ChannelClosed)),
        "{settled:?}"
    );
    assert_eq!(source.limit_reached(), 5, "and the one left out");
    source.close().await.unwrap();

    let queue = settled_record(&server, EDGE, |q| q.messages == 0).await;
    let dead = settled_record(&server, EDGE_DEAD, |q| q.messages == 5).await;
    assert_eq!(
        (queue.messages, dead.messages),
        (0, 5),
        "{queue:?} {dead:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_in_flight_when_the_connection_drops_free_their_slots() {
    connection_dropped_under_handlers(false).await;
}

/// Paused, the consumer is cancelled at the broker; the channel stays open, and lapin 3 took
/// a settlement asked after its connection stopped, and never answered it: the handler held
/// its slot for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_in_flight_when_the_connection_drops_during_a_pause_free_their_slots() {
    connection_dropped_under_handlers(true).await;
}

/// Two handlers run, waiting at a gate, when the connection drops (during a pause if
/// `paused`); they finish after the client has seen it, and the messages published next are
/// every one handled.
async fn connection_dropped_under_handlers(paused: bool) {
    let server = Arc::new(RabbitServer::start());
    let (_publisher, channel) = connect(&server.url()).await;
    declare(&channel).await;
    publish(&channel, 0..2).await;
    let source = AmqpQueue::connect(&server.url(), QUEUE)
        .await
        .unwrap()
        .wait(Duration::from_millis(100));
    // Every handler waits at the gate until it opens.
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let started: Arc<Mutex<Vec<u32>>> = Arc::default();
    let handled: Arc<Mutex<HashSet<u32>>> = Arc::default();
    let breaker = support::breaker(10, 2, 30);
    let consumer = Arc::new(
        Consumer::builder(source, Arc::clone(&breaker))
            // One slot free: the loop goes on to see the opening, and pauses.
            .concurrency(3)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), {
        let (gate, started, handled) = (
            Arc::clone(&gate),
            Arc::clone(&started),
            Arc::clone(&handled),
        );
        move |delivery: Delivery<Message, Tag>, _cancel| {
            let (gate, started, handled) = (
                Arc::clone(&gate),
                Arc::clone(&started),
                Arc::clone(&handled),
            );
            async move {
                let n = number(&delivery.payload);
                started.lock().unwrap().push(n);
                drop(gate.acquire().await.unwrap());
                handled.lock().unwrap().insert(n);
                Ok::<_, Failure<DownstreamError>>(Handled::Done)
            }
        }
    });
    wait_until(Duration::from_secs(30), "both handlers running", || {
        started.lock().unwrap().len() == 2
    })
    .await;

    if paused {
        breaker.force_open();
        wait_until(Duration::from_secs(10), "the consumer paused", || {
            consumer.stats().pauses == 1
        })
        .await;
    }
    // The connection drops under both; they finish after the client has seen it.
    on_node(&server, RabbitServer::close_all_connections).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    breaker.reset();
    gate.add_permits(1_000);
    // Their settlements fail: the broker has taken the two back, and hands them out again.
    // Every slot is free again: the consumer goes on with what is published after.
    let (_publisher, channel) = connect(&server.url()).await;
    publish(&channel, 2..12).await;
    wait_until(Duration::from_secs(60), "every message handled", || {
        handled.lock().unwrap().len() == 12
    })
    .await;
    wait_until(Duration::from_secs(10), "every message acked", || {
        consumer.stats().acked >= 12
    })
    .await;
    // A shutdown waits for the handlers in flight: the two settled (refused) long ago.
    let stats = tokio::time::timeout(Duration::from_secs(30), running.stop())
        .await
        .expect("the handlers in flight at the drop never finished: their settlements hang");
    consumer.source().close().await.unwrap();
    assert!(
        stats.source_errors >= 2,
        "the two settlements failed: {stats:?}"
    );
    let queue = settled_record(&server, QUEUE, |q| q.messages == 0).await;
    assert_eq!(queue.messages, 0, "{queue:?} {stats:?}");
}

/// The status of a consumer whose queue is gone: degraded, naming the queue.
fn assert_degraded_for_want_of(status: &Status, queue: &str) {
    let Status::Degraded { reason, .. } = status else {
        panic!("degraded while its queue is gone, not {status:?}");
    };
    assert!(
        reason.contains(&format!("the queue '{queue}' does not exist")),
        "{reason}"
    );
}
