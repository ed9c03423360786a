//! Checks between options, each reported on the token at fault.

use crate::attr::{Options, Timeout};
use crate::errors::Errors;
use crate::grammar::{MAX_MIN_CALLS, Window};

/// The runtime's default break, which `max_break_duration` must not undercut when
/// `break_duration` is not given.
const DEFAULT_BREAK_MS: u64 = 30_000;
/// The runtime's default timeout, which `slow_call` must stay below when `timeout` is not
/// given.
const DEFAULT_TIMEOUT_MS: u64 = 10_000;

pub(crate) fn check(options: &Options, errors: &mut Errors) {
    if let (Some(min_calls), Some(window)) = (options.min_calls, options.window) {
        if let Window::Count(size) = window.value {
            if min_calls.value > size {
                errors.push(
                    min_calls.span,
                    format!(
                        "invalid `min_calls`: {} is more than the window's {size} calls, so the circuit could never open; use at most {size}",
                        min_calls.value
                    ),
                );
            }
        }
    } else if let (Some(min_calls), None) = (options.min_calls, options.window) {
        if min_calls.value > 20 {
            errors.push(
                min_calls.span,
                format!(
                    "invalid `min_calls`: {} is more than the default window's 20 calls; use at most 20, or set a larger `window`",
                    min_calls.value
                ),
            );
        }
    }
    if let (Some(min_calls), Some(window)) = (options.min_calls, options.window) {
        if matches!(window.value, Window::Millis(_)) && u64::from(min_calls.value) > MAX_MIN_CALLS {
            errors.push(
                min_calls.span,
                format!(
                    "invalid `min_calls`: a time window's `min_calls` may be at most {MAX_MIN_CALLS}"
                ),
            );
        }
    }
    if let Some(slow_call) = options.slow_call {
        let timeout = match options.timeout.map(|t| t.value) {
            Some(Timeout::Millis(ms)) => Some((ms, "the `timeout`")),
            Some(Timeout::Off) => None,
            None => Some((DEFAULT_TIMEOUT_MS, "the default `timeout`")),
        };
        if let Some((timeout, which)) = timeout {
            if slow_call.value >= timeout {
                errors.push(
                    slow_call.span,
                    format!(
                        "invalid `slow_call`: {} is not shorter than {which} ({}), which cuts every call before it could count as slow; make it shorter",
                        millis(slow_call.value),
                        millis(timeout)
                    ),
                );
            }
        }
    }
    if let Some(max) = options.max_break_duration {
        let (base, which) = match options.break_duration {
            Some(b) => (b.value, "`break_duration`"),
            None => (DEFAULT_BREAK_MS, "the default `break_duration`"),
        };
        if max.value < base {
            errors.push(
                max.span,
                format!(
                    "invalid `max_break_duration`: it must be at least {which} ({}), since it caps the break as it grows",
                    millis(base)
                ),
            );
        }
    }
    if let (Some(slow_threshold), None) = (options.slow_threshold, options.slow_call) {
        errors.push(
            slow_threshold.span,
            "`slow_threshold` needs `slow_call`: add `slow_call = \"1s\"` (how long a call may take before it counts as slow)",
        );
    }
}

fn millis(ms: u64) -> String {
    match ms {
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms % 1_000 == 0 => format!("{}s", ms / 1_000),
        ms => format!("{ms}ms"),
    }
}
