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

#[test]
fn no_duration_wraps_past_the_longest_one() {
    use breaker_runtime::MAX_DURATION;

    // 2^63 ns once became a 0 ns window that never opened; 2562048h a 763 s one.
    for huge in [
        Duration::from_nanos(1 << 63),
        Duration::from_secs(2_562_048 * 3_600),
        MAX_DURATION + Duration::from_nanos(1),
        Duration::MAX,
    ] {
        for (field, builder) in [
            ("window", Config::builder().time_window(huge)),
            ("timeout", Config::builder().timeout(huge)),
            ("break_duration", Config::builder().break_duration(huge)),
            (
                "max_break_duration",
                Config::builder().max_break_duration(huge),
            ),
            ("slow_call", Config::builder().no_timeout().slow_call(huge)),
        ] {
            let err = refused(builder);
            assert_eq!(
                err,
                ConfigError::DurationTooLong {
                    field,
                    value: huge,
                    max: MAX_DURATION
                }
            );
            assert_eq!(err.field(), field);
            assert!(err.to_string().contains("30 days"), "{err}");
        }
    }
    let longest = Config::builder()
        .time_window(MAX_DURATION)
        .break_duration(MAX_DURATION)
        .build()
        .unwrap();
    assert_eq!(longest.window(), Window::Time(MAX_DURATION));
    assert_eq!(longest.break_duration(), MAX_DURATION);
}

#[test]
fn slow_call_must_be_shorter_than_the_timeout() {
    let err = refused(
        Config::builder()
            .timeout(Duration::from_millis(100))
            .slow_call(Duration::from_secs(5)),
    );
    assert_eq!(
        err,
        ConfigError::SlowCallNotBelowTimeout {
            slow_call: Duration::from_secs(5),
            timeout: Duration::from_millis(100)
        }
    );
    assert_eq!(err.field(), "slow_call");
    assert!(refused(Config::builder().slow_call(Duration::from_secs(10))).field() == "slow_call");
    assert!(
        Config::builder()
            .slow_call(Duration::from_secs(9))
            .build()
            .is_ok()
    );
    assert!(
        Config::builder()
            .no_timeout()
            .slow_call(Duration::from_secs(60))
            .build()
            .is_ok(),
        "without a timeout any slow_call can fire"
    );
}

#[test]
fn a_time_window_takes_at_most_max_min_calls() {
    use breaker_runtime::MAX_MIN_CALLS;

    let window = || Config::builder().time_window(Duration::from_secs(60));
    assert_eq!(
        refused(window().min_calls(u32::MAX)),
        ConfigError::MinCallsTooLarge {
            value: u32::MAX,
            max: MAX_MIN_CALLS
        }
    );
    assert_eq!(
        window()
            .min_calls(MAX_MIN_CALLS)
            .build()
            .unwrap()
            .min_calls(),
        MAX_MIN_CALLS
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 2_000, ..Default::default() })]

    /// Every duration the builder accepts is kept exactly as given: none wraps or is truncated.
    #[test]
    fn accepted_durations_are_kept_exactly(
        secs in proptest::prop_oneof![0u64..3_000_000, proptest::prelude::any::<u64>()],
        nanos in 0u32..1_000_000_000,
    ) {
        let d = Duration::new(secs, nanos);
        if let Ok(c) = Config::builder().time_window(d).build() {
            proptest::prop_assert_eq!(c.window(), Window::Time(d));
        }
        if let Ok(c) = Config::builder().no_timeout().break_duration(d).max_break_duration(d).slow_call(d).build() {
            proptest::prop_assert_eq!(c.break_duration(), d);
            proptest::prop_assert_eq!(c.max_break_duration(), Some(d));
            proptest::prop_assert_eq!(c.slow_call(), Some(d));
        }
        if let Ok(c) = Config::builder().timeout(d).build() {
            proptest::prop_assert_eq!(c.timeout(), Some(d));
        }
        let acceptable = !d.is_zero() && d <= breaker_runtime::MAX_DURATION;
        proptest::prop_assert_eq!(Config::builder().no_timeout().break_duration(d).build().is_ok(), acceptable);
    }
}

#[test]
fn a_configuration_prints_its_rates_as_percentages() {
    let config = Config::builder()
        .threshold(12.5)
        .slow_call(Duration::from_secs(1))
        .slow_threshold(80.0)
        .build()
        .unwrap();
    let printed = format!("{config:?}");
    assert!(printed.contains("threshold: Rate(12.5%)"), "{printed}");
    assert!(printed.contains("slow_threshold: Rate(80%)"), "{printed}");
}
