//! A live breaker given new options in place (`Breaker::reconfigure`): one test a rule of the
//! contract on the paused clock, and the load test on real threads.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use breaker_runtime::{
    Breaker, Config, ConfigBuilder, ConfigError, Mode, Settings, State, Verdict, Window,
    circuit_breaker, registry,
};
use breaker_tests::{count, record_transitions};

fn config(builder: ConfigBuilder) -> Config {
    builder.no_timeout().build().expect("a valid configuration")
}

fn record(breaker: &Breaker, verdicts: &[Verdict]) {
    for &verdict in verdicts {
        breaker.try_acquire().expect("admitted").record(verdict);
    }
}

use Verdict::{Failure as F, Success as S};

fn tally(breaker: &Breaker) -> (u32, u32) {
    let snapshot = breaker.snapshot();
    (snapshot.calls, snapshot.failures)
}

#[test]
fn the_name_in_the_new_config_is_ignored_and_the_identity_stays() {
    let breaker = Arc::new(Breaker::new(config(count(10).name("reconfigure-identity"))));
    registry()
        .register(Arc::clone(&breaker))
        .expect("a free name");
    let transitions = record_transitions(&breaker);

    let change = breaker
        .reconfigure(config(count(1).name("another-name")))
        .unwrap();

    assert_eq!(change.after.name().as_str(), "reconfigure-identity");
    assert_eq!(breaker.name().as_str(), "reconfigure-identity");
    let listed = registry()
        .get("reconfigure-identity")
        .expect("still listed");
    assert!(Arc::ptr_eq(&listed, &breaker), "the same breaker");
    assert!(registry().get("another-name").is_none());
    assert_eq!(listed.config().window(), Window::Count(1));
    record(&breaker, &[F]);
    assert_eq!(
        *transitions.lock().unwrap(),
        [(State::Closed, State::Open)],
        "its subscriber still hears it"
    );
    registry().unregister("reconfigure-identity");
}

#[tokio::test(start_paused = true)]
async fn an_open_circuit_stays_open_for_its_break_and_the_new_break_applies_from_the_next() {
    let breaker = Breaker::new(config(count(1).break_duration(Duration::from_secs(10))));
    record(&breaker, &[F]);
    tokio::time::advance(Duration::from_secs(1)).await;

    breaker
        .reconfigure(config(count(1).break_duration(Duration::from_secs(60))))
        .unwrap();
    assert_eq!(
        breaker.state(),
        State::Open,
        "reconfiguring never transitions"
    );
    tokio::time::advance(Duration::from_secs(9) - Duration::from_millis(1)).await;
    assert!(breaker.try_acquire().is_err(), "still the first break");
    tokio::time::advance(Duration::from_millis(1)).await;
    let probe = breaker
        .try_acquire()
        .expect("the probe, after the break it opened with");
    probe.record(F);
    assert_eq!(breaker.state(), State::Open);

    tokio::time::advance(Duration::from_secs(60) - Duration::from_millis(1)).await;
    assert!(breaker.try_acquire().is_err(), "the new break");
    tokio::time::advance(Duration::from_millis(1)).await;
    assert!(breaker.try_acquire().is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_half_open_period_keeps_its_probes_and_their_slots_and_the_next_takes_the_new_number() {
    let two_probes = || count(1).probes(2).break_duration(Duration::from_secs(1));
    let breaker = Breaker::new(config(two_probes()));
    record(&breaker, &[F]);
    tokio::time::advance(Duration::from_secs(1)).await;
    let first = breaker.try_acquire().expect("the first probe");
    assert_eq!(breaker.state(), State::HalfOpen);

    breaker.reconfigure(config(two_probes().probes(1))).unwrap();
    assert_eq!(
        breaker.snapshot().probes_in_flight,
        1,
        "its probe kept its slot"
    );
    let second = breaker.try_acquire().expect("the period's second slot");
    assert!(breaker.try_acquire().is_err(), "and no third");
    first.record(S);
    assert_eq!(
        breaker.state(),
        State::HalfOpen,
        "two successes close this period"
    );
    second.record(S);
    assert_eq!(breaker.state(), State::Closed);

    record(&breaker, &[F]);
    tokio::time::advance(Duration::from_secs(1)).await;
    let only = breaker.try_acquire().expect("the next period's probe");
    assert!(
        breaker.try_acquire().is_err(),
        "the next period has one slot"
    );
    only.record(S);
    assert_eq!(breaker.state(), State::Closed, "and one success closes it");
}

#[test]
fn forced_open_disabled_and_the_operators_mode_stay() {
    let breaker = Breaker::new(config(count(10)));
    breaker.force_open();
    breaker.reconfigure(config(count(5))).unwrap();
    assert_eq!(breaker.state(), State::ForcedOpen);
    breaker.disable();
    breaker.reconfigure(config(count(20))).unwrap();
    assert_eq!(breaker.state(), State::Disabled);
    breaker.reset();
    breaker.set_mode(Mode::Shadow);
    breaker
        .reconfigure(config(count(10).threshold(20.0)))
        .unwrap();
    assert_eq!(
        breaker.mode(),
        Mode::Shadow,
        "the new config names the same mode"
    );
    breaker
        .reconfigure(config(count(10).mode(Mode::Shadow)))
        .unwrap();
    breaker
        .reconfigure(config(count(10).mode(Mode::Enforce)))
        .unwrap();
    assert_eq!(
        breaker.mode(),
        Mode::Enforce,
        "a mode the config changes is applied"
    );
}

#[test]
fn a_count_window_resized_keeps_its_newest_outcomes() {
    let breaker = Breaker::new(config(count(10)));
    record(&breaker, &[F, F, S, S, S]);
    breaker.reconfigure(config(count(4))).unwrap();
    assert_eq!(tally(&breaker), (4, 1), "F S S S: the newest four");
    breaker.reconfigure(config(count(3))).unwrap();
    assert_eq!(tally(&breaker), (3, 0), "S S S");
    breaker
        .reconfigure(config(count(50).min_calls(50)))
        .unwrap();
    assert_eq!(tally(&breaker), (3, 0), "a larger window keeps them all");
    record(&breaker, &[F]);
    assert_eq!(tally(&breaker), (4, 1), "and goes on from them");
}

#[tokio::test(start_paused = true)]
async fn a_time_window_given_a_new_span_keeps_the_outcomes_inside_it() {
    let span = |secs| {
        config(
            Config::builder()
                .time_window(Duration::from_secs(secs))
                .min_calls(100),
        )
    };
    let breaker = Breaker::new(span(10));
    record(&breaker, &[F]);
    tokio::time::advance(Duration::from_secs(7)).await;
    record(&breaker, &[S, F]);
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(tally(&breaker), (3, 2));

    breaker.reconfigure(span(5)).unwrap();
    assert_eq!(
        tally(&breaker),
        (2, 1),
        "the failure 8 s ago is outside 5 s"
    );
    breaker.reconfigure(span(60)).unwrap();
    assert_eq!(tally(&breaker), (2, 1), "what left is not brought back");
    tokio::time::advance(Duration::from_secs(50)).await;
    assert_eq!(
        tally(&breaker),
        (2, 1),
        "and what stayed lives by the new span"
    );
    // A window of D lets an outcome go between D and D + D/10 after it was recorded.
    tokio::time::advance(Duration::from_secs(16)).await;
    assert_eq!(tally(&breaker), (0, 0), "66 s after it was recorded");
}

#[tokio::test(start_paused = true)]
async fn a_change_of_window_kind_starts_an_empty_window() {
    let breaker = Breaker::new(config(count(10)));
    record(&breaker, &[F, S]);
    breaker
        .reconfigure(config(
            Config::builder().time_window(Duration::from_secs(10)),
        ))
        .unwrap();
    assert_eq!(
        tally(&breaker),
        (0, 0),
        "a count window's outcomes have no times"
    );
    record(&breaker, &[F]);
    breaker.reconfigure(config(count(10))).unwrap();
    assert_eq!(tally(&breaker), (0, 0), "nor a time window's an order");
}

#[test]
fn the_new_rules_judge_from_the_next_outcome_never_at_the_change() {
    let breaker = Breaker::new(config(count(10).min_calls(4).threshold(60.0)));
    record(&breaker, &[F, F, S, S, S, S]);
    assert_eq!(breaker.state(), State::Closed, "at most 2 of 4 failed");
    breaker
        .reconfigure(config(count(10).min_calls(4).threshold(25.0)))
        .unwrap();
    assert_eq!(
        breaker.state(),
        State::Closed,
        "2 of 6 is past the new threshold, but nothing was recorded"
    );
    record(&breaker, &[S]);
    assert_eq!(
        breaker.state(),
        State::Open,
        "2 of 7, judged by the new rules"
    );
    let opened = breaker.snapshot().last_opened.expect("why it opened");
    assert_eq!(opened.threshold, 25.0);
}

#[test]
fn a_call_admitted_before_and_finished_after_is_recorded_once() {
    let breaker = Breaker::new(config(count(10).threshold(100.0)));
    let admitted = breaker.try_acquire().unwrap();
    record(&breaker, &[F, F]);
    breaker
        .reconfigure(config(count(5).threshold(100.0)))
        .unwrap();
    admitted.record(F);
    assert_eq!(tally(&breaker), (3, 3), "in the window in force, once");

    let admitted = breaker.try_acquire().unwrap();
    breaker
        .reconfigure(config(
            Config::builder()
                .time_window(Duration::from_secs(10))
                .threshold(100.0),
        ))
        .unwrap();
    admitted.record(F);
    assert_eq!(tally(&breaker), (1, 1), "in the new, empty window, once");
}

#[tokio::test(start_paused = true)]
async fn the_snapshot_shows_the_config_in_force_and_when_it_last_changed() {
    let breaker = Breaker::new(config(count(10)));
    assert_eq!(breaker.snapshot().config_changed, None);
    assert!(breaker.last_reconfigured().is_none());
    tokio::time::advance(Duration::from_secs(5)).await;
    let change = breaker
        .reconfigure(config(count(30).threshold(40.0)))
        .unwrap();

    let snapshot = breaker.snapshot();
    assert_eq!(snapshot.config.threshold().percent(), 40.0);
    assert_eq!(snapshot.config.window(), Window::Count(30));
    assert_eq!(snapshot.config_changed, Some(tokio::time::Instant::now()));
    assert_eq!(change.changed(), ["threshold", "window", "min_calls"]);
    let last = breaker.last_reconfigured().expect("the change");
    assert_eq!(last.before.threshold().percent(), 50.0);
    assert_eq!(last.after.threshold().percent(), 40.0);
}

#[test]
fn settings_that_break_a_rule_are_refused_and_change_nothing() {
    let breaker = Breaker::new(config(count(10)));
    let refused = breaker.reconfigure(Settings {
        window: Window::Count(5),
        min_calls: Some(6),
        ..breaker.config().settings()
    });
    assert_eq!(
        refused.unwrap_err(),
        ConfigError::MinCallsAboveWindow {
            min_calls: 6,
            window: 5
        }
    );
    assert_eq!(breaker.config().window(), Window::Count(10));
    assert!(breaker.last_reconfigured().is_none());
}

#[circuit_breaker(
    name = "reconfigure-attribute",
    threshold = "30%",
    window = "8",
    timeout_ms = 250
)]
async fn guarded() -> Result<(), std::io::Error> {
    Ok(())
}

#[tokio::test]
async fn reset_config_puts_back_the_attributes_values() {
    guarded().await.unwrap();
    let breaker = registry().get("reconfigure-attribute").expect("declared");
    let built = breaker.config();
    breaker
        .reconfigure(config(count(40).threshold(75.0)))
        .unwrap();
    assert_eq!(breaker.config().threshold().percent(), 75.0);

    let change = breaker.reset_config();
    assert_eq!(change.after, built);
    assert_eq!(breaker.config(), built);
    assert_eq!(breaker.config().threshold().percent(), 30.0);
    assert_eq!(breaker.config().window(), Window::Count(8));
    assert_eq!(breaker.config().timeout(), Some(Duration::from_millis(250)));
    assert_eq!(breaker.built_config(), built);
    guarded().await.unwrap();
}

/// Four threads call while a fifth reconfigures 200 times, resizing the count window each
/// time and moving the threshold. Every window is larger than all the calls together and
/// never reaches `min_calls`, so the window in force at the end must hold every outcome
/// recorded, exactly once: an outcome lost or doubled at a swap shows in its counts.
#[test]
fn four_threads_calling_while_another_reconfigures_200_times_lose_no_call() {
    const THREADS: usize = 4;
    const CALLS_EACH: u32 = 1_500;
    let sized =
        |calls: u32, threshold: f64| config(count(calls).min_calls(calls).threshold(threshold));
    let breaker = Arc::new(Breaker::new(sized(9_000, 60.0)));
    let started = Arc::new(AtomicU32::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (breaker, started, done) = (
                Arc::clone(&breaker),
                Arc::clone(&started),
                Arc::clone(&done),
            );
            std::thread::spawn(move || {
                started.fetch_add(1, Ordering::SeqCst);
                let (mut calls, mut failures) = (0, 0);
                // Until the reconfigurations are over, so that every one of them races calls.
                while calls < CALLS_EACH && !(done.load(Ordering::SeqCst) && calls > 0) {
                    let permit = breaker.try_acquire().expect("never open");
                    let verdict = if calls % 2 == 0 { F } else { S };
                    permit.record(verdict);
                    calls += 1;
                    failures += u32::from(verdict == F);
                    std::thread::yield_now();
                }
                (calls, failures)
            })
        })
        .collect();
    while started.load(Ordering::SeqCst) < THREADS as u32 {
        std::thread::yield_now();
    }
    for n in 0..200 {
        let (calls, threshold) = if n % 2 == 0 {
            (8_000, 70.0)
        } else {
            (9_000, 60.0)
        };
        breaker.reconfigure(sized(calls, threshold)).unwrap();
        std::thread::yield_now();
    }
    done.store(true, Ordering::SeqCst);
    let (calls, failures) = callers
        .into_iter()
        .map(|caller| caller.join().expect("no caller panics"))
        .fold((0, 0), |(c, f), (calls, failures)| {
            (c + calls, f + failures)
        });

    assert!(calls <= 6_000 && calls > 0, "{calls}");
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        tally(&breaker),
        (calls, failures),
        "the window holds every outcome once"
    );
    assert_eq!(breaker.config().window(), Window::Count(9_000));
    assert_eq!(breaker.config().threshold().percent(), 60.0);
}

/// Issue 45's report: a count window that keeps its size judged the next outcome by the old
/// rules whenever that outcome left the counts as they were (a failure pushing out a failure).
#[test]
fn a_lower_threshold_with_the_same_window_judges_an_outcome_that_changes_no_count() {
    for threshold in [30.0, 25.0, 20.0] {
        let breaker = Breaker::new(config(count(10).min_calls(10).threshold(60.0)));
        record(&breaker, &[F, F, F, S, S, S, S, S, S, S]);
        assert_eq!(breaker.state(), State::Closed, "3 of 10 at 60%");
        breaker
            .reconfigure(config(count(10).min_calls(10).threshold(threshold)))
            .unwrap();
        assert_eq!(
            breaker.state(),
            State::Closed,
            "nothing judged at the change"
        );
        record(&breaker, &[F]);
        assert_eq!(tally(&breaker), (10, 3), "the failure pushed out a failure");
        assert_eq!(
            breaker.state(),
            State::Open,
            "3 of 10 reaches {threshold}%: the new rule judged the next outcome"
        );
    }
}

/// The same with a success that pushes out a success, and with `min_calls` lowered.
#[test]
fn a_success_that_changes_no_count_is_judged_by_the_new_rules_too() {
    let breaker = Breaker::new(config(count(4).min_calls(4).threshold(60.0)));
    record(&breaker, &[S, F, F, S]);
    breaker
        .reconfigure(config(count(4).min_calls(4).threshold(50.0)))
        .unwrap();
    record(&breaker, &[S]);
    assert_eq!(tally(&breaker), (4, 2), "F F S S");
    assert_eq!(breaker.state(), State::Open, "2 of 4 reaches 50%");
}

/// Half-open, the probes are judged by the options in force when each ends: a `slow_call` set
/// during the break makes a slow probe a failed one, and taken off, a slow probe succeeds.
#[tokio::test(start_paused = true)]
async fn a_half_open_circuit_judges_its_probes_by_the_new_slow_call() {
    let rules = |slow: Option<u64>| {
        let builder = count(1).break_duration(Duration::from_secs(1));
        config(match slow {
            Some(ms) => builder.slow_call(Duration::from_millis(ms)),
            None => builder,
        })
    };
    let breaker = Breaker::new(rules(None));
    record(&breaker, &[F]);
    breaker.reconfigure(rules(Some(50))).unwrap();
    tokio::time::advance(Duration::from_secs(1)).await;
    let probe = breaker.try_acquire().expect("the probe");
    tokio::time::advance(Duration::from_millis(80)).await;
    probe.record(S);
    assert_eq!(
        breaker.state(),
        State::Open,
        "slower than the new slow_call"
    );

    breaker.reconfigure(rules(None)).unwrap();
    tokio::time::advance(Duration::from_secs(1)).await;
    let probe = breaker.try_acquire().expect("the next probe");
    tokio::time::advance(Duration::from_millis(80)).await;
    probe.record(S);
    assert_eq!(breaker.state(), State::Closed, "no slow_call: a success");
}

/// Issue 45: what opened the circuit is told by the rules that judged it then, not by those in
/// force when it is read.
#[test]
fn the_opening_names_the_threshold_and_window_that_judged_it_as_they_were() {
    let breaker = Arc::new(Breaker::new(config(
        count(10)
            .min_calls(10)
            .threshold(60.0)
            .name("reconfigure-opening"),
    )));
    registry()
        .register(Arc::clone(&breaker))
        .expect("a free name");
    record(&breaker, &[F, F, F, F, F, S, S, S, S, F]);
    assert_eq!(breaker.state(), State::Open);
    breaker
        .reconfigure(config(count(20).threshold(70.0)))
        .unwrap();
    let opened = breaker.snapshot().last_opened.expect("open");
    assert_eq!(opened.threshold, 60.0, "not the 70% set since");
    assert_eq!(
        opened.window,
        Some(Window::Count(10)),
        "not the 20 set since"
    );
    assert_eq!(
        opened.to_string(),
        "failure rate 60% reached the threshold of 60% over 10 calls (6 failed, 0 slow)"
    );
    let rejection = breaker.try_acquire().unwrap_err();
    assert!(
        rejection
            .to_string()
            .contains("reached the threshold of 60%"),
        "{rejection}"
    );
}

/// In shadow mode the configuration says so too, whoever set the mode.
#[test]
fn the_configuration_of_a_shadow_breaker_says_shadow() {
    let breaker = Breaker::new(config(count(10)));
    breaker.set_mode(Mode::Shadow);
    assert_eq!(breaker.config().mode(), Mode::Shadow);
    let snapshot = breaker.snapshot();
    assert_eq!(
        (snapshot.mode, snapshot.config.mode()),
        (Mode::Shadow, Mode::Shadow)
    );
    breaker.set_mode(Mode::Enforce);
    assert_eq!(breaker.snapshot().config.mode(), Mode::Enforce);
}

/// Issue 45: code changes one option and keeps the others, as the endpoint does, where a
/// `Config` from the builder put every other option back to the builder's defaults.
#[test]
fn update_changes_the_options_named_and_keeps_every_other() {
    let built = count(8)
        .threshold(30.0)
        .timeout(Duration::from_secs(2))
        .slow_call(Duration::from_millis(500))
        .slow_threshold(40.0)
        .probes(3)
        .build()
        .unwrap();
    let breaker = Breaker::new(built.clone());
    let change = breaker.update(Config::builder().threshold(20.0)).unwrap();
    assert_eq!(change.changed(), ["threshold"]);
    let now = breaker.config();
    assert_eq!(now.threshold().percent(), 20.0);
    assert_eq!(now.timeout(), Some(Duration::from_secs(2)), "the 2 s kept");
    assert_eq!(
        (now.window(), now.probes(), now.slow_threshold()),
        (built.window(), 3, built.slow_threshold())
    );

    // A new window brings its own min_calls, as in the attribute and the endpoint.
    let change = breaker.update(Config::builder().count_window(4)).unwrap();
    assert_eq!(change.changed(), ["window", "min_calls"]);
    assert_eq!(breaker.config().min_calls(), 4);

    // Each value is checked, and the rules between options on the result.
    assert!(breaker.update(Config::builder().threshold(150.0)).is_err());
    assert_eq!(
        breaker.update(Config::builder().min_calls(5)).unwrap_err(),
        ConfigError::MinCallsAboveWindow {
            min_calls: 5,
            window: 4
        }
    );
    assert_eq!(
        breaker.config().threshold().percent(),
        20.0,
        "nothing changed"
    );

    // The builder's other way: from a configuration, some options set again.
    let lower = breaker
        .config()
        .to_builder()
        .threshold(10.0)
        .build()
        .unwrap();
    assert_eq!(lower.timeout(), Some(Duration::from_secs(2)));
    assert_eq!(lower.min_calls(), 4);
}

/// Where the options in force came from, as the snapshot says it.
#[test]
fn the_snapshot_says_where_the_options_in_force_came_from() {
    use breaker_runtime::ConfigSource;
    let breaker = Breaker::new(config(count(10)));
    assert_eq!(breaker.snapshot().config_source, ConfigSource::Built);
    breaker.update(Config::builder().threshold(40.0)).unwrap();
    assert_eq!(breaker.snapshot().config_source, ConfigSource::Code);
    assert_eq!(
        breaker.last_reconfigured().unwrap().source,
        ConfigSource::Code
    );
    let reset = breaker.reset_config();
    assert_eq!(reset.source, ConfigSource::Built);
    let snapshot = breaker.snapshot();
    assert_eq!(snapshot.config_source, ConfigSource::Built);
    assert!(snapshot.config_changed.is_some(), "put back, at a time");
}
