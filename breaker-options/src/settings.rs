//! Every option of a breaker but its name, with its default, and the rules between them.

use std::time::Duration;

use crate::error::ConfigError;
use crate::growth::BreakGrowth;
use crate::limits::{
    MAX_COUNT_WINDOW, MAX_DURATION, MAX_MIN_CALLS, MAX_PROBES, MIN_TIME_WINDOW,
    TIME_WINDOW_MIN_CALLS,
};
use crate::mode::Mode;
use crate::rate::Rate;
use crate::record::Record;
use crate::window::{Window, WindowKind};

/// A breaker's options as plain named values: what the attribute's expansion hands the runtime,
/// what the runtime's builder fills in, and what both check with [`Settings::check`], so a value
/// means the same and meets the same rules wherever it is written.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::{ConfigError, Settings, Window};
///
/// let settings = Settings { window: Window::Count(10), min_calls: Some(11), ..Settings::DEFAULT };
/// assert_eq!(settings.check(), Err(ConfigError::MinCallsAboveWindow { min_calls: 11, window: 10 }));
/// assert_eq!(Settings::DEFAULT.timeout, Some(Duration::from_secs(10)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The failure rate at which the circuit opens (default 50%).
    pub threshold: Rate,
    /// The window the rates are judged over (default the last 20 calls).
    pub window: Window,
    /// Whether a time window slides (default) or clears at each edge of its span; a count
    /// window only slides.
    pub window_kind: WindowKind,
    /// Outcomes the window must hold before it is judged; `None` for the default: a count
    /// window's size, or [`TIME_WINDOW_MIN_CALLS`] for a time window.
    pub min_calls: Option<u32>,
    /// How long a call may run; `None` for no limit (default 10 s).
    pub timeout: Option<Duration>,
    /// How long the circuit stays open before a probe (default 30 s).
    pub break_duration: Duration,
    /// The cap on the break as it grows after failed probes; `None` for no growth (default).
    pub max_break_duration: Option<Duration>,
    /// How much longer each break gets after a failed probe in a row, up to
    /// `max_break_duration`; `None` for the default, doubling. Needs `max_break_duration`.
    pub break_growth: Option<BreakGrowth>,
    /// A random share of each break added to it, up to this (e.g. 10%), so breakers that
    /// opened together do not probe together; `None` for none (default).
    pub break_jitter: Option<Rate>,
    /// Probes at once in half-open, and successes in a row that close it (default 1); with
    /// `probe_threshold`, the probes of a half-open period, judged together.
    pub probes: u32,
    /// The failure (and slow-call) rate of the half-open period's `probes` probes at which the
    /// circuit opens again, judged once all have answered (Resilience4j's
    /// `permittedNumberOfCallsInHalfOpenState`); `None` for the default rule: every probe must
    /// succeed, the first failure opens it.
    pub probe_threshold: Option<Rate>,
    /// How long a success may take before it counts as slow; `None` for off (default).
    pub slow_call: Option<Duration>,
    /// The slow-call rate at which the circuit opens; `None` for the default, 100%. Needs
    /// `slow_call`.
    pub slow_threshold: Option<Rate>,
    /// Whether it rejects calls while open (default), or only reports that it would have.
    pub mode: Mode,
    /// What its flight recorder keeps; `None` for the process's default, read when the breaker
    /// is built (the last 10 minutes unless the process set another).
    pub record: Option<Record>,
    /// How long after its first call the circuit does not open, whatever the window says
    /// (outcomes are still recorded); `None` for none (default).
    pub warm_up: Option<Duration>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings::DEFAULT
    }
}

impl Settings {
    /// The defaults of the attribute and of the builder alike.
    pub const DEFAULT: Settings = Settings {
        threshold: Rate::from_ppm(500_000),
        window: Window::Count(20),
        window_kind: WindowKind::Sliding,
        min_calls: None,
        timeout: Some(Duration::from_secs(10)),
        break_duration: Duration::from_secs(30),
        max_break_duration: None,
        break_growth: None,
        break_jitter: None,
        probes: 1,
        probe_threshold: None,
        slow_call: None,
        slow_threshold: None,
        mode: Mode::Enforce,
        record: None,
        warm_up: None,
    };

    /// `min_calls`, its default filled in.
    pub const fn min_calls(&self) -> u32 {
        match (self.min_calls, self.window) {
            (Some(calls), _) => calls,
            (None, Window::Count(calls)) => calls,
            (None, Window::Time(_)) => TIME_WINDOW_MIN_CALLS,
        }
    }

    /// `break_growth`, its default filled in.
    pub const fn break_growth(&self) -> BreakGrowth {
        match self.break_growth {
            Some(growth) => growth,
            None => BreakGrowth::DEFAULT,
        }
    }

    /// `slow_threshold`, its default filled in.
    pub const fn slow_threshold(&self) -> Rate {
        match self.slow_threshold {
            Some(rate) => rate,
            None => Rate::HUNDRED_PERCENT,
        }
    }

    /// These settings with the `options` named (canonical names, as
    /// [`canonical`](crate::canonical) gives them) set to their values in `values`, and checked:
    /// a change of some options on a live breaker, every option not named keeping its value.
    ///
    /// Four options follow another, as they do in the attribute, so the result means what the
    /// same options written in the attribute would: naming `window` without `min_calls` puts
    /// `min_calls` back to the new window's default; naming `window` without `window_kind`
    /// keeps the kind for a time window (a count window only slides); naming `slow_call`
    /// without `slow_threshold`, or `max_break_duration` without `break_growth`, keeps the one
    /// that follows. A name that is no option of the breaker's own is ignored.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_options::{Settings, Window};
    ///
    /// let live = Settings { timeout: Some(Duration::from_secs(2)), ..Settings::DEFAULT };
    /// let wanted = Settings { window: Window::Count(8), ..Settings::DEFAULT };
    /// let next = live.patched(&wanted, &["window"])?;
    /// assert_eq!(next.window, Window::Count(8));
    /// assert_eq!(next.timeout, Some(Duration::from_secs(2)), "not named: kept");
    /// # Ok::<(), breaker_options::ConfigError>(())
    /// ```
    pub fn patched(self, values: &Settings, options: &[&str]) -> Result<Settings, ConfigError> {
        let mut next = self;
        let v = values;
        for &option in options {
            match option {
                "threshold" => next.threshold = v.threshold,
                "window" => next.window = v.window,
                "window_kind" => next.window_kind = v.window_kind,
                "min_calls" => next.min_calls = v.min_calls,
                "timeout" => next.timeout = v.timeout,
                "break_duration" => next.break_duration = v.break_duration,
                "max_break_duration" => next.max_break_duration = v.max_break_duration,
                "break_growth" => next.break_growth = v.break_growth,
                "break_jitter" => next.break_jitter = v.break_jitter,
                "probes" => next.probes = v.probes,
                "probe_threshold" => next.probe_threshold = v.probe_threshold,
                "slow_call" => next.slow_call = v.slow_call,
                "slow_threshold" => next.slow_threshold = v.slow_threshold,
                "mode" => next.mode = v.mode,
                "record" => next.record = v.record,
                "warm_up" => next.warm_up = v.warm_up,
                _ => {}
            }
        }
        if options.contains(&"window") && !options.contains(&"min_calls") {
            next.min_calls = None;
        }
        if options.contains(&"window")
            && !options.contains(&"window_kind")
            && matches!(next.window, Window::Count(_))
        {
            // A count window has one kind; a new time window keeps the kind it had.
            next.window_kind = WindowKind::Sliding;
        }
        next.check()?;
        Ok(next)
    }

    /// The first rule these settings break, if any.
    pub fn check(&self) -> Result<(), ConfigError> {
        first(self.violations())
    }

    /// Every rule these settings break, in the order of the options: the attribute reports
    /// them all at once.
    pub fn violations(&self) -> Vec<ConfigError> {
        let mut found = Vec::new();
        match self.window {
            Window::Count(0) => found.push(ConfigError::EmptyWindow),
            Window::Count(value) if value > MAX_COUNT_WINDOW => {
                found.push(ConfigError::WindowTooLarge {
                    value,
                    max: MAX_COUNT_WINDOW,
                });
            }
            Window::Time(value) if value < MIN_TIME_WINDOW => {
                found.push(ConfigError::WindowTooShort { value });
            }
            Window::Count(_) | Window::Time(_) => {}
        }
        if let (WindowKind::Fixed, Window::Count(window)) = (self.window_kind, self.window) {
            found.push(ConfigError::FixedCountWindow { window });
        }
        let min_calls = self.min_calls();
        match self.window {
            _ if min_calls == 0 => found.push(ConfigError::ZeroMinCalls),
            Window::Count(window) if window > 0 && min_calls > window => {
                found.push(ConfigError::MinCallsAboveWindow { min_calls, window });
            }
            Window::Time(_) if min_calls > MAX_MIN_CALLS => {
                found.push(ConfigError::MinCallsTooLarge {
                    value: min_calls,
                    max: MAX_MIN_CALLS,
                });
            }
            Window::Count(_) | Window::Time(_) => {}
        }
        if let Window::Time(window) = self.window {
            duration(&mut found, "window", Some(window));
        }
        duration(&mut found, "timeout", self.timeout);
        duration(&mut found, "break_duration", Some(self.break_duration));
        duration(&mut found, "max_break_duration", self.max_break_duration);
        duration(&mut found, "slow_call", self.slow_call);
        if let (Some(slow_call), Some(timeout)) = (self.slow_call, self.timeout) {
            if slow_call >= timeout {
                found.push(ConfigError::SlowCallNotBelowTimeout { slow_call, timeout });
            }
        }
        if let Some(max) = self.max_break_duration {
            if max < self.break_duration {
                found.push(ConfigError::MaxBreakBelowBreak {
                    max,
                    base: self.break_duration,
                });
            }
        }
        if self.break_growth.is_some() && self.max_break_duration.is_none() {
            found.push(ConfigError::GrowthWithoutMaxBreak);
        }
        if !(1..=MAX_PROBES).contains(&self.probes) {
            found.push(ConfigError::Probes {
                value: self.probes,
                max: MAX_PROBES,
            });
        }
        if self.slow_threshold.is_some() && self.slow_call.is_none() {
            found.push(ConfigError::SlowThresholdWithoutSlowCall);
        }
        duration(&mut found, "warm_up", self.warm_up);
        if let Some(Record::Last(span)) = self.record {
            if span < Duration::from_secs(1) {
                found.push(ConfigError::RecordTooShort { value: span });
            } else {
                duration(&mut found, "record", Some(span));
            }
        }
        found
    }
}

/// The first of `violations`, as a check's answer.
pub(crate) fn first(violations: Vec<ConfigError>) -> Result<(), ConfigError> {
    match violations.into_iter().next() {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// A duration that must be longer than zero and at most [`MAX_DURATION`], if set.
pub(crate) fn duration(found: &mut Vec<ConfigError>, field: &'static str, value: Option<Duration>) {
    match value {
        Some(d) if d.is_zero() => found.push(ConfigError::ZeroDuration { field }),
        Some(d) if d > MAX_DURATION => found.push(ConfigError::DurationTooLong {
            field,
            value: d,
            max: MAX_DURATION,
        }),
        _ => {}
    }
}
