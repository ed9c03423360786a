//! The `#[circuit_breaker]` attribute and `#[derive(IsFailure)]`, re-exported by
//! `breaker-runtime`: depend on that crate, not on this one.

#![deny(missing_docs)]
