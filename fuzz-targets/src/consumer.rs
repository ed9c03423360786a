//! The queue consumer's JSON payloads: a message whose body any producer wrote, decoded into
//! the handler's own type.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use breaker_consumer::json::json;
use breaker_consumer::{CancellationToken, Consumer, Delivery, Failure, Handled, MemoryQueue};
use breaker_runtime::{Breaker, Config};

/// The handler's type, as a service would declare it.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
struct Order {
    id: u32,
    grams: u32,
    #[serde(default)]
    note: Option<String>,
}

/// The message the handler saw last, and how many it saw.
struct Seen {
    last: Mutex<Option<Order>>,
    count: AtomicU64,
}

/// One consumer for the whole run, on a runtime of its own: each input is one message.
static RUNNING: LazyLock<(MemoryQueue<Vec<u8>>, Arc<Seen>)> = LazyLock::new(|| {
    let queue = MemoryQueue::new(5);
    let seen = Arc::new(Seen {
        last: Mutex::new(None),
        count: AtomicU64::new(0),
    });
    let config = Config::builder()
        .name("fuzz::consumer")
        .count_window(100)
        .build()
        .expect("valid");
    let consumer = Consumer::builder(queue.clone(), Arc::new(Breaker::new(config))).build();
    let handler_seen = Arc::clone(&seen);
    let handler = json(move |order: Delivery<Order, _>, _cancelled| {
        *handler_seen.last.lock().expect("not poisoned") = Some(order.payload);
        handler_seen.count.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, Failure<std::io::Error>>(Handled::Done) }
    });
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(consumer.run(handler, CancellationToken::new()));
    });
    (queue, seen)
});

/// Publishes the input as a message's body. **It settles exactly once: handled with the value
/// serde reads from it when it decodes, dead-lettered without reaching the handler when it
/// does not.**
pub fn consumer(data: &[u8]) {
    let (queue, seen) = &*RUNNING;
    let before = queue.stats();
    let handled_before = seen.count.load(Ordering::SeqCst);
    queue.publish(data.to_vec());
    let started = Instant::now();
    let after = loop {
        let now = queue.stats();
        if now.acked + now.dead as u64 > before.acked + before.dead as u64 {
            break now;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{data:?} never settled"
        );
        std::thread::yield_now();
    };
    let handled = seen.count.load(Ordering::SeqCst) - handled_before;
    match serde_json::from_slice::<Order>(data) {
        Ok(order) => {
            assert_eq!(
                (after.acked - before.acked, handled),
                (1, 1),
                "{data:?} decodes"
            );
            let last = seen.last.lock().expect("not poisoned").clone();
            assert_eq!(last, Some(order));
        }
        Err(_) => {
            assert_eq!(
                (after.dead - before.dead, handled),
                (1, 0),
                "{data:?} does not decode"
            );
        }
    }
}
