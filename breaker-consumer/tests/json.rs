//! Handlers that take their own type, decoded from JSON (feature `json`), over the in-memory
//! queue on tokio's paused clock.

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_consumer::json::{json, json_field};
use breaker_consumer::{Consumer, Delivery, Failure, Handled, MemoryQueue};
use support::logs::Logs;
use support::{DownstreamError, Running, breaker, wait_until};

const MINUTE: Duration = Duration::from_secs(60);

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Order {
    id: u32,
    grams: u32,
}

fn settled<P>(queue: &MemoryQueue<P>, messages: u64) -> impl FnMut() -> bool + '_ {
    move || {
        let q = queue.stats();
        q.acked + q.dead as u64 == messages && q.ready == 0 && q.unsettled == 0
    }
}

#[tokio::test(start_paused = true)]
async fn a_body_that_does_not_decode_is_dead_lettered_unhandled_and_records_nothing() {
    let (logs, _capture) = Logs::capture();
    let queue = MemoryQueue::new(5);
    for body in [
        r#"{"id": 1, "grams": 300}"#,
        "not json",
        r#"{"id": 2}"#,
        r#"{"id": 3, "grams": 10}"#,
    ] {
        queue.publish(body.to_owned());
    }
    let breaker = breaker(100, 1, 30);
    // Even where poison counts, a message that does not decode says nothing of the downstream.
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), Arc::clone(&breaker))
            .count_permanent(true)
            .build(),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let running = Running::start(
        Arc::clone(&consumer),
        json({
            let seen = Arc::clone(&seen);
            move |order: Delivery<Order, _>, _cancelled| {
                seen.lock().unwrap().push(order.payload);
                async { Ok::<_, Failure<DownstreamError>>(Handled::Done) }
            }
        }),
    );
    wait_until(MINUTE, "every message settled", settled(&queue, 4)).await;
    let stats = running.stop().await;

    assert_eq!(
        *seen.lock().unwrap(),
        [Order { id: 1, grams: 300 }, Order { id: 3, grams: 10 }]
    );
    assert_eq!(queue.dead_letters(), ["not json", r#"{"id": 2}"#]);
    assert_eq!((stats.acked, stats.dead_lettered, stats.retried), (2, 2, 0));
    let snapshot = breaker.snapshot();
    assert_eq!(
        (snapshot.calls, snapshot.failures),
        (2, 0),
        "the two handled only"
    );
    let warnings = logs.at("WARN");
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert!(
        warnings[1].contains("missing field `grams`") && warnings[1].contains("id="),
        "serde's error and the delivery: {warnings:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_field_holds_the_json_of_a_stream_entry() {
    let queue = MemoryQueue::new(5);
    let entry = |fields: &[(&str, &str)]| -> HashMap<String, Vec<u8>> {
        fields
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.as_bytes().to_vec()))
            .collect()
    };
    queue.publish(entry(&[
        ("order", r#"{"id": 4, "grams": 5}"#),
        ("trace", "x"),
    ]));
    queue.publish(entry(&[("trace", "y")]));
    let consumer = Arc::new(Consumer::builder(queue.clone(), breaker(100, 1, 30)).build());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let running = Running::start(
        Arc::clone(&consumer),
        json_field("order", {
            let seen = Arc::clone(&seen);
            move |order: Delivery<Order, _>, _cancelled| {
                seen.lock().unwrap().push(order.payload);
                async { Ok::<_, Failure<DownstreamError>>(Handled::Done) }
            }
        }),
    );
    wait_until(MINUTE, "both settled", settled(&queue, 2)).await;
    let stats = running.stop().await;
    assert_eq!(*seen.lock().unwrap(), [Order { id: 4, grams: 5 }]);
    assert_eq!((stats.acked, stats.dead_lettered), (1, 1));
    assert_eq!(
        queue.dead_letters()[0]["trace"],
        b"y",
        "the one without the field"
    );
}

#[tokio::test(start_paused = true)]
async fn the_handlers_own_errors_count_as_they_say() {
    let queue = MemoryQueue::new(1);
    queue.publish(r#"{"id": 5, "grams": 1}"#.to_owned());
    queue.publish(r#"{"id": 6, "grams": 1}"#.to_owned());
    let breaker = breaker(100, 1, 30);
    let consumer = Arc::new(Consumer::builder(queue.clone(), Arc::clone(&breaker)).build());
    let running = Running::start(
        Arc::clone(&consumer),
        json(|order: Delivery<Order, _>, _cancelled| async move {
            match order.payload.id {
                5 => Err(Failure::Retry(DownstreamError::Unavailable)),
                _ => Err(Failure::Permanent(DownstreamError::Unavailable)),
            }
        }),
    );
    wait_until(MINUTE, "both dead-lettered", || queue.stats().dead == 2).await;
    let stats = running.stop().await;
    assert_eq!(
        (stats.retried, stats.dead_lettered, stats.limit_reached),
        (1, 1, 1)
    );
    assert_eq!(
        breaker.snapshot().failures,
        1,
        "the retry counted, the permanent did not"
    );
}
