//! `IsFailure` for HTTP answers (feature `http`) and for reqwest's (feature `reqwest`).
//!
//! A 5xx status is a failure of the server; 429 (too many requests) is ignored, since the server
//! is telling the caller to slow down rather than failing; every other status, 4xx included, is
//! the server answering. A response is classified by its status.
//!
//! A request's `Result` only counts its `Err` side (SPEC section 2), so classify a call that
//! returns a response with [`Verdict::of_result`](crate::Verdict::of_result), which asks both:
//!
//! ```
//! use breaker_runtime::{IsFailure, Verdict};
//! use http::StatusCode;
//!
//! assert!(StatusCode::BAD_GATEWAY.is_failure());
//! assert!(!StatusCode::NOT_FOUND.is_failure());
//! assert!(StatusCode::TOO_MANY_REQUESTS.is_ignored());
//! let answered: Result<StatusCode, std::io::Error> = Ok(StatusCode::SERVICE_UNAVAILABLE);
//! assert_eq!(Verdict::of_result(&answered), Verdict::Failure);
//! ```

use crate::outcome::classify::IsFailure;

impl IsFailure for http::StatusCode {
    fn is_failure(&self) -> bool {
        self.is_server_error()
    }

    fn is_ignored(&self) -> bool {
        *self == http::StatusCode::TOO_MANY_REQUESTS
    }

    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        Some(self)
    }
}

impl<B> IsFailure for http::Response<B> {
    fn is_failure(&self) -> bool {
        self.status().is_failure()
    }

    fn is_ignored(&self) -> bool {
        self.status().is_ignored()
    }
}

/// Connection, timeout, request and body errors are failures (the server is unreachable or
/// broke off); an error for a status is classified by the status; decoding, redirect and
/// builder errors are the caller's, and count as the server answering.
#[cfg(feature = "reqwest")]
impl IsFailure for reqwest::Error {
    fn is_failure(&self) -> bool {
        match self.status() {
            Some(status) => status.is_failure(),
            None => self.is_connect() || self.is_timeout() || self.is_request() || self.is_body(),
        }
    }

    fn is_ignored(&self) -> bool {
        self.status().is_some_and(|status| status.is_ignored())
    }

    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        Some(self)
    }
}

#[cfg(feature = "reqwest")]
impl IsFailure for reqwest::Response {
    fn is_failure(&self) -> bool {
        self.status().is_failure()
    }

    fn is_ignored(&self) -> bool {
        self.status().is_ignored()
    }
}
