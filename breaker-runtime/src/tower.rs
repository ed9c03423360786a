//! A tower middleware with one breaker per key (feature `tower`).
//!
//! [`CircuitBreakerLayer`] wraps a service; each request is keyed (by default one key for all,
//! for gRPC the service name: [`grpc_service`]), each key gets its own breaker, and each call
//! runs through its key's breaker: rejected at once while the circuit is open, cut at the
//! timeout, classified, recorded. The number of breakers is bounded (1 024 by default): requests
//! with keys beyond the bound share one overflow breaker, so hostile or high-cardinality keys
//! cannot grow memory without limit. Each key's breaker is listed in the registry as
//! `<prefix><key>`.
//!
//! ```
//! use std::time::Duration;
//! use breaker_runtime::tower::{CircuitBreakerError, CircuitBreakerLayer};
//! use breaker_runtime::Config;
//! use tower::{Layer, Service, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let inner = tower::service_fn(|user: u32| async move {
//!     if user == 0 { Err("backend down") } else { Ok(user * 10) }
//! });
//! let config = Config::builder().count_window(2).break_duration(Duration::from_secs(60)).build().unwrap();
//! let mut service = CircuitBreakerLayer::new(config).prefix("profiles-").layer(inner);
//! for _ in 0..2 {
//!     let _ = service.ready().await.unwrap().call(0).await;
//! }
//! let err = service.ready().await.unwrap().call(7).await.unwrap_err();
//! assert!(matches!(err, CircuitBreakerError::Rejected(_)));
//! # }
//! ```

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, PoisonError, RwLock};
use std::task::{Context, Poll};

use tower_layer::Layer;
use tower_service::Service;

use crate::{Breaker, BreakerError, Config, Name, Verdict, registry};

/// How many breakers a layer keeps by default, the overflow breaker included.
pub const DEFAULT_MAX_KEYS: usize = 1_024;
/// The key whose breaker serves every request beyond the bound.
pub const OVERFLOW_KEY: &str = "<overflow>";

/// Why the middleware answered instead of the inner service, or the inner service's error.
#[derive(Debug)]
#[non_exhaustive]
pub enum CircuitBreakerError<E> {
    /// The key's circuit is open (or its probe slots are taken): nothing was called, and a
    /// retry policy should not retry at once.
    Rejected(BreakerError),
    /// The call ran past the timeout and was cancelled.
    Timeout(BreakerError),
    /// The inner service's own error, returned as it is (and recorded as its classifier said).
    Inner(E),
}

impl<E: fmt::Display> fmt::Display for CircuitBreakerError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CircuitBreakerError::Rejected(e) | CircuitBreakerError::Timeout(e) => {
                fmt::Display::fmt(e, f)
            }
            CircuitBreakerError::Inner(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for CircuitBreakerError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CircuitBreakerError::Rejected(e) | CircuitBreakerError::Timeout(e) => Some(e),
            CircuitBreakerError::Inner(e) => Some(e),
        }
    }
}

impl<E> CircuitBreakerError<E> {
    /// Whether the breaker turned the request away without calling the inner service.
    pub fn is_rejection(&self) -> bool {
        matches!(self, CircuitBreakerError::Rejected(_))
    }
}

/// The classifier the layer starts with: the inner service's errors are failures, its responses
/// successes. Replace it with [`CircuitBreakerLayer::classifier`] (for instance with
/// [`Verdict::of_result`] when responses carry a status).
#[derive(Debug, Clone, Copy, Default)]
pub struct ErrorsAreFailures;

/// Turns the inner service's result into a verdict.
pub trait ResponseClassifier<R, E> {
    /// The verdict for one result.
    fn classify(&self, result: &Result<R, E>) -> Verdict;
}

impl<R, E> ResponseClassifier<R, E> for ErrorsAreFailures {
    fn classify(&self, result: &Result<R, E>) -> Verdict {
        if result.is_err() {
            Verdict::Failure
        } else {
            Verdict::Success
        }
    }
}

impl<R, E, F: Fn(&Result<R, E>) -> Verdict> ResponseClassifier<R, E> for F {
    fn classify(&self, result: &Result<R, E>) -> Verdict {
        self(result)
    }
}

type KeyFn<Req> = Arc<dyn Fn(&Req) -> String + Send + Sync>;

/// The middleware's layer: see the [module](self).
pub struct CircuitBreakerLayer<Req, C = ErrorsAreFailures> {
    config: Config,
    prefix: String,
    max_keys: usize,
    key: Option<KeyFn<Req>>,
    classifier: C,
}

impl<Req> CircuitBreakerLayer<Req> {
    /// Every key's breaker takes `config` (its name is replaced by `<prefix><key>`).
    pub fn new(config: Config) -> Self {
        CircuitBreakerLayer {
            config,
            prefix: String::new(),
            max_keys: DEFAULT_MAX_KEYS,
            key: None,
            classifier: ErrorsAreFailures,
        }
    }
}

#[cfg(feature = "http")]
impl<B: 'static> CircuitBreakerLayer<http::Request<B>> {
    /// A layer for gRPC clients: each remote service (`/package.Service/Method`) gets its own
    /// breaker, named `<service>` (feature `http` too).
    ///
    /// ```
    /// use breaker_runtime::Config;
    /// use breaker_runtime::tower::CircuitBreakerLayer;
    ///
    /// let layer = CircuitBreakerLayer::<http::Request<()>>::for_grpc(Config::default());
    /// # let _ = layer;
    /// ```
    pub fn for_grpc(config: Config) -> Self {
        CircuitBreakerLayer::new(config).key(grpc_service)
    }
}

impl<Req, C> CircuitBreakerLayer<Req, C> {
    /// Keys each request: requests with the same key share a breaker. Without it, all do.
    pub fn key(mut self, key: impl Fn(&Req) -> String + Send + Sync + 'static) -> Self {
        self.key = Some(Arc::new(key));
        self
    }

    /// The prefix of every key's breaker name.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The most breakers the layer keeps, the overflow breaker included: the first
    /// `max_keys - 1` keys get one of their own, later keys share the overflow breaker.
    pub fn max_keys(mut self, max_keys: usize) -> Self {
        self.max_keys = max_keys.max(1);
        self
    }

    /// How the inner service's results are classified.
    pub fn classifier<C2>(self, classifier: C2) -> CircuitBreakerLayer<Req, C2> {
        CircuitBreakerLayer {
            config: self.config,
            prefix: self.prefix,
            max_keys: self.max_keys,
            key: self.key,
            classifier,
        }
    }
}

impl<S, Req, C: Clone> Layer<S> for CircuitBreakerLayer<Req, C> {
    type Service = CircuitBreakerService<S, Req, C>;

    fn layer(&self, inner: S) -> Self::Service {
        CircuitBreakerService {
            inner,
            shared: Arc::new(Shared {
                config: self.config.clone(),
                prefix: self.prefix.clone(),
                max_keys: self.max_keys,
                key: self.key.clone(),
                breakers: RwLock::new(HashMap::new()),
            }),
            classifier: self.classifier.clone(),
        }
    }
}

struct Shared<Req> {
    config: Config,
    prefix: String,
    max_keys: usize,
    key: Option<KeyFn<Req>>,
    breakers: RwLock<HashMap<String, Arc<Breaker>>>,
}

impl<Req> Shared<Req> {
    fn breaker_for(&self, request: &Req) -> Arc<Breaker> {
        let key = self
            .key
            .as_ref()
            .map_or_else(String::new, |key| key(request));
        // Known keys, the common case, only share a read lock.
        if let Some(breaker) = self
            .breakers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return Arc::clone(breaker);
        }
        let mut breakers = self
            .breakers
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(breaker) = breakers.get(&key) {
            return Arc::clone(breaker);
        }
        let key = if breakers.len() + 1 >= self.max_keys && key != OVERFLOW_KEY {
            OVERFLOW_KEY.to_string()
        } else {
            key
        };
        let breaker = breakers.entry(key.clone()).or_insert_with(|| {
            let name = Name::from(format!("{}{}", self.prefix, key));
            let breaker = Arc::new(Breaker::new(self.config.clone().with_name(name)));
            // Listed for operators and metrics; a name someone else took stays theirs.
            let _ = registry().register(Arc::clone(&breaker));
            breaker
        });
        Arc::clone(breaker)
    }
}

/// The service [`CircuitBreakerLayer`] produces.
pub struct CircuitBreakerService<S, Req, C = ErrorsAreFailures> {
    inner: S,
    shared: Arc<Shared<Req>>,
    classifier: C,
}

impl<S: Clone, Req, C: Clone> Clone for CircuitBreakerService<S, Req, C> {
    fn clone(&self) -> Self {
        CircuitBreakerService {
            inner: self.inner.clone(),
            shared: Arc::clone(&self.shared),
            classifier: self.classifier.clone(),
        }
    }
}

impl<S, Req, C> CircuitBreakerService<S, Req, C> {
    /// The breaker of `key`, once a request has used it.
    pub fn breaker(&self, key: &str) -> Option<Arc<Breaker>> {
        self.shared
            .breakers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }
}

impl<S, Req, C> Service<Req> for CircuitBreakerService<S, Req, C>
where
    S: Service<Req>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    C: ResponseClassifier<S::Response, S::Error> + Clone + Send + 'static,
{
    type Response = S::Response;
    type Error = CircuitBreakerError<S::Error>;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner
            .poll_ready(cx)
            .map_err(CircuitBreakerError::Inner)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let breaker = self.shared.breaker_for(&request);
        let classifier = self.classifier.clone();
        // Tower's contract has `call` follow `poll_ready`, so the inner call is made here; its
        // future is only polled once the breaker admits it, and dropped unpolled if not.
        let call = self.inner.call(request);
        Box::pin(async move {
            match breaker
                .call_with(call, move |result| classifier.classify(result))
                .await
            {
                Ok(result) => result.map_err(CircuitBreakerError::Inner),
                Err(e) if e.is_timeout() => Err(CircuitBreakerError::Timeout(e)),
                Err(e) => Err(CircuitBreakerError::Rejected(e)),
            }
        })
    }
}

/// The gRPC service of a request, from its path `/package.Service/Method`: the key that gives
/// each remote service its own breaker (feature `http` too).
///
/// ```
/// let request = http::Request::builder().uri("/shop.Payments/Charge").body(()).unwrap();
/// assert_eq!(breaker_runtime::tower::grpc_service(&request), "shop.Payments");
/// ```
#[cfg(feature = "http")]
pub fn grpc_service<B>(request: &http::Request<B>) -> String {
    let path = request.uri().path().trim_start_matches('/');
    path.split('/').next().unwrap_or_default().to_string()
}
