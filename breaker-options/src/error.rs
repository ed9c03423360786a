//! What a refused option says: the field, and the rule it broke.

use std::time::Duration;

#[cfg(doc)]
use crate::Settings;

/// A value refused, by the runtime's `ConfigBuilder` or by [`Settings::check`]: names the field
/// and the rule it broke.
///
/// ```
/// use breaker_runtime::{Config, ConfigError};
///
/// let err = Config::builder().count_window(10).min_calls(11).build().unwrap_err();
/// assert_eq!(err, ConfigError::MinCallsAboveWindow { min_calls: 11, window: 10 });
/// assert_eq!(err.field(), "min_calls");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A percentage outside (0, 100].
    #[error("`{field}` must be a percentage greater than 0 and at most 100, got {value}")]
    Percentage {
        /// `threshold` or `slow_threshold`.
        field: &'static str,
        /// The refused value.
        value: f64,
    },
    /// A count window of zero calls.
    #[error("`window` must hold at least 1 call")]
    EmptyWindow,
    /// A count window above [`MAX_COUNT_WINDOW`](crate::MAX_COUNT_WINDOW).
    #[error("`window` may hold at most {max} calls, got {value}; use a time window for more")]
    WindowTooLarge {
        /// The refused size.
        value: u32,
        /// The largest count window.
        max: u32,
    },
    /// A time window shorter than [`MIN_TIME_WINDOW`](crate::MIN_TIME_WINDOW).
    #[error("a time `window` must be at least 1ms, got {value:?}")]
    WindowTooShort {
        /// The refused duration.
        value: Duration,
    },
    /// A fixed window of a count of calls: only a time window has edges to clear at.
    #[error(
        "`window_kind = \"fixed\"` clears the counts at each edge of a time window, but the window is the last {window} calls; give a time `window` such as \"60s\""
    )]
    FixedCountWindow {
        /// The count window's size.
        window: u32,
    },
    /// `min_calls` of zero.
    #[error("`min_calls` must be at least 1")]
    ZeroMinCalls,
    /// `min_calls` larger than the count window can ever hold.
    #[error(
        "`min_calls` ({min_calls}) cannot exceed the count window ({window}), or the circuit could never open"
    )]
    MinCallsAboveWindow {
        /// The refused `min_calls`.
        min_calls: u32,
        /// The count window's size.
        window: u32,
    },
    /// A duration of zero where time must pass.
    #[error("`{field}` must be longer than zero")]
    ZeroDuration {
        /// `timeout`, `break_duration`, `max_break_duration` or `slow_call`.
        field: &'static str,
    },
    /// `max_break_duration` below `break_duration`.
    #[error("`max_break_duration` ({max:?}) must be at least `break_duration` ({base:?})")]
    MaxBreakBelowBreak {
        /// The refused maximum.
        max: Duration,
        /// The break it must not undercut.
        base: Duration,
    },
    /// `break_growth` without `max_break_duration`: a break that grows without a cap could
    /// keep a recovered dependency cut off for days.
    #[error("`break_growth` needs `max_break_duration`, the cap the break grows up to")]
    GrowthWithoutMaxBreak,
    /// A growth factor below 1 or above [`MAX_BREAK_GROWTH`](crate::MAX_BREAK_GROWTH).
    #[error("`break_growth` must be between 1 and {max}, got {value}")]
    BreakGrowth {
        /// The refused factor.
        value: f64,
        /// The largest factor.
        max: f64,
    },
    /// `probes` of zero, or above [`MAX_PROBES`](crate::MAX_PROBES).
    #[error("`probes` must be between 1 and {max}, got {value}")]
    Probes {
        /// The refused count.
        value: u32,
        /// The most probes allowed.
        max: u32,
    },
    /// An empty name: logs, errors and the registry could not tell the breaker apart.
    #[error(
        "`name` must not be empty: it is how logs, errors and the registry tell breakers apart"
    )]
    EmptyName,
    /// A duration above [`MAX_DURATION`](crate::MAX_DURATION).
    #[error("`{field}` may be at most {max:?} (30 days), got {value:?}")]
    DurationTooLong {
        /// `window`, `timeout`, `break_duration`, `max_break_duration` or `slow_call`.
        field: &'static str,
        /// The refused duration.
        value: Duration,
        /// The longest duration.
        max: Duration,
    },
    /// A time window's `min_calls` above [`MAX_MIN_CALLS`](crate::MAX_MIN_CALLS).
    #[error("`min_calls` of a time window may be at most {max}, got {value}")]
    MinCallsTooLarge {
        /// The refused `min_calls`.
        value: u32,
        /// The largest `min_calls` of a time window.
        max: u32,
    },
    /// `slow_call` at or above the timeout: the timeout cuts every call before it could count
    /// as slow.
    #[error(
        "`slow_call` ({slow_call:?}) must be shorter than the `timeout` ({timeout:?}), or no call could ever count as slow"
    )]
    SlowCallNotBelowTimeout {
        /// The refused `slow_call`.
        slow_call: Duration,
        /// The timeout it must stay below.
        timeout: Duration,
    },
    /// `slow_threshold` without `slow_call`: nothing would ever be slow.
    #[error(
        "`slow_threshold` needs `slow_call`: set how long a call may take before it counts as slow"
    )]
    SlowThresholdWithoutSlowCall,
    /// `retries` above [`MAX_RETRIES`](crate::MAX_RETRIES).
    #[error(
        "`retries` may be at most {max}, got {value}; more attempts only add load to a sick dependency"
    )]
    Retries {
        /// The refused count.
        value: u32,
        /// The most retries allowed.
        max: u32,
    },
    /// An option about retries set without `retries`: it would do nothing.
    #[error(
        "`{field}` needs `retries`: without retries there is nothing to {}",
        without_retries(field)
    )]
    WithoutRetries {
        /// `backoff` or `retry_budget`.
        field: &'static str,
    },
    /// A backoff whose first cap is above its last.
    #[error(
        "`backoff` runs from its initial wait to its maximum, but {initial:?} is above {max:?}; swap them"
    )]
    BackoffReversed {
        /// The refused initial cap.
        initial: Duration,
        /// The refused maximum.
        max: Duration,
    },
    /// `max_concurrent` of zero, or above [`MAX_CONCURRENT`](crate::MAX_CONCURRENT).
    #[error("`max_concurrent` must be between 1 and {max}, got {value}")]
    MaxConcurrent {
        /// The refused cap.
        value: u32,
        /// The largest cap.
        max: u32,
    },
    /// `max_wait` without `max_concurrent`: there is no bulkhead to wait for.
    #[error(
        "`max_wait` needs `max_concurrent`: it is how long a call waits for a free slot of the bulkhead"
    )]
    MaxWaitWithoutMaxConcurrent,
    /// A live breaker's window or probe slots were replaced so many times (16 777 215) that
    /// there is no room to keep another: every replacement is kept while the breaker lives,
    /// since a call may still be finishing in it.
    #[error(
        "`window` and `probes` cannot change again on this breaker: it keeps every window and probe slots it was given, and has no room for more"
    )]
    TooManyReconfigurations,
    /// A flight recorder asked to keep less than a second of calls.
    #[error("`record` keeps at least 1s of calls, got {value:?}; write \"1s\" or more, or \"off\"")]
    RecordTooShort {
        /// The refused span.
        value: Duration,
    },
}

fn without_retries(field: &str) -> &'static str {
    if field == "backoff" {
        "wait between"
    } else {
        "budget"
    }
}

impl ConfigError {
    /// The option the error is about.
    ///
    /// ```
    /// use breaker_runtime::Config;
    ///
    /// let err = Config::builder().probes(0).build().unwrap_err();
    /// assert_eq!(err.field(), "probes");
    /// ```
    pub fn field(&self) -> &'static str {
        match self {
            ConfigError::Percentage { field, .. }
            | ConfigError::ZeroDuration { field }
            | ConfigError::DurationTooLong { field, .. } => field,
            ConfigError::EmptyWindow
            | ConfigError::WindowTooLarge { .. }
            | ConfigError::WindowTooShort { .. } => "window",
            ConfigError::FixedCountWindow { .. } => "window_kind",
            ConfigError::ZeroMinCalls
            | ConfigError::MinCallsAboveWindow { .. }
            | ConfigError::MinCallsTooLarge { .. } => "min_calls",
            ConfigError::SlowCallNotBelowTimeout { .. } => "slow_call",
            ConfigError::MaxBreakBelowBreak { .. } => "max_break_duration",
            ConfigError::GrowthWithoutMaxBreak | ConfigError::BreakGrowth { .. } => "break_growth",
            ConfigError::Probes { .. } => "probes",
            ConfigError::SlowThresholdWithoutSlowCall => "slow_threshold",
            ConfigError::EmptyName => "name",
            ConfigError::Retries { .. } => "retries",
            ConfigError::WithoutRetries { field } => field,
            ConfigError::BackoffReversed { .. } => "backoff",
            ConfigError::MaxConcurrent { .. } => "max_concurrent",
            ConfigError::MaxWaitWithoutMaxConcurrent => "max_wait",
            ConfigError::TooManyReconfigurations => "window",
            ConfigError::RecordTooShort { .. } => "record",
        }
    }
}
