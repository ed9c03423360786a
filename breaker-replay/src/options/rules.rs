//! The rules between options, in the attribute's words: `breaker-options` decides what breaks
//! a rule ([`Settings::violations`]); this says it as the attribute's compile error does, naming
//! a default when the option at fault was not written.

use breaker_options::Settings;

use super::values::Written;

/// The settings the options spell, each absent option at its default.
pub(crate) fn settings(written: &Written) -> Settings {
    let d = Settings::DEFAULT;
    Settings {
        threshold: written.threshold.unwrap_or(d.threshold),
        window: written.window.unwrap_or(d.window),
        window_kind: written.window_kind.unwrap_or(d.window_kind),
        min_calls: written.min_calls,
        timeout: written.timeout.unwrap_or(d.timeout),
        break_duration: written.break_duration.unwrap_or(d.break_duration),
        max_break_duration: written.max_break_duration,
        break_growth: written.break_growth,
        break_jitter: None,
        probes: written.probes.unwrap_or(d.probes),
        probe_threshold: written.probe_threshold,
        slow_call: written.slow_call,
        slow_threshold: written.slow_threshold,
        mode: written.mode.unwrap_or(d.mode),
        // A replay's breaker records nothing of its own: the trace is the record.
        record: None,
        // From the trace's first call, as from the live breaker's.
        warm_up: written.warm_up,
    }
}

/// Every rule the options break, each as the attribute says it.
pub(crate) fn violations(written: &Written) -> Vec<String> {
    let settings = settings(written);
    settings
        .violations()
        .iter()
        .map(|violation| {
            let named = breaker_options::Written {
                window: written.window.is_some(),
                timeout: written.timeout.is_some(),
                break_duration: written.break_duration.is_some(),
            };
            breaker_options::explain(violation, &settings, named)
        })
        .collect()
}
