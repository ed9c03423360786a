//! The hot path allocates nothing: a call through a closed breaker (either window, with or
//! without a timeout whose body is ready at once), and a rejection by an open one.
//!
//! A counting global allocator watches this thread while the calls run; how fast they are is the
//! benchmarks' business (`benches/`).

// A global allocator is an unsafe trait; this one only counts and defers to the system's.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use breaker_runtime::{Breaker, Config, Verdict, circuit_breaker};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds the
// `GlobalAlloc` contract; counting touches only a const-initialised thread-local.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations_during(work: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    work();
    ALLOCATIONS.with(Cell::get) - before
}

/// Polls a future that must be ready at once.
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("the body is ready at once"),
    }
}

fn breakers() -> Vec<(&'static str, Breaker)> {
    let build = |b: breaker_runtime::ConfigBuilder| Breaker::new(b.build().unwrap());
    vec![
        (
            "count window, no timeout",
            build(Config::builder().count_window(100).no_timeout()),
        ),
        (
            "count window, timeout",
            build(
                Config::builder()
                    .count_window(100)
                    .timeout(Duration::from_secs(1)),
            ),
        ),
        (
            "time window",
            build(
                Config::builder()
                    .time_window(Duration::from_secs(30))
                    .no_timeout(),
            ),
        ),
        (
            "count window, slow-call detection",
            build(
                Config::builder()
                    .count_window(100)
                    .slow_call(Duration::from_secs(1)),
            ),
        ),
    ]
}

#[test]
fn the_counter_sees_allocations() {
    assert_eq!(
        allocations_during(|| drop(std::hint::black_box(Box::new(7u64)))),
        1
    );
}

#[test]
fn a_call_through_a_closed_breaker_allocates_nothing() {
    for (case, breaker) in breakers() {
        // Warm up: first use of the clock and of lazily initialised statics may allocate.
        for _ in 0..300 {
            let _ = ready(breaker.call(async { Ok::<u32, std::io::Error>(1) }));
        }
        let n = allocations_during(|| {
            for i in 0..1_000 {
                let failed = i % 10 == 0;
                let value = ready(breaker.call_with(async { i }, |_| {
                    if failed {
                        Verdict::Failure
                    } else {
                        Verdict::Success
                    }
                }));
                assert_eq!(value.unwrap(), i);
            }
        });
        assert_eq!(n, 0, "{case}: allocations on the closed path");
    }
}

#[test]
fn the_permit_api_allocates_nothing() {
    for (case, breaker) in breakers() {
        breaker.try_acquire().unwrap().success();
        let n = allocations_during(|| {
            for _ in 0..1_000 {
                breaker.try_acquire().unwrap().success();
            }
        });
        assert_eq!(n, 0, "{case}");
    }
}

#[test]
fn a_rejection_by_an_open_breaker_allocates_nothing() {
    for (case, breaker) in breakers() {
        breaker.force_open();
        let _ = breaker.try_acquire();
        let n = allocations_during(|| {
            for _ in 0..1_000 {
                let err = ready(breaker.call(async { Ok::<u32, std::io::Error>(1) })).unwrap_err();
                assert!(err.is_rejection());
            }
        });
        assert_eq!(n, 0, "{case}");
    }
}

#[test]
fn a_rejection_by_a_tripped_breaker_on_a_running_clock_allocates_nothing() {
    // The rejection that the coarse clock answers, far from the end of the break.
    for (case, breaker) in breakers() {
        // Bounded, so a broken trip rule fails here instead of hanging the suite.
        for _ in 0..10_000 {
            if breaker.state().rejects() {
                break;
            }
            breaker.try_acquire().unwrap().failure();
        }
        assert!(
            breaker.state().rejects(),
            "{case}: failures did not open it"
        );
        let n = allocations_during(|| {
            for _ in 0..1_000 {
                let err = breaker.try_acquire().unwrap_err();
                assert!(err.is_rejection() && err.retry_after().is_some());
                let err = ready(breaker.call(async { Ok::<u32, std::io::Error>(1) })).unwrap_err();
                assert!(err.is_rejection());
            }
        });
        assert_eq!(n, 0, "{case}");
    }
}

#[circuit_breaker(window = "100", timeout_ms = 1000)]
async fn guarded(value: u32) -> Result<u32, breaker_runtime::BreakerError> {
    Ok(value)
}

async fn served(value: &u32) -> Result<u32, std::io::Error> {
    Ok(*value)
}

#[circuit_breaker(window = "100", fallback = served)]
async fn guarded_with_fallback(value: &u32) -> Result<u32, std::io::Error> {
    Ok(*value + 1)
}

#[test]
fn a_call_through_the_attribute_allocates_nothing() {
    for i in 0..300 {
        ready(guarded(i)).unwrap();
        ready(guarded_with_fallback(&i)).unwrap();
    }
    let n = allocations_during(|| {
        for i in 0..1_000 {
            assert_eq!(ready(guarded(i)).unwrap(), i);
            assert_eq!(ready(guarded_with_fallback(&i)).unwrap(), i + 1);
        }
    });
    assert_eq!(n, 0);
}

/// One request through a tower service, ready at once.
fn through<S: tower::Service<u32>>(service: &mut S, request: u32) -> Result<S::Response, S::Error> {
    let mut cx = Context::from_waker(Waker::noop());
    match service.poll_ready(&mut cx) {
        Poll::Ready(ready) => ready?,
        Poll::Pending => panic!("the inner service is always ready"),
    }
    ready(service.call(request))
}

#[test]
fn a_request_through_the_tower_layer_allocates_nothing_for_a_known_key() {
    use std::borrow::Cow;

    use breaker_runtime::tower::CircuitBreakerLayer;
    use tower::Layer;

    let echo = || tower::service_fn(|n: u32| std::future::ready(Ok::<u32, std::io::Error>(n)));
    let config = |name: &'static str| {
        Config::builder()
            .name(name)
            .count_window(100)
            .build()
            .unwrap()
    };
    let keyed_layer = CircuitBreakerLayer::new(config("alloc-keyed"))
        .key(|n: &u32| Cow::Borrowed(if n.is_multiple_of(2) { "even" } else { "odd" }));
    let mut keyed = keyed_layer.layer(echo());
    let mut single = CircuitBreakerLayer::new(config("alloc-single")).layer(echo());
    // Warm up: the first request of a key makes and registers its breaker.
    for i in 0..300 {
        through(&mut keyed, i).unwrap();
        through(&mut single, i).unwrap();
    }
    let n = allocations_during(|| {
        for i in 0..1_000 {
            assert_eq!(through(&mut keyed, i).unwrap(), i);
            assert_eq!(through(&mut single, i).unwrap(), i);
        }
    });
    assert_eq!(n, 0, "closed, known keys");

    keyed_layer.breaker("even").unwrap().force_open();
    let n = allocations_during(|| {
        for i in 0..1_000 {
            let err = through(&mut keyed, i * 2).unwrap_err();
            assert!(err.is_rejection());
        }
    });
    assert_eq!(n, 0, "rejected");
}

#[test]
fn the_flight_recorder_allocates_at_the_first_call_and_never_again() {
    let breaker = Breaker::new(Config::builder().count_window(100).build().unwrap());
    let never_called = breaker.memory_footprint();
    assert!(breaker.recent(Duration::from_secs(60)).calls.is_empty());
    let first = allocations_during(|| breaker.try_acquire().unwrap().success());
    assert!(
        first >= 1,
        "the first call allocates the recorder and its thread's shard"
    );
    assert!(
        breaker.memory_footprint() >= never_called + 160_000,
        "20 000 calls of 8 bytes, allocated by the first call"
    );
    let n = allocations_during(|| {
        for _ in 0..1_000 {
            breaker.try_acquire().unwrap().success();
            ready(breaker.call(async { Ok::<u32, std::io::Error>(1) }))
                .unwrap()
                .unwrap();
        }
    });
    assert_eq!(n, 0, "recorded calls allocate nothing");
    assert_eq!(
        breaker.recent(Duration::from_secs(60)).calls.len(),
        2_001,
        "and every one of them was recorded"
    );
}
