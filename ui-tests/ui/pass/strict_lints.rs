//! The expansion stays quiet under a crate's strictest lint settings, `forbid(unsafe_code)`
//! among them (the registry's link-time list must not need `unsafe` in user code).
#![forbid(unsafe_code)]
#![deny(
    warnings,
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    unused_qualifications,
    unreachable_pub,
    unused_results,
    trivial_casts,
    trivial_numeric_casts,
    let_underscore_drop,
    single_use_lifetimes,
    unused_lifetimes,
    redundant_lifetimes,
    elided_lifetimes_in_paths,
    unit_bindings,
    non_ascii_idents
)]

use std::sync::Arc;

use breaker_runtime::{BreakerError, IsFailure, circuit_breaker};

/// The error.
#[derive(Debug, IsFailure)]
pub enum AppError {
    /// Down.
    Down,
    /// Declined.
    #[breaker(healthy)]
    Declined,
    /// The breaker answered.
    #[breaker(transparent)]
    Breaker(BreakerError),
}

impl From<BreakerError> for AppError {
    fn from(error: BreakerError) -> Self {
        AppError::Breaker(error)
    }
}

#[derive(Debug, Clone)]
struct Client {
    base: u32,
}

impl Client {
    #[circuit_breaker(fallback = cached, slow_call = "1s", slow_threshold = "50%")]
    async fn get(&self, (a, b): (u32, u32), tag: String) -> Result<u32, AppError> {
        if a == 0 {
            return Err(AppError::Down);
        }
        if b == 0 {
            return Err(AppError::Declined);
        }
        Ok(self.base + a + b + tag.len() as u32)
    }

    async fn cached(&self, pair: (u32, u32), tag: String) -> Result<u32, AppError> {
        Ok(pair.0 + tag.len() as u32)
    }

    #[circuit_breaker(name = "strict_shared")]
    async fn shared(self: Arc<Self>) -> Result<u32, AppError> {
        Ok(self.base)
    }
}

fn is_failed(result: &Result<&str, AppError>) -> bool {
    result.is_err()
}

#[circuit_breaker(is_failure = is_failed, timeout = "off")]
async fn first_word<'a>(text: &'a str) -> Result<&'a str, AppError> {
    text.split(' ').next().ok_or(AppError::Down)
}

fn main() {
    let client = Client { base: 1 };
    drop(client.get((1, 2), String::new()));
    drop(Arc::new(client).shared());
    drop(first_word("a b"));
}
