//! What the options around a call cost, in one run: the closed call through the attribute with
//! none of them (what every guarded fn pays today), with `retries` (a call into the retry
//! budget) and with `max_concurrent` (a bulkhead slot), and the budget check and the bulkhead
//! admission on their own.
//!
//! `cargo bench -p breaker-benches --bench policy`
//!
//! The targets: the closed path with the options off unchanged; a budget check at most
//! 30 ns; a bulkhead admission at most 10 ns uncontended.

use std::hint::black_box;
use std::io;
use std::time::Duration;

// Only `poll_once` is used here.
#[allow(dead_code)]
mod common;

use breaker_runtime::__private::bench;
use breaker_runtime::{Policy, circuit_breaker};
use common::poll_once;
use criterion::{Criterion, criterion_group, criterion_main};

#[circuit_breaker(window = "100", timeout = "off")]
async fn plain() -> Result<u64, io::Error> {
    black_box(Ok(1))
}

#[circuit_breaker(window = "100", timeout = "off", retries = 3)]
async fn retrying() -> Result<u64, io::Error> {
    black_box(Ok(1))
}

#[circuit_breaker(window = "100", timeout = "off", max_concurrent = 64)]
async fn bulkheaded() -> Result<u64, io::Error> {
    black_box(Ok(1))
}

fn closed_call_with_and_without_the_options(c: &mut Criterion) {
    let mut group = c.benchmark_group("policy");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(40);
    group.bench_function("closed call, #[circuit_breaker], no options", |b| {
        b.iter(|| poll_once(plain()))
    });
    group.bench_function("closed call, #[circuit_breaker], retries = 3", |b| {
        b.iter(|| poll_once(retrying()))
    });
    group.bench_function(
        "closed call, #[circuit_breaker], max_concurrent = 64",
        |b| b.iter(|| poll_once(bulkheaded())),
    );

    let retries = Policy::builder()
        .retries(3)
        .build()
        .expect("a valid policy");
    group.bench_function("retry budget: a call's deposit", |b| {
        b.iter(|| bench::retry_deposit(black_box(&retries)))
    });
    // A budget of 100%, one call per retry: every check passes and counts its retry, the
    // dearer of its two answers. The check is this less the deposit above.
    let generous = Policy::builder()
        .retries(3)
        .retry_budget(100.0)
        .build()
        .expect("a valid policy");
    group.bench_function("retry budget: a call's deposit and a retry's check", |b| {
        b.iter(|| {
            bench::retry_deposit(black_box(&generous));
            assert!(bench::retry_check(black_box(&generous)));
        })
    });
    let bulkhead = Policy::builder()
        .max_concurrent(64)
        .build()
        .expect("a valid policy");
    group.bench_function("bulkhead: admission and release, uncontended", |b| {
        b.iter(|| assert!(bench::bulkhead_admission(black_box(&bulkhead))))
    });
    group.finish();
}

criterion_group!(benches, closed_call_with_and_without_the_options);
criterion_main!(benches);
