//! What a breaker is told: thresholds, window, timing and probing, validated once.

use std::fmt;
use std::time::Duration;

use crate::Name;

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
/// ```
pub const MAX_PROBES: u32 = 1_000;
/// The shortest time window: it is cut into ten buckets of at least 100 µs.
///
/// ```
/// use breaker_runtime::{Config, MIN_TIME_WINDOW};
///
/// assert!(Config::builder().time_window(MIN_TIME_WINDOW).build().is_ok());
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

const PARTS_PER_MILLION: u32 = 1_000_000;

/// The sliding window of recorded outcomes the failure rate is judged over.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, Window};
///
/// let by_count = Config::builder().count_window(100).build().unwrap();
/// assert_eq!(by_count.window(), Window::Count(100));
/// let by_time = Config::builder().time_window(Duration::from_secs(60)).build().unwrap();
/// assert_eq!(by_time.window().to_string(), "last 60s");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Window {
    /// The last `n` recorded outcomes.
    Count(u32),
    /// Every outcome recorded in the last `d` (and none older than `d + d/10`).
    Time(Duration),
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Window::Count(n) => write!(f, "last {n} calls"),
            Window::Time(d) => write!(f, "last {d:?}"),
        }
    }
}

/// A percentage kept exactly as parts per million, so `33.3333%` means what it says.
///
/// ```
/// use breaker_runtime::Config;
///
/// let config = Config::builder().threshold(33.3333).build().unwrap();
/// assert_eq!(config.threshold().percent(), 33.3333);
/// assert_eq!(config.threshold().to_string(), "33.3333%");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rate(u32);

/// `Rate(50%)`: the percentage, not the parts per million it is kept in.
impl fmt::Debug for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rate({self})")
    }
}

impl Rate {
    /// The whole: 100%.
    pub const HUNDRED_PERCENT: Rate = Rate(PARTS_PER_MILLION);

    /// A rate from parts per million (`500_000` is 50%), for `const` contexts.
    #[doc(hidden)]
    pub const fn from_ppm(ppm: u32) -> Self {
        Rate(ppm)
    }

    /// The rate as a percentage.
    pub fn percent(self) -> f64 {
        f64::from(self.0) / 10_000.0
    }

    fn from_percent(percent: f64) -> Option<Self> {
        if !(percent > 0.0 && percent <= 100.0) {
            return None;
        }
        // In range (0, 100], so the product is in (0, 1e6] and the cast is exact after rounding.
        let ppm = (percent * 10_000.0).round() as u32;
        (ppm > 0).then_some(Rate(ppm))
    }

    /// Whether `part` out of `whole` reaches this rate (`>=`), in exact integer arithmetic.
    pub(crate) fn reached_by(self, part: u32, whole: u32) -> bool {
        whole > 0
            && u64::from(part) * u64::from(PARTS_PER_MILLION)
                >= u64::from(self.0) * u64::from(whole)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.percent())
    }
}

/// A value the [`ConfigBuilder`] refused: names the field and the rule it broke.
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
    /// A count window above [`MAX_COUNT_WINDOW`].
    #[error("`window` may hold at most {max} calls, got {value}; use a time window for more")]
    WindowTooLarge {
        /// The refused size.
        value: u32,
        /// The largest count window.
        max: u32,
    },
    /// A time window shorter than [`MIN_TIME_WINDOW`].
    #[error("a time `window` must be at least 1ms, got {value:?}")]
    WindowTooShort {
        /// The refused duration.
        value: Duration,
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
    /// `probes` of zero, or above [`MAX_PROBES`].
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
    /// A duration above [`MAX_DURATION`].
    #[error("`{field}` may be at most {max:?} (30 days), got {value:?}")]
    DurationTooLong {
        /// `window`, `timeout`, `break_duration`, `max_break_duration` or `slow_call`.
        field: &'static str,
        /// The refused duration.
        value: Duration,
        /// The longest duration.
        max: Duration,
    },
    /// A time window's `min_calls` above [`MAX_MIN_CALLS`].
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
            ConfigError::ZeroMinCalls
            | ConfigError::MinCallsAboveWindow { .. }
            | ConfigError::MinCallsTooLarge { .. } => "min_calls",
            ConfigError::SlowCallNotBelowTimeout { .. } => "slow_call",
            ConfigError::MaxBreakBelowBreak { .. } => "max_break_duration",
            ConfigError::Probes { .. } => "probes",
            ConfigError::SlowThresholdWithoutSlowCall => "slow_threshold",
            ConfigError::EmptyName => "name",
        }
    }
}

/// A breaker's validated configuration. Build one with [`Config::builder`]; the defaults are
/// those of the `#[circuit_breaker]` attribute.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, Window};
///
/// let config = Config::builder()
///     .name("payments")
///     .threshold(25.0)
///     .time_window(Duration::from_secs(30))
///     .timeout(Duration::from_secs(2))
///     .build()?;
/// assert_eq!(config.window(), Window::Time(Duration::from_secs(30)));
/// assert_eq!(config.min_calls(), 10);
/// # Ok::<(), breaker_runtime::ConfigError>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct Config {
    name: Name,
    threshold: Rate,
    slow_threshold: Rate,
    min_calls: u32,
    probes: u32,
    // Durations in nanoseconds, 0 meaning none (every configured duration is longer than zero):
    // half the size of `Option<Duration>`, for a breaker that is small enough to have thousands.
    /// A count window's size, or a time window's span with `TIME_WINDOW` set.
    window: u64,
    timeout: u64,
    break_duration: u64,
    max_break_duration: u64,
    slow_call: u64,
}

/// Marks `Config::window` as a time window's span.
const TIME_WINDOW: u64 = 1 << 63;

/// Nanoseconds of `d`, saturating at `u64::MAX` (about 584 years), in a `const` context.
const fn nanos(d: Duration) -> u64 {
    let n = d.as_nanos();
    if n > u64::MAX as u128 {
        u64::MAX
    } else {
        n as u64
    }
}

const fn nanos_or_zero(d: Option<Duration>) -> u64 {
    match d {
        Some(d) => nanos(d),
        None => 0,
    }
}

fn nonzero_duration(n: u64) -> Option<Duration> {
    (n > 0).then(|| Duration::from_nanos(n))
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("name", &self.name)
            .field("threshold", &self.threshold)
            .field("window", &self.window())
            .field("min_calls", &self.min_calls)
            .field("timeout", &self.timeout())
            .field("break_duration", &self.break_duration())
            .field("max_break_duration", &self.max_break_duration())
            .field("probes", &self.probes)
            .field("slow_call", &self.slow_call())
            .field("slow_threshold", &self.slow_threshold)
            .finish()
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}

impl Config {
    const DEFAULT: Config = Config::__prevalidated(
        Name::from_static("breaker"),
        Rate(500_000),
        Window::Count(20),
        20,
        Some(Duration::from_secs(10)),
        Duration::from_secs(30),
        None,
        1,
        None,
        Rate::HUNDRED_PERCENT,
    );

    /// A builder starting from the defaults: 50%, the last 20 calls, a 10 s timeout, a 30 s
    /// break, one probe, no slow-call detection.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder::default()
    }

    /// A configuration whose every value was already checked, by the attribute at compile time.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub const fn __prevalidated(
        name: Name,
        threshold: Rate,
        window: Window,
        min_calls: u32,
        timeout: Option<Duration>,
        break_duration: Duration,
        max_break_duration: Option<Duration>,
        probes: u32,
        slow_call: Option<Duration>,
        slow_threshold: Rate,
    ) -> Self {
        let window = match window {
            Window::Count(n) => n as u64,
            Window::Time(d) => TIME_WINDOW | (nanos(d) & !TIME_WINDOW),
        };
        Config {
            name,
            threshold,
            slow_threshold,
            min_calls,
            probes,
            window,
            timeout: nanos_or_zero(timeout),
            break_duration: nanos(break_duration),
            max_break_duration: nanos_or_zero(max_break_duration),
            slow_call: nanos_or_zero(slow_call),
        }
    }

    /// The same configuration under another name.
    pub fn with_name(mut self, name: impl Into<Name>) -> Self {
        self.name = name.into();
        self
    }

    /// The breaker's name.
    pub fn name(&self) -> &Name {
        &self.name
    }
    /// The failure rate at which the circuit opens.
    pub fn threshold(&self) -> Rate {
        self.threshold
    }
    /// The sliding window the rates are judged over.
    pub fn window(&self) -> Window {
        if self.window & TIME_WINDOW == 0 {
            // A count window's size is at most MAX_COUNT_WINDOW, so the cast is exact.
            Window::Count(self.window as u32)
        } else {
            Window::Time(Duration::from_nanos(self.window & !TIME_WINDOW))
        }
    }
    /// How many outcomes the window must hold before the rates are judged.
    pub fn min_calls(&self) -> u32 {
        self.min_calls
    }
    /// How long a call may run before it is cancelled and counted as a failure.
    pub fn timeout(&self) -> Option<Duration> {
        nonzero_duration(self.timeout)
    }
    /// How long the circuit stays open before it lets a probe through.
    pub fn break_duration(&self) -> Duration {
        Duration::from_nanos(self.break_duration)
    }
    /// The cap on the break as it doubles after failed probes; `None` means it never grows.
    pub fn max_break_duration(&self) -> Option<Duration> {
        nonzero_duration(self.max_break_duration)
    }
    /// How many probes may run at once in half-open, and how many successes in a row close it.
    pub fn probes(&self) -> u32 {
        self.probes
    }
    /// How long a successful call may take before it counts as slow; `None` turns detection off.
    pub fn slow_call(&self) -> Option<Duration> {
        nonzero_duration(self.slow_call)
    }
    /// The slow-call rate at which the circuit opens.
    pub fn slow_threshold(&self) -> Rate {
        self.slow_threshold
    }

    /// `slow_call` in nanoseconds, 0 when off: what the hot path compares against.
    #[inline]
    pub(crate) fn slow_call_nanos(&self) -> u64 {
        self.slow_call
    }

    /// `break_duration` in nanoseconds: what a half-open probe is timed against.
    #[inline]
    pub(crate) fn break_nanos(&self) -> u64 {
        self.break_duration
    }

    /// The break after `failed_probes` failed probes in a row.
    pub(crate) fn break_after(&self, failed_probes: u32) -> Duration {
        let Some(max) = self.max_break_duration() else {
            return self.break_duration();
        };
        let factor = 2u32.saturating_pow(failed_probes);
        self.break_duration().saturating_mul(factor).min(max)
    }

    /// Whether everything but the name agrees: two declarations of one breaker must.
    pub(crate) fn same_settings(&self, other: &Config) -> bool {
        self.clone().with_name(other.name.clone()) == *other
    }
}

/// Builds a [`Config`]; every value is checked by [`ConfigBuilder::build`].
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, ConfigError};
///
/// let err = Config::builder()
///     .break_duration(Duration::from_secs(10))
///     .max_break_duration(Duration::from_secs(5))
///     .build()
///     .unwrap_err();
/// assert!(matches!(err, ConfigError::MaxBreakBelowBreak { .. }));
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ConfigBuilder {
    name: Name,
    threshold: f64,
    window: Window,
    min_calls: Option<u32>,
    timeout: Option<Duration>,
    break_duration: Duration,
    max_break_duration: Option<Duration>,
    probes: u32,
    slow_call: Option<Duration>,
    slow_threshold: Option<f64>,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        let d = Config::DEFAULT;
        ConfigBuilder {
            threshold: d.threshold.percent(),
            window: d.window(),
            min_calls: None,
            timeout: d.timeout(),
            break_duration: d.break_duration(),
            max_break_duration: d.max_break_duration(),
            probes: d.probes,
            slow_call: d.slow_call(),
            slow_threshold: None,
            name: d.name,
        }
    }
}

impl ConfigBuilder {
    /// The breaker's name (default `"breaker"`).
    pub fn name(mut self, name: impl Into<Name>) -> Self {
        self.name = name.into();
        self
    }
    /// Open when the failure rate is at least this percentage, in (0, 100] (default 50).
    pub fn threshold(mut self, percent: f64) -> Self {
        self.threshold = percent;
        self
    }
    /// Judge the last `calls` recorded outcomes, 1 to [`MAX_COUNT_WINDOW`] (default 20).
    pub fn count_window(mut self, calls: u32) -> Self {
        self.window = Window::Count(calls);
        self
    }
    /// Judge the outcomes recorded in the last `duration`, at least [`MIN_TIME_WINDOW`].
    pub fn time_window(mut self, duration: Duration) -> Self {
        self.window = Window::Time(duration);
        self
    }
    /// Judge only once the window holds this many outcomes (default: the count window's size,
    /// or 10 for a time window).
    pub fn min_calls(mut self, calls: u32) -> Self {
        self.min_calls = Some(calls);
        self
    }
    /// Cancel a call still running after `limit` and count it as a failure (default 10 s).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }
    /// Let calls run as long as they take.
    pub fn no_timeout(mut self) -> Self {
        self.timeout = None;
        self
    }
    /// How long the circuit stays open before a probe (default 30 s).
    pub fn break_duration(mut self, duration: Duration) -> Self {
        self.break_duration = duration;
        self
    }
    /// Double the break after each failed probe in a row, up to this (default: no growth).
    pub fn max_break_duration(mut self, duration: Duration) -> Self {
        self.max_break_duration = Some(duration);
        self
    }
    /// Probes allowed at once in half-open, and successes in a row that close it (default 1).
    pub fn probes(mut self, probes: u32) -> Self {
        self.probes = probes;
        self
    }
    /// A success that takes longer than this is slow (default: off).
    pub fn slow_call(mut self, duration: Duration) -> Self {
        self.slow_call = Some(duration);
        self
    }
    /// Open when slow successes reach this percentage of the window (default 100; needs
    /// [`slow_call`](Self::slow_call)).
    pub fn slow_threshold(mut self, percent: f64) -> Self {
        self.slow_threshold = Some(percent);
        self
    }

    /// Checks every value and returns the configuration, or the first rule broken.
    pub fn build(self) -> Result<Config, ConfigError> {
        if self.name.trim().is_empty() {
            return Err(ConfigError::EmptyName);
        }
        let threshold = percentage("threshold", self.threshold)?;
        let default_min_calls = match self.window {
            Window::Count(0) => return Err(ConfigError::EmptyWindow),
            Window::Count(n) if n > MAX_COUNT_WINDOW => {
                return Err(ConfigError::WindowTooLarge {
                    value: n,
                    max: MAX_COUNT_WINDOW,
                });
            }
            Window::Count(n) => n,
            Window::Time(d) if d < MIN_TIME_WINDOW => {
                return Err(ConfigError::WindowTooShort { value: d });
            }
            Window::Time(_) => 10,
        };
        let min_calls = self.min_calls.unwrap_or(default_min_calls);
        if min_calls == 0 {
            return Err(ConfigError::ZeroMinCalls);
        }
        match self.window {
            Window::Count(window) if min_calls > window => {
                return Err(ConfigError::MinCallsAboveWindow { min_calls, window });
            }
            Window::Time(_) if min_calls > MAX_MIN_CALLS => {
                return Err(ConfigError::MinCallsTooLarge {
                    value: min_calls,
                    max: MAX_MIN_CALLS,
                });
            }
            Window::Count(_) | Window::Time(_) => {}
        }
        if let Window::Time(window) = self.window {
            duration("window", Some(window))?;
        }
        duration("timeout", self.timeout)?;
        duration("break_duration", Some(self.break_duration))?;
        duration("max_break_duration", self.max_break_duration)?;
        duration("slow_call", self.slow_call)?;
        if let (Some(slow_call), Some(timeout)) = (self.slow_call, self.timeout) {
            if slow_call >= timeout {
                return Err(ConfigError::SlowCallNotBelowTimeout { slow_call, timeout });
            }
        }
        if let Some(max) = self.max_break_duration {
            if max < self.break_duration {
                return Err(ConfigError::MaxBreakBelowBreak {
                    max,
                    base: self.break_duration,
                });
            }
        }
        if !(1..=MAX_PROBES).contains(&self.probes) {
            return Err(ConfigError::Probes {
                value: self.probes,
                max: MAX_PROBES,
            });
        }
        let slow_threshold = match (self.slow_threshold, self.slow_call) {
            (Some(_), None) => return Err(ConfigError::SlowThresholdWithoutSlowCall),
            (Some(percent), Some(_)) => percentage("slow_threshold", percent)?,
            (None, _) => Rate::HUNDRED_PERCENT,
        };
        Ok(Config::__prevalidated(
            self.name,
            threshold,
            self.window,
            min_calls,
            self.timeout,
            self.break_duration,
            self.max_break_duration,
            self.probes,
            self.slow_call,
            slow_threshold,
        ))
    }
}

fn percentage(field: &'static str, value: f64) -> Result<Rate, ConfigError> {
    Rate::from_percent(value).ok_or(ConfigError::Percentage { field, value })
}

/// A duration that must be longer than zero and at most [`MAX_DURATION`], if set.
fn duration(field: &'static str, value: Option<Duration>) -> Result<(), ConfigError> {
    match value {
        Some(d) if d.is_zero() => Err(ConfigError::ZeroDuration { field }),
        Some(d) if d > MAX_DURATION => Err(ConfigError::DurationTooLong {
            field,
            value: d,
            max: MAX_DURATION,
        }),
        _ => Ok(()),
    }
}
