//! Breakers of a test's own (feature `test-util`): inside [`isolated`], every
//! `#[circuit_breaker]` function resolves to a fresh breaker of that scope instead of the
//! process-wide one, so tests that drive the same guarded function do not fail each other.
//!
//! ```
//! use breaker_runtime::{circuit_breaker, registry, testing, BreakerError, State};
//!
//! #[circuit_breaker(name = "isolated-doc", window = "2")]
//! async fn lookup(up: bool) -> Result<u32, BreakerError> {
//!     if up { Ok(1) } else { Err(BreakerError::Timeout { breaker: "db".into(), limit: std::time::Duration::from_secs(1) }) }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // One test drives the circuit open...
//! testing::isolated(async {
//!     for _ in 0..2 {
//!         let _ = lookup(false).await;
//!     }
//!     assert_eq!(testing::breaker("isolated-doc").unwrap().state(), State::Open);
//! })
//! .await;
//! // ...and another, or the rest of the process, never sees it.
//! assert_eq!(registry().get("isolated-doc").unwrap().state(), State::Closed);
//! testing::isolated(async { assert_eq!(lookup(true).await.unwrap(), 1) }).await;
//! # }
//! ```
//!
//! The scope belongs to the task that awaits `isolated`: a task spawned inside it uses the
//! process-wide breakers unless its future is wrapped in `isolated` too. `registry()` keeps
//! listing the process-wide breakers; [`breaker`] finds the scope's. A scope's breakers are
//! made on first use and kept for the life of the process (a few hundred bytes each: test
//! processes are short). With the feature off none of this exists, and a guarded call costs
//! exactly what it costs without it.

use std::future::Future;

use crate::core::breaker::Breaker;
use crate::registry::{registry, scope};

/// Runs `future` with breakers of its own: every `#[circuit_breaker]` function it calls (on
/// this task) gets a fresh breaker, closed and empty, with the function's name and options.
pub async fn isolated<F: Future>(future: F) -> F::Output {
    scope::enter(future).await
}

/// The current scope's breaker named `name`, once a call in the scope made it.
pub fn breaker(name: &str) -> Option<&'static Breaker> {
    scope::find(name)
}

/// Closes every breaker in the registry with an empty window: a clean slate between tests
/// that share the process-wide breakers.
pub fn reset_all() {
    for breaker in registry().breakers() {
        breaker.reset();
    }
}
