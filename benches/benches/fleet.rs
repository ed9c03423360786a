//! What taking part in a fleet costs a closed call: the same breaker and the same call, with
//! the fleet off and on, in one run.
//!
//! `cargo bench -p breaker-benches --bench fleet`
//!
//! With the fleet on, the breaker counts every closed outcome for the member to flush (a count
//! window full of successes otherwise records nothing), and a member task flushes its counts
//! every 100 ms on a runtime of its own, as in a service. The target: at most 2 ns
//! more per closed call.

use std::hint::black_box;
use std::sync::Arc;

use breaker_fleet::{Fleet, MemoryFleet, Options};
use breaker_runtime::{Breaker, Config, Verdict};
use criterion::{Criterion, criterion_group, criterion_main};

fn breaker() -> Arc<Breaker> {
    Arc::new(Breaker::new(
        Config::builder()
            .count_window(100)
            .build()
            .expect("a valid configuration"),
    ))
}

fn closed_call(breaker: &Breaker) {
    let permit = black_box(breaker).try_acquire().expect("closed");
    permit.record(black_box(Verdict::Success));
}

/// A closed call, and every 50th a failure, so the window is never all successes (2% stays
/// far under the threshold).
fn closed_call_keeping_a_failure(breaker: &Breaker) {
    thread_local! {
        static N: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }
    let n = N.with(|n| {
        n.set(n.get().wrapping_add(1));
        n.get()
    });
    let permit = black_box(breaker).try_acquire().expect("closed");
    permit.record(if n % 50 == 0 {
        Verdict::Failure
    } else {
        Verdict::Success
    });
}

fn closed_call_with_and_without_the_fleet(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let alone = breaker();
    let member = breaker();
    let fleet = runtime.block_on(async {
        Fleet::start(
            MemoryFleet::new(),
            Options::default().with(Arc::clone(&member)),
        )
    });

    let mut group = c.benchmark_group("fleet");
    group.bench_function("closed call, fleet off", |b| b.iter(|| closed_call(&alone)));
    group.bench_function("closed call, fleet on", |b| b.iter(|| closed_call(&member)));
    // A window that holds a failure records every call anyway: counting adds nothing there.
    for breaker in [&alone, &member] {
        breaker
            .try_acquire()
            .expect("closed")
            .record(Verdict::Failure);
    }
    group.bench_function("closed call, a failure in the window, fleet off", |b| {
        b.iter(|| closed_call_keeping_a_failure(&alone))
    });
    group.bench_function("closed call, a failure in the window, fleet on", |b| {
        b.iter(|| closed_call_keeping_a_failure(&member))
    });
    group.finish();
    assert!(
        fleet.stats().connected,
        "the member was flushing throughout"
    );
    runtime.block_on(fleet.leave());
}

criterion_group!(benches, closed_call_with_and_without_the_fleet);
criterion_main!(benches);
