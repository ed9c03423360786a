//! What the middleware answers with when it answers instead of the inner service.

use std::fmt;

use crate::outcome::error::BreakerError;

/// Why the middleware answered instead of the inner service, or the inner service's error.
#[derive(Debug)]
#[non_exhaustive]
pub enum CircuitBreakerError<E> {
    /// The key's circuit is open (or its probe slots are taken): nothing was called, and a
    /// retry policy should not retry at once.
    Rejected(BreakerError),
    /// The call ran past the timeout and was cancelled.
    Timeout(BreakerError),
    /// The request's attempts ran past the deadline of the layer's
    /// [`policy`](super::CircuitBreakerLayer::policy) and were cancelled.
    DeadlineExceeded(BreakerError),
    /// The inner service's own error, returned as it is (and recorded as its classifier said).
    Inner(E),
}

impl<E: fmt::Display> fmt::Display for CircuitBreakerError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CircuitBreakerError::Rejected(e)
            | CircuitBreakerError::Timeout(e)
            | CircuitBreakerError::DeadlineExceeded(e) => fmt::Display::fmt(e, f),
            CircuitBreakerError::Inner(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for CircuitBreakerError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CircuitBreakerError::Rejected(e)
            | CircuitBreakerError::Timeout(e)
            | CircuitBreakerError::DeadlineExceeded(e) => Some(e),
            CircuitBreakerError::Inner(e) => Some(e),
        }
    }
}

impl<E> CircuitBreakerError<E> {
    /// The breaker's (or the policy's) own answer, sorted into its variant.
    pub(super) fn of(error: BreakerError) -> Self {
        if error.is_timeout() {
            CircuitBreakerError::Timeout(error)
        } else if error.is_deadline() {
            CircuitBreakerError::DeadlineExceeded(error)
        } else {
            CircuitBreakerError::Rejected(error)
        }
    }

    /// Whether the breaker (or the policy's bulkhead) turned the request away without calling
    /// the inner service.
    pub fn is_rejection(&self) -> bool {
        matches!(self, CircuitBreakerError::Rejected(_))
    }
}
