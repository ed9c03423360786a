//! The middleware with a [`Policy`] around each key's breaker: retries, a deadline, a bulkhead.

use super::CircuitBreakerLayer;
use super::classify::ResponseClassifier;
use super::error::CircuitBreakerError;
use super::keys::Shared;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower_layer::Layer;
use tower_service::Service;

use crate::core::breaker::Breaker;
use crate::policy::Policy;

impl<Req, C> CircuitBreakerLayer<Req, C> {
    /// Runs each request under `policy`'s settings around its key's breaker, as the attribute's
    /// options of the same names do: each key gets a policy of its own (its own bulkhead and
    /// retry budget, as it has its own breaker). Call it last: it makes a layer with breakers
    /// of its own, whose services need `Req: Clone` (each retry sends a clone) and a
    /// `Clone + Send` inner service, as tower's own retry middleware does.
    ///
    /// * A retry follows a counted failure or a timeout, never a rejection, within `retries`,
    ///   the backoff and the budget; each attempt goes through the breaker and is recorded.
    /// * The first attempt uses the inner service this one was readied with; a retry readies
    ///   a clone of it first (`poll_ready`), whose error counts as the attempt's.
    /// * A full bulkhead answers [`CircuitBreakerError::Rejected`] with
    ///   [`BreakerError::BulkheadFull`](crate::BreakerError::BulkheadFull); the deadline
    ///   answers [`CircuitBreakerError::DeadlineExceeded`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::time::Duration;
    /// use breaker_runtime::{Config, Policy};
    /// use breaker_runtime::tower::CircuitBreakerLayer;
    /// use tower::{Layer, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let tries = Arc::new(AtomicU32::new(0));
    /// let seen = Arc::clone(&tries);
    /// let flaky = tower::service_fn(move |user: u32| {
    ///     let attempt = seen.fetch_add(1, Ordering::Relaxed);
    ///     async move { if attempt == 0 { Err("connection reset") } else { Ok(user * 10) } }
    /// });
    /// let policy = Policy::builder()
    ///     .retries(2)
    ///     .backoff(Duration::from_millis(10), Duration::from_secs(1))
    ///     .max_concurrent(64)
    ///     .build()?;
    /// let layer = CircuitBreakerLayer::new(Config::builder().name("doc-profiles").build()?).policy(policy);
    /// let profiles = layer.layer(flaky);
    /// assert_eq!(profiles.oneshot(7).await.unwrap(), 70);
    /// assert_eq!(tries.load(Ordering::Relaxed), 2, "one failure, one retry");
    /// assert_eq!(layer.breaker("").unwrap().snapshot().failures, 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn policy(self, policy: Policy) -> PolicyLayer<Req, C> {
        let mut settings = self.shared.settings.clone();
        settings.policy = policy.settings();
        PolicyLayer {
            shared: Arc::new(Shared::new(settings)),
            classifier: self.classifier,
        }
    }
}

/// The layer [`CircuitBreakerLayer::policy`] makes. Cloning it shares its breakers and
/// policies.
pub struct PolicyLayer<Req, C> {
    shared: Arc<Shared<Req>>,
    classifier: C,
}

impl<Req, C: Clone> Clone for PolicyLayer<Req, C> {
    fn clone(&self) -> Self {
        PolicyLayer {
            shared: Arc::clone(&self.shared),
            classifier: self.classifier.clone(),
        }
    }
}

impl<Req, C> fmt::Debug for PolicyLayer<Req, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyLayer")
            .field("config", &self.shared.settings.config)
            .field("policy", &self.shared.settings.policy)
            .field("prefix", &self.shared.settings.prefix)
            .finish_non_exhaustive()
    }
}

impl<Req, C> PolicyLayer<Req, C> {
    /// The breaker of `key`, once a request has used it (or, for a layer without a key
    /// function, once the layer has made a service).
    pub fn breaker(&self, key: &str) -> Option<Arc<Breaker>> {
        self.shared.breaker(key)
    }

    /// The policy of `key` (its bulkhead's calls in flight, its settings), likewise.
    pub fn policy(&self, key: &str) -> Option<Arc<Policy>> {
        self.shared.policy(key)
    }
}

impl<S, Req, C: Clone> Layer<S> for PolicyLayer<Req, C> {
    type Service = PolicyService<S, Req, C>;

    fn layer(&self, inner: S) -> Self::Service {
        if self.shared.settings.key.is_none() {
            // Listed from the moment a service exists, not from its first request.
            self.shared.single();
        }
        PolicyService {
            inner,
            shared: Arc::clone(&self.shared),
            classifier: self.classifier.clone(),
        }
    }
}

/// The service [`PolicyLayer`] produces.
pub struct PolicyService<S, Req, C> {
    inner: S,
    shared: Arc<Shared<Req>>,
    classifier: C,
}

impl<S: Clone, Req, C: Clone> Clone for PolicyService<S, Req, C> {
    fn clone(&self) -> Self {
        PolicyService {
            inner: self.inner.clone(),
            shared: Arc::clone(&self.shared),
            classifier: self.classifier.clone(),
        }
    }
}

impl<S: fmt::Debug, Req, C> fmt::Debug for PolicyService<S, Req, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyService")
            .field("inner", &self.inner)
            .field("prefix", &self.shared.settings.prefix)
            .finish_non_exhaustive()
    }
}

/// The response future of [`PolicyService`]: every attempt of one request, boxed (a call that
/// may wait, retry and be cut by a deadline is a state machine the compiler writes best).
pub type PolicyResponseFuture<R, E> =
    Pin<Box<dyn Future<Output = Result<R, CircuitBreakerError<E>>> + Send>>;

impl<S, Req, C> Service<Req> for PolicyService<S, Req, C>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send,
    S::Error: Send,
    Req: Clone + Send + 'static,
    C: ResponseClassifier<S::Response, S::Error> + Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = CircuitBreakerError<S::Error>;
    type Future = PolicyResponseFuture<S::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner
            .poll_ready(cx)
            .map_err(CircuitBreakerError::Inner)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let (breaker, policy) = self.shared.guarded_for(&request);
        // The handle readied by `poll_ready` goes with the first attempt (tower's contract);
        // this service keeps an unreadied clone, and the retries ready clones of their own.
        let spare = self.inner.clone();
        let readied = std::mem::replace(&mut self.inner, spare.clone());
        let classifier = self.classifier.clone();
        Box::pin(async move {
            let mut readied = Some(readied);
            let attempt = move || {
                let request = request.clone();
                let (mut service, ready) = match readied.take() {
                    Some(service) => (service, true),
                    None => (spare.clone(), false),
                };
                async move {
                    if !ready {
                        poll_fn(|cx| service.poll_ready(cx)).await?;
                    }
                    service.call(request).await
                }
            };
            let answer = policy
                .call_with(&breaker, attempt, |result| classifier.classify(result))
                .await;
            match answer {
                Ok(Ok(response)) => Ok(response),
                Ok(Err(error)) => Err(CircuitBreakerError::Inner(error)),
                Err(error) => Err(CircuitBreakerError::of(error)),
            }
        })
    }
}
