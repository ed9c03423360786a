//! The hot path, measured: a call through a closed breaker against the floor of one atomic
//! `fetch_add`, and a rejection by an open breaker.
//!
//! `cargo bench -p breaker-runtime --bench hot_path`

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breaker_runtime::{Breaker, Config, ConfigBuilder};
use criterion::{Criterion, criterion_group, criterion_main};

fn ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => value,
        Poll::Pending => unreachable!("benchmarked bodies are ready at once"),
    }
}

fn breaker(builder: ConfigBuilder) -> Breaker {
    Breaker::new(builder.build().expect("valid"))
}

fn hot_path(c: &mut Criterion) {
    let mut group = c.benchmark_group("hot_path");

    let floor = AtomicU64::new(0);
    group.bench_function("floor: AtomicU64::fetch_add", |b| {
        b.iter(|| black_box(floor.fetch_add(1, Ordering::AcqRel)))
    });

    group.bench_function("bare call (baseline)", |b| {
        b.iter(|| ready(async { black_box(Ok::<u32, std::io::Error>(1)) }))
    });

    let count = breaker(Config::builder().count_window(100).no_timeout());
    group.bench_function("closed, count window, permit API", |b| {
        b.iter(|| count.try_acquire().map(|p| p.success()))
    });
    group.bench_function("closed, count window, no timeout", |b| {
        b.iter(|| ready(count.call(async { black_box(Ok::<u32, std::io::Error>(1)) })))
    });

    let timed = breaker(
        Config::builder()
            .count_window(100)
            .timeout(Duration::from_secs(1)),
    );
    group.bench_function("closed, count window, timeout", |b| {
        b.iter(|| ready(timed.call(async { black_box(Ok::<u32, std::io::Error>(1)) })))
    });

    let time = breaker(
        Config::builder()
            .time_window(Duration::from_secs(30))
            .no_timeout(),
    );
    group.bench_function("closed, time window, no timeout", |b| {
        b.iter(|| ready(time.call(async { black_box(Ok::<u32, std::io::Error>(1)) })))
    });

    let open = breaker(Config::builder().count_window(100).no_timeout());
    open.force_open();
    group.bench_function("open: rejection", |b| {
        b.iter(|| ready(open.call(async { black_box(Ok::<u32, std::io::Error>(1)) })))
    });
    let tripped = breaker(
        Config::builder()
            .count_window(1)
            .no_timeout()
            .break_duration(Duration::from_secs(3600)),
    );
    tripped.try_acquire().map(|p| p.failure()).ok();
    group.bench_function("open (tripped): rejection", |b| {
        b.iter(|| ready(tripped.call(async { black_box(Ok::<u32, std::io::Error>(1)) })))
    });

    group.finish();
}

criterion_group!(benches, hot_path);
criterion_main!(benches);
