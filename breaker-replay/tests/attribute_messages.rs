//! A refused option reads exactly as the attribute's compile error for it: every case below is
//! a compile-fail test of the attribute (`ui-tests/ui/fail`), and its expected errors are read
//! from that test's `.stderr`, so the two cannot drift apart unnoticed.

use std::path::Path;

/// The compile-fail cases whose every error is about the options themselves (the others are
/// about the guarded fn, which a replay does not have).
const CASES: &[&str] = &[
    "backoff_not_a_range",
    "backoff_reversed",
    "bad_duration",
    "break_growth_below_one",
    "break_growth_not_a_factor",
    "break_growth_without_max_break",
    "break_jitter_zero",
    "deadline_zero",
    "duration_overflowing_nanoseconds",
    "duration_with_decimals",
    "duration_with_space_before_unit",
    "fallback_not_a_path",
    "is_failure_not_a_path",
    "max_break_below_break",
    "max_break_below_default_break",
    "max_concurrent_zero",
    "min_calls_above_count_window",
    "min_calls_above_default_window",
    "min_calls_above_time_window_limit",
    "missing_equals",
    "mode_unknown",
    "name_empty",
    "name_not_a_string",
    "repeated_option",
    "retries_not_an_integer",
    "retries_too_many",
    "retry_budget_bad",
    "slow_call_not_below_default_timeout",
    "slow_call_not_below_timeout",
    "slow_threshold_without_slow_call",
    "stale_entries_zero",
    "threshold_above_100",
    "threshold_bare_share_of_one",
    "threshold_not_a_number",
    "threshold_not_a_string",
    "threshold_too_precise",
    "threshold_with_space_before_percent",
    "threshold_without_percent_sign",
    "threshold_zero",
    "timeout_and_timeout_ms",
    "timeout_ms_not_an_integer",
    "timeout_ms_off",
    "timeout_ms_too_large",
    "timeout_with_a_unit_word",
    "unknown_option",
    "window_bad_unit",
    "window_count_with_underscores",
    "window_duration_too_long",
    "window_too_large",
    "window_with_decimals",
    "window_zero",
    "window_zero_duration",
    "zero_min_calls",
    "zero_probes",
    "zero_timeout",
    "zero_timeout_duration",
];

fn ui_fail() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../ui-tests/ui/fail"))
}

/// The arguments of the case's `#[circuit_breaker(...)]`.
fn arguments(case: &str) -> String {
    let source = std::fs::read_to_string(ui_fail().join(format!("{case}.rs"))).unwrap();
    let start = source.find("#[circuit_breaker(").unwrap() + "#[circuit_breaker(".len();
    let end = source[start..].find(")]\n").unwrap() + start;
    source[start..end].to_string()
}

/// The errors the attribute gives for the case, in order.
fn attribute_errors(case: &str) -> Vec<String> {
    let stderr = std::fs::read_to_string(ui_fail().join(format!("{case}.stderr"))).unwrap();
    stderr
        .lines()
        .filter_map(|line| line.strip_prefix("error: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_option_the_attribute_refuses_is_refused_in_its_words() {
    let mut disagreements = Vec::new();
    for case in CASES {
        let arguments = arguments(case);
        let expected = attribute_errors(case);
        assert!(
            !expected.is_empty(),
            "{case}: the attribute's test expects an error"
        );
        let given: Vec<String> = match breaker_replay::parse_options(&arguments) {
            Ok(_) => Vec::new(),
            Err(error) => error
                .messages
                .into_iter()
                // Refusals of options a replay cannot honour are the replay's own, and come
                // only after the value was read as the attribute reads it.
                .filter(|m| !m.contains("cannot be replayed"))
                .collect(),
        };
        if given != expected {
            disagreements.push(format!(
                "{case} `{arguments}`:\n  attribute: {expected:?}\n  replay:    {given:?}"
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

#[test]
fn options_a_replay_cannot_honour_are_refused_with_the_reason() {
    for (options, key) in [
        ("retries = 3", "retries"),
        ("fallback = queue_charge", "fallback"),
        (r#"deadline = "2s""#, "deadline"),
        (r#"break_jitter = "10%""#, "break_jitter"),
        (r#"stale_for = "10m""#, "stale_for"),
    ] {
        let error = breaker_replay::parse_options(options).unwrap_err();
        assert_eq!(error.messages.len(), 1, "{options}: {error}");
        assert!(
            error.messages[0].starts_with(&format!("`{key}` cannot be replayed: ")),
            "{options}: {error}"
        );
    }
}

#[test]
fn name_labels_the_row_and_mode_changes_nothing() {
    let named = breaker_replay::parse_options(r#"name = "payments", mode = "shadow""#).unwrap();
    assert_eq!(named.label(), "payments");
    assert_eq!(named.config.mode(), breaker_runtime::Mode::Enforce);
    let unnamed = breaker_replay::parse_options(r#" timeout_ms = 2000 "#).unwrap();
    assert_eq!(unnamed.label(), "timeout_ms = 2000");
    assert_eq!(
        unnamed.config.timeout(),
        Some(std::time::Duration::from_secs(2))
    );
}
