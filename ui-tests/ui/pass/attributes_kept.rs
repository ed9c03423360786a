//! `#[must_use]`, doc comments, visibility and where clauses survive the attribute.
#![deny(warnings, missing_docs)]

use std::fmt::Debug;

use breaker_runtime::{BreakerError, circuit_breaker};

/// The public API of a client crate.
pub mod client {
    use super::*;

    /// Documented, and the docs are kept.
    #[must_use = "the stock level is the point of the call"]
    #[circuit_breaker(window = "10")]
    pub async fn stock(sku: &str) -> Result<u32, BreakerError> {
        Ok(sku.len() as u32)
    }

    /// `#[must_use]` written after the attribute is kept too.
    #[circuit_breaker]
    #[must_use]
    #[inline]
    pub(crate) async fn crate_visible<T>(value: T) -> Result<String, BreakerError>
    where
        T: Debug + Send,
    {
        Ok(format!("{value:?}"))
    }

    #[circuit_breaker]
    #[allow(clippy::needless_lifetimes)]
    pub(super) async fn parent_visible() -> Result<(), BreakerError> {
        Ok(())
    }

    /// Compiled out before the attribute expands, so the unknown type is never seen.
    #[circuit_breaker]
    #[cfg(any())]
    pub async fn compiled_out() -> Result<(), NoSuchType> {
        Ok(())
    }

    /// Attributes on either side of `#[circuit_breaker]` are kept, `#[cfg]` among them.
    #[cfg(all())]
    #[circuit_breaker]
    #[deprecated = "use `stock`"]
    pub async fn old_stock() -> Result<u32, BreakerError> {
        Ok(0)
    }
}

#[allow(deprecated)]
fn main() {
    let _ = client::stock("a");
    let _ = client::crate_visible(1);
    let _ = client::parent_visible();
    let _ = client::old_stock();
}
