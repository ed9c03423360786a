//! The options of a circuit breaker, defined once.
//!
//! Each option's name, the grammar of its value (`"50%"`, `"20"`, `"30s"`, `"off"`), its
//! default and its limits live here, and nowhere else: the `#[circuit_breaker]` attribute
//! checks its arguments with them at compile time, and `breaker-runtime` builds and checks a
//! `Config` with them at run time (from the builder, or from a configuration file that spells
//! values as the attribute does). So a value means the same, and is refused by the same rule,
//! wherever it is written.
//!
//! Use it through `breaker-runtime`, which re-exports what users name.
//!
//! ```
//! use std::time::Duration;
//! use breaker_options::{grammar, Settings, Window};
//!
//! let settings = Settings {
//!     threshold: grammar::percentage("25%")?,
//!     window: grammar::window("30s")?,
//!     timeout: grammar::timeout("2s")?,
//!     ..Settings::DEFAULT
//! };
//! settings.check()?;
//! assert_eq!(settings.window, Window::Time(Duration::from_secs(30)));
//! assert_eq!(settings.min_calls(), 10);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]
// On docs.rs every feature is documented, each gated item marked with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The crate's README, compiled only to run its example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct Readme;

mod error;
mod explain;
pub mod grammar;
mod growth;
mod limits;
mod mode;
#[cfg(feature = "serde")]
mod patch;
mod policy;
mod rate;
mod record;
mod settings;
#[cfg(feature = "serde")]
mod spelled;
mod spelling;
mod table;
mod window;

pub use error::ConfigError;
pub use explain::{Written, explain};
pub use growth::{BreakGrowth, MAX_BREAK_GROWTH};
pub use limits::{
    DEFAULT_STALE_ENTRIES, MAX_CONCURRENT, MAX_COUNT_WINDOW, MAX_DURATION, MAX_MIN_CALLS,
    MAX_PROBES, MAX_RETRIES, MAX_STALE_ENTRIES, MIN_TIME_WINDOW, TIME_WINDOW_MIN_CALLS,
};
pub use mode::Mode;
#[cfg(feature = "serde")]
pub use patch::Patch;
pub use policy::{Backoff, PolicySettings, RETRY_BUDGET_FLOOR, RETRY_BUDGET_WINDOW, RetryBudget};
pub use rate::Rate;
pub use record::Record;
pub use settings::Settings;
#[cfg(feature = "serde")]
pub use spelled::Spelled;
pub use spelling::nearest;
pub use table::{OPTIONS, canonical, option_list};
pub use window::{Window, WindowKind};
