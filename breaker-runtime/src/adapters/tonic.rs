//! gRPC answers through tonic (feature `tonic`).
//!
//! `Unavailable`, `Internal`, `Unknown` and `DeadlineExceeded` are failures of the server;
//! `Cancelled` is ignored (the caller gave up); every other code (`NotFound`,
//! `InvalidArgument`, `PermissionDenied`, …) is the server answering.
//!
//! A [`BreakerError`] converts into a `Status`, so a guarded fn returning
//! `Result<_, tonic::Status>` needs no fallback: a rejection becomes `Unavailable` and a
//! timeout `DeadlineExceeded`, each carrying the metadata [`LOCAL_MARK`] so that a retry policy
//! can tell the local breaker's answer from the server's ([`is_local_rejection`]).
//!
//! ```
//! use breaker_runtime::{BreakerError, IsFailure};
//! use tonic::{Code, Status};
//!
//! assert!(Status::unavailable("down").is_failure());
//! assert!(!Status::not_found("no such order").is_failure());
//! assert!(Status::cancelled("caller left").is_ignored());
//!
//! let rejected: Status = BreakerError::Open { breaker: "orders".into(), next_probe_at: None }.into();
//! assert_eq!(rejected.code(), Code::Unavailable);
//! assert!(breaker_runtime::tonic::is_local_rejection(&rejected));
//! assert!(rejected.is_ignored(), "an outer breaker does not count an inner one's rejection");
//! ```

use tonic::Status;

use crate::adapters::grpc;
use crate::outcome::classify::{IsFailure, Verdict};
use crate::outcome::error::BreakerError;

/// The metadata key set on a `Status` made from a [`BreakerError`]: `rejected` or `timeout`.
pub const LOCAL_MARK: &str = "x-circuit-breaker";

impl IsFailure for Status {
    fn is_failure(&self) -> bool {
        !self.is_ignored() && grpc::verdict(self.code() as i32) == Verdict::Failure
            || local_mark(self) == Some("timeout")
    }

    fn is_ignored(&self) -> bool {
        grpc::verdict(self.code() as i32) == Verdict::Ignore || local_mark(self) == Some("rejected")
    }

    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        Some(self)
    }
}

fn local_mark(status: &Status) -> Option<&str> {
    status
        .metadata()
        .get(LOCAL_MARK)
        .and_then(|v| v.to_str().ok())
}

/// Whether the status is a local breaker's rejection (nothing reached the server): retrying it
/// at once only meets the same open circuit.
pub fn is_local_rejection(status: &Status) -> bool {
    local_mark(status) == Some("rejected")
}

impl From<BreakerError> for Status {
    fn from(error: BreakerError) -> Self {
        let (mut status, mark) = if error.is_timeout() || error.is_deadline() {
            (Status::deadline_exceeded(error.to_string()), "timeout")
        } else {
            (Status::unavailable(error.to_string()), "rejected")
        };
        status.metadata_mut().insert(
            LOCAL_MARK,
            tonic::metadata::MetadataValue::from_static(mark),
        );
        status
    }
}

/// The tower layer's answer as a `Status` (feature `tower` too), for a layer under tonic's
/// client: put `map_err(Status::from)` above [`CircuitBreakerLayer::for_grpc`]. A rejection or a
/// timeout becomes the marked `Status` of [`From<BreakerError>`](#impl-From%3CBreakerError%3E-for-Status);
/// the inner service's own error becomes what tonic would have made of it.
///
/// [`CircuitBreakerLayer::for_grpc`]: crate::tower::CircuitBreakerLayer::for_grpc
///
/// ```
/// use breaker_runtime::BreakerError;
/// use breaker_runtime::tower::CircuitBreakerError;
/// use tonic::Status;
///
/// let rejected = CircuitBreakerError::<std::io::Error>::Rejected(BreakerError::Open {
///     breaker: "orders".into(),
///     next_probe_at: None,
/// });
/// assert!(breaker_runtime::tonic::is_local_rejection(&Status::from(rejected)));
/// ```
///
/// Over a tonic `Channel` (`tests/grpc.rs` runs this against a real server):
///
/// ```text
/// let channel = Channel::from_static("http://[::1]:50051").connect().await?;
/// let guarded = tower::ServiceBuilder::new()
///     .map_err(Status::from)
///     .layer(CircuitBreakerLayer::for_grpc(config))
///     .service(channel);
/// let client = OrdersClient::new(guarded);
/// ```
#[cfg(feature = "tower")]
impl<E> From<crate::adapters::tower::CircuitBreakerError<E>> for Status
where
    E: Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
{
    fn from(error: crate::adapters::tower::CircuitBreakerError<E>) -> Self {
        use crate::adapters::tower::CircuitBreakerError;
        match error {
            CircuitBreakerError::Rejected(e)
            | CircuitBreakerError::Timeout(e)
            | CircuitBreakerError::DeadlineExceeded(e) => Status::from(e),
            CircuitBreakerError::Inner(e) => Status::from_error(e.into()),
        }
    }
}
