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
//!   [`Service::call`](tower_service::Service::call) before anything else; a rejection is answered with a ready future and the
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
//! * **Retries, a deadline, a bulkhead**: [`CircuitBreakerLayer::policy`] puts a
//!   [`Policy`](crate::Policy) around each key's breaker ([`PolicyLayer`]), in the attribute's
//!   order: the retries outside, the breaker inside, the timeout innermost. Its response future
//!   is boxed; the layer without a policy keeps its named one.

mod classify;
mod error;
mod keys;
mod policy;
mod service;

pub use classify::ErrorsAreFailures;
pub use classify::ResponseClassifier;
#[cfg(feature = "http")]
pub use classify::{GrpcClassifier, grpc_service};
pub use error::CircuitBreakerError;
pub use policy::{PolicyLayer, PolicyResponseFuture, PolicyService};
pub use service::{CircuitBreakerService, ResponseFuture};

use keys::{Settings, Shared};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use breaker_options::PolicySettings;
use tower_layer::Layer;

use crate::core::breaker::Breaker;
use crate::core::config::Config;
use crate::registry::declaration::Location;

/// How many breakers a layer keeps by default, the overflow breaker included.
pub const DEFAULT_MAX_KEYS: usize = 1_024;
/// The key whose breaker serves every request beyond the bound.
pub const OVERFLOW_KEY: &str = "<overflow>";

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
                policy: PolicySettings::DEFAULT,
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
    /// use tower::{Layer, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let by_host = CircuitBreakerLayer::new(Config::default())
    ///     .prefix("upstream-")
    ///     .key(|request: &http::Request<()>| Cow::Borrowed(request.uri().host().unwrap_or_default()));
    /// let by_tenant = CircuitBreakerLayer::new(Config::default())
    ///     .key(|tenant: &u32| Cow::Owned(format!("tenant-{tenant}")));
    ///
    /// let hosts = by_host.layer(service_fn(|_: http::Request<()>| async { Ok::<_, std::io::Error>(200) }));
    /// let request = http::Request::get("http://example.com/").body(()).unwrap();
    /// assert_eq!(hosts.oneshot(request).await.unwrap(), 200);
    /// assert!(by_host.breaker("example.com").is_some(), "the host's own breaker");
    /// assert!(by_host.breaker("example.org").is_none(), "none for a host never asked");
    ///
    /// let tenants = by_tenant.layer(service_fn(|_: u32| async { Ok::<_, std::io::Error>(1) }));
    /// assert_eq!(tenants.oneshot(7).await.unwrap(), 1);
    /// assert!(by_tenant.breaker("tenant-7").is_some());
    /// # }
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
        self.shared.breaker(key)
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
