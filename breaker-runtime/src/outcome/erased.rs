//! Errors whose type is erased (`Box<dyn Error + Send + Sync>`, `anyhow::Error`): classified by
//! the first error in their `source()` chain of a type this crate knows, so that
//! `?`-everything services need no `is_failure` of their own.
//!
//! The known types are `std::io::Error` and [`BreakerError`], and with their features
//! `tonic::Status` and `reqwest::Error`. An error of no known type anywhere in its chain is a
//! failure: a breaker that cannot tell must not hide an outage.
//!
//! ```
//! use std::error::Error;
//! use std::io;
//! use breaker_runtime::{BreakerError, IsFailure};
//!
//! let missing: Box<dyn Error + Send + Sync> = Box::new(io::Error::from(io::ErrorKind::NotFound));
//! assert!(!missing.is_failure(), "an io NotFound is an answer, boxed or not");
//! let refused: Box<dyn Error + Send + Sync> = Box::new(io::Error::from(io::ErrorKind::ConnectionRefused));
//! assert!(refused.is_failure());
//! let rejected: Box<dyn Error + Send + Sync> =
//!     BreakerError::Open { breaker: "inner".into(), next_probe_at: None }.into();
//! assert!(rejected.is_ignored(), "a nested breaker's rejection is not counted");
//! let unknown: Box<dyn Error + Send + Sync> = "parse failure".into();
//! assert!(unknown.is_failure(), "unknown errors are failures");
//! ```

use std::error::Error;
use std::io;

use crate::outcome::classify::{IsFailure, Verdict};
use crate::outcome::error::BreakerError;

/// The verdict of the first error of a known type in `error`'s chain, `error` itself first.
fn verdict(error: &(dyn Error + 'static)) -> Verdict {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(verdict) = known(error) {
            return verdict;
        }
        next = error.source();
    }
    Verdict::Failure
}

fn known(error: &(dyn Error + 'static)) -> Option<Verdict> {
    if let Some(io) = error.downcast_ref::<io::Error>() {
        return Some(Verdict::of(io));
    }
    if let Some(breaker) = error.downcast_ref::<BreakerError>() {
        return Some(Verdict::of(breaker));
    }
    #[cfg(feature = "tonic")]
    if let Some(status) = error.downcast_ref::<tonic::Status>() {
        return Some(Verdict::of(status));
    }
    #[cfg(feature = "reqwest")]
    if let Some(reqwest) = error.downcast_ref::<reqwest::Error>() {
        return Some(Verdict::of(reqwest));
    }
    None
}

macro_rules! erased {
    ($($error:ty),+) => {$(
        impl IsFailure for $error {
            fn is_failure(&self) -> bool {
                verdict(self) == Verdict::Failure
            }

            fn is_ignored(&self) -> bool {
                verdict(self) == Verdict::Ignore
            }

            fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
                Some(self)
            }
        }
    )+};
}

// `Box<…>` and `Arc<…>` of these take the impls for boxes and `Arc`s of any `IsFailure`.
erased!(
    dyn Error + 'static,
    dyn Error + Send + 'static,
    dyn Error + Send + Sync + 'static
);

/// `NotFound`, `PermissionDenied`, `InvalidInput` and `InvalidData` are answers; every other kind,
/// time-outs and connection errors among them, is a failure. An `io::Error` that carries a
/// [`BreakerError`] (a nested breaker's answer) is classified as that error is.
impl IsFailure for io::Error {
    fn is_failure(&self) -> bool {
        if let Some(inner) = self
            .get_ref()
            .and_then(|e| e.downcast_ref::<BreakerError>())
        {
            return inner.is_failure();
        }
        !matches!(
            self.kind(),
            io::ErrorKind::NotFound
                | io::ErrorKind::PermissionDenied
                | io::ErrorKind::InvalidInput
                | io::ErrorKind::InvalidData
        )
    }

    fn is_ignored(&self) -> bool {
        self.get_ref()
            .and_then(|e| e.downcast_ref::<BreakerError>())
            .is_some_and(BreakerError::is_ignored)
    }

    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        Some(self)
    }
}

/// Classified like `Box<dyn Error + Send + Sync>`: by the first error of a known type in its
/// chain (feature `anyhow`).
///
/// ```
/// use breaker_runtime::IsFailure;
///
/// let missing = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::NotFound))
///     .context("loading the order");
/// assert!(!missing.is_failure(), "the context is not a known type; its source is");
/// assert!(anyhow::anyhow!("unexpected reply").is_failure());
/// ```
#[cfg(feature = "anyhow")]
impl IsFailure for anyhow::Error {
    fn is_failure(&self) -> bool {
        verdict(self.as_ref()) == Verdict::Failure
    }

    fn is_ignored(&self) -> bool {
        verdict(self.as_ref()) == Verdict::Ignore
    }

    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    /// An error of the service's own that wraps another.
    #[derive(Debug)]
    struct Wrapped(io::Error);

    impl fmt::Display for Wrapped {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("loading the order failed")
        }
    }

    impl Error for Wrapped {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn the_first_known_error_in_the_chain_decides() {
        let answered: Box<dyn Error + Send + Sync> =
            Box::new(Wrapped(io::ErrorKind::NotFound.into()));
        assert_eq!(Verdict::of(&answered), Verdict::Success);
        let refused: Box<dyn Error> = Box::new(Wrapped(io::ErrorKind::ConnectionRefused.into()));
        assert_eq!(Verdict::of(&refused), Verdict::Failure);
    }

    #[test]
    fn a_timeout_counts_and_a_rejection_does_not() {
        let timeout: Box<dyn Error + Send> = Box::new(BreakerError::Timeout {
            breaker: "inner".into(),
            limit: std::time::Duration::from_secs(1),
        });
        assert_eq!(Verdict::of(&timeout), Verdict::Failure);
        let rejected: std::sync::Arc<dyn Error + Send + Sync> =
            std::sync::Arc::new(BreakerError::HalfOpenFull {
                breaker: "inner".into(),
                probes: 1,
                retry_after_ms: 0,
            });
        assert_eq!(Verdict::of(&rejected), Verdict::Ignore);
    }

    #[test]
    fn an_error_of_no_known_type_is_a_failure() {
        let unknown: Box<dyn Error + Send + Sync> = "unexpected reply".into();
        assert_eq!(Verdict::of(&unknown), Verdict::Failure);
    }
}
