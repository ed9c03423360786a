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

use tonic::{Code, Status};

use crate::{BreakerError, IsFailure};

/// The metadata key set on a `Status` made from a [`BreakerError`]: `rejected` or `timeout`.
pub const LOCAL_MARK: &str = "x-circuit-breaker";

impl IsFailure for Status {
    fn is_failure(&self) -> bool {
        !self.is_ignored()
            && matches!(
                self.code(),
                Code::Unavailable | Code::Internal | Code::Unknown | Code::DeadlineExceeded
            )
            || local_mark(self) == Some("timeout")
    }

    fn is_ignored(&self) -> bool {
        self.code() == Code::Cancelled || local_mark(self) == Some("rejected")
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
        let (mut status, mark) = if error.is_timeout() {
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
