//! The queue consumer's own cost per message: the consumer against a bare loop over the same
//! in-memory queue, closed, in one run.
//!
//! `cargo bench -p breaker-benches --bench consumer`
//!
//! Both take `iters` messages published beforehand, fetch up to 8 at a time, run a handler that
//! answers at once, and ack each. The bare loop does that in one task; the consumer admits each
//! message through its breaker, runs each handler in a task of its own under a permit, and
//! settles it there. The consumer's cost per message is its figure less the bare loop's (the
//! issue's target: at most 1 µs).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use breaker_consumer::{
    CancellationToken, Consumer, Delivery, Failure, Handled, MemoryQueue, Settlement, Source, Want,
};
use breaker_runtime::{Breaker, Config};
use criterion::{Criterion, criterion_group, criterion_main};

#[derive(Debug)]
struct Never;

impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}

impl std::error::Error for Never {}

impl breaker_runtime::IsFailure for Never {
    fn is_failure(&self) -> bool {
        true
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime")
}

fn filled(messages: u64) -> MemoryQueue<u64> {
    let queue = MemoryQueue::new(5);
    for n in 0..messages {
        queue.publish(n);
    }
    queue
}

async fn bare_loop(queue: &MemoryQueue<u64>, messages: u64) {
    let mut handled = 0;
    while handled < messages {
        let batch = queue.fetch(Want::up_to(8)).await.expect("connected");
        for delivery in batch {
            std::hint::black_box(delivery.payload);
            queue
                .settle(delivery.id, Settlement::Ack)
                .await
                .expect("connected");
            handled += 1;
        }
    }
}

async fn through_consumer(queue: MemoryQueue<u64>, messages: u64) {
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .count_window(100)
            .no_timeout()
            .build()
            .expect("valid"),
    ));
    let consumer = Consumer::builder(queue, breaker).concurrency(8).build();
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    let handled = Arc::new(AtomicU64::new(0));
    consumer
        .run(
            move |delivery: Delivery<u64, u64>, _cancelled| {
                std::hint::black_box(delivery.payload);
                if handled.fetch_add(1, Ordering::Relaxed) + 1 == messages {
                    stop.cancel();
                }
                async { Ok::<_, Failure<Never>>(Handled::Done) }
            },
            shutdown,
        )
        .await;
}

fn per_message(c: &mut Criterion) {
    let mut group = c.benchmark_group("consumer, per message");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    let runtime = runtime();
    group.bench_function("bare loop over the in-memory queue", |b| {
        b.iter_custom(|iters| {
            let queue = filled(iters);
            let start = Instant::now();
            runtime.block_on(bare_loop(&queue, iters));
            start.elapsed()
        })
    });
    group.bench_function("ours: the consumer over the in-memory queue", |b| {
        b.iter_custom(|iters| {
            let queue = filled(iters);
            let start = Instant::now();
            runtime.block_on(through_consumer(queue, iters));
            start.elapsed()
        })
    });
    group.finish();
}

criterion_group!(benches, per_message);
criterion_main!(benches);
