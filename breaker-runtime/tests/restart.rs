//! State that survives a restart (issue 47; opossum's `toJSON` and `state` option,
//! Resilience4j's `initialState`): a breaker's state saved by one process and put back by the
//! next, as far as the next one's options allow, with the rule for clocks that disagree and a
//! file refused whole when anything in it is wrong. Each "process" here is a breaker built
//! anew from the same options; the breaker's clock is tokio's paused one, and the break's end
//! crosses between them as a wall-clock time, as it does between two processes.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use breaker_runtime::{
    Breaker, Config, ConfigBuilder, RestoreError, SavedBucket, SavedOutcome, SavedState,
    SavedStates, SavedWindow, State, registry,
};
use tokio::time::advance;

fn breaker(config: ConfigBuilder) -> Breaker {
    Breaker::new(config.build().unwrap())
}

fn fail(breaker: &Breaker, times: usize) {
    for _ in 0..times {
        breaker.try_acquire().expect("admitted").failure();
    }
}

fn succeed(breaker: &Breaker, times: usize) {
    for _ in 0..times {
        breaker.try_acquire().expect("admitted").success();
    }
}

fn opened(break_duration: Duration) -> ConfigBuilder {
    Config::builder()
        .count_window(2)
        .break_duration(break_duration)
}

/// opossum: a breaker created with the state another one exported is open, and stays open
/// for what was left of the break.
#[tokio::test(start_paused = true)]
async fn an_open_circuit_stays_open_for_what_is_left_of_its_break() {
    let old = breaker(opened(Duration::from_secs(30)));
    fail(&old, 2);
    advance(Duration::from_secs(10)).await;
    let json = SavedStates::new(vec![old.saved_state()]).to_json();

    let new = breaker(opened(Duration::from_secs(30)));
    let saved = SavedStates::from_json(&json).unwrap();
    let restored = new.restore(&saved.breakers[0]).unwrap();
    assert_eq!(restored.state, State::Open);
    assert!(restored.dropped.is_empty(), "{restored}");
    assert!(new.try_acquire().unwrap_err().is_rejection());
    advance(Duration::from_millis(19_900)).await;
    assert!(
        new.try_acquire().is_err(),
        "20 s were left, less a wall-clock hair"
    );
    advance(Duration::from_millis(100)).await;
    new.try_acquire().expect("the probe").success();
    assert_eq!(new.state(), State::Closed);
}

fn open_state(open_until: SystemTime, break_length: Duration) -> SavedState {
    let old = breaker(opened(break_length));
    fail(&old, 2);
    let mut saved = old.saved_state();
    saved.open_until = Some(open_until);
    saved
}

#[tokio::test(start_paused = true)]
async fn a_break_that_ended_leaves_it_to_a_probe_never_closed() {
    let saved = open_state(
        SystemTime::now() - Duration::from_secs(5),
        Duration::from_secs(30),
    );
    let new = breaker(opened(Duration::from_secs(30)));
    let restored = new.restore(&saved).unwrap();
    assert_eq!(restored.state, State::Open, "not closed");
    assert!(restored.dropped[0].starts_with("open_until: the break had ended"));
    let probe = new.try_acquire().expect("the break is over: a probe");
    assert_eq!(new.state(), State::HalfOpen);
    probe.failure();
    assert_eq!(new.state(), State::Open, "the probe decides");
}

#[tokio::test(start_paused = true)]
async fn a_break_further_ahead_than_its_length_is_clamped() {
    let saved = open_state(
        SystemTime::now() + Duration::from_secs(3_600),
        Duration::from_secs(30),
    );
    let new = breaker(opened(Duration::from_secs(30)));
    let restored = new.restore(&saved).unwrap();
    assert!(restored.dropped[0].contains("clamped"), "{restored}");
    advance(Duration::from_millis(29_999)).await;
    assert!(new.try_acquire().is_err());
    advance(Duration::from_millis(1)).await;
    assert!(new.try_acquire().is_ok(), "30 s, not an hour");
}

/// A file's break longer than any this breaker's options allow is cut to its longest.
#[tokio::test(start_paused = true)]
async fn a_break_is_never_longer_than_this_breakers_options_allow() {
    let mut saved = open_state(
        SystemTime::now() + Duration::from_secs(86_400),
        Duration::from_secs(30),
    );
    saved.break_length = Some(Duration::from_secs(86_400));
    let new = breaker(opened(Duration::from_secs(30)));
    let restored = new.restore(&saved).unwrap();
    assert!(restored.dropped[0].contains("clamped"), "{restored}");
    advance(Duration::from_secs(30)).await;
    assert!(new.try_acquire().is_ok(), "its own 30 s break, not a day");
}

#[tokio::test(start_paused = true)]
async fn half_open_is_put_back_as_a_break_that_ended() {
    let old = breaker(opened(Duration::from_secs(1)));
    fail(&old, 2);
    advance(Duration::from_secs(1)).await;
    let _probe = old.try_acquire().unwrap();
    assert_eq!(old.state(), State::HalfOpen);
    let new = breaker(opened(Duration::from_secs(1)));
    new.restore(&old.saved_state()).unwrap();
    assert_eq!(new.state(), State::Open);
    let _probe = new.try_acquire().expect("a probe at once");
    assert_eq!(new.state(), State::HalfOpen);
}

/// The break's growth is carried: after two failed probes, the next failed one opens it for
/// four times the base break.
#[tokio::test(start_paused = true)]
async fn the_breaks_growth_is_carried() {
    let grows = || {
        opened(Duration::from_secs(1))
            .max_break_duration(Duration::from_secs(60))
            .break_growth(2.0)
    };
    let old = breaker(grows());
    fail(&old, 2);
    for wait in [1, 2] {
        advance(Duration::from_secs(wait)).await;
        old.try_acquire().unwrap().failure();
    }
    let saved = old.saved_state();
    assert_eq!(saved.failed_probes, 2);
    assert_eq!(saved.break_length, Some(Duration::from_secs(4)));

    let new = breaker(grows());
    new.restore(&saved).unwrap();
    advance(Duration::from_secs(4)).await;
    new.try_acquire().expect("a probe").failure();
    advance(Duration::from_millis(7_999)).await;
    assert!(new.try_acquire().is_err(), "the third failed probe: 8 s");
    advance(Duration::from_millis(1)).await;
    assert!(new.try_acquire().is_ok());
}

/// opossum restores its window's stats: a closed breaker that had seen failures opens on the
/// next one, as the old process would have.
#[tokio::test(start_paused = true)]
async fn a_closed_window_comes_back_and_the_next_failure_judges_it() {
    let options = || Config::builder().count_window(4).threshold(75.0);
    let old = breaker(options());
    succeed(&old, 1);
    fail(&old, 2);
    let saved = old.saved_state();
    assert_eq!(
        saved.window,
        SavedWindow::Count(vec![
            SavedOutcome::Success,
            SavedOutcome::Failure,
            SavedOutcome::Failure
        ])
    );
    let new = breaker(options());
    new.restore(&saved).unwrap();
    assert_eq!(new.state(), State::Closed);
    fail(&new, 1);
    assert_eq!(new.state(), State::Open, "3 failures of 4");

    let cold = breaker(options());
    fail(&cold, 1);
    assert_eq!(
        cold.state(),
        State::Closed,
        "without the saved window: 1 of 1"
    );
}

#[tokio::test(start_paused = true)]
async fn a_smaller_count_window_keeps_the_newest_outcomes_and_says_so() {
    let old = breaker(Config::builder().count_window(10).threshold(90.0));
    fail(&old, 3);
    succeed(&old, 2);
    let new = breaker(Config::builder().count_window(2));
    let restored = new.restore(&old.saved_state()).unwrap();
    assert_eq!(new.snapshot().calls, 2);
    assert_eq!(new.snapshot().failures, 0, "the newest two were successes");
    assert!(
        restored
            .dropped
            .iter()
            .any(|d| d.starts_with("window: kept the newest 2 of 5")),
        "{restored}"
    );
    assert!(
        restored
            .dropped
            .iter()
            .any(|d| d.starts_with("config: the saved options differ in threshold, window")),
        "{restored}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_time_windows_buckets_come_back_by_age_and_another_kind_drops_them() {
    let span = Duration::from_secs(60);
    let old = breaker(Config::builder().time_window(span).min_calls(100));
    fail(&old, 3);
    advance(Duration::from_secs(30)).await;
    succeed(&old, 2);
    let saved = old.saved_state();
    let SavedWindow::Time(buckets) = &saved.window else {
        panic!("a time window's buckets");
    };
    assert_eq!(buckets.iter().map(|b| b.calls).sum::<u32>(), 5);

    let same = breaker(Config::builder().time_window(span).min_calls(100));
    assert!(same.restore(&saved).unwrap().dropped.is_empty());
    assert_eq!((same.snapshot().calls, same.snapshot().failures), (5, 3));
    advance(Duration::from_secs(37)).await;
    assert_eq!(
        (same.snapshot().calls, same.snapshot().failures),
        (2, 0),
        "the failures' bucket aged out as it would have in the old process"
    );

    let shorter = breaker(Config::builder().time_window(Duration::from_secs(20)));
    let restored = shorter.restore(&saved).unwrap();
    assert_eq!(
        shorter.snapshot().calls,
        2,
        "only the successes are within 20 s"
    );
    assert!(
        restored
            .dropped
            .iter()
            .any(|d| d.starts_with("window: 3 of its 5 outcomes were older")),
        "{restored}"
    );

    let fixed = breaker(Config::builder().fixed_window(span));
    let restored = fixed.restore(&saved).unwrap();
    assert_eq!(fixed.snapshot().calls, 0);
    assert!(
        restored
            .dropped
            .iter()
            .any(|d| d.starts_with("window: its 5 outcomes were dropped")),
        "{restored}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_operators_hold_is_carried() {
    let old = breaker(Config::builder());
    old.force_open();
    let new = breaker(Config::builder());
    new.restore(&old.saved_state()).unwrap();
    assert_eq!(new.state(), State::ForcedOpen);
    old.disable();
    new.restore(&old.saved_state()).unwrap();
    assert_eq!(new.state(), State::Disabled);
}

#[test]
fn a_state_that_contradicts_itself_is_refused_and_changes_nothing() {
    let new = breaker(Config::builder().count_window(4));
    let mut saved = new.saved_state();
    saved.window = SavedWindow::Time(vec![SavedBucket {
        began: SystemTime::now(),
        calls: 1,
        failures: 2,
        slow: 0,
    }]);
    new.try_acquire().unwrap().failure();
    let refused = new.restore(&saved).unwrap_err();
    assert!(matches!(&refused, RestoreError::Invalid { field, .. } if field == "window"));
    assert_eq!(new.snapshot().failures, 1, "nothing changed");
}

fn registered(name: &'static str) -> Arc<Breaker> {
    let breaker = Arc::new(breaker(
        Config::builder()
            .name(name)
            .count_window(2)
            .break_duration(Duration::from_secs(30)),
    ));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker
}

#[tokio::test(start_paused = true)]
async fn the_registry_saves_and_restores_every_breaker_as_json() {
    let payments = registered("restart-payments");
    let geo = registered("restart-geo");
    fail(&payments, 2);
    fail(&geo, 1);
    let json = registry().export_json();
    payments.reset();
    geo.reset();

    let restored = registry().restore_json(&json).unwrap();
    let of = |name: &str| restored.iter().find(|r| r.name == name).unwrap().state;
    assert_eq!(of("restart-payments"), State::Open);
    assert_eq!(of("restart-geo"), State::Closed);
    assert_eq!(payments.state(), State::Open);
    assert_eq!(geo.snapshot().failures, 1);
}

#[tokio::test(start_paused = true)]
async fn a_file_refused_for_any_reason_changes_no_breaker() {
    let ledger = registered("restart-ledger");
    fail(&ledger, 2);
    let json = registry().export_json();
    ledger.reset();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();

    let mut other_version = value.clone();
    other_version["version"] = 2.into();
    assert_eq!(
        registry().restore_json(&other_version.to_string()),
        Err(RestoreError::Version {
            found: 2,
            expected: 1
        })
    );

    let mut unknown = value.clone();
    unknown["breakers"]["restart-ledgr"] = unknown["breakers"]["restart-ledger"].clone();
    let RestoreError::UnknownBreaker { name, nearest } =
        registry().restore_json(&unknown.to_string()).unwrap_err()
    else {
        panic!("an unknown breaker");
    };
    assert_eq!(name, "restart-ledgr");
    assert!(
        nearest.contains(&"restart-ledger".to_string()),
        "{nearest:?}"
    );

    let mut ajar = value.clone();
    ajar["breakers"]["restart-ledger"]["state"] = "ajar".into();
    let refused = registry().restore_json(&ajar.to_string()).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "breaker `restart-ledger`: `state` is `ajar`; a state is closed, open, half_open, forced_open or disabled"
    );

    let mut bad_option = value.clone();
    bad_option["breakers"]["restart-ledger"]["config"]["threshold"] = "140%".into();
    let refused = registry()
        .restore_json(&bad_option.to_string())
        .unwrap_err();
    assert!(
        matches!(&refused, RestoreError::Invalid { breaker: Some(b), field, .. } if b == "restart-ledger" && field == "config"),
        "{refused}"
    );

    let mut far = value.clone();
    far["breakers"]["restart-ledger"]["open_until_unix_ms"] = u64::MAX.into();
    far["breakers"]["restart-ledger"]["break_ms"] = u64::MAX.into();
    assert!(
        SavedStates::from_json(&far.to_string()).is_ok(),
        "any whole number is a time, read without a panic"
    );

    let cut = &json[..json.len() / 2];
    assert!(matches!(
        registry().restore_json(cut),
        Err(RestoreError::Invalid { breaker: None, .. })
    ));

    assert_eq!(ledger.state(), State::Closed, "nothing was half applied");
}
