//! The tower layer against the bare service and against tower-resilience-circuitbreaker's layer,
//! closed, in one run.
//!
//! `cargo bench -p breaker-benches --bench layer`
//!
//! Both layers wrap the same inner service as in `compare` (`common::Dependency`, answering a
//! `std::future::Ready`), and every request is `ready()` then `call()`, each polled once with a
//! no-op waker; no tokio runtime is involved. The overhead of a layer is its figure less the bare service's.

use std::borrow::Cow;
use std::time::Duration;

mod common;

use common::{Dependency, poll_once};

use breaker_runtime::Config;
use breaker_runtime::tower::CircuitBreakerLayer;
use criterion::{Criterion, criterion_group, criterion_main};
use tower::{Layer, Service, ServiceExt};

/// `ready()` then `call(request)`, each polled once.
#[inline(always)]
fn request<S: Service<u64>>(service: &mut S, request: u64) -> Result<S::Response, S::Error> {
    let service = poll_once(ServiceExt::<u64>::ready(service))?;
    poll_once(service.call(request))
}

fn config(name: &str) -> Config {
    Config::builder()
        .name(name.to_string())
        .count_window(100)
        .no_timeout()
        .build()
        .expect("valid config")
}

fn closed(c: &mut Criterion) {
    let mut group = c.benchmark_group("tower layer, closed");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(40);

    let mut bare = Dependency;
    group.bench_function("bare service", |b| b.iter(|| request(&mut bare, 1)));

    let mut single = CircuitBreakerLayer::new(config("bench-single")).layer(Dependency);
    group.bench_function("ours: no key", |b| b.iter(|| request(&mut single, 1)));

    let mut keyed = CircuitBreakerLayer::new(config("bench-keyed"))
        .max_keys(64)
        .key(|n: &u64| Cow::Borrowed(if n & 1 == 0 { "even" } else { "odd" }))
        .layer(Dependency);
    for n in 0..32u64 {
        // Other keys in the map, so the lookup is not of the only entry.
        let _ = request(&mut keyed, n);
    }
    group.bench_function("ours: known key (borrowed)", |b| {
        b.iter(|| request(&mut keyed, 1))
    });

    // The same policy as `compare`'s tower-resilience cases: 50% over a count window of 100.
    let mut peer = tower_resilience_circuitbreaker::CircuitBreakerLayer::builder()
        .failure_rate_threshold(0.5)
        .sliding_window_size(100)
        .wait_duration_in_open(Duration::from_secs(30))
        .build()
        .expect("valid config")
        .layer(Dependency);
    group.bench_function("tower-resilience: layer service", |b| {
        b.iter(|| request(&mut peer, 1))
    });

    let open = CircuitBreakerLayer::new(config("bench-open"));
    let mut rejecting = open.layer(Dependency);
    open.breaker("")
        .expect("made with the service")
        .force_open();
    group.bench_function("ours: no key, rejected (forced open)", |b| {
        b.iter(|| request(&mut rejecting, 1).is_err())
    });

    group.finish();
}

criterion_group!(benches, closed);
criterion_main!(benches);
