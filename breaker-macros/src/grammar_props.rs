//! Properties of the value grammar: no input panics the macro, valid values mean what they say,
//! and every invalid value becomes a compile error on its token.

use proptest::prelude::*;
use quote::ToTokens;

use crate::attr::Parsed;
use breaker_options::{MAX_COUNT_WINDOW, MAX_DURATION, Window, grammar};

/// Parses `key = "text"` as the attribute would: the compile errors it emits, if any.
fn parse_option(key: &str, text: &str) -> String {
    let source = format!("{key} = {}", proc_macro2::Literal::string(text));
    let parsed: Parsed = syn::parse_str(&source).expect("`key = \"..\"` always parses as options");
    parsed
        .errors
        .into_compile_errors()
        .to_token_stream()
        .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn no_text_panics_the_grammar(text in ".{0,24}") {
        let _ = grammar::percentage(&text);
        let _ = grammar::duration(&text);
        let _ = grammar::window(&text);
    }

    #[test]
    fn accepted_values_are_in_range(text in "[0-9.%smh ]{0,12}") {
        if let Ok(rate) = grammar::percentage(&text) {
            prop_assert!(rate.ppm() > 0 && rate.ppm() <= 1_000_000);
        }
        if let Ok(Window::Count(n)) = grammar::window(&text) {
            prop_assert!((1..=MAX_COUNT_WINDOW).contains(&n));
        }
        if let Ok(Window::Time(d)) = grammar::window(&text) {
            prop_assert!(!d.is_zero());
        }
    }

    #[test]
    fn percentages_with_up_to_four_decimals_mean_what_they_say(whole in 0u64..=100, fraction in 0u64..10_000, digits in 0usize..=4) {
        let scale = 10u64.pow(4 - digits as u32);
        let fraction = if digits == 0 { 0 } else { fraction / scale % 10u64.pow(digits as u32) };
        let text = if digits == 0 { format!("{whole}%") } else { format!("{whole}.{fraction:0digits$}%") };
        let ppm = whole * 10_000 + fraction * scale;
        match grammar::percentage(&text) {
            Ok(parsed) => prop_assert_eq!(u64::from(parsed.ppm()), ppm),
            Err(_) => prop_assert!(ppm == 0 || ppm > 1_000_000, "{} refused", text),
        }
    }

    #[test]
    fn durations_mean_what_they_say_and_none_wraps(
        n in prop_oneof![0u64..1_000_000, any::<u64>()],
        unit in prop::sample::select(vec![("ms", 1u64), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)]),
    ) {
        let text = format!("{n}{}", unit.0);
        let max_ms = MAX_DURATION.as_secs() * 1_000;
        match n.checked_mul(unit.1).filter(|ms| *ms <= max_ms) {
            Some(ms) => prop_assert_eq!(grammar::duration(&text), Ok(std::time::Duration::from_millis(ms))),
            None => {
                let refused = grammar::duration(&text).unwrap_err();
                prop_assert!(refused.contains("\"720h\""), "the limit is named: {}", refused);
            }
        }
        // In nanoseconds, every accepted duration stays clear of the bit the runtime keeps for
        // itself (a time window is flagged in the top bit of its nanoseconds).
        if let Ok(d) = grammar::duration(&text) {
            prop_assert!(d.as_nanos() < 1 << 62);
        }
    }

    #[test]
    fn every_invalid_value_is_a_compile_error_and_every_valid_one_is_taken(
        key in prop::sample::select(vec!["threshold", "slow_threshold", "window", "break_duration", "max_break_duration", "slow_call", "timeout", "name"]),
        text in prop_oneof![".{0,12}", "[0-9]{1,4}(ms|s|m|h|%|x)?", "[0-9]{1,3}\\.[0-9]{1,5}%"],
    ) {
        let rendered = parse_option(key, &text);
        let valid = match key {
            "threshold" | "slow_threshold" => grammar::percentage(&text).is_ok(),
            "window" => grammar::window(&text).is_ok(),
            "timeout" => text.trim() == "off" || grammar::duration(&text).is_ok_and(|d| !d.is_zero()),
            "name" => !text.trim().is_empty(),
            _ => grammar::duration(&text).is_ok_and(|d| !d.is_zero()),
        };
        prop_assert_eq!(rendered.is_empty(), valid, "`{} = {:?}` gave: {}", key, text, rendered);
        if !valid {
            prop_assert!(rendered.contains("compile_error"), "an error, emitted as compile_error!: {}", rendered);
        }
    }
}
