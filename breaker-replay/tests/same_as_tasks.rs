//! The simulated replay answers as the replay on tokio tasks did (issue 46): same changes of
//! state at the same milliseconds, same fate for every call, on the committed sample under the
//! candidates the docs and tests use, and on random traces under random options.

mod support;

use breaker_replay::{parse_options, replay};
use breaker_runtime::trace::Entry;
use proptest::prelude::*;
use support::arbitrary::{crowded_trace, every_option, tight_options, trace};
use support::tasks::replay_on_tasks;

fn sample() -> Vec<Entry> {
    breaker_replay::read_trace(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/traces/outage.jsonl"
    )))
    .unwrap()
}

#[test]
fn the_sample_replays_the_same_under_every_candidate_the_docs_name() {
    let trace = sample();
    for written in [
        r#"threshold = "40%", window = "30s""#,
        r#"window = "20", timeout_ms = 1000"#,
        r#"threshold = "40%", window = "30s", timeout_ms = 2000, break_duration = "10s""#,
        r#"window = "10s", min_calls = 5, slow_call = "300ms", slow_threshold = "50%""#,
        r#"window = "50", break_duration = "2s", max_break_duration = "30s", probes = 3"#,
        r#"window = "2s", threshold = "20%", timeout_ms = 150"#,
    ] {
        let config = parse_options(written).unwrap().config;
        let simulated = replay(&trace, &config).unwrap();
        assert!(
            !simulated.changes.is_empty(),
            "{written}: the sample opens it"
        );
        assert_eq!(simulated, replay_on_tasks(&trace, &config), "{written}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_trace_replays_the_same_under_any_options(trace in trace(), written in every_option()) {
        let Ok(candidate) = parse_options(&written) else {
            // Options that contradict each other (`min_calls` over a count window's size) are
            // refused before any replay, by both.
            return Ok(());
        };
        let Ok(simulated) = replay(&trace, &candidate.config) else {
            return Ok(());
        };
        prop_assert_eq!(simulated, replay_on_tasks(&trace, &candidate.config), "{}", written);
    }

    #[test]
    fn crowded_traces_replay_the_same_whatever_ends_together(
        trace in crowded_trace(),
        written in tight_options(),
    ) {
        let Ok(candidate) = parse_options(&written) else {
            return Ok(());
        };
        let simulated = replay(&trace, &candidate.config).unwrap();
        prop_assert_eq!(simulated, replay_on_tasks(&trace, &candidate.config), "{}", written);
    }
}
