//! A rule between options said as the attribute says it: what is wrong, and the value to write
//! instead, naming a default when the option at fault was not written. The attribute reports it
//! on the token at fault; `breaker-replay` reports it for an option string; both say the same.

use std::time::Duration;

use crate::error::ConfigError;
use crate::limits::{MAX_DURATION, MAX_MIN_CALLS};
use crate::settings::Settings;

/// Which of the options a rule may name were written, rather than left at their defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// `window` was written.
    pub window: bool,
    /// `timeout` (or `timeout_ms`) was written.
    pub timeout: bool,
    /// `break_duration` was written.
    pub break_duration: bool,
}

/// The message for `violation`, a rule that `settings` (each absent option at its default)
/// breaks, in the attribute's words.
///
/// ```
/// use breaker_options::{ConfigError, Settings, Window, Written, explain};
///
/// let settings = Settings { window: Window::Count(20), min_calls: Some(30), ..Settings::DEFAULT };
/// let violation = ConfigError::MinCallsAboveWindow { min_calls: 30, window: 20 };
/// assert_eq!(
///     explain(&violation, &settings, Written { window: true, ..Written::default() }),
///     "invalid `min_calls`: 30 is more than the window's 20 calls, so the circuit could never open; use at most 20",
/// );
/// ```
pub fn explain(violation: &ConfigError, settings: &Settings, written: Written) -> String {
    match *violation {
        ConfigError::MinCallsAboveWindow {
            min_calls: n,
            window,
        } if written.window => format!(
            "invalid `min_calls`: {n} is more than the window's {window} calls, so the circuit could never open; use at most {window}"
        ),
        ConfigError::MinCallsAboveWindow {
            min_calls: n,
            window,
        } => format!(
            "invalid `min_calls`: {n} is more than the default window's {window} calls; use at most {window}, or set a larger `window`"
        ),
        ConfigError::FixedCountWindow { window } => {
            let which = if written.window {
                "the window is"
            } else {
                "the default window is"
            };
            format!(
                "invalid `window_kind`: \"fixed\" clears the counts at each edge of a time window, and {which} the last {window} calls; add a time window such as `window = \"60s\"`, or remove `window_kind`"
            )
        }
        ConfigError::MinCallsTooLarge { .. } => format!(
            "invalid `min_calls`: a time window's `min_calls` may be at most {MAX_MIN_CALLS}"
        ),
        ConfigError::SlowCallNotBelowTimeout { slow_call, timeout } => {
            let which = if written.timeout {
                "the `timeout`"
            } else {
                "the default `timeout`"
            };
            format!(
                "invalid `slow_call`: {} is not shorter than {which} ({}), which cuts every call before it could count as slow; make it shorter",
                spelled(slow_call),
                spelled(timeout)
            )
        }
        ConfigError::MaxBreakBelowBreak { base, .. } => {
            let which = if written.break_duration {
                "`break_duration`"
            } else {
                "the default `break_duration`"
            };
            format!(
                "invalid `max_break_duration`: it must be at least {which} ({}), since it caps the break as it grows",
                spelled(base)
            )
        }
        ConfigError::GrowthWithoutMaxBreak => format!(
            "`break_growth` needs `max_break_duration`: add `max_break_duration = \"{}\"` (the cap the break grows up to), or remove `break_growth`",
            spelled(cap_for(settings.break_duration))
        ),
        ConfigError::SlowThresholdWithoutSlowCall => match slow_call_for(settings.timeout) {
            Some(slow_call) => format!(
                "`slow_threshold` needs `slow_call`: add `slow_call = \"{}\"` (how long a call may take before it counts as slow)",
                spelled(slow_call)
            ),
            None => "`slow_threshold` needs `slow_call`, which must be shorter than the timeout, and no call is shorter than 1ms: remove `slow_threshold`, or make the timeout longer".to_string(),
        },
        ConfigError::WithoutRetries { field } => format!(
            "`{field}` needs `retries`: add `retries = 3` (attempts after a failure), or remove `{field}`"
        ),
        ConfigError::MaxWaitWithoutMaxConcurrent => {
            "`max_wait` needs `max_concurrent`: add `max_concurrent = 16` (calls at once), or remove `max_wait`".to_string()
        }
        // The grammar refuses every other value where it is written; a rule that reaches here
        // still says what it is about.
        ref other => format!("invalid `{}`: {other}", other.field()),
    }
}

/// A cap to offer for the break to grow up to: 5 minutes, or more for a longer break, since it
/// must be at least the break (an offered value the attribute then refuses helps no one).
fn cap_for(break_duration: Duration) -> Duration {
    (break_duration * 10)
        .min(MAX_DURATION)
        .max(Duration::from_secs(300))
}

/// A `slow_call` to offer: 1 s, or half the timeout when that is shorter, since it must be
/// shorter than the timeout; none when the timeout is too short for any.
fn slow_call_for(timeout: Option<Duration>) -> Option<Duration> {
    let second = Duration::from_secs(1);
    match timeout {
        Some(timeout) if timeout <= second => {
            let half = Duration::from_millis(u64::try_from(timeout.as_millis() / 2).ok()?);
            (!half.is_zero()).then_some(half)
        }
        _ => Some(second),
    }
}

/// A duration as the attribute writes it: `90s`, `2m`, `1500ms`.
fn spelled(duration: Duration) -> String {
    match duration.as_millis() {
        ms if ms % 3_600_000 == 0 && ms > 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 && ms > 0 => format!("{}m", ms / 60_000),
        ms if ms % 1_000 == 0 && ms > 0 => format!("{}s", ms / 1_000),
        ms => format!("{ms}ms"),
    }
}
