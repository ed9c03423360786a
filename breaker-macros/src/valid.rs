//! Checks between options, each reported on the token at fault.
//!
//! The rules are `breaker-options`' own, the ones the runtime's builder applies; this module
//! only says them in the attribute's words, on the token to change.

use std::time::Duration;

use breaker_options::{ConfigError, MAX_DURATION, MAX_MIN_CALLS, PolicySettings, Settings};
use proc_macro2::Span;

use crate::attr::{At, Options};
use crate::errors::Errors;

/// The settings the options spell, each absent option at its default.
pub(crate) fn settings(options: &Options) -> Settings {
    let d = Settings::DEFAULT;
    Settings {
        threshold: value(options.threshold).unwrap_or(d.threshold),
        window: value(options.window).unwrap_or(d.window),
        min_calls: value(options.min_calls),
        timeout: value(options.timeout).unwrap_or(d.timeout),
        break_duration: value(options.break_duration).unwrap_or(d.break_duration),
        max_break_duration: value(options.max_break_duration),
        break_growth: value(options.break_growth),
        break_jitter: value(options.break_jitter),
        probes: value(options.probes).unwrap_or(d.probes),
        slow_call: value(options.slow_call),
        slow_threshold: value(options.slow_threshold),
        mode: value(options.mode).unwrap_or(d.mode),
    }
}

/// The options around the calls, each absent one at its default.
pub(crate) fn policy(options: &Options) -> PolicySettings {
    PolicySettings {
        retries: value(options.retries).unwrap_or(0),
        backoff: value(options.backoff),
        retry_budget: value(options.retry_budget),
        deadline: value(options.deadline),
        max_concurrent: value(options.max_concurrent),
        max_wait: value(options.max_wait),
    }
}

fn value<T>(at: Option<At<T>>) -> Option<T> {
    at.map(|at| at.value)
}

pub(crate) fn check(options: &Options, errors: &mut Errors) {
    let violations = settings(options).violations();
    for violation in violations.iter().chain(&policy(options).violations()) {
        let (span, message) = explain(options, violation);
        errors.push(span, message);
    }
}

fn explain(options: &Options, violation: &ConfigError) -> (Span, String) {
    let at = |span: Option<Span>| span.unwrap_or_else(Span::call_site);
    let min_calls = at(options.min_calls.map(|m| m.span));
    match *violation {
        ConfigError::MinCallsAboveWindow { min_calls: n, window } if options.window.is_some() => (
            min_calls,
            format!(
                "invalid `min_calls`: {n} is more than the window's {window} calls, so the circuit could never open; use at most {window}"
            ),
        ),
        ConfigError::MinCallsAboveWindow { min_calls: n, window } => (
            min_calls,
            format!(
                "invalid `min_calls`: {n} is more than the default window's {window} calls; use at most {window}, or set a larger `window`"
            ),
        ),
        ConfigError::MinCallsTooLarge { .. } => (
            min_calls,
            format!(
                "invalid `min_calls`: a time window's `min_calls` may be at most {MAX_MIN_CALLS}"
            ),
        ),
        ConfigError::SlowCallNotBelowTimeout { slow_call, timeout } => {
            let which = if options.timeout.is_some() {
                "the `timeout`"
            } else {
                "the default `timeout`"
            };
            (
                at(options.slow_call.map(|s| s.span)),
                format!(
                    "invalid `slow_call`: {} is not shorter than {which} ({}), which cuts every call before it could count as slow; make it shorter",
                    written(slow_call),
                    written(timeout)
                ),
            )
        }
        ConfigError::MaxBreakBelowBreak { base, .. } => {
            let which = if options.break_duration.is_some() {
                "`break_duration`"
            } else {
                "the default `break_duration`"
            };
            (
                at(options.max_break_duration.map(|m| m.span)),
                format!(
                    "invalid `max_break_duration`: it must be at least {which} ({}), since it caps the break as it grows",
                    written(base)
                ),
            )
        }
        ConfigError::GrowthWithoutMaxBreak => (
            at(options.break_growth.map(|g| g.span)),
            format!(
                "`break_growth` needs `max_break_duration`: add `max_break_duration = \"{}\"` (the cap the break grows up to), or remove `break_growth`",
                written(cap_for(settings(options).break_duration))
            ),
        ),
        ConfigError::SlowThresholdWithoutSlowCall => (
            at(options.slow_threshold.map(|s| s.span)),
            match slow_call_for(settings(options).timeout) {
                Some(slow_call) => format!(
                    "`slow_threshold` needs `slow_call`: add `slow_call = \"{}\"` (how long a call may take before it counts as slow)",
                    written(slow_call)
                ),
                None => "`slow_threshold` needs `slow_call`, which must be shorter than the timeout, and no call is shorter than 1ms: remove `slow_threshold`, or make the timeout longer".to_string(),
            },
        ),
        ConfigError::WithoutRetries { field } => {
            let written = if field == "backoff" {
                options.backoff.map(|b| b.span)
            } else {
                options.retry_budget.map(|b| b.span)
            };
            (
                at(written),
                format!(
                    "`{field}` needs `retries`: add `retries = 3` (attempts after a failure), or remove `{field}`"
                ),
            )
        }
        ConfigError::MaxWaitWithoutMaxConcurrent => (
            at(options.max_wait.map(|w| w.span)),
            "`max_wait` needs `max_concurrent`: add `max_concurrent = 16` (calls at once), or remove `max_wait`".to_string(),
        ),
        // The grammar refuses every other value where it is written; a rule that reaches here
        // still says what it is about.
        ref other => (Span::call_site(), format!("invalid `{}`: {other}", other.field())),
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

/// A duration as the attribute writes it.
fn written(duration: Duration) -> String {
    match duration.as_millis() {
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms % 1_000 == 0 => format!("{}s", ms / 1_000),
        ms => format!("{ms}ms"),
    }
}

#[cfg(test)]
mod agreement {
    use crate::attr::Parsed;

    include!("../../breaker-options/tests/support/limit_cases.rs");

    /// The attribute's side of the table the runtime's configuration reader is held to.
    #[test]
    fn the_attribute_gives_the_tables_answer_at_every_limit() {
        for (options, expected) in limit_cases() {
            let Parsed {
                options: parsed,
                mut errors,
            } = syn::parse_str(options).expect("the table's options parse as arguments");
            super::check(&parsed, &mut errors);
            let taken = errors.is_empty();
            assert_eq!(
                taken,
                expected,
                "`{options}`: the attribute {} it",
                if taken { "takes" } else { "refuses" }
            );
        }
    }
}
