//! Every rule of the consumer, over the in-memory queue on tokio's paused clock.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use breaker_consumer::{
    Consumer, Deliveries, Delivery, Disconnected, Failure, Handled, MemoryQueue, Settlement,
    Source, Status, Want,
};
use breaker_runtime::State;
use support::logs::Logs;
use support::{
    Downstream, DownstreamError, LocalRefusal, Running, breaker, handler, is_open, wait_until,
};
use tokio::time::Instant;

const MINUTE: Duration = Duration::from_secs(60);

fn queue_of(messages: u32, max_deliveries: u32) -> MemoryQueue<u32> {
    let queue = MemoryQueue::new(max_deliveries);
    for m in 0..messages {
        queue.publish(m);
    }
    queue
}

#[tokio::test(start_paused = true)]
async fn closed_it_runs_up_to_concurrency_handlers_and_acks_every_message() {
    let queue = queue_of(40, 3);
    let downstream = Downstream::new(Duration::from_millis(50));
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), breaker(10, 1, 30))
            .concurrency(4)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));
    wait_until(MINUTE, "every message acked", || queue.stats().acked == 40).await;
    let stats = running.stop().await;

    assert_eq!(
        downstream.max_in_flight(),
        4,
        "fetching follows free capacity up to 4"
    );
    assert_eq!((stats.handled, stats.acked, stats.retried), (40, 40, 0));
    assert_eq!(queue.stats().deliveries, 40, "one delivery per message");
    assert_eq!(consumer.status(), Status::Running);
}

#[tokio::test(start_paused = true)]
async fn open_it_fetches_nothing_and_sleeps_until_the_break_ends() {
    let queue = queue_of(100, 5);
    let downstream = Downstream::new(Duration::from_millis(10));
    downstream.set_healthy(false);
    let breaker = breaker(4, 1, 30);
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .concurrency(2)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));

    wait_until(MINUTE, "the circuit to open", || is_open(&breaker)).await;
    let opened = Instant::now();
    // Let the handlers in flight at the opening settle.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let before = queue.stats();
    let calls = downstream.calls();
    match consumer.status() {
        // `opened` is read up to one 10 ms step after the opening.
        Status::Paused {
            resumes_at: Some(at),
        } => {
            let break_ends = opened + Duration::from_secs(30);
            assert!(at <= break_ends && at + Duration::from_millis(10) >= break_ends);
        }
        other => panic!("expected paused with a resume time, got {other:?}"),
    }
    assert!(
        consumer
            .status()
            .to_string()
            .starts_with("paused, resuming in 29.9")
    );

    tokio::time::sleep(Duration::from_secs(29)).await;
    let during = queue.stats();
    assert_eq!(during.fetches, before.fetches, "no fetch at all while open");
    assert_eq!(
        during.deliveries, before.deliveries,
        "no delivery counted while open"
    );
    assert_eq!(downstream.calls(), calls, "no downstream call while open");
    assert_eq!(consumer.stats().pauses, 1);

    // The break ends: a probe is fetched, fails, and the circuit opens again for twice as long.
    wait_until(Duration::from_secs(2), "the probe", || {
        downstream.calls() > calls
    })
    .await;
    assert!(Instant::now() >= opened + Duration::from_secs(30));
    wait_until(Duration::from_secs(1), "the reopening", || {
        is_open(&breaker)
    })
    .await;
    let reopened = queue.stats();
    tokio::time::sleep(Duration::from_secs(59)).await;
    assert_eq!(
        queue.stats().fetches,
        reopened.fetches,
        "the grown break fetches nothing either"
    );
    running.stop().await;
    assert!(queue.dead_letters().is_empty());
}

#[tokio::test(start_paused = true)]
async fn half_open_runs_at_most_probes_messages_then_restores_concurrency() {
    let queue = queue_of(200, 5);
    let downstream = Downstream::new(Duration::from_millis(100));
    downstream.set_healthy(false);
    let breaker = breaker(4, 3, 10);
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .concurrency(8)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));

    wait_until(MINUTE, "the circuit to open", || is_open(&breaker)).await;
    downstream.set_healthy(true);
    wait_until(Duration::from_secs(10), "in-flight handlers to end", || {
        queue.stats().unsettled == 0
    })
    .await;
    downstream.reset_max_in_flight();
    // Read at the moment it closes, before full concurrency returns.
    let at_closing = Arc::new(AtomicU64::new(0));
    let subscription = breaker.on_transition({
        let (at_closing, downstream) = (Arc::clone(&at_closing), Arc::clone(&downstream));
        move |t| {
            if t.to == State::Closed {
                at_closing.store(downstream.max_in_flight() as u64, Ordering::SeqCst);
            }
        }
    });
    wait_until(Duration::from_secs(11), "half-open", || {
        breaker.state() == State::HalfOpen
    })
    .await;
    assert_eq!(consumer.status(), Status::Probing);
    wait_until(Duration::from_secs(1), "the probes to close it", || {
        breaker.state() == State::Closed
    })
    .await;
    drop(subscription);
    assert_eq!(
        at_closing.load(Ordering::SeqCst),
        3,
        "half-open ran the probes, three at a time"
    );

    downstream.reset_max_in_flight();
    wait_until(MINUTE, "every message acked", || queue.stats().acked == 200).await;
    assert_eq!(
        downstream.max_in_flight(),
        8,
        "closing restored full concurrency"
    );
    running.stop().await;
    assert!(queue.dead_letters().is_empty());
}

#[tokio::test(start_paused = true)]
async fn handlers_in_flight_when_it_opens_are_cancelled_and_their_messages_come_back() {
    let queue = queue_of(20, 10);
    let downstream = Downstream::new(Duration::from_secs(5));
    let breaker = breaker(2, 1, 30);
    let cancelled = Arc::new(AtomicU64::new(0));
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .concurrency(4)
            .build(),
    );
    let seen = Arc::clone(&cancelled);
    let slow = Arc::clone(&downstream);
    let running = Running::start(
        Arc::clone(&consumer),
        move |_d: Delivery<u32, u64>, token| {
            let (seen, slow) = (Arc::clone(&seen), Arc::clone(&slow));
            async move {
                slow.call(Some(&token)).await.inspect_err(|_| {
                    if token.is_cancelled() {
                        seen.fetch_add(1, Ordering::SeqCst);
                    }
                })?;
                Ok::<_, Failure<DownstreamError>>(Handled::Done)
            }
        },
    );
    wait_until(MINUTE, "four handlers in flight", || {
        queue.stats().unsettled == 4
    })
    .await;
    breaker.force_open();
    wait_until(Duration::from_secs(1), "the handlers to stop", || {
        queue.stats().unsettled == 0
    })
    .await;

    assert_eq!(
        cancelled.load(Ordering::SeqCst),
        4,
        "every handler in flight saw its token fire"
    );
    let snapshot = breaker.snapshot();
    assert_eq!(
        (snapshot.calls, snapshot.failures),
        (0, 0),
        "cancellation records nothing"
    );
    assert_eq!(
        queue.stats().ready,
        20,
        "their messages are back on the queue"
    );
    assert_eq!(consumer.stats().retried, 4);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_handler_that_finishes_after_the_opening_settles_normally() {
    let queue = queue_of(1, 10);
    let breaker = breaker(2, 1, 30);
    let consumer = Arc::new(Consumer::builder(queue.clone(), Arc::clone(&breaker)).build());
    let running = Running::start(
        Arc::clone(&consumer),
        move |_d: Delivery<u32, u64>, _token| async {
            // Ignores its token and finishes its work.
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok::<_, Failure<DownstreamError>>(Handled::Done)
        },
    );
    wait_until(MINUTE, "the handler to start", || {
        queue.stats().unsettled == 1
    })
    .await;
    breaker.force_open();
    wait_until(Duration::from_secs(2), "the ack", || {
        queue.stats().acked == 1
    })
    .await;
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn what_counts_and_how_each_delivery_is_settled() {
    // Message n: 0 done, 1 skipped, 2 declined (a business error), 3 excluded by type,
    // 4 poison, 5 a real failure. Each once.
    let queue = queue_of(6, 1);
    let breaker = breaker(100, 1, 30);
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .exclude::<LocalRefusal>()
            .build(),
    );
    let running = Running::start(
        Arc::clone(&consumer),
        |d: Delivery<u32, u64>, _token| async move {
            match d.payload {
                0 => Ok(Handled::Done),
                1 => Ok(Handled::Skipped),
                2 => Err(DownstreamError::Declined.into()),
                3 => Err(DownstreamError::Local(LocalRefusal).into()),
                4 => Err(Failure::Permanent(DownstreamError::Unavailable)),
                _ => Err(DownstreamError::Unavailable.into()),
            }
        },
    );
    wait_until(MINUTE, "every message handled", || {
        consumer.stats().handled == 6
    })
    .await;
    let stats = running.stop().await;

    let snapshot = breaker.snapshot();
    assert_eq!(
        (snapshot.calls, snapshot.failures),
        (3, 1),
        "recorded: done and declined as successes, the real failure; not skipped, excluded or poison"
    );
    assert_eq!((stats.acked, stats.retried, stats.dead_lettered), (2, 3, 1));
    // With one delivery allowed, the three retried ones are dead-lettered by the queue on
    // their next fetch, after the poison the handler dead-lettered.
    wait_until(Duration::from_secs(1), "the queue to dead-letter", || {
        queue.stats().dead == 4
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn count_permanent_makes_poison_count() {
    let queue = queue_of(1, 1);
    let breaker = breaker(100, 1, 30);
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .count_permanent(true)
            .build(),
    );
    let running = Running::start(
        Arc::clone(&consumer),
        |_d: Delivery<u32, u64>, _token| async {
            Err::<Handled, _>(Failure::Permanent(DownstreamError::Unavailable))
        },
    );
    wait_until(MINUTE, "the dead letter", || queue.stats().dead == 1).await;
    running.stop().await;
    assert_eq!(breaker.snapshot().failures, 1);
}

#[tokio::test(start_paused = true)]
async fn a_panicking_handler_dead_letters_its_message_records_nothing_and_says_so() {
    let (logs, _capture) = Logs::capture();
    // Every third order panics the handler: enough to open a window of 4 at 50% many times
    // over, were a panic a failure of the downstream.
    let queue = queue_of(30, 3);
    let breaker = breaker(4, 1, 30);
    let transitions = Arc::new(AtomicU64::new(0));
    let _watch = breaker.on_transition({
        let transitions = Arc::clone(&transitions);
        move |_| {
            transitions.fetch_add(1, Ordering::SeqCst);
        }
    });
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .concurrency(2)
            .build(),
    );
    let running = Running::start(
        Arc::clone(&consumer),
        |d: Delivery<u32, u64>, _token| async move {
            if d.payload % 3 == 0 {
                panic!("order {} has no address", d.payload);
            }
            Ok::<_, Failure<DownstreamError>>(Handled::Done)
        },
    );
    wait_until(MINUTE, "every message settled", || {
        let q = queue.stats();
        q.acked + q.dead as u64 == 30
    })
    .await;
    let stats = running.stop().await;

    let poison: Vec<u32> = (0..30).filter(|n| n % 3 == 0).collect();
    assert_eq!(
        queue.dead_letters(),
        poison,
        "each panicking message dead-lettered once"
    );
    assert_eq!(queue.stats().deliveries, 30, "none of them delivered again");
    assert_eq!(
        (
            stats.panics,
            stats.dead_lettered,
            stats.acked,
            stats.retried
        ),
        (10, 10, 20, 0)
    );
    let snapshot = breaker.snapshot();
    assert_eq!(
        (snapshot.calls, snapshot.failures),
        (4, 0),
        "the window of 4 holds successes only: the panics recorded nothing"
    );
    assert_eq!(
        transitions.load(Ordering::SeqCst),
        0,
        "the circuit never left closed"
    );
    let warnings = logs.at("WARN");
    assert_eq!(warnings.len(), 10, "one warning per panic: {warnings:#?}");
    for n in poison {
        // The memory queue's ids number the deliveries from 1, in the order fetched.
        let named = format!("panic=\"order {n} has no address\"");
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(&named) && w.contains("id=")),
            "no warning names the panic of order {n}: {warnings:#?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn count_panics_makes_a_panic_a_failure_whose_message_goes_back() {
    let queue = queue_of(1, 5);
    let breaker = breaker(100, 1, 30);
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .count_panics(true)
            .build(),
    );
    let running = Running::start(
        Arc::clone(&consumer),
        |d: Delivery<u32, u64>, _token| async move {
            if d.attempt == 1 {
                panic!("the handler's bug");
            }
            Ok::<_, Failure<DownstreamError>>(Handled::Done)
        },
    );
    wait_until(MINUTE, "the second delivery's ack", || {
        queue.stats().acked == 1
    })
    .await;
    let stats = running.stop().await;
    assert_eq!((stats.panics, stats.retried, stats.acked), (1, 1, 1));
    let snapshot = breaker.snapshot();
    assert_eq!((snapshot.calls, snapshot.failures), (2, 1));
}

#[tokio::test(start_paused = true)]
async fn a_handler_that_panics_before_its_first_await_is_caught_alike() {
    let queue = queue_of(2, 5);
    let breaker = breaker(100, 1, 30);
    let consumer = Arc::new(Consumer::builder(queue.clone(), Arc::clone(&breaker)).build());
    let running = Running::start(
        Arc::clone(&consumer),
        |d: Delivery<u32, u64>,
         _token|
         -> std::future::Ready<Result<Handled, Failure<DownstreamError>>> {
            assert!(d.payload != 0, "order 0 is refused before any await");
            std::future::ready(Ok(Handled::Done))
        },
    );
    wait_until(MINUTE, "both settled", || {
        let q = queue.stats();
        q.acked == 1 && q.dead == 1
    })
    .await;
    let stats = running.stop().await;
    assert_eq!((stats.panics, stats.dead_lettered, stats.acked), (1, 1, 1));
    assert_eq!(breaker.snapshot().failures, 0);
}

#[tokio::test(start_paused = true)]
async fn a_handler_past_the_timeout_is_a_failure_and_goes_back() {
    let queue = queue_of(1, 5);
    let breaker = Arc::new(breaker_runtime::Breaker::new(
        breaker_runtime::Config::builder()
            .count_window(100)
            .timeout(Duration::from_secs(1))
            .build()
            .unwrap(),
    ));
    let consumer = Arc::new(Consumer::builder(queue.clone(), Arc::clone(&breaker)).build());
    let running = Running::start(
        Arc::clone(&consumer),
        |d: Delivery<u32, u64>, _token| async move {
            if d.attempt == 1 {
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
            Ok::<_, Failure<DownstreamError>>(Handled::Done)
        },
    );
    wait_until(MINUTE, "the second delivery's ack", || {
        queue.stats().acked == 1
    })
    .await;
    let stats = running.stop().await;
    assert_eq!((stats.timeouts, stats.retried), (1, 1));
    assert_eq!(breaker.snapshot().failures, 1);
}

#[tokio::test(start_paused = true)]
async fn an_injected_failure_sends_the_message_back_unhandled_and_counts_as_a_failure() {
    let queue = queue_of(1, 5);
    let breaker = Arc::new(breaker_runtime::Breaker::new(
        breaker_runtime::Config::builder()
            .count_window(100)
            .build()
            .unwrap(),
    ));
    let handled = Arc::new(AtomicU64::new(0));
    let consumer = Arc::new(Consumer::builder(queue.clone(), Arc::clone(&breaker)).build());
    breaker
        .inject(breaker_runtime::Injection::new().fail(100.0), MINUTE)
        .unwrap();
    let seen = Arc::clone(&handled);
    let running = Running::start(
        Arc::clone(&consumer),
        move |_: Delivery<u32, u64>, _token| {
            seen.fetch_add(1, Ordering::Relaxed);
            async { Ok::<_, Failure<DownstreamError>>(Handled::Done) }
        },
    );
    // Each of its 5 deliveries fails by injection and goes back, as a failure does, until the
    // queue's delivery limit dead-letters it: the handler never runs.
    wait_until(MINUTE, "the delivery limit", || queue.stats().dead == 1).await;
    let stats = consumer.stats();
    assert_eq!((stats.injected, stats.retried, stats.timeouts), (5, 5, 0));
    assert_eq!(handled.load(Ordering::Relaxed), 0, "the handler never ran");
    assert_eq!(breaker.snapshot().failures, 5);
    // Stopped, the next message is handled.
    breaker.stop_injection().unwrap();
    queue.publish(1);
    wait_until(MINUTE, "the next message's ack", || {
        queue.stats().acked == 1
    })
    .await;
    let stats = running.stop().await;
    assert_eq!(stats.injected, 5);
    assert_eq!(handled.load(Ordering::Relaxed), 1);
}

#[tokio::test(start_paused = true)]
async fn consumers_sharing_a_breaker_pause_and_resume_together() {
    let (orders, refunds) = (queue_of(100, 5), queue_of(100, 5));
    let downstream = Downstream::new(Duration::from_millis(10));
    let shared = breaker(4, 1, 30);
    let one = Arc::new(Consumer::builder(orders.clone(), Arc::clone(&shared)).build());
    let two = Arc::new(Consumer::builder(refunds.clone(), Arc::clone(&shared)).build());
    let first = Running::start(Arc::clone(&one), handler(&downstream));
    // The second consumer's downstream is healthy: only the first one's failures open.
    let second = Running::start(Arc::clone(&two), |_d: Delivery<u32, u64>, _t| async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        Ok::<_, Failure<DownstreamError>>(Handled::Done)
    });
    tokio::time::sleep(Duration::from_millis(25)).await;
    downstream.set_healthy(false);
    wait_until(MINUTE, "the shared circuit to open", || is_open(&shared)).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let fetched = refunds.stats().fetches;
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(
        refunds.stats().fetches,
        fetched,
        "the healthy consumer paused as well"
    );
    assert!(matches!(two.status(), Status::Paused { .. }));
    first.stop().await;
    second.stop().await;
}

#[tokio::test(start_paused = true)]
async fn losing_the_broker_records_nothing_and_loses_nothing() {
    let queue = queue_of(50, 5);
    let downstream = Downstream::new(Duration::from_millis(100));
    let breaker = breaker(4, 1, 30);
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .concurrency(4)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));
    wait_until(MINUTE, "some acks", || queue.stats().acked >= 8).await;
    queue.disconnect();
    let recorded = breaker.snapshot().calls;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        consumer.stats().source_errors >= 3,
        "fetches failed and were tried again"
    );
    assert!(
        consumer.stats().fetches < 20,
        "with a backoff, not a spin: {:?}",
        consumer.stats()
    );
    assert_eq!(breaker.state(), State::Closed);
    assert!(
        breaker.snapshot().calls <= recorded + 4,
        "only the handlers in flight recorded"
    );
    queue.reconnect();
    wait_until(MINUTE, "every message acked", || queue.stats().acked == 50).await;
    running.stop().await;
    assert_eq!(
        breaker.snapshot().failures,
        0,
        "the broker's outage is not the downstream's"
    );
    assert!(queue.dead_letters().is_empty());
}

#[tokio::test(start_paused = true)]
async fn shutdown_waits_for_the_handlers_in_flight() {
    let queue = queue_of(3, 5);
    let downstream = Downstream::new(Duration::from_secs(2));
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), breaker(10, 1, 30))
            .concurrency(3)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));
    wait_until(MINUTE, "three in flight", || queue.stats().unsettled == 3).await;
    let stats = running.stop().await;
    assert_eq!(stats.acked, 3);
    assert_eq!(queue.stats().unsettled, 0);
}

/// The scenario on the in-memory queue: 500 messages, a downstream down for a stretch,
/// then back.
#[tokio::test(start_paused = true)]
async fn an_outage_dead_letters_nothing_and_every_message_is_handled() {
    let queue = queue_of(500, 5);
    let downstream = Downstream::new(Duration::from_millis(20));
    let breaker = breaker(10, 2, 5);
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .concurrency(8)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));
    wait_until(MINUTE, "100 acks", || queue.stats().acked >= 100).await;

    downstream.set_healthy(false);
    tokio::time::sleep(Duration::from_secs(40)).await;
    let during = downstream.calls();
    downstream.set_healthy(true);
    wait_until(Duration::from_secs(120), "every message acked", || {
        queue.stats().acked == 500
    })
    .await;
    let stats = running.stop().await;
    assert!(
        queue.dead_letters().is_empty(),
        "nothing dead-lettered for the outage"
    );
    assert!(
        stats.pauses >= 3,
        "three failed probe rounds, then recovery: {stats:?}"
    );
    assert!(
        during < 200,
        "the outage reached the downstream {during} times"
    );
    assert!(stats.pauses >= 2, "{stats:?}");
    assert_eq!(queue.stats().unsettled, 0);
}

/// A pushing broker's view: what the consumer told the source, in order.
#[derive(Clone)]
struct Told {
    queue: MemoryQueue<u32>,
    said: Arc<std::sync::Mutex<Vec<String>>>,
}

impl breaker_consumer::Source for Told {
    type Payload = u32;
    type Id = u64;
    type Error = breaker_consumer::Disconnected;

    async fn fetch(
        &self,
        want: breaker_consumer::Want,
    ) -> Result<breaker_consumer::Deliveries<Self>, Self::Error> {
        self.queue.fetch(want).await
    }
    async fn settle(&self, id: u64, s: breaker_consumer::Settlement) -> Result<(), Self::Error> {
        self.queue.settle(id, s).await
    }
    async fn pause(&self) -> Result<(), Self::Error> {
        self.said.lock().unwrap().push("pause".into());
        Ok(())
    }
    async fn resume(&self, in_flight: usize) -> Result<(), Self::Error> {
        self.said
            .lock()
            .unwrap()
            .push(format!("resume {in_flight}"));
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn a_pushing_source_is_paused_for_every_break_and_resumed_with_room_for_the_probes() {
    let told = Told {
        queue: queue_of(100, 10),
        said: Arc::default(),
    };
    let downstream = Downstream::new(Duration::from_millis(10));
    downstream.set_healthy(false);
    let breaker = breaker(4, 2, 5);
    let consumer = Arc::new(
        Consumer::builder(told.clone(), Arc::clone(&breaker))
            .concurrency(6)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));
    wait_until(MINUTE, "the circuit to open", || is_open(&breaker)).await;
    // The first probe round fails; the second, 10 s later, succeeds.
    wait_until(Duration::from_secs(6), "half-open", || {
        breaker.state() == State::HalfOpen
    })
    .await;
    wait_until(Duration::from_secs(1), "the reopening", || {
        is_open(&breaker)
    })
    .await;
    downstream.set_healthy(true);
    wait_until(Duration::from_secs(11), "closed", || {
        breaker.state() == State::Closed
    })
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    running.stop().await;
    assert_eq!(
        *told.said.lock().unwrap(),
        [
            "resume 6", "pause", "resume 2", "pause", "resume 2", "resume 6"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_retried_message_waits_out_the_redelivery_delay_behind_the_others() {
    use breaker_consumer::{Settlement, Source, Want};
    let queue = MemoryQueue::new(5).redeliver_after(Duration::from_secs(1));
    queue.publish(1);
    let first = queue.fetch(Want::up_to(1)).await.unwrap().remove(0);
    queue.settle(first.id, Settlement::Retry).await.unwrap();
    queue.publish(2);
    let next = queue.fetch(Want::up_to(5)).await.unwrap();
    assert_eq!(
        next.iter().map(|d| d.payload).collect::<Vec<_>>(),
        [2],
        "1 is held back"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let again = queue.fetch(Want::up_to(5)).await.unwrap();
    assert_eq!((again[0].payload, again[0].attempt), (1, 2));
}

#[tokio::test(start_paused = true)]
async fn a_pause_takes_effect_within_one_fetch() {
    let queue = queue_of(100, 10);
    let downstream = Downstream::new(Duration::from_millis(10));
    downstream.set_healthy(false);
    let breaker = breaker(4, 1, 30);
    // Fetches counted by the queue at the moment the circuit opens.
    let at_opening = Arc::new(AtomicU64::new(u64::MAX));
    let _watch = breaker.on_transition({
        let (at_opening, queue) = (Arc::clone(&at_opening), queue.clone());
        move |t| {
            if t.to == State::Open {
                at_opening.fetch_min(queue.stats().fetches, Ordering::SeqCst);
            }
        }
    });
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .concurrency(4)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));
    wait_until(MINUTE, "the circuit to open", || is_open(&breaker)).await;
    tokio::time::sleep(Duration::from_secs(29)).await;
    let after = queue.stats().fetches - at_opening.load(Ordering::SeqCst);
    assert!(after <= 1, "{after} fetches after the opening");
    running.stop().await;
}

/// A source that hands out everything it has, whatever it is asked for.
struct Greedy(MemoryQueue<u32>);

impl breaker_consumer::Source for Greedy {
    type Payload = u32;
    type Id = u64;
    type Error = breaker_consumer::Disconnected;

    async fn fetch(
        &self,
        _want: breaker_consumer::Want,
    ) -> Result<breaker_consumer::Deliveries<Self>, Self::Error> {
        self.0.fetch(breaker_consumer::Want::up_to(1000)).await
    }
    async fn settle(&self, id: u64, s: breaker_consumer::Settlement) -> Result<(), Self::Error> {
        self.0.settle(id, s).await
    }
}

#[tokio::test(start_paused = true)]
async fn deliveries_beyond_what_was_asked_go_back_unhandled_not_lost() {
    let queue = queue_of(20, 100);
    let downstream = Downstream::new(Duration::from_millis(10));
    let consumer = Arc::new(
        Consumer::builder(Greedy(queue.clone()), breaker(10, 1, 30))
            .concurrency(4)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));
    wait_until(MINUTE, "every message acked", || queue.stats().acked == 20).await;
    let stats = running.stop().await;
    assert_eq!(
        downstream.max_in_flight(),
        4,
        "never more than the concurrency"
    );
    assert!(stats.released > 0, "{stats:?}");
    assert_eq!(queue.stats().unsettled, 0);
}

#[tokio::test(start_paused = true)]
async fn a_probe_is_timed_from_its_message_not_from_the_wait_for_one() {
    use breaker_runtime::{Breaker, Config, Order};

    let queue = MemoryQueue::new(5);
    let downstream = Downstream::new(Duration::from_millis(10));
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .count_window(4)
            .probes(1)
            .break_duration(Duration::from_secs(10))
            .slow_call(Duration::from_millis(50))
            .no_timeout()
            .build()
            .unwrap(),
    ));
    let consumer = Arc::new(Consumer::builder(queue.clone(), Arc::clone(&breaker)).build());
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));
    tokio::time::sleep(Duration::from_millis(30)).await;
    breaker.apply_order(1, Order::HalfOpen);
    // The probe permit is taken for a fetch, which waits up to 100 ms for a message: it comes
    // 70 ms into that wait, and takes 10 ms to handle.
    while breaker.snapshot().probes_in_flight == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    tokio::time::sleep(Duration::from_millis(70)).await;
    queue.publish(1);
    wait_until(Duration::from_secs(1), "the probe to be handled", || {
        queue.stats().acked == 1
    })
    .await;
    running.stop().await;

    assert_eq!(
        breaker.state(),
        State::Closed,
        "a 10 ms probe is not slow for the time it waited for its message"
    );
    assert_eq!(breaker.snapshot().slow, 0);
}

#[tokio::test(start_paused = true)]
async fn two_runs_of_one_consumer_share_its_concurrency() {
    let queue = queue_of(60, 3);
    let downstream = Downstream::new(Duration::from_millis(50));
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), breaker(10, 1, 30))
            .concurrency(4)
            .build(),
    );
    let first = Running::start(Arc::clone(&consumer), handler(&downstream));
    let second = Running::start(Arc::clone(&consumer), handler(&downstream));
    wait_until(MINUTE, "every message acked", || queue.stats().acked == 60).await;
    let (a, b) = (first.stop().await, second.stop().await);

    assert_eq!(
        downstream.max_in_flight(),
        4,
        "never more than 4 between them"
    );
    assert_eq!(a.handled, 60, "the counts are the consumer's: {a:?}");
    assert_eq!(a, b);
    assert_eq!(queue.stats().deliveries, 60, "one delivery per message");
}

#[tokio::test(start_paused = true)]
async fn in_shadow_mode_an_open_circuit_never_pauses_the_consumer() {
    let queue = queue_of(60, 100);
    let downstream = Downstream::new(Duration::from_millis(10));
    downstream.set_healthy(false);
    let breaker = breaker(4, 1, 30);
    breaker.set_mode(breaker_runtime::Mode::Shadow);
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .concurrency(2)
            .build(),
    );
    let running = Running::start(Arc::clone(&consumer), handler(&downstream));
    wait_until(MINUTE, "the circuit to open", || is_open(&breaker)).await;
    let calls = downstream.calls();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        downstream.calls() > calls + 10,
        "deliveries keep reaching the handler while open: {} then {}",
        calls,
        downstream.calls()
    );
    assert_eq!(consumer.stats().pauses, 0, "never paused");
    assert_eq!(consumer.status(), Status::Running);
    running.stop().await;
}

/// A memory queue whose broker would hand a delivery to another consumer after `after`.
struct ClaimedAfter {
    queue: MemoryQueue<u32>,
    after: Duration,
}

impl Source for ClaimedAfter {
    type Payload = u32;
    type Id = u64;
    type Error = Disconnected;

    async fn fetch(&self, want: Want) -> Result<Deliveries<Self>, Disconnected> {
        self.queue.fetch(want).await
    }

    async fn settle(&self, id: u64, settlement: Settlement) -> Result<(), Disconnected> {
        self.queue.settle(id, settlement).await
    }

    fn claimed_after(&self) -> Option<Duration> {
        Some(self.after)
    }
}

#[tokio::test(start_paused = true)]
async fn a_claim_that_can_come_before_the_timeout_is_warned_of_with_the_figures() {
    let with_timeout = |timeout: Option<Duration>| {
        let config = breaker_runtime::Config::builder();
        let config = match timeout {
            Some(timeout) => config.timeout(timeout),
            None => config.no_timeout(),
        };
        Arc::new(breaker_runtime::Breaker::new(config.build().unwrap()))
    };
    let build = |timeout: Option<Duration>| {
        let (logs, _capture) = Logs::capture();
        let source = ClaimedAfter {
            queue: MemoryQueue::new(5),
            after: Duration::from_secs(2),
        };
        let _consumer = Consumer::builder(source, with_timeout(timeout)).build();
        logs.at("WARN")
    };

    assert_eq!(build(Some(Duration::from_secs(1))), Vec::<String>::new());
    let equal = build(Some(Duration::from_secs(2)));
    assert_eq!(equal.len(), 1, "{equal:#?}");
    assert!(
        equal[0].contains("after 2s unsettled") && equal[0].contains("may run for 2s"),
        "{equal:#?}"
    );
    let unbounded = build(None);
    assert_eq!(unbounded.len(), 1, "{unbounded:#?}");
    assert!(unbounded[0].contains("no timeout"), "{unbounded:#?}");
}

#[tokio::test(start_paused = true)]
async fn every_dead_letter_is_counted_whichever_way_it_went() {
    // Of 30 orders: those ending in 1 are poison, those ending in 2 panic, those ending in 3
    // always fail until the queue's limit of 3 deliveries dead-letters them.
    let queue = queue_of(30, 3);
    let consumer = Arc::new(Consumer::builder(queue.clone(), breaker(1000, 1, 30)).build());
    let running = Running::start(
        Arc::clone(&consumer),
        |d: Delivery<u32, u64>, _token| async move {
            match d.payload % 10 {
                1 => Err(Failure::Permanent(DownstreamError::Declined)),
                2 => panic!("order {} breaks the handler", d.payload),
                3 => Err(Failure::Retry(DownstreamError::Declined)),
                _ => Ok(Handled::Done),
            }
        },
    );
    wait_until(MINUTE, "every message settled", || {
        let q = queue.stats();
        q.acked + q.dead as u64 == 30 && q.ready == 0 && q.unsettled == 0
    })
    .await;
    let stats = running.stop().await;
    assert_eq!(
        (
            stats.dead_lettered,
            stats.limit_reached,
            stats.dead_letters()
        ),
        (6, 3, 9)
    );
    assert_eq!(
        stats.dead_letters(),
        queue.stats().dead as u64,
        "as the queue says"
    );
    assert_eq!(
        consumer.stats().limit_reached,
        3,
        "read from the source at any time"
    );
}

#[tokio::test(start_paused = true)]
async fn a_source_that_cannot_fetch_makes_the_consumer_degraded_with_the_reason_until_it_can() {
    let (logs, _capture) = Logs::capture();
    let queue = queue_of(0, 5);
    let consumer = Arc::new(Consumer::builder(queue.clone(), breaker(10, 1, 30)).build());
    let running = Running::start(
        Arc::clone(&consumer),
        |_d: Delivery<u32, u64>, _token| async { Ok::<_, Failure<DownstreamError>>(Handled::Done) },
    );
    wait_until(MINUTE, "a first fetch", || consumer.stats().fetches > 0).await;
    assert_eq!(consumer.status(), Status::Running);

    queue.disconnect();
    let cut = Instant::now();
    wait_until(MINUTE, "a failed fetch", || {
        consumer.stats().source_errors > 0
    })
    .await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    let Status::Degraded { since, reason } = consumer.status() else {
        panic!(
            "degraded while the source fails, not {:?}",
            consumer.status()
        );
    };
    assert!(
        since >= cut && since - cut < Duration::from_secs(1),
        "from the first failure"
    );
    assert_eq!(&*reason, "the in-memory queue is disconnected");
    assert!(
        consumer
            .status()
            .to_string()
            .starts_with("degraded for 30."),
        "{}",
        consumer.status()
    );
    assert!(consumer.stats().source_errors >= 3, "it kept trying");
    let degraded = |logs: &Logs| {
        logs.at("WARN")
            .iter()
            .filter(|w| w.contains("consumer degraded"))
            .count()
    };
    assert_eq!(
        degraded(&logs),
        1,
        "said once per stretch, not once per try"
    );

    queue.reconnect();
    queue.publish(7);
    wait_until(MINUTE, "the message after the source came back", || {
        queue.stats().acked == 1
    })
    .await;
    assert_eq!(consumer.status(), Status::Running);
    assert!(
        logs.at("INFO")
            .iter()
            .any(|i| i.contains("no longer degraded")),
        "{:#?}",
        logs.at("INFO")
    );
    running.stop().await;
}
