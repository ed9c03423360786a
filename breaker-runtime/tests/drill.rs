//! Drills on a paused clock: held open for a while, then put back as they were; whatever else
//! changes the state meanwhile wins.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_runtime::{
    Breaker, BreakerError, Config, DrillError, Heeded, Mode, Order, State, registry,
};

const SECOND: Duration = Duration::from_secs(1);

fn breaker(config: breaker_runtime::ConfigBuilder) -> Arc<Breaker> {
    Arc::new(Breaker::new(config.build().unwrap()))
}

/// A breaker opened by one failure, for a break of 30 s.
fn opened() -> Arc<Breaker> {
    let breaker = breaker(
        Config::builder()
            .count_window(1)
            .break_duration(Duration::from_secs(30)),
    );
    breaker.try_acquire().unwrap().failure();
    assert_eq!(breaker.state(), State::Open);
    breaker
}

/// Every transition the breaker announces, as (from, to).
fn transitions(breaker: &Breaker) -> Arc<Mutex<Vec<(State, State)>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    breaker
        .on_transition(move |t| sink.lock().unwrap().push((t.from, t.to)))
        .forever();
    seen
}

#[tokio::test(start_paused = true)]
async fn a_drill_turns_calls_away_and_its_end_gives_back_a_closed_circuit() {
    let breaker = breaker(Config::builder().count_window(4));
    let seen = transitions(&breaker);
    breaker.try_acquire().unwrap().failure();
    let started = tokio::time::Instant::now();
    let ends = breaker.drill(Duration::from_secs(30)).unwrap();
    assert_eq!(ends, started + Duration::from_secs(30));
    assert_eq!(breaker.state(), State::ForcedOpen);
    assert_eq!(breaker.drill_ends(), Some(ends));
    let rejection = breaker.try_acquire().unwrap_err();
    assert!(
        matches!(
            rejection,
            BreakerError::Open {
                next_probe_at: None,
                ..
            }
        ),
        "as when an operator holds it open: {rejection:?}"
    );

    tokio::time::sleep(Duration::from_secs(29)).await;
    assert_eq!(breaker.state(), State::ForcedOpen, "still drilling");
    tokio::time::sleep(SECOND).await;
    tokio::task::yield_now().await;
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.drill_ends(), None);
    assert_eq!(breaker.snapshot().calls, 0, "closed with an empty window");
    breaker
        .try_acquire()
        .expect("a call right after runs")
        .success();
    assert_eq!(breaker.snapshot().calls, 1);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Closed, State::ForcedOpen),
            (State::ForcedOpen, State::Closed)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_drill_ends_by_itself_though_no_call_arrives_and_nobody_asks() {
    let breaker = breaker(Config::builder());
    let seen = transitions(&breaker);
    breaker.drill(Duration::from_secs(10)).unwrap();
    tokio::time::sleep(Duration::from_secs(10) + Duration::from_millis(1)).await;
    // Nothing read the drill since it started, and a snapshot does not end one: its own task
    // put the state back.
    assert_eq!(breaker.snapshot().state, State::Closed);
    assert_eq!(
        seen.lock().unwrap().last(),
        Some(&(State::ForcedOpen, State::Closed))
    );
}

#[tokio::test(start_paused = true)]
async fn past_its_end_the_state_reads_restored_before_the_task_has_run() {
    let breaker = breaker(Config::builder());
    breaker.drill(Duration::from_secs(10)).unwrap();
    tokio::time::advance(Duration::from_secs(10)).await;
    assert_eq!(breaker.state(), State::Closed);

    let breaker = opened();
    breaker.drill(Duration::from_secs(10)).unwrap();
    tokio::time::advance(Duration::from_secs(10)).await;
    assert!(
        breaker.try_acquire().unwrap_err().retry_after().is_some(),
        "a call sees the open circuit put back, with its break"
    );

    let breaker = breaker_with_disabled();
    breaker.drill(Duration::from_secs(10)).unwrap();
    tokio::time::advance(Duration::from_secs(10)).await;
    breaker
        .try_acquire()
        .expect("the first call after the end runs")
        .success();
    assert_eq!(breaker.snapshot().state, State::Disabled);

    let breaker = breaker_with_disabled();
    let ends = breaker.drill(Duration::from_secs(10)).unwrap();
    tokio::time::advance(Duration::from_secs(10) - Duration::from_nanos(1)).await;
    assert_eq!(breaker.state(), State::ForcedOpen, "not a nanosecond early");
    assert_eq!(breaker.drill_ends(), Some(ends));
    tokio::time::advance(Duration::from_nanos(1)).await;
    assert_eq!(breaker.drill_ends(), None);
    assert_eq!(breaker.snapshot().state, State::Disabled);
}

#[tokio::test(start_paused = true)]
async fn stopping_a_drill_early_puts_the_state_back_and_its_end_then_does_nothing() {
    let breaker = breaker(Config::builder());
    let seen = transitions(&breaker);
    breaker.drill(Duration::from_secs(60)).unwrap();
    tokio::time::sleep(SECOND).await;
    assert_eq!(breaker.stop_drill(), Some(State::Closed));
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.drill_ends(), None);
    assert_eq!(breaker.stop_drill(), None);

    // A later hold by the operator is not undone by the first drill's end.
    breaker.force_open();
    tokio::time::sleep(Duration::from_secs(120)).await;
    assert_eq!(breaker.state(), State::ForcedOpen);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (State::Closed, State::ForcedOpen),
            (State::ForcedOpen, State::Closed),
            (State::Closed, State::ForcedOpen),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_new_drill_after_a_stopped_one_lasts_its_own_length() {
    let breaker = breaker(Config::builder());
    breaker.drill(Duration::from_secs(10)).unwrap();
    breaker.stop_drill().unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let ends = breaker.drill(Duration::from_secs(10)).unwrap();
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        breaker.state(),
        State::ForcedOpen,
        "the first drill's end is not the second's"
    );
    assert_eq!(breaker.drill_ends(), Some(ends));
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn the_task_of_a_drill_ended_by_a_look_leaves_the_next_drill_alone() {
    let breaker = breaker(Config::builder());
    breaker.drill(Duration::from_secs(10)).unwrap();
    tokio::time::advance(Duration::from_secs(10)).await;
    assert_eq!(breaker.drill_ends(), None, "ended by the look");
    assert_eq!(breaker.snapshot().state, State::Closed);
    let ends = breaker.drill(Duration::from_secs(10)).unwrap();
    tokio::time::sleep(SECOND).await;
    assert_eq!(breaker.state(), State::ForcedOpen);
    assert_eq!(breaker.drill_ends(), Some(ends));
}

#[tokio::test(start_paused = true)]
async fn an_open_circuit_comes_back_open_until_its_own_break_ends() {
    let breaker = opened();
    tokio::time::sleep(Duration::from_secs(5)).await;
    breaker.drill(Duration::from_secs(10)).unwrap();
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(
        breaker.state(),
        State::Open,
        "not closed: its break is not over"
    );
    let opened = breaker.snapshot().last_opened.unwrap();
    assert_eq!(
        opened.reason,
        breaker_runtime::OpenReason::FailureRate,
        "why it opened, not the drill's hold"
    );
    let rejection = breaker.try_acquire().unwrap_err();
    let left = rejection.retry_after().unwrap();
    assert_eq!(
        left,
        Duration::from_secs(14),
        "the rest of its own 30 s break"
    );
    tokio::time::sleep(Duration::from_secs(14)).await;
    assert!(breaker.try_acquire().unwrap().is_probe());
}

#[tokio::test(start_paused = true)]
async fn an_open_circuit_whose_break_passed_during_the_drill_probes_with_the_next_call() {
    let breaker = opened();
    breaker.drill(Duration::from_secs(60)).unwrap();
    tokio::time::sleep(Duration::from_secs(61)).await;
    assert_eq!(breaker.state(), State::Open, "never closed without a probe");
    assert!(breaker.try_acquire().unwrap().is_probe());
}

#[tokio::test(start_paused = true)]
async fn a_half_open_and_a_disabled_circuit_come_back_as_they_were() {
    let breaker = opened();
    assert!(breaker.half_open());
    breaker.drill(Duration::from_secs(5)).unwrap();
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(breaker.state(), State::HalfOpen);
    assert!(breaker.try_acquire().unwrap().is_probe(), "a fresh period");

    let breaker = breaker_with_disabled();
    breaker.drill(Duration::from_secs(5)).unwrap();
    assert!(breaker.try_acquire().unwrap_err().is_rejection());
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(breaker.state(), State::Disabled);
}

fn breaker_with_disabled() -> Arc<Breaker> {
    let breaker = breaker(Config::builder());
    breaker.disable();
    breaker
}

#[tokio::test(start_paused = true)]
async fn an_operators_reset_during_a_drill_wins_and_the_end_does_not_undo_it() {
    let breaker = opened();
    breaker.drill(Duration::from_secs(10)).unwrap();
    breaker.reset();
    assert_eq!(breaker.drill_ends(), None, "the drill is over");
    assert_eq!(breaker.stop_drill(), None);
    breaker.try_acquire().unwrap().success();
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(
        breaker.state(),
        State::Closed,
        "not put back open at the drill's end"
    );
    assert_eq!(breaker.snapshot().calls, 1, "nor its window emptied");
}

#[tokio::test(start_paused = true)]
async fn an_operators_force_open_during_a_drill_holds_after_its_end() {
    let breaker = breaker(Config::builder());
    let seen = transitions(&breaker);
    breaker.drill(Duration::from_secs(10)).unwrap();
    breaker.force_open();
    assert_eq!(breaker.drill_ends(), None);
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(breaker.state(), State::ForcedOpen, "held until reset");
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "the operator's hold is no transition"
    );
}

#[tokio::test(start_paused = true)]
async fn disabling_or_half_opening_during_a_drill_wins_too() {
    let breaker = breaker(Config::builder());
    breaker.drill(Duration::from_secs(10)).unwrap();
    breaker.disable();
    assert_eq!(breaker.drill_ends(), None, "the drill is over");
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(breaker.state(), State::Disabled);

    let breaker = breaker_with_disabled();
    breaker.reset();
    breaker.drill(Duration::from_secs(10)).unwrap();
    assert!(breaker.half_open());
    assert_eq!(breaker.drill_ends(), None, "the drill is over");
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(breaker.state(), State::HalfOpen);
}

#[tokio::test(start_paused = true)]
async fn an_order_from_outside_during_a_drill_wins() {
    let breaker = breaker(Config::builder());
    breaker.drill(Duration::from_secs(10)).unwrap();
    let open = Order::Open {
        remaining: Duration::from_secs(60),
    };
    assert_eq!(breaker.apply_order(1, open), Heeded::Applied);
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.drill_ends(), None);
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(
        breaker.state(),
        State::Open,
        "the fleet's opening, not closed by the drill's end"
    );
    assert!(breaker.try_acquire().unwrap_err().retry_after().unwrap() > Duration::from_secs(40));

    let breaker = opened();
    breaker.drill(Duration::from_secs(10)).unwrap();
    assert_eq!(breaker.apply_order(1, Order::Close), Heeded::Applied);
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(breaker.state(), State::Closed, "the fleet closed it");
}

#[tokio::test(start_paused = true)]
async fn an_order_during_the_drill_of_a_disabled_circuit_is_held_as_before_it() {
    let breaker = breaker_with_disabled();
    breaker.drill(Duration::from_secs(10)).unwrap();
    assert_eq!(breaker.apply_order(1, Order::Close), Heeded::Held);
    assert_eq!(breaker.state(), State::ForcedOpen, "still drilling");
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(breaker.state(), State::Disabled);
}

#[tokio::test(start_paused = true)]
async fn a_call_admitted_before_the_drill_that_fails_during_it_records_nothing() {
    let breaker = breaker(Config::builder().count_window(1));
    let early = breaker.try_acquire().unwrap();
    breaker.drill(Duration::from_secs(10)).unwrap();
    early.failure();
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.snapshot().calls, 0);
}

#[tokio::test(start_paused = true)]
async fn a_reconfiguration_during_a_drill_leaves_it_running() {
    let breaker = breaker(Config::builder().count_window(4));
    let ends = breaker.drill(Duration::from_secs(10)).unwrap();
    breaker
        .reconfigure(Config::builder().count_window(8).build().unwrap())
        .unwrap();
    assert_eq!(breaker.drill_ends(), Some(ends));
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn waiting_for_admission_lasts_the_drill() {
    let breaker = breaker(Config::builder());
    breaker.drill(Duration::from_secs(10)).unwrap();
    let started = tokio::time::Instant::now();
    // Bounded, so that a drill that never ends fails the test instead of hanging it.
    tokio::time::timeout(Duration::from_secs(60), breaker.admitted())
        .await
        .expect("admitted once the drill ends")
        .success();
    assert_eq!(started.elapsed(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn bad_drills_are_refused_and_change_nothing() {
    let breaker = breaker(Config::builder());
    assert_eq!(breaker.drill(Duration::ZERO), Err(DrillError::Zero));
    assert_eq!(breaker.state(), State::Closed);

    breaker.force_open();
    assert_eq!(
        breaker.drill(Duration::from_secs(1)),
        Err(DrillError::ForcedOpen)
    );
    breaker.reset();

    let ends = breaker.drill(Duration::from_secs(10)).unwrap();
    assert_eq!(
        breaker.drill(Duration::from_secs(99)),
        Err(DrillError::Drilling { ends })
    );
    breaker.stop_drill();

    breaker.set_mode(Mode::Shadow);
    assert_eq!(
        breaker.drill(Duration::from_secs(1)),
        Err(DrillError::Shadow)
    );
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.drill_ends(), None);
}

#[test]
fn a_drill_outside_a_runtime_is_refused() {
    let breaker = breaker(Config::builder());
    assert_eq!(
        breaker.drill(Duration::from_secs(1)),
        Err(DrillError::NoRuntime)
    );
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_long_drill_does_not_overflow() {
    let breaker = breaker(Config::builder());
    breaker.drill(Duration::MAX).unwrap();
    assert_eq!(breaker.state(), State::ForcedOpen);
    assert!(breaker.drill_ends().is_some());
    assert_eq!(breaker.stop_drill(), Some(State::Closed));
}

#[breaker_runtime::circuit_breaker(name = "drill-quote", fallback = cached_quote)]
async fn quote(symbol: &str) -> Result<String, std::io::Error> {
    Ok(format!("{symbol}: live"))
}

async fn cached_quote(symbol: &str) -> Result<String, std::io::Error> {
    Ok(format!("{symbol}: cached"))
}

#[tokio::test(start_paused = true)]
async fn a_drills_rejections_run_the_fallback() {
    let breaker = registry().get("drill-quote").unwrap();
    assert_eq!(quote("ACME").await.unwrap(), "ACME: live");
    breaker.drill(Duration::from_secs(30)).unwrap();
    assert_eq!(quote("ACME").await.unwrap(), "ACME: cached");
    assert_eq!(breaker.snapshot().rejected_since_transition, 1);
    tokio::time::sleep(Duration::from_secs(31)).await;
    assert_eq!(quote("ACME").await.unwrap(), "ACME: live");
}

#[path = "support/logged.rs"]
mod logged;

/// Issue 45: a drill's hold says it is a drill, in the snapshot and in its log line, where it
/// read as an operator's force_open.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_drills_opening_says_it_is_a_drill() {
    let logged = logged::Logged::capture();
    let breaker = breaker(Config::builder().name("drilled-reason"));
    breaker.drill(Duration::from_secs(60)).unwrap();
    let opened = breaker.snapshot().last_opened.expect("held open");
    assert_eq!(opened.reason, breaker_runtime::OpenReason::Drill);
    assert_eq!(opened.reason.as_str(), "drill");
    assert_eq!(opened.to_string(), "held open for a drill by an operator");
    let line = logged
        .all()
        .into_iter()
        .find(|l| l.level == tracing::Level::WARN)
        .unwrap_or_else(|| panic!("the opening's line: {:?}", logged.all()));
    assert_eq!(line.message, "circuit breaker held open for a drill");
    assert_eq!(line.field("reason"), Some("drill"));

    breaker.stop_drill();
    breaker.force_open();
    let opened = breaker.snapshot().last_opened.unwrap();
    assert_eq!(
        opened.reason,
        breaker_runtime::OpenReason::Forced,
        "an operator's own hold"
    );
    assert_eq!(opened.to_string(), "forced open by an operator");
}
