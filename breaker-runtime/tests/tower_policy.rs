//! The tower layer with a `Policy`: retries that never retry a rejection, each attempt through
//! the key's breaker, a bulkhead per key, and a deadline over the attempts.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use breaker_runtime::tower::{CircuitBreakerError, CircuitBreakerLayer};
use breaker_runtime::{BreakerError, Config, Policy};
use tower::{Layer, Service, ServiceExt};

/// A backend that fails its first `failures` calls, then answers `user * 10` after `delay`;
/// it counts its calls and how often it was readied.
#[derive(Clone)]
struct Backend {
    failures: u32,
    delay: Duration,
    calls: Arc<AtomicU32>,
    readied: Arc<AtomicU32>,
}

impl Backend {
    fn failing(failures: u32) -> Backend {
        Backend {
            failures,
            delay: Duration::ZERO,
            calls: Arc::default(),
            readied: Arc::default(),
        }
    }

    fn slow(delay: Duration) -> Backend {
        Backend {
            delay,
            ..Backend::failing(0)
        }
    }

    fn calls(&self) -> u32 {
        self.calls.load(Ordering::Relaxed)
    }
}

impl Service<u32> for Backend {
    type Response = u32;
    type Error = &'static str;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<u32, &'static str>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.readied.fetch_add(1, Ordering::Relaxed);
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, user: u32) -> Self::Future {
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let (failures, delay) = (self.failures, self.delay);
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            if call < failures {
                Err("connection reset")
            } else {
                Ok(user * 10)
            }
        })
    }
}

fn config(name: &'static str) -> Config {
    Config::builder()
        .name(name)
        .count_window(10)
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap()
}

fn retrying(retries: u32) -> Policy {
    Policy::builder()
        .retries(retries)
        .backoff(Duration::from_millis(10), Duration::from_millis(100))
        .no_retry_budget()
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_failed_attempt_is_retried_through_the_breaker_on_a_readied_clone() {
    let backend = Backend::failing(2);
    let layer = CircuitBreakerLayer::new(config("tower-policy-retry")).policy(retrying(3));
    let service = layer.layer(backend.clone());
    assert_eq!(service.oneshot(4).await.unwrap(), 40);
    assert_eq!(backend.calls(), 3, "two failures, then the answer");
    // `oneshot` readies the service once; each retry readies its own clone.
    assert_eq!(backend.readied.load(Ordering::Relaxed), 3);
    let snapshot = layer.breaker("").unwrap().snapshot();
    assert_eq!(
        (snapshot.failures, snapshot.calls),
        (2, 3),
        "every attempt recorded"
    );
}

#[tokio::test(start_paused = true)]
async fn retries_stop_at_the_limit_and_the_last_failure_is_the_answer() {
    let backend = Backend::failing(u32::MAX);
    let layer = CircuitBreakerLayer::new(config("tower-policy-limit")).policy(retrying(2));
    let err = layer.layer(backend.clone()).oneshot(4).await.unwrap_err();
    assert!(
        matches!(err, CircuitBreakerError::Inner("connection reset")),
        "{err:?}"
    );
    assert_eq!(backend.calls(), 3, "retries + 1 attempts");
}

#[tokio::test(start_paused = true)]
async fn a_rejection_is_never_retried_and_never_reaches_the_backend() {
    let backend = Backend::failing(0);
    let layer = CircuitBreakerLayer::new(config("tower-policy-open")).policy(retrying(3));
    let service = layer.layer(backend.clone());
    layer.breaker("").unwrap().force_open();
    let err = service.oneshot(4).await.unwrap_err();
    assert!(err.is_rejection(), "{err:?}");
    assert_eq!(backend.calls(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_rejects_without_counting_a_failure_and_each_key_has_its_own() {
    let policy = Policy::builder().max_concurrent(1).build().unwrap();
    let layer = CircuitBreakerLayer::new(config("tower-policy-bulkhead"))
        .key(|user: &u32| Cow::Owned(format!("bulkhead-{}", user % 2)))
        .policy(policy);
    let backend = Backend::slow(Duration::from_millis(500));
    let service = layer.layer(backend.clone());

    let holder = tokio::spawn(service.clone().oneshot(2));
    tokio::time::sleep(Duration::from_millis(10)).await;
    let err = service.clone().oneshot(4).await.unwrap_err();
    match &err {
        CircuitBreakerError::Rejected(BreakerError::BulkheadFull { max_concurrent, .. }) => {
            assert_eq!(*max_concurrent, 1)
        }
        other => panic!("expected the bulkhead's rejection, got {other:?}"),
    }
    assert!(err.is_rejection());
    assert_eq!(
        service.clone().oneshot(3).await.unwrap(),
        30,
        "the other key's bulkhead is its own"
    );
    assert_eq!(holder.await.unwrap().unwrap(), 20);
    let even = layer.breaker("bulkhead-0").unwrap().snapshot();
    assert_eq!(
        (even.failures, even.calls),
        (0, 1),
        "the rejected call is not recorded"
    );
    assert_eq!(
        layer.policy("bulkhead-0").unwrap().in_flight(),
        0,
        "every slot given back"
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_cuts_the_attempts_and_their_waits() {
    let policy = Policy::builder()
        .retries(5)
        .no_retry_budget()
        .backoff(Duration::from_millis(100), Duration::from_millis(100))
        .deadline(Duration::from_millis(1_500))
        .build()
        .unwrap();
    let layer = CircuitBreakerLayer::new(config("tower-policy-deadline")).policy(policy);
    let backend = Backend::slow(Duration::from_secs(10));
    let started = tokio::time::Instant::now();
    let err = layer.layer(backend.clone()).oneshot(4).await.unwrap_err();
    assert!(
        matches!(err, CircuitBreakerError::DeadlineExceeded(_)),
        "{err:?}"
    );
    assert_eq!(started.elapsed(), Duration::from_millis(1_500));
    assert_eq!(
        backend.calls(),
        2,
        "one timeout at 1 s, a retry cut by the deadline"
    );
    let snapshot = layer.breaker("").unwrap().snapshot();
    assert_eq!(
        snapshot.failures, 1,
        "the timeout counted; the cut attempt recorded nothing"
    );
}
