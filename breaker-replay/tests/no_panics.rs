//! Nothing panics, whatever the input: random lines, random options, random traces.

mod support;

use proptest::prelude::*;
use support::arbitrary::{trace, valid_options};

/// Lines that are almost a trace's: right fields and wrong ones, numbers and words.
fn line() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        Just("at_ms"),
        Just("duration_ms"),
        Just("outcome"),
        Just("at"),
        Just(""),
    ];
    let value = prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        Just("\"success\"".to_string()),
        Just("\"timeout\"".to_string()),
        Just("\"fine\"".to_string()),
        Just("-1".to_string()),
        "[ -~]{0,8}",
    ];
    prop_oneof![
        proptest::collection::vec((field, value), 0..4).prop_map(|pairs| {
            let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
            format!("{{{}}}", inner.join(", "))
        }),
        "[0-9,a-z_]{0,24}",
        ".{0,40}",
    ]
}

/// Options as a user might type them: known keys and unknown ones, values of every shape.
fn options() -> impl Strategy<Value = String> {
    let keys: Vec<&'static str> = breaker_options::OPTIONS
        .iter()
        .flat_map(|(keys, _)| keys.iter().copied())
        .chain(["treshold", "", "1x"])
        .collect();
    let value = prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        (0u32..200).prop_map(|n| format!("\"{n}%\"")),
        (0u64..100_000).prop_map(|n| format!("\"{n}ms\"")),
        (0u64..120).prop_map(|n| format!("\"{n}s\"")),
        Just("\"off\"".to_string()),
        Just("1.5".to_string()),
        Just("a::b".to_string()),
        "\"[ -~]{0,6}\"",
        "[ -~]{0,6}",
    ];
    prop_oneof![
        proptest::collection::vec((proptest::sample::select(keys), value), 0..5).prop_map(
            |pairs| {
                let written: Vec<String> =
                    pairs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                written.join(", ")
            }
        ),
        ".{0,40}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn any_text_is_read_or_refused(lines in proptest::collection::vec(line(), 0..6)) {
        let text = lines.join("\n");
        if let Err(error) = breaker_replay::parse_trace("t.jsonl", &text) {
            prop_assert!(error.to_string().starts_with("t.jsonl: line "));
        }
    }

    #[test]
    fn any_options_are_read_or_refused_with_a_message(written in options()) {
        if let Err(error) = breaker_replay::parse_options(&written) {
            prop_assert!(!error.messages.is_empty());
            prop_assert!(error.messages.iter().all(|m| !m.is_empty()));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_trace_replays_under_any_options_and_every_call_is_accounted_for(
        trace in trace(),
        written in valid_options(),
    ) {
        let candidate = breaker_replay::parse_options(&written).unwrap();
        let report = match breaker_replay::report(&trace, &[candidate]) {
            Ok(report) => report,
            Err(breaker_replay::ReplayError::TooLong { .. }) => return Ok(()),
            Err(other) => return Err(TestCaseError::fail(other.to_string())),
        };
        let row = &report.rows[0];
        prop_assert_eq!(
            row.rejected,
            row.rejected_failing + row.rejected_healthy + row.rejected_ignored + row.rejected_unknown
        );
        prop_assert!(row.rejected <= trace.len() as u64);
        prop_assert!(row.open_ms <= row.not_closed_ms);
        prop_assert_eq!(row.outages_caught + row.outages_missed, report.outages.len() as u64);
        let _ = breaker_replay::table(&report, "t");
        prop_assert!(breaker_replay::svg(&report, &trace).is_ok());
    }
}
