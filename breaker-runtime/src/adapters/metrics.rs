//! Every breaker's state, transitions, calls and call durations, through the [`metrics`] facade
//! (feature `metrics`). Any `metrics` recorder can export them; the `prometheus` example serves
//! them with `metrics-exporter-prometheus`.
//!
//! | series | kind | labels |
//! |---|---|---|
//! | `circuit_breaker_state` | gauge: 0 closed, 1 open, 2 half-open, 3 forced open, 4 disabled | `breaker` |
//! | `circuit_breaker_transitions_total` | counter | `breaker`, `from`, `to` |
//! | `circuit_breaker_calls_total` | counter | `breaker`, `outcome`: success, failure, slow, timeout, ignored, rejected, cancelled; and `injected="true"` on a call a fault was injected into ([`Breaker::inject`](crate::Breaker::inject)), which other calls do not carry |
//! | `circuit_breaker_injected_total` | counter: calls a fault was injected into | `breaker`, `fault`: failure, delay, delay_then_failure |
//! | `circuit_breaker_call_duration_seconds` | histogram | `breaker` |
//! | `circuit_breaker_shadow_rejected_total` | counter: calls a breaker in shadow mode would have rejected, and let run | `breaker` |
//! | `circuit_breaker_retries_total` | counter: a [`Policy`](crate::Policy)'s retry decisions | `breaker`, `outcome`: retried, budget_exhausted |
//! | `circuit_breaker_bulkhead_rejected_total` | counter: calls a full bulkhead turned away | `breaker` |
//! | `circuit_breaker_deadline_exceeded_total` | counter: calls cut by a policy's deadline | `breaker` |
//! | `circuit_breaker_reconfigurations_total` | counter: changes of a live breaker's options ([`Breaker::reconfigure`](crate::Breaker::reconfigure)) | `breaker` |
//! | `circuit_breaker_rejected_since_transition` | gauge: calls turned away since the breaker's last transition (the total is `calls_total{outcome="rejected"}`) | `breaker` |
//! | `circuit_breaker_window_call_duration_seconds` | gauge: the window's call durations ([`Snapshot::mean_duration`](crate::Snapshot::mean_duration)); NaN while unknown | `breaker`, `stat`: mean, max |
//!
//! The two gauges read a breaker's [snapshot](crate::Breaker::snapshot): after each of its
//! transitions, and for every breaker at most once a second while calls flow.
//!
//! A panicking call counts as a `failure`. Transitions and states are those of the breakers in
//! the [registry](crate::registry()): every declared breaker, and those registered by hand.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::base::clock;
use crate::core::breaker::Breaker;
use crate::core::breaker::observer::{
    CallEvent, CallObserver, Ending, ObserverAlreadySet, add_call_observer,
};
use crate::core::events::Transition;
use crate::core::state::State;
use crate::registry::registry;

/// Starts recording: adds a call observer (beside any others the process has) and subscribes
/// to every registered breaker's transitions. Install a `metrics` recorder first. A second call
/// is an error, and records nothing twice.
///
/// ```no_run
/// // With a recorder installed (e.g. metrics-exporter-prometheus's):
/// breaker_runtime::metrics::install().expect("installed once");
/// ```
pub fn install() -> Result<(), ObserverAlreadySet> {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    // Relaxed: the flag only makes one caller the installer; it publishes nothing.
    if INSTALLED.swap(true, Ordering::Relaxed) {
        return Err(ObserverAlreadySet);
    }
    add_call_observer(Recorder);
    for breaker in registry().breakers() {
        record_state(&breaker, breaker.state());
    }
    registry().on_transition(record_transition).forever();
    Ok(())
}

/// The gauge's value for a state.
pub fn state_value(state: State) -> f64 {
    match state {
        State::Closed => 0.0,
        State::Open => 1.0,
        State::HalfOpen => 2.0,
        State::ForcedOpen => 3.0,
        State::Disabled => 4.0,
    }
}

fn record_state(breaker: &Breaker, state: State) {
    metrics::gauge!("circuit_breaker_state", "breaker" => breaker.name().label())
        .set(state_value(state));
}

/// Sets the gauges read from a breaker's snapshot.
fn record_snapshot(breaker: &Breaker) {
    let snapshot = breaker.snapshot();
    let name = breaker.name().label();
    metrics::gauge!("circuit_breaker_rejected_since_transition", "breaker" => name.clone())
        .set(snapshot.rejected_since_transition as f64);
    for (stat, duration) in [
        ("mean", snapshot.mean_duration),
        ("max", snapshot.max_duration),
    ] {
        // NaN once unknown (half-open, say), so the last known value does not linger.
        metrics::gauge!("circuit_breaker_window_call_duration_seconds", "breaker" => name.clone(), "stat" => stat)
            .set(duration.map_or(f64::NAN, |d| d.as_secs_f64()));
    }
}

/// Reads every registered breaker's snapshot into the gauges, unless that was done less than
/// a second ago: the first call of each second pays for it.
fn refresh_snapshots() {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let now = clock::now();
    // Relaxed: the time only elects one refresher per second; it publishes nothing.
    let next = NEXT.load(Ordering::Relaxed);
    if now < next
        || NEXT
            .compare_exchange(
                next,
                now.saturating_add(REFRESH),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_err()
    {
        return;
    }
    for breaker in registry().breakers() {
        record_snapshot(&breaker);
    }
}

/// How often the snapshot gauges are read while calls flow, in nanoseconds.
const REFRESH: u64 = 1_000_000_000;

fn record_transition(t: &Transition) {
    metrics::counter!(
        "circuit_breaker_transitions_total",
        "breaker" => t.breaker.label(),
        "from" => t.from.as_str(),
        "to" => t.to.as_str()
    )
    .increment(1);
    metrics::gauge!("circuit_breaker_state", "breaker" => t.breaker.label()).set(state_value(t.to));
    if let Some(breaker) = registry().get(&t.breaker) {
        record_snapshot(&breaker);
    }
}

fn outcome(ending: Ending) -> &'static str {
    match ending {
        Ending::Panic => "failure",
        other => other.as_str(),
    }
}

struct Recorder;

thread_local! {
    /// The call whose `Finished` comes next on this thread had a fault injected: the two
    /// events come one after the other ([`CallEvent::Injected`]).
    static INJECTED: Cell<bool> = const { Cell::new(false) };
}

impl CallObserver for Recorder {
    fn on_call(&self, breaker: &Breaker, event: CallEvent) {
        refresh_snapshots();
        let name = breaker.name().label();
        match event {
            CallEvent::Admitted => {}
            CallEvent::Rejected => {
                metrics::counter!("circuit_breaker_calls_total", "breaker" => name, "outcome" => "rejected").increment(1);
            }
            CallEvent::Finished { ending, elapsed } => {
                if let Some(elapsed) = elapsed {
                    metrics::histogram!("circuit_breaker_call_duration_seconds", "breaker" => name.clone())
                        .record(elapsed.as_secs_f64());
                }
                if INJECTED.replace(false) {
                    metrics::counter!("circuit_breaker_calls_total", "breaker" => name, "outcome" => outcome(ending), "injected" => "true")
                        .increment(1);
                } else {
                    metrics::counter!("circuit_breaker_calls_total", "breaker" => name, "outcome" => outcome(ending))
                        .increment(1);
                }
            }
            CallEvent::Injected { fault } => {
                INJECTED.set(true);
                metrics::counter!("circuit_breaker_injected_total", "breaker" => name, "fault" => fault.as_str())
                    .increment(1);
            }
            CallEvent::ShadowRejected => {
                metrics::counter!("circuit_breaker_shadow_rejected_total", "breaker" => name)
                    .increment(1);
            }
            CallEvent::Retry { .. } => {
                metrics::counter!("circuit_breaker_retries_total", "breaker" => name, "outcome" => "retried").increment(1);
            }
            CallEvent::RetryBudgetExhausted => {
                metrics::counter!("circuit_breaker_retries_total", "breaker" => name, "outcome" => "budget_exhausted").increment(1);
            }
            CallEvent::Reconfigured => {
                metrics::counter!("circuit_breaker_reconfigurations_total", "breaker" => name)
                    .increment(1);
            }
            CallEvent::BulkheadFull => {
                metrics::counter!("circuit_breaker_bulkhead_rejected_total", "breaker" => name)
                    .increment(1);
            }
            CallEvent::DeadlineExceeded => {
                metrics::counter!("circuit_breaker_deadline_exceeded_total", "breaker" => name)
                    .increment(1);
            }
        }
    }
}
