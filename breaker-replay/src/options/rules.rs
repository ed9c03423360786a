//! The rules between options, in the attribute's words: `breaker-options` decides what breaks
//! a rule ([`Settings::violations`]); this says it as the attribute's compile error does, naming
//! a default when the option at fault was not written.

use std::time::Duration;

use breaker_options::{ConfigError, MAX_DURATION, MAX_MIN_CALLS, Settings};

use super::values::Written;

/// The settings the options spell, each absent option at its default.
pub(crate) fn settings(written: &Written) -> Settings {
    let d = Settings::DEFAULT;
    Settings {
        threshold: written.threshold.unwrap_or(d.threshold),
        window: written.window.unwrap_or(d.window),
        min_calls: written.min_calls,
        timeout: written.timeout.unwrap_or(d.timeout),
        break_duration: written.break_duration.unwrap_or(d.break_duration),
        max_break_duration: written.max_break_duration,
        break_growth: written.break_growth,
        break_jitter: None,
        probes: written.probes.unwrap_or(d.probes),
        slow_call: written.slow_call,
        slow_threshold: written.slow_threshold,
        mode: written.mode.unwrap_or(d.mode),
    }
}

/// Every rule the options break, each as the attribute says it.
pub(crate) fn violations(written: &Written) -> Vec<String> {
    let settings = settings(written);
    settings
        .violations()
        .iter()
        .map(|violation| explain(written, &settings, violation))
        .collect()
}

fn explain(written: &Written, settings: &Settings, violation: &ConfigError) -> String {
    match *violation {
        ConfigError::MinCallsAboveWindow {
            min_calls: n,
            window,
        } if written.window.is_some() => format!(
            "invalid `min_calls`: {n} is more than the window's {window} calls, so the circuit could never open; use at most {window}"
        ),
        ConfigError::MinCallsAboveWindow {
            min_calls: n,
            window,
        } => format!(
            "invalid `min_calls`: {n} is more than the default window's {window} calls; use at most {window}, or set a larger `window`"
        ),
        ConfigError::MinCallsTooLarge { .. } => format!(
            "invalid `min_calls`: a time window's `min_calls` may be at most {MAX_MIN_CALLS}"
        ),
        ConfigError::SlowCallNotBelowTimeout { slow_call, timeout } => {
            let which = if written.timeout.is_some() {
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
            let which = if written.break_duration.is_some() {
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
        ref other => format!("invalid `{}`: {other}", other.field()),
    }
}

/// A cap to offer for the break to grow up to: 5 minutes, or more for a longer break.
fn cap_for(break_duration: Duration) -> Duration {
    (break_duration * 10)
        .min(MAX_DURATION)
        .max(Duration::from_secs(300))
}

/// A `slow_call` to offer: 1 s, or half the timeout when that is shorter; none when the
/// timeout is too short for any.
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
