//! Circuit breakers for async Rust.
//!
//! A slow or failing dependency must not take its callers down. A circuit breaker watches the
//! calls to one dependency; when too many of them fail (or run too slowly), it *opens* and
//! answers at once instead of calling, so callers stop piling up behind a dependency that is not
//! answering. After a break it lets a few probe calls through; if they succeed it closes again.
//!
//! Most users add the `#[circuit_breaker]` attribute to an async fn. This crate is its runtime:
//! the [`Breaker`] state machine, the windows it judges over, the call path (permit, timeout,
//! classify, record), the [`IsFailure`] classification, the [`registry`] of every breaker, and
//! transition [events](Transition).
//!
//! ```
//! use std::time::Duration;
//! use breaker_runtime::{Breaker, Config, State};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let breaker = Breaker::new(
//!     Config::builder()
//!         .name("payments")
//!         .threshold(50.0)
//!         .count_window(4)
//!         .break_duration(Duration::from_secs(30))
//!         .build()?,
//! );
//! let down = || async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)) };
//! for _ in 0..4 {
//!     let _ = breaker.call(down()).await;
//! }
//! assert_eq!(breaker.state(), State::Open);
//!
//! tokio::time::advance(Duration::from_secs(30)).await;
//! breaker.call(async { Ok::<_, std::io::Error>(()) }).await?; // the probe
//! assert_eq!(breaker.state(), State::Closed);
//! # Ok(())
//! # }
//! ```
//!
//! # Semantics in brief
//!
//! * **Closed**: calls run; each outcome (success, slow success or failure) is recorded in the
//!   window. After every record, once the window holds `min_calls` outcomes, the circuit opens if
//!   the failure rate, or the slow rate, is at or above its threshold (`>=`).
//! * **Open**: calls are rejected with [`BreakerError::Open`] without running. From the instant
//!   the break has passed, the next call moves the circuit to half-open and runs as a probe.
//! * **Half-open**: up to `probes` calls run at once; others are rejected. A failed probe reopens
//!   the circuit (for a doubled break when `max_break_duration` is set); `probes` successes in a
//!   row close it with an empty window.
//! * Every transition empties the window, and an outcome counts only in the state period its
//!   call was admitted in. Timeouts and panics are failures; cancelled calls record nothing.
//!
//! # Time
//!
//! Every reading comes from `tokio::time`, so `tokio::time::pause()` and `advance()` drive every
//! behaviour in tests. Guarded calls need a tokio runtime with the time driver enabled (for the
//! timeout), as `tokio::time::timeout` does.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod breaker;
mod call;
mod classify;
mod clock;
mod config;
mod error;
mod events;
mod name;
mod permit;
mod probes;
mod registry;
mod state;
mod window;

pub use breaker::{Breaker, Snapshot};
pub use call::Call;
pub use classify::{IsFailure, Verdict};
pub use config::{
    Config, ConfigBuilder, ConfigError, MAX_COUNT_WINDOW, MAX_PROBES, MIN_TIME_WINDOW, Rate, Window,
};
pub use error::BreakerError;
pub use events::{Subscription, Transition};
pub use name::Name;
pub use permit::Permit;
pub use registry::{Conflict, Location, Registry, RegistryError, registry};
pub use state::State;

/// Derives [`IsFailure`](trait@IsFailure) for an error enum or struct.
///
/// Every variant is a failure unless marked: `#[breaker(healthy)]` (the dependency answered
/// correctly, recorded as a success), `#[breaker(ignore)]` (record nothing) or
/// `#[breaker(transparent)]` (ask the variant's one field). `#[breaker(default = "healthy")]` on
/// the enum changes the mark of unmarked variants. Structs take the container attributes.
///
/// ```
/// use breaker_runtime::IsFailure;
///
/// #[derive(Debug, IsFailure)]
/// enum PayError {
///     Unavailable,
///     #[breaker(healthy)]
///     Declined,
///     #[breaker(ignore)]
///     Cancelled,
///     #[breaker(transparent)]
///     Io(std::io::Error),
/// }
///
/// assert!(PayError::Unavailable.is_failure());
/// assert!(!PayError::Declined.is_failure());
/// assert!(PayError::Cancelled.is_ignored());
/// assert!(!PayError::Io(std::io::ErrorKind::NotFound.into()).is_failure());
/// ```
pub use breaker_macros::IsFailure;
/// Guards an async fn with a circuit breaker.
///
/// See the crate documentation for the options and what the expansion looks like.
pub use breaker_macros::circuit_breaker;

/// What the attribute's expansion reaches the runtime through. Not public API.
#[doc(hidden)]
pub mod __private;
