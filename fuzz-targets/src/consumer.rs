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

/// Messages one consumer takes before a fresh queue and consumer replace it: the in-memory
/// queue keeps every dead letter, as a dead-letter queue does, so a run of millions of inputs
/// would otherwise end out of memory (it did, after 12 million).
const MESSAGES_PER_QUEUE: u64 = 100_000;

/// A consumer on a runtime of its own, each input one message, and how to stop it.
struct Running {
    queue: MemoryQueue<Vec<u8>>,
    stop: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    fn start(seen: &Arc<Seen>) -> Running {
        let queue = MemoryQueue::new(5);
        let config = Config::builder()
            .name("fuzz::consumer")
            .count_window(100)
            .build()
            .expect("valid");
        let consumer = Consumer::builder(queue.clone(), Arc::new(Breaker::new(config))).build();
        let handler_seen = Arc::clone(seen);
        let handler = json(move |order: Delivery<Order, _>, _cancelled| {
            *handler_seen.last.lock().expect("not poisoned") = Some(order.payload);
            handler_seen.count.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, Failure<std::io::Error>>(Handled::Done) }
        });
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime")
                .block_on(consumer.run(handler, stopped));
        });
        Running {
            queue,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

static SEEN: LazyLock<Arc<Seen>> = LazyLock::new(|| {
    Arc::new(Seen {
        last: Mutex::new(None),
        count: AtomicU64::new(0),
    })
});
static RUNNING: Mutex<Option<Running>> = Mutex::new(None);

/// Publishes the input as a message's body. **It settles exactly once: handled with the value
/// serde reads from it when it decodes, dead-lettered without reaching the handler when it
/// does not.**
pub fn consumer(data: &[u8]) {
    let seen = &*SEEN;
    let mut running = RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let spent = running
        .as_ref()
        .is_none_or(|r| r.queue.stats().published >= MESSAGES_PER_QUEUE);
    if spent {
        // The old one stops (and its queue goes) before the new one starts.
        *running = None;
        *running = Some(Running::start(seen));
    }
    let queue = &running.as_ref().expect("started").queue;
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
