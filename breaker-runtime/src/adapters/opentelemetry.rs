//! Every breaker's state, transitions, calls and call durations, through an OpenTelemetry
//! [`Meter`] (feature `opentelemetry`): the same events as the `metrics`
//! feature's series, named after OpenTelemetry's conventions (dots, the unit on the instrument,
//! no `_total`). Any SDK and exporter can carry them: OTLP, Prometheus, stdout.
//!
//! | instrument | kind | attributes |
//! |---|---|---|
//! | `circuit_breaker.state` | observable gauge (i64), read at each collection: 0 closed, 1 open, 2 half-open, 3 forced open, 4 disabled | `breaker` |
//! | `circuit_breaker.transitions` | counter (u64) | `breaker`, `from`, `to` |
//! | `circuit_breaker.calls` | counter (u64) | `breaker`, `outcome`: success, failure, slow, timeout, ignored, rejected, cancelled; and `injected` = `true` on a call a fault was injected into ([`Breaker::inject`](crate::Breaker::inject)), which other calls do not carry |
//! | `circuit_breaker.injected` | counter (u64): calls a fault was injected into | `breaker`, `fault`: failure, delay, delay_then_failure |
//! | `circuit_breaker.call.duration` | histogram (f64), unit `s` | `breaker` |
//! | `circuit_breaker.shadow_rejected` | counter (u64): calls a breaker in shadow mode would have rejected, and let run | `breaker` |
//! | `circuit_breaker.retries` | counter (u64): a [`Policy`](crate::Policy)'s retry decisions | `breaker`, `outcome`: retried, budget_exhausted |
//! | `circuit_breaker.bulkhead_rejected` | counter (u64): calls a full bulkhead turned away | `breaker` |
//! | `circuit_breaker.deadline_exceeded` | counter (u64): calls cut by a policy's deadline | `breaker` |
//! | `circuit_breaker.reconfigurations` | counter (u64): changes of a live breaker's options | `breaker` |
//! | `circuit_breaker.rejected_since_transition` | observable gauge (u64): calls turned away since the breaker's last transition ([`Snapshot::rejected_since_transition`](crate::Snapshot::rejected_since_transition); the total is `calls{outcome=rejected}`) | `breaker` |
//! | `circuit_breaker.window.call.duration` | observable gauge (f64), unit `s`: the window's call durations ([`Snapshot::mean_duration`](crate::Snapshot::mean_duration)), not reported while unknown | `breaker`, `stat`: mean, max |
//!
//! A panicking call counts as a `failure`. States and transitions are those of the breakers in
//! the [registry](crate::registry()): every declared breaker, and those registered by hand. The
//! state gauge asks every registered breaker for its state when the meter's reader collects, so
//! it is never stale and costs the calls nothing. The durations histogram suggests bucket
//! boundaries in seconds, from 5 ms to 10 s; a view may replace them.
//!
//! [`Meter`]: ::opentelemetry::metrics::Meter

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use ::opentelemetry::metrics::{Counter, Histogram, Meter};
use ::opentelemetry::{KeyValue, Value};

use crate::base::name::Name;
use crate::core::breaker::Breaker;
use crate::core::breaker::observer::{
    CallEvent, CallObserver, Ending, ObserverAlreadySet, add_call_observer,
};
use crate::core::events::Transition;
use crate::core::state::State;
use crate::registry::registry;

/// The histogram's suggested bucket boundaries, in seconds (those OpenTelemetry's semantic
/// conventions give HTTP request durations).
const DURATION_BOUNDARIES: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// Starts recording through `meter`: creates the instruments, adds a call observer (beside any
/// others the process has) and subscribes to every registered breaker's transitions. A second
/// call is an error, and records nothing twice (even with another meter).
///
/// ```no_run
/// // With an SDK's meter provider set as the global one (e.g. with an OTLP exporter):
/// let meter = opentelemetry::global::meter("checkout");
/// breaker_runtime::opentelemetry::install(&meter).expect("installed once");
/// ```
pub fn install(meter: &Meter) -> Result<(), ObserverAlreadySet> {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    // Relaxed: the flag only makes one caller the installer; it publishes nothing.
    if INSTALLED.swap(true, Ordering::Relaxed) {
        return Err(ObserverAlreadySet);
    }
    // The gauge's callback stays with the meter's provider; the handle is not needed.
    let _state = meter
        .i64_observable_gauge("circuit_breaker.state")
        .with_description(
            "The state of the circuit: 0 closed, 1 open, 2 half-open, 3 forced open, 4 disabled",
        )
        .with_callback(|observer| {
            for breaker in registry().breakers() {
                observer.observe(
                    state_value(breaker.state()),
                    &[breaker_attribute(breaker.name())],
                );
            }
        })
        .build();
    let _rejected = meter
        .u64_observable_gauge("circuit_breaker.rejected_since_transition")
        .with_description("Calls the breaker turned away since its last transition")
        .with_callback(|observer| {
            for breaker in registry().breakers() {
                observer.observe(
                    breaker.snapshot().rejected_since_transition,
                    &[breaker_attribute(breaker.name())],
                );
            }
        })
        .build();
    let _durations = meter
        .f64_observable_gauge("circuit_breaker.window.call.duration")
        .with_unit("s")
        .with_description("The mean and the longest duration of the calls in the breaker's window")
        .with_callback(|observer| {
            for breaker in registry().breakers() {
                let snapshot = breaker.snapshot();
                for (stat, duration) in [
                    ("mean", snapshot.mean_duration),
                    ("max", snapshot.max_duration),
                ] {
                    if let Some(duration) = duration {
                        observer.observe(
                            duration.as_secs_f64(),
                            &[
                                breaker_attribute(breaker.name()),
                                KeyValue::new("stat", stat),
                            ],
                        );
                    }
                }
            }
        })
        .build();
    let transitions = meter
        .u64_counter("circuit_breaker.transitions")
        .with_description("Changes of state of the circuit")
        .build();
    registry()
        .on_transition(move |t: &Transition| {
            transitions.add(
                1,
                &[
                    breaker_attribute(&t.breaker),
                    KeyValue::new("from", t.from.as_str()),
                    KeyValue::new("to", t.to.as_str()),
                ],
            );
        })
        .forever();
    add_call_observer(Recorder::new(meter));
    Ok(())
}

/// The state gauge's value for a state: 0 closed, 1 open, 2 half-open, 3 forced open,
/// 4 disabled.
///
/// ```
/// use breaker_runtime::State;
///
/// assert_eq!(breaker_runtime::opentelemetry::state_value(State::Open), 1);
/// ```
pub fn state_value(state: State) -> i64 {
    match state {
        State::Closed => 0,
        State::Open => 1,
        State::HalfOpen => 2,
        State::ForcedOpen => 3,
        State::Disabled => 4,
    }
}

/// `breaker = name`, sharing the name rather than copying it.
fn breaker_attribute(name: &Name) -> KeyValue {
    KeyValue::new("breaker", Value::String(name.otel_value()))
}

fn outcome(ending: Ending) -> &'static str {
    match ending {
        Ending::Panic => "failure",
        other => other.as_str(),
    }
}

/// The instruments a call event moves.
struct Recorder {
    calls: Counter<u64>,
    duration: Histogram<f64>,
    shadow_rejected: Counter<u64>,
    retries: Counter<u64>,
    bulkhead_rejected: Counter<u64>,
    deadline_exceeded: Counter<u64>,
    reconfigurations: Counter<u64>,
    injected: Counter<u64>,
}

impl Recorder {
    fn new(meter: &Meter) -> Self {
        Recorder {
            calls: meter
                .u64_counter("circuit_breaker.calls")
                .with_description("Calls through the breaker, by outcome (rejected included)")
                .build(),
            duration: meter
                .f64_histogram("circuit_breaker.call.duration")
                .with_description("How long the calls the breaker let run took")
                .with_unit("s")
                .with_boundaries(DURATION_BOUNDARIES.to_vec())
                .build(),
            shadow_rejected: meter
                .u64_counter("circuit_breaker.shadow_rejected")
                .with_description(
                    "Calls a breaker in shadow mode would have rejected, and let run instead",
                )
                .build(),
            retries: meter
                .u64_counter("circuit_breaker.retries")
                .with_description(
                    "Retry decisions of a policy: retried, or refused as the budget was spent",
                )
                .build(),
            bulkhead_rejected: meter
                .u64_counter("circuit_breaker.bulkhead_rejected")
                .with_description("Calls a policy's full bulkhead turned away")
                .build(),
            deadline_exceeded: meter
                .u64_counter("circuit_breaker.deadline_exceeded")
                .with_description("Calls cut by a policy's deadline")
                .build(),
            reconfigurations: meter
                .u64_counter("circuit_breaker.reconfigurations")
                .with_description("Changes of a live breaker's options")
                .build(),
            injected: meter
                .u64_counter("circuit_breaker.injected")
                .with_description("Calls a fault was injected into, on purpose")
                .build(),
        }
    }
}

thread_local! {
    /// The call whose `Finished` comes next on this thread had a fault injected: the two
    /// events come one after the other ([`CallEvent::Injected`]).
    static INJECTED: Cell<bool> = const { Cell::new(false) };
}

impl CallObserver for Recorder {
    fn on_call(&self, breaker: &Breaker, event: CallEvent) {
        let name = breaker_attribute(breaker.name());
        match event {
            CallEvent::Admitted => {}
            CallEvent::Rejected => {
                self.calls
                    .add(1, &[name, KeyValue::new("outcome", "rejected")]);
            }
            CallEvent::Finished { ending, elapsed } => {
                if let Some(elapsed) = elapsed {
                    self.duration
                        .record(elapsed.as_secs_f64(), std::slice::from_ref(&name));
                }
                let outcome = KeyValue::new("outcome", outcome(ending));
                if INJECTED.replace(false) {
                    self.calls
                        .add(1, &[name, outcome, KeyValue::new("injected", true)]);
                } else {
                    self.calls.add(1, &[name, outcome]);
                }
            }
            CallEvent::Injected { fault } => {
                INJECTED.set(true);
                self.injected
                    .add(1, &[name, KeyValue::new("fault", fault.as_str())]);
            }
            CallEvent::ShadowRejected => self.shadow_rejected.add(1, &[name]),
            CallEvent::Retry { .. } => {
                self.retries
                    .add(1, &[name, KeyValue::new("outcome", "retried")]);
            }
            CallEvent::RetryBudgetExhausted => {
                self.retries
                    .add(1, &[name, KeyValue::new("outcome", "budget_exhausted")]);
            }
            CallEvent::BulkheadFull => self.bulkhead_rejected.add(1, &[name]),
            CallEvent::DeadlineExceeded => self.deadline_exceeded.add(1, &[name]),
            CallEvent::Reconfigured => self.reconfigurations.add(1, &[name]),
        }
    }
}
