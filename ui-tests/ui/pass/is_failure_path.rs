#![deny(warnings)]

use breaker_runtime::{BreakerError, circuit_breaker};

/// An error type from another crate: no `IsFailure` impl, no `From<BreakerError>`.
mod foreign {
    #[derive(Debug, Clone)]
    pub struct HttpError {
        pub status: u16,
    }
}

fn is_outage(result: &Result<u32, foreign::HttpError>) -> bool {
    matches!(result, Err(e) if e.status >= 500)
}

#[circuit_breaker(is_failure = is_outage, fallback = cached)]
async fn fetch(id: u32) -> Result<u32, foreign::HttpError> {
    Ok(id)
}

async fn cached(id: u32) -> Result<u32, foreign::HttpError> {
    Ok(id)
}

#[derive(Debug)]
#[allow(dead_code)]
enum Wrapped {
    Http(foreign::HttpError),
    Breaker(BreakerError),
}

impl From<BreakerError> for Wrapped {
    fn from(error: BreakerError) -> Self {
        Wrapped::Breaker(error)
    }
}

mod classify {
    pub fn wrapped(result: &Result<u32, super::Wrapped>) -> bool {
        matches!(result, Err(super::Wrapped::Http(e)) if e.status >= 500)
    }

    pub fn any<T, E>(result: &Result<T, E>) -> bool {
        result.is_err()
    }
}

#[circuit_breaker(is_failure = classify::wrapped)]
async fn fetch_wrapped(id: u32) -> Result<u32, Wrapped> {
    if id == 0 {
        return Err(Wrapped::Http(foreign::HttpError { status: 503 }));
    }
    Ok(id)
}

#[circuit_breaker(is_failure = classify::any)]
async fn fetch_generic_classifier(id: u32) -> Result<u32, Wrapped> {
    Ok(id)
}

#[circuit_breaker(is_failure = Option::is_none, fallback = nothing)]
async fn maybe(id: u32) -> Option<u32> {
    Some(id)
}

async fn nothing(_id: u32) -> Option<u32> {
    None
}

fn main() {
    let _ = fetch(1);
    let _ = fetch_wrapped(1);
    let _ = fetch_generic_classifier(1);
    let _ = maybe(1);
}
