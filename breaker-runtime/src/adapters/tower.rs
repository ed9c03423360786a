//! A tower middleware with one breaker per key (feature `tower`).
//!
//! [`CircuitBreakerLayer`] wraps a service; each request is keyed (by default one key for all,
//! for gRPC the remote service: [`grpc_service`]), each key gets its own breaker, and each
//! request runs through its key's breaker: cut at the timeout, classified, recorded.
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
//! let config = Config::builder().name("profiles").count_window(2).build().unwrap();
//! let mut service = CircuitBreakerLayer::new(config).layer(inner);
//! for _ in 0..2 {
//!     let _ = service.ready().await.unwrap().call(0).await;
//! }
//! let err = service.ready().await.unwrap().call(7).await.unwrap_err();
//! assert!(matches!(err, CircuitBreakerError::Rejected(_)));
//! assert!(breaker_runtime::registry().get("profiles").is_some());
//! # }
//! ```
//!
//! # What a tower user can rely on
//!
//! * **A rejected request never reaches the inner service.** The breaker admits the request in
//!   [`Service::call`] before anything else; a rejection is answered with a ready future and the
//!   inner service's `call` never runs, so a `Buffer` (a tonic `Channel` is one) or an HTTP
//!   client behind the layer never starts the request. An admitted request holds an
//!   [`OwnedPermit`](crate::OwnedPermit) in its response future, so dropping that future records nothing and frees
//!   a half-open probe slot, as with the borrowed permit.
//! * **`poll_ready` is the inner service's.** It says whether the inner service can take a
//!   request, and nothing else: the circuit's state cannot be known before the request (and
//!   its key) is. A request turned away in `call` leaves the capacity the inner service
//!   reserved in `poll_ready` with this service handle, where tower's contract puts it: the
//!   handle's next request uses it, and dropping the handle releases it. Nothing is leaked.
//! * **The breakers belong to the layer.** Every service the layer makes, and every clone of
//!   the layer or of those services, shares one breaker per key. A builder method
//!   ([`key`](CircuitBreakerLayer::key), [`prefix`](CircuitBreakerLayer::prefix), …) makes a
//!   new layer with breakers of its own. When the layer and every service made from it are
//!   dropped, its breakers leave the registry.
//! * **Names.** A request's key is what the key function returns; without a key function, or
//!   when it returns an empty key, the key is the `Config`'s name, which is never empty. The
//!   breaker is named `<prefix><key>` and listed in the [registry](crate::registry()). A name
//!   another breaker holds already (another layer with the same prefix, say) is not silently
//!   dropped: the breaker is listed as `<name>#2` (or `#3`, …), a `tracing` warning says so,
//!   and [`Registry::clashes`](crate::Registry::clashes) reports it with the place the layer
//!   was built.
//! * **A bounded number of breakers** (1 024 by default): requests with keys beyond the bound
//!   share one overflow breaker, so hostile or high-cardinality keys cannot grow memory
//!   without limit.
//! * **Cheap per request.** A known key is looked up by the borrowed key the key function
//!   returns (no `String` per request), under a read lock shared with every other request;
//!   a layer without a key function looks nothing up. The response future is a named type,
//!   [`ResponseFuture`], not a box.
//! * **Streams are judged at creation.** The response future ends when the inner service
//!   answers: for an HTTP or gRPC call, when the response headers arrive. So for a streaming
//!   gRPC call the breaker judges the stream's creation: an open circuit rejects the call
//!   before the stream starts, and an error status at creation (a trailers-only answer, which
//!   is how a server refuses a call) counts as [`GrpcClassifier`] says; the messages and the
//!   trailers of an established stream are not counted. The timeout bounds the wait for the
//!   headers, not the stream.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::base::name::Name;
use crate::core::breaker::Breaker;
use crate::core::call::{Classify, OwnedCall};
use crate::core::config::Config;
use crate::outcome::classify::Verdict;
use crate::outcome::error::BreakerError;
use crate::registry::declaration::Location;
use crate::registry::registry;

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

/// The classifier of [`CircuitBreakerLayer::for_grpc`]: a gRPC call is judged by what its
/// response headers say (feature `http` too).
///
/// * The transport's error (no connection, a reset stream) is a failure.
/// * An HTTP status other than 200 (a proxy in the way) is classified as an HTTP answer: 5xx
///   fails, 429 is ignored.
/// * A `grpc-status` in the headers (a trailers-only answer: the server refused the call) is
///   classified by its code: `UNAVAILABLE`, `INTERNAL`, `UNKNOWN` and `DEADLINE_EXCEEDED` fail,
///   `CANCELLED` is ignored, every other code is the server answering.
/// * No `grpc-status` in the headers: the call (or the stream) was accepted, a success. What the
///   trailers say later is not counted.
///
/// ```
/// use breaker_runtime::Verdict;
/// use breaker_runtime::tower::{GrpcClassifier, ResponseClassifier};
///
/// let refused = http::Response::builder().header("grpc-status", "14").body(()).unwrap();
/// let missing = http::Response::builder().header("grpc-status", "5").body(()).unwrap();
/// let streaming = http::Response::builder().body(()).unwrap();
/// let judge = |response| GrpcClassifier.classify(&Ok::<_, std::io::Error>(response));
/// assert_eq!(judge(refused), Verdict::Failure);
/// assert_eq!(judge(missing), Verdict::Success, "NOT_FOUND is an answer");
/// assert_eq!(judge(streaming), Verdict::Success);
/// ```
#[cfg(feature = "http")]
#[derive(Debug, Clone, Copy, Default)]
pub struct GrpcClassifier;

#[cfg(feature = "http")]
impl<B, E> ResponseClassifier<http::Response<B>, E> for GrpcClassifier {
    fn classify(&self, result: &Result<http::Response<B>, E>) -> Verdict {
        let response = match result {
            Ok(response) => response,
            Err(_) => return Verdict::Failure,
        };
        if response.status() != http::StatusCode::OK {
            return Verdict::of(&response.status());
        }
        let code = response
            .headers()
            .get("grpc-status")
            .and_then(|code| code.to_str().ok())
            .and_then(|code| code.trim().parse::<i32>().ok());
        code.map_or(Verdict::Success, crate::adapters::grpc::verdict)
    }
}

/// The key of a request: see [`CircuitBreakerLayer::key`].
type KeyFn<Req> = Arc<dyn for<'r> Fn(&'r Req) -> Cow<'r, str> + Send + Sync>;

/// The middleware's layer: see the [module](self). Cloning it shares its breakers.
pub struct CircuitBreakerLayer<Req, C = ErrorsAreFailures> {
    shared: Arc<Shared<Req>>,
    classifier: C,
}

impl<Req, C: Clone> Clone for CircuitBreakerLayer<Req, C> {
    fn clone(&self) -> Self {
        CircuitBreakerLayer {
            shared: Arc::clone(&self.shared),
            classifier: self.classifier.clone(),
        }
    }
}

impl<Req, C> fmt::Debug for CircuitBreakerLayer<Req, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreakerLayer")
            .field("config", &self.shared.settings.config)
            .field("prefix", &self.shared.settings.prefix)
            .field("max_keys", &self.shared.settings.max_keys)
            .field("built_at", &self.shared.settings.built_at)
            .finish_non_exhaustive()
    }
}

impl<Req> CircuitBreakerLayer<Req> {
    /// Every key's breaker takes `config`, named `<prefix><key>`; without a key function there
    /// is one breaker, named after the config.
    #[track_caller]
    pub fn new(config: Config) -> Self {
        let caller = std::panic::Location::caller();
        CircuitBreakerLayer {
            shared: Arc::new(Shared::new(Settings {
                config,
                prefix: String::new(),
                max_keys: DEFAULT_MAX_KEYS,
                key: None,
                built_at: Location {
                    file: caller.file(),
                    line: caller.line(),
                    column: caller.column(),
                },
            })),
            classifier: ErrorsAreFailures,
        }
    }
}

#[cfg(feature = "http")]
impl<B: 'static> CircuitBreakerLayer<http::Request<B>, GrpcClassifier> {
    /// A layer for gRPC clients: each remote service (`/package.Service/Method`) gets its own
    /// breaker, named `<service>`, and answers are judged by [`GrpcClassifier`] (feature `http`
    /// too).
    ///
    /// On a tonic `Channel`, put `map_err(tonic::Status::from)` above it (feature `tonic`:
    /// see `From<CircuitBreakerError<E>> for Status` in [`tonic`](crate::tonic)), so that a
    /// rejection reaches the caller as `UNAVAILABLE` marked as the local breaker's rather than
    /// as `UNKNOWN`.
    ///
    /// ```
    /// use breaker_runtime::Config;
    /// use breaker_runtime::tower::CircuitBreakerLayer;
    /// use tower::{Layer, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // Stands in for a tonic `Channel`: the server refuses `Payments` calls with UNAVAILABLE.
    /// let channel = tower::service_fn(|request: http::Request<()>| async move {
    ///     let refused = request.uri().path().starts_with("/shop.Payments/");
    ///     let status = if refused { "14" } else { "0" };
    ///     Ok::<_, std::io::Error>(http::Response::builder().header("grpc-status", status).body(()).unwrap())
    /// });
    /// let layer = CircuitBreakerLayer::for_grpc(Config::builder().count_window(1).build().unwrap())
    ///     .prefix("doc-");
    /// let guarded = layer.layer(channel);
    /// let charge = || http::Request::builder().uri("/shop.Payments/Charge").body(()).unwrap();
    /// let _ = guarded.clone().oneshot(charge()).await;
    /// assert!(guarded.clone().oneshot(charge()).await.unwrap_err().is_rejection());
    /// let list = http::Request::builder().uri("/shop.Catalog/List").body(()).unwrap();
    /// assert!(guarded.oneshot(list).await.is_ok(), "each remote service has its own breaker");
    /// # }
    /// ```
    #[track_caller]
    pub fn for_grpc(config: Config) -> Self {
        CircuitBreakerLayer::new(config)
            .key(|request: &http::Request<B>| Cow::Borrowed(grpc_service(request)))
            .classifier(GrpcClassifier)
    }
}

impl<Req, C> CircuitBreakerLayer<Req, C> {
    /// Keys each request: requests with the same key share a breaker. Without it, all do.
    ///
    /// The key is borrowed from the request where it can be (`Cow::Borrowed`), so a known key
    /// costs no allocation; a key that must be built is `Cow::Owned`. An empty key stands for
    /// the config's name.
    ///
    /// ```
    /// use std::borrow::Cow;
    /// use breaker_runtime::Config;
    /// use breaker_runtime::tower::CircuitBreakerLayer;
    ///
    /// let by_host = CircuitBreakerLayer::new(Config::default())
    ///     .prefix("upstream-")
    ///     .key(|request: &http::Request<()>| Cow::Borrowed(request.uri().host().unwrap_or_default()));
    /// let by_tenant = CircuitBreakerLayer::new(Config::default())
    ///     .key(|tenant: &u32| Cow::Owned(format!("tenant-{tenant}")));
    /// # let _ = (by_host, by_tenant);
    /// ```
    pub fn key(
        self,
        key: impl for<'r> Fn(&'r Req) -> Cow<'r, str> + Send + Sync + 'static,
    ) -> Self {
        let key: KeyFn<Req> = Arc::new(key);
        self.reshape(|settings| settings.key = Some(key))
    }

    /// The prefix of every key's breaker name.
    pub fn prefix(self, prefix: impl Into<String>) -> Self {
        let prefix = prefix.into();
        self.reshape(|settings| settings.prefix = prefix)
    }

    /// The most breakers the layer keeps, the overflow breaker included: the first
    /// `max_keys - 1` keys get one of their own, later keys share the overflow breaker.
    pub fn max_keys(self, max_keys: usize) -> Self {
        self.reshape(|settings| settings.max_keys = max_keys.max(1))
    }

    /// How the inner service's results are classified.
    pub fn classifier<C2>(self, classifier: C2) -> CircuitBreakerLayer<Req, C2> {
        CircuitBreakerLayer {
            shared: Arc::new(Shared::new(self.shared.settings.clone())),
            classifier,
        }
    }

    /// The breaker of `key`, once a request has used it (or, for a layer without a key
    /// function, once the layer has made a service).
    pub fn breaker(&self, key: &str) -> Option<Arc<Breaker>> {
        self.shared.existing(key)
    }

    fn reshape(self, change: impl FnOnce(&mut Settings<Req>)) -> Self {
        let mut settings = self.shared.settings.clone();
        change(&mut settings);
        CircuitBreakerLayer {
            shared: Arc::new(Shared::new(settings)),
            classifier: self.classifier,
        }
    }
}

impl<S, Req, C: Clone> Layer<S> for CircuitBreakerLayer<Req, C> {
    type Service = CircuitBreakerService<S, Req, C>;

    fn layer(&self, inner: S) -> Self::Service {
        if self.shared.settings.key.is_none() {
            // Listed from the moment a service exists, not from its first request.
            self.shared.single();
        }
        CircuitBreakerService {
            inner,
            shared: Arc::clone(&self.shared),
            classifier: self.classifier.clone(),
        }
    }
}

/// What the builder sets.
struct Settings<Req> {
    config: Config,
    prefix: String,
    max_keys: usize,
    key: Option<KeyFn<Req>>,
    /// Where the layer was built, for reports of a name clash.
    built_at: Location,
}

impl<Req> Clone for Settings<Req> {
    fn clone(&self) -> Self {
        Settings {
            config: self.config.clone(),
            prefix: self.prefix.clone(),
            max_keys: self.max_keys,
            key: self.key.clone(),
            built_at: self.built_at,
        }
    }
}

/// One layer's breakers, shared by the layer, its clones, and every service made from them.
struct Shared<Req> {
    settings: Settings<Req>,
    /// The one breaker of a layer without a key function.
    single: OnceLock<Arc<Breaker>>,
    /// Every breaker by key.
    breakers: RwLock<HashMap<Box<str>, Arc<Breaker>>>,
}

impl<Req> Shared<Req> {
    fn new(settings: Settings<Req>) -> Self {
        Shared {
            settings,
            single: OnceLock::new(),
            breakers: RwLock::new(HashMap::new()),
        }
    }

    /// What an empty key stands for.
    fn normalized<'k>(&'k self, key: &'k str) -> &'k str {
        if key.is_empty() {
            self.settings.config.name()
        } else {
            key
        }
    }

    /// The request's breaker. A layer without a key function looks nothing up; a known key is
    /// found by the borrowed key under the shared read lock.
    #[inline]
    fn breaker_for(&self, request: &Req) -> Arc<Breaker> {
        match &self.settings.key {
            None => Arc::clone(self.single()),
            Some(key) => {
                let key = key(request);
                self.existing(&key).unwrap_or_else(|| self.insert(&key))
            }
        }
    }

    fn single(&self) -> &Arc<Breaker> {
        self.single.get_or_init(|| self.insert(""))
    }

    fn existing(&self, key: &str) -> Option<Arc<Breaker>> {
        self.breakers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(self.normalized(key))
            .cloned()
    }

    /// The breaker of a key no request had used: its own, or the overflow breaker past the
    /// bound; made and registered unless a racing request did it first.
    #[cold]
    fn insert(&self, key: &str) -> Arc<Breaker> {
        let key = self.normalized(key);
        let mut breakers = self
            .breakers
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(breaker) = breakers.get(key) {
            return Arc::clone(breaker);
        }
        let key = if breakers.len() + 1 >= self.settings.max_keys && key != OVERFLOW_KEY {
            OVERFLOW_KEY
        } else {
            key
        };
        let breaker = breakers.entry(key.into()).or_insert_with_key(|key| {
            let name = Name::from(format!("{}{}", self.settings.prefix, key));
            let config = self.settings.config.clone().with_name(name);
            registry().register_renaming(config, self.settings.built_at)
        });
        Arc::clone(breaker)
    }
}

impl<Req> Drop for Shared<Req> {
    fn drop(&mut self) {
        // The breakers belong to the layer: once nothing can call through them, nothing lists
        // them. (An in-flight response future still holds its breaker, unlisted.)
        let breakers = self
            .breakers
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for breaker in breakers.values() {
            registry().remove(breaker);
        }
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

impl<S: fmt::Debug, Req, C> fmt::Debug for CircuitBreakerService<S, Req, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreakerService")
            .field("inner", &self.inner)
            .field("prefix", &self.shared.settings.prefix)
            .finish_non_exhaustive()
    }
}

impl<S, Req, C> CircuitBreakerService<S, Req, C> {
    /// The breaker of `key`, once a request has used it (or, for a layer without a key
    /// function, once the service exists).
    pub fn breaker(&self, key: &str) -> Option<Arc<Breaker>> {
        self.shared.existing(key)
    }
}

impl<S, Req, C> Service<Req> for CircuitBreakerService<S, Req, C>
where
    S: Service<Req>,
    C: ResponseClassifier<S::Response, S::Error> + Clone,
{
    type Response = S::Response;
    type Error = CircuitBreakerError<S::Error>;
    type Future = ResponseFuture<S::Future, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner
            .poll_ready(cx)
            .map_err(CircuitBreakerError::Inner)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        // Admitted before the inner service sees the request: a rejected one never reaches it.
        match Breaker::admit_owned(self.shared.breaker_for(&request)) {
            Ok(permit) => ResponseFuture::admitted(permit.run_classified(
                self.inner.call(request),
                ByResponse(self.classifier.clone()),
            )),
            Err(rejection) => ResponseFuture::rejected(rejection),
        }
    }
}

/// A [`ResponseClassifier`] as the call path's classifier.
struct ByResponse<C>(C);

impl<R, E, C: ResponseClassifier<R, E>> Classify<Result<R, E>> for ByResponse<C> {
    #[inline]
    fn classify(self, result: &Result<R, E>) -> Verdict {
        self.0.classify(result)
    }
}

pin_project! {
    /// The response future of [`CircuitBreakerService`]: the inner service's future run through
    /// its key's breaker, or the rejection, ready at once.
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<F, C> {
        #[pin]
        answer: Answer<F, C>,
    }
}

pin_project! {
    #[project = AnswerProj]
    enum Answer<F, C> {
        // The breaker admitted the request; the inner service is working on it.
        Admitted {
            #[pin]
            call: OwnedCall<F, ByResponse<C>>,
        },
        // The breaker turned the request away; the inner service never saw it.
        Rejected {
            rejection: Option<BreakerError>,
        },
    }
}

impl<F, C> ResponseFuture<F, C> {
    fn admitted(call: OwnedCall<F, ByResponse<C>>) -> Self {
        ResponseFuture {
            answer: Answer::Admitted { call },
        }
    }

    fn rejected(rejection: BreakerError) -> Self {
        ResponseFuture {
            answer: Answer::Rejected {
                rejection: Some(rejection),
            },
        }
    }
}

impl<F, C> fmt::Debug for ResponseFuture<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let admitted = matches!(self.answer, Answer::Admitted { .. });
        f.debug_struct("ResponseFuture")
            .field("admitted", &admitted)
            .finish_non_exhaustive()
    }
}

impl<F, C, R, E> Future for ResponseFuture<F, C>
where
    F: Future<Output = Result<R, E>>,
    C: ResponseClassifier<R, E>,
{
    type Output = Result<R, CircuitBreakerError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().answer.project() {
            AnswerProj::Admitted { call } => call.poll(cx).map(|answer| match answer {
                Ok(Ok(response)) => Ok(response),
                Ok(Err(error)) => Err(CircuitBreakerError::Inner(error)),
                Err(timeout) => Err(CircuitBreakerError::Timeout(timeout)),
            }),
            AnswerProj::Rejected { rejection } => match rejection.take() {
                Some(rejection) => Poll::Ready(Err(CircuitBreakerError::Rejected(rejection))),
                // Polled again after it answered: like every finished call here, it never
                // completes twice.
                None => Poll::Pending,
            },
        }
    }
}

/// The gRPC service of a request, from its path `/package.Service/Method`: the key that gives
/// each remote service its own breaker (feature `http` too). Borrowed from the request, so
/// keying by it allocates nothing.
///
/// ```
/// let request = http::Request::builder().uri("/shop.Payments/Charge").body(()).unwrap();
/// assert_eq!(breaker_runtime::tower::grpc_service(&request), "shop.Payments");
/// ```
#[cfg(feature = "http")]
pub fn grpc_service<B>(request: &http::Request<B>) -> &str {
    let path = request.uri().path().trim_start_matches('/');
    path.split('/').next().unwrap_or_default()
}
