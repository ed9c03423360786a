//! Checks between options, each reported on the token at fault.
//!
//! The rules are `breaker-options`' own, the ones the runtime's builder applies; this module
//! only says them in the attribute's words, on the token to change.

use breaker_options::{ConfigError, PolicySettings, Settings, Written};
use proc_macro2::Span;

use crate::attr::{At, Options};
use crate::errors::Errors;

/// The settings the options spell, each absent option at its default.
pub(crate) fn settings(options: &Options) -> Settings {
    let d = Settings::DEFAULT;
    Settings {
        threshold: value(options.threshold).unwrap_or(d.threshold),
        window: value(options.window).unwrap_or(d.window),
        window_kind: value(options.window_kind).unwrap_or(d.window_kind),
        min_calls: value(options.min_calls),
        timeout: value(options.timeout).unwrap_or(d.timeout),
        break_duration: value(options.break_duration).unwrap_or(d.break_duration),
        max_break_duration: value(options.max_break_duration),
        break_growth: value(options.break_growth),
        break_jitter: value(options.break_jitter),
        probes: value(options.probes).unwrap_or(d.probes),
        probe_threshold: value(options.probe_threshold),
        slow_call: value(options.slow_call),
        slow_threshold: value(options.slow_threshold),
        mode: value(options.mode).unwrap_or(d.mode),
        record: value(options.record),
        warm_up: value(options.warm_up),
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
    let written = Written {
        window: options.window.is_some(),
        timeout: options.timeout.is_some(),
        break_duration: options.break_duration.is_some(),
    };
    let message = breaker_options::explain(violation, &settings(options), written);
    (
        at_fault(options, violation).unwrap_or_else(Span::call_site),
        message,
    )
}

/// The token of the option a rule names as the one to change, if it was written.
fn at_fault(options: &Options, violation: &ConfigError) -> Option<Span> {
    match *violation {
        ConfigError::MinCallsAboveWindow { .. } | ConfigError::MinCallsTooLarge { .. } => {
            options.min_calls.map(|m| m.span)
        }
        ConfigError::SlowCallNotBelowTimeout { .. } => options.slow_call.map(|s| s.span),
        ConfigError::FixedCountWindow { .. } => options.window_kind.map(|k| k.span),
        ConfigError::MaxBreakBelowBreak { .. } => options.max_break_duration.map(|m| m.span),
        ConfigError::GrowthWithoutMaxBreak => options.break_growth.map(|g| g.span),
        ConfigError::SlowThresholdWithoutSlowCall => options.slow_threshold.map(|s| s.span),
        ConfigError::WithoutRetries { field: "backoff" } => options.backoff.map(|b| b.span),
        ConfigError::WithoutRetries { .. } => options.retry_budget.map(|b| b.span),
        ConfigError::MaxWaitWithoutMaxConcurrent => options.max_wait.map(|w| w.span),
        _ => None,
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
