//! `Debug` of every public value that holds an instant shows it as a distance from now on
//! tokio's clock (`1.2s ago`, `in 3.8s`), never as the OS clock's opaque reading; every other
//! field prints as a derived `Debug` would.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_runtime::{Breaker, Config};

#[tokio::test(start_paused = true)]
async fn instants_read_as_ages_on_the_paused_clock() {
    let breaker = Breaker::new(
        Config::builder()
            .name("debugged")
            .count_window(2)
            .break_duration(Duration::from_secs(5))
            .build()
            .unwrap(),
    );
    let transitions = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&transitions);
    breaker
        .on_transition(move |t| sink.lock().unwrap().push(t.clone()))
        .forever();
    for _ in 0..2 {
        breaker.try_acquire().unwrap().failure();
    }
    assert!(
        format!("{:?}", breaker.snapshot()).contains("last_transition: Some(now)"),
        "the very moment of the transition"
    );

    tokio::time::advance(Duration::from_millis(1_200)).await;
    let snapshot = breaker.snapshot();
    assert_eq!(
        format!("{snapshot:?}"),
        format!(
            "Snapshot {{ config: {:?}, state: Open, mode: Enforce, calls: 2, failures: 2, \
             slow: 0, failure_rate: 100.0, slow_rate: 0.0, probes_in_flight: 0, \
             next_probe_at: Some(in 3.8s), last_transition: Some(1.2s ago), \
             last_opened: Some(Opening {{ reason: FailureRate, at: 1.2s ago, calls: 2, \
             failures: 2, slow: 0, failure_rate: 100.0, slow_rate: 0.0, threshold: 50.0, \
             window: Some(Count(2)), window_kind: Sliding, last_failure: None, tripped_by: Some(FailureRate) }}), \
             rejected: 0, rejected_since_transition: 0, mean_duration: None, \
             max_duration: None, config_changed: None, config_source: Built, tracing: false, \
             drill_ends: None, injection: None }}",
            snapshot.config
        )
    );
    let pretty = format!("{snapshot:#?}");
    assert!(
        pretty.contains("last_transition: Some(\n        1.2s ago,\n    ),"),
        "{pretty}"
    );

    let transition = transitions.lock().unwrap()[0].clone();
    assert_eq!(
        format!("{transition:?}"),
        "Transition { breaker: \"debugged\", from: Closed, to: Open, at: 1.2s ago, \
         failure_rate: 100.0, slow_rate: 0.0, calls: 2, origin: Local }"
    );

    let rejection = breaker.try_acquire().unwrap_err();
    let shown = format!("{rejection:?}");
    assert!(shown.contains("ProbeTime(in 3.8s)"), "{shown}");
    for shown in [format!("{snapshot:?}"), format!("{transition:?}"), shown] {
        assert!(
            !shown.contains("tv_sec") && !shown.contains("Instant"),
            "{shown}"
        );
    }
}
