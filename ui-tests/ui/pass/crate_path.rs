//! `crate = path` for a runtime that is not at `::breaker_runtime`.
#![deny(warnings)]

// The closest a single-file test gets to `renamed = { package = "breaker-runtime" }` in
// Cargo.toml: an extern crate item at the root puts `renamed` in the extern prelude, so
// `::renamed` resolves everywhere.
extern crate breaker_runtime as renamed;

mod aliased {
    // A plain `use` alias is an item of this module: it is found as `aliased_runtime` here and
    // as `crate::aliased::aliased_runtime` (or `self::aliased_runtime`) anywhere.
    pub use breaker_runtime as aliased_runtime;
}

use aliased::aliased_runtime;
use renamed::{BreakerError, IsFailure};

#[renamed::circuit_breaker(crate = ::renamed)]
async fn extern_prelude() -> Result<u32, BreakerError> {
    Ok(1)
}

#[renamed::circuit_breaker(crate = renamed, fallback = extern_prelude)]
async fn relative_at_root() -> Result<u32, BreakerError> {
    Ok(1)
}

#[aliased_runtime::circuit_breaker(crate = aliased_runtime)]
async fn use_alias_at_root() -> Result<u32, BreakerError> {
    Ok(1)
}

mod nested {
    use super::*;

    #[renamed::circuit_breaker(crate = crate::aliased::aliased_runtime)]
    pub async fn absolute_crate_path() -> Result<u32, BreakerError> {
        Ok(1)
    }

    #[renamed::circuit_breaker(crate = ::renamed)]
    pub async fn extern_prelude_in_module() -> Result<u32, BreakerError> {
        Ok(1)
    }
}

#[derive(Debug, IsFailure)]
#[breaker(crate = renamed)]
enum ByPath {
    Down,
    #[breaker(healthy)]
    Declined,
}

#[derive(Debug, IsFailure)]
#[breaker(crate = "::renamed", default = "healthy")]
enum ByString {
    #[breaker(failure)]
    Down,
    Declined,
}

fn main() {
    let _ = extern_prelude();
    let _ = relative_at_root();
    let _ = use_alias_at_root();
    let _ = nested::absolute_crate_path();
    let _ = nested::extern_prelude_in_module();
    assert!(ByPath::Down.is_failure() && !ByPath::Declined.is_failure());
    assert!(ByString::Down.is_failure() && !ByString::Declined.is_failure());
}
