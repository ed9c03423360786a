//! SPEC section 1 as the runtime sees it: the options' defaults, and a builder that checks
//! every value and names the field and the rule it broke.

use std::time::Duration;

use breaker_runtime::{Config, ConfigError, MAX_COUNT_WINDOW, MAX_PROBES, Window};

#[test]
fn defaults_are_those_of_the_attribute() {
    let c = Config::default();
    assert_eq!(c.threshold().percent(), 50.0);
    assert_eq!(c.window(), Window::Count(20));
    assert_eq!(c.min_calls(), 20, "a count window's size");
    assert_eq!(c.timeout(), Some(Duration::from_secs(10)));
    assert_eq!(c.break_duration(), Duration::from_secs(30));
    assert_eq!(c.max_break_duration(), None);
    assert_eq!(c.probes(), 1);
    assert_eq!(c.slow_call(), None);
    assert_eq!(c.slow_threshold().percent(), 100.0);
    assert_eq!(Config::builder().build().unwrap(), c);
}

#[test]
fn min_calls_defaults_to_the_count_window_or_ten_for_a_time_window() {
    assert_eq!(
        Config::builder()
            .count_window(7)
            .build()
            .unwrap()
            .min_calls(),
        7
    );
    let timed = Config::builder()
        .time_window(Duration::from_secs(30))
        .build()
        .unwrap();
    assert_eq!(timed.min_calls(), 10);
}

#[test]
fn thresholds_keep_their_decimals() {
    let c = Config::builder()
        .threshold(33.3333)
        .slow_call(Duration::from_secs(1))
        .slow_threshold(0.5)
        .build()
        .unwrap();
    assert_eq!(c.threshold().percent(), 33.3333);
    assert_eq!(c.slow_threshold().percent(), 0.5);
}

fn refused(builder: breaker_runtime::ConfigBuilder) -> ConfigError {
    builder.build().expect_err("the builder must refuse this")
}

#[test]
fn every_invalid_value_is_a_typed_error_naming_its_field() {
    let cases: Vec<(breaker_runtime::ConfigBuilder, &str)> = vec![
        (Config::builder().threshold(0.0), "threshold"),
        (Config::builder().threshold(100.5), "threshold"),
        (Config::builder().threshold(f64::NAN), "threshold"),
        (Config::builder().threshold(-3.0), "threshold"),
        (Config::builder().count_window(0), "window"),
        (
            Config::builder().count_window(MAX_COUNT_WINDOW + 1),
            "window",
        ),
        (
            Config::builder().time_window(Duration::from_micros(999)),
            "window",
        ),
        (Config::builder().min_calls(0), "min_calls"),
        (Config::builder().count_window(5).min_calls(6), "min_calls"),
        (Config::builder().timeout(Duration::ZERO), "timeout"),
        (
            Config::builder().break_duration(Duration::ZERO),
            "break_duration",
        ),
        (
            Config::builder().max_break_duration(Duration::from_secs(29)),
            "max_break_duration",
        ),
        (Config::builder().probes(0), "probes"),
        (Config::builder().probes(MAX_PROBES + 1), "probes"),
        (Config::builder().slow_call(Duration::ZERO), "slow_call"),
        (Config::builder().slow_threshold(50.0), "slow_threshold"),
        (Config::builder().name(""), "name"),
        (Config::builder().name(String::from("  ")), "name"),
        (
            Config::builder()
                .slow_call(Duration::from_secs(1))
                .slow_threshold(0.0),
            "slow_threshold",
        ),
    ];
    for (builder, field) in cases {
        let err = refused(builder.clone());
        assert_eq!(err.field(), field, "{builder:?} -> {err}");
        assert!(
            err.to_string().contains(field),
            "the message names `{field}`: {err}"
        );
    }
}

#[test]
fn messages_say_the_rule() {
    assert_eq!(
        refused(Config::builder().count_window(5).min_calls(6)).to_string(),
        "`min_calls` (6) cannot exceed the count window (5), or the circuit could never open"
    );
    assert_eq!(
        refused(Config::builder().slow_threshold(50.0)).to_string(),
        "`slow_threshold` needs `slow_call`: set how long a call may take before it counts as slow"
    );
    assert_eq!(
        refused(Config::builder().threshold(0.0)).to_string(),
        "`threshold` must be a percentage greater than 0 and at most 100, got 0"
    );
}

#[test]
fn a_time_window_may_hold_more_than_min_calls_of_a_count_window() {
    let c = Config::builder()
        .time_window(Duration::from_secs(1))
        .min_calls(50_000)
        .build()
        .unwrap();
    assert_eq!(c.min_calls(), 50_000);
}

#[test]
fn max_break_duration_equal_to_break_duration_is_allowed() {
    let c = Config::builder()
        .max_break_duration(Duration::from_secs(30))
        .build()
        .unwrap();
    assert_eq!(c.max_break_duration(), Some(Duration::from_secs(30)));
}
