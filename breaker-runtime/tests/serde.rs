//! The `serde` feature: a snapshot as a dashboard reads it.

use std::time::Duration;

use breaker_runtime::{Breaker, Config, Rate, Settings, Verdict};

#[tokio::test(start_paused = true)]
async fn an_open_breaker_serializes_with_times_relative_to_now() {
    let breaker = Breaker::new(
        Config::builder()
            .name("ledger")
            .time_window(Duration::from_secs(30))
            .min_calls(2)
            .break_duration(Duration::from_secs(20))
            .build()
            .unwrap(),
    );
    for _ in 0..2 {
        breaker.try_acquire().unwrap().record(Verdict::Failure);
    }
    tokio::time::advance(Duration::from_secs(5)).await;
    let json = serde_json::to_value(breaker.snapshot()).unwrap();
    assert_eq!(json["state"], "open");
    assert_eq!(json["next_probe_in_ms"], 15_000);
    assert_eq!(json["last_transition_ms_ago"], 5_000);
    assert_eq!(
        json["config_changed_ms_ago"],
        serde_json::Value::Null,
        "never reconfigured"
    );
    assert_eq!(json["calls"], 2, "the window that opened it");
    assert_eq!(json["last_opened"]["reason"], "failure_rate");
    assert_eq!(json["last_opened"]["failures"], 2);
    assert_eq!(json["last_opened"]["ms_ago"], 5_000);
    assert_eq!(
        json["last_opened"]["why"],
        "failure rate 100% reached the threshold of 50% over 2 calls (2 failed, 0 slow)"
    );
    assert_eq!(json["config"]["window"]["ms"], 30_000);
    assert_eq!(json["config"]["threshold"], 50.0);
    assert_eq!(json["config"]["timeout_ms"], 10_000);
    assert_eq!(
        json["config"]["max_break_duration_ms"],
        serde_json::Value::Null
    );

    breaker.disable();
    let json = serde_json::to_value(breaker.snapshot()).unwrap();
    assert_eq!(
        (json["state"].as_str(), &json["next_probe_in_ms"]),
        (Some("disabled"), &serde_json::Value::Null)
    );
}

#[tokio::test(start_paused = true)]
async fn a_reconfigured_breaker_says_how_long_ago_its_config_changed() {
    let breaker = Breaker::new(
        Config::builder()
            .name("ledger-reconfigured")
            .build()
            .unwrap(),
    );
    let settings = Settings {
        threshold: Rate::from_percent(40.0).unwrap(),
        ..breaker.config().settings()
    };
    breaker.reconfigure(settings).unwrap();
    tokio::time::advance(Duration::from_secs(3)).await;
    let json = serde_json::to_value(breaker.snapshot()).unwrap();
    assert_eq!(json["config_changed_ms_ago"], 3_000);
    assert_eq!(json["config"]["threshold"], 40.0, "the config in force");
}

/// Issue 45: the JSON says what opened the circuit by the rules then, where the options came
/// from, and in shadow mode the configuration says shadow too.
#[tokio::test(start_paused = true)]
async fn the_json_tells_the_rule_that_opened_it_the_source_and_the_mode_in_force() {
    let breaker = Breaker::new(
        Config::builder()
            .name("ledger-json")
            .time_window(Duration::from_secs(30))
            .min_calls(2)
            .threshold(60.0)
            .build()
            .unwrap(),
    );
    let json = serde_json::to_value(breaker.snapshot()).unwrap();
    assert_eq!(json["config_source"], "built");
    assert_eq!(json["config_file"], serde_json::Value::Null);
    for _ in 0..2 {
        breaker.try_acquire().unwrap().record(Verdict::Failure);
    }
    breaker
        .update(Config::builder().threshold(90.0).count_window(5))
        .unwrap();
    breaker.set_mode(breaker_runtime::Mode::Shadow);
    let json = serde_json::to_value(breaker.snapshot()).unwrap();
    let opened = &json["last_opened"];
    assert_eq!(opened["threshold"], 60.0);
    assert_eq!(opened["window"]["ms"], 30_000);
    assert!(
        opened["why"]
            .as_str()
            .unwrap()
            .contains("reached the threshold of 60%"),
        "{opened}"
    );
    assert_eq!(json["config_source"], "code");
    assert_eq!(json["config"]["threshold"], 90.0);
    assert_eq!(
        (&json["mode"], &json["config"]["mode"]),
        (&"shadow".into(), &"shadow".into())
    );
}
