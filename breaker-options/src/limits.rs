//! The bounds every option is held to, wherever it is written.

use std::time::Duration;

/// The largest count window: a count window keeps its tallies in one atomic word.
///
/// ```
/// use breaker_runtime::{Config, MAX_COUNT_WINDOW};
///
/// assert!(Config::builder().count_window(MAX_COUNT_WINDOW + 1).build().is_err());
/// ```
pub const MAX_COUNT_WINDOW: u32 = 10_000;

/// The most probes a half-open breaker may run at once.
///
/// ```
/// use breaker_runtime::{Config, MAX_PROBES};
///
/// assert!(Config::builder().probes(MAX_PROBES).build().is_ok());
/// assert!(Config::builder().probes(MAX_PROBES + 1).build().is_err());
/// ```
pub const MAX_PROBES: u32 = 1_000;

/// The shortest time window: it is cut into ten buckets of at least 100 µs.
///
/// ```
/// use breaker_runtime::{Config, MIN_TIME_WINDOW};
///
/// assert!(Config::builder().time_window(MIN_TIME_WINDOW).build().is_ok());
/// let shorter = MIN_TIME_WINDOW - std::time::Duration::from_micros(1);
/// assert!(Config::builder().time_window(shorter).build().is_err());
/// ```
pub const MIN_TIME_WINDOW: Duration = Duration::from_millis(1);

/// The longest duration any option takes (the time window, the timeout, the break and its
/// cap, `slow_call`): 30 days. Longer would be no breaker at all, and every duration then fits
/// the nanosecond clocks the breaker keeps with room to spare.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, ConfigError, MAX_DURATION};
///
/// assert!(Config::builder().break_duration(MAX_DURATION).build().is_ok());
/// let err = Config::builder().time_window(MAX_DURATION + Duration::from_nanos(1)).build();
/// assert!(matches!(err, Err(ConfigError::DurationTooLong { field: "window", .. })));
/// ```
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3_600);

/// The largest `min_calls` of a time window: a tenth of the window counts at most two million
/// outcomes, and a `min_calls` the window could never hold would keep the circuit from opening.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, MAX_MIN_CALLS};
///
/// let window = Config::builder().time_window(Duration::from_secs(60));
/// assert!(window.clone().min_calls(MAX_MIN_CALLS).build().is_ok());
/// assert!(window.min_calls(MAX_MIN_CALLS + 1).build().is_err());
/// ```
pub const MAX_MIN_CALLS: u32 = 1_000_000;

/// `min_calls` of a time window when none is given (a count window's is its size).
pub const TIME_WINDOW_MIN_CALLS: u32 = 10;

/// The most retries after a call's first attempt.
///
/// ```
/// use breaker_runtime::{MAX_RETRIES, Policy};
///
/// assert!(Policy::builder().retries(MAX_RETRIES).build().is_ok());
/// assert!(Policy::builder().retries(MAX_RETRIES + 1).build().is_err());
/// ```
pub const MAX_RETRIES: u32 = 10;

/// The largest bulkhead: calls at once through one breaker.
///
/// ```
/// use breaker_runtime::{MAX_CONCURRENT, Policy};
///
/// assert!(Policy::builder().max_concurrent(MAX_CONCURRENT).build().is_ok());
/// assert!(Policy::builder().max_concurrent(MAX_CONCURRENT + 1).build().is_err());
/// ```
pub const MAX_CONCURRENT: u32 = 1_000_000;

/// The most answers `stale_for` keeps per fn (`stale_entries`).
pub const MAX_STALE_ENTRIES: u32 = 1_000_000;

/// How many answers `stale_for` keeps per fn unless `stale_entries` says.
pub const DEFAULT_STALE_ENTRIES: u32 = 1_000;
