//! SPEC section 3 against a reference model: random sequences of admissions, outcomes,
//! cancellations, clock advances and operator commands, for both window kinds, with the breaker
//! and a plainly written single-threaded model of the contract compared after every step.
//!
//! Shrunk failures are kept by proptest in `spec_3_model.proptest-regressions` and replayed
//! first on every run.

use std::collections::VecDeque;
use std::time::Duration;

use breaker_runtime::__private::clock_nanos;
use breaker_runtime::{Breaker, BreakerError, Config, Permit, State, Verdict};
use proptest::prelude::*;
use tokio::time::Instant;

const MS: u64 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum WindowKind {
    Count(u32),
    /// Milliseconds.
    Time(u64),
}

#[derive(Debug, Clone)]
struct Settings {
    threshold_ppm: u32,
    window: WindowKind,
    min_calls: u32,
    break_ms: u64,
    max_break_ms: Option<u64>,
    probes: u32,
    slow_call_ms: Option<u64>,
    slow_threshold_ppm: u32,
}

impl Settings {
    fn config(&self) -> Config {
        let mut b = Config::builder()
            .threshold(f64::from(self.threshold_ppm) / 10_000.0)
            .min_calls(self.min_calls)
            .no_timeout()
            .break_duration(Duration::from_millis(self.break_ms))
            .probes(self.probes);
        b = match self.window {
            WindowKind::Count(n) => b.count_window(n),
            WindowKind::Time(ms) => b.time_window(Duration::from_millis(ms)),
        };
        if let Some(max) = self.max_break_ms {
            b = b.max_break_duration(Duration::from_millis(max));
        }
        if let Some(slow) = self.slow_call_ms {
            b = b
                .slow_call(Duration::from_millis(slow))
                .slow_threshold(f64::from(self.slow_threshold_ppm) / 10_000.0);
        }
        b.build().expect("generated settings are valid")
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Admit,
    Succeed(usize),
    Fail(usize),
    Ignore(usize),
    Cancel(usize),
    Advance(u64),
    ForceOpen,
    Disable,
    Reset,
}

// --- The model ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    Success,
    Slow,
    Failure,
}

#[derive(Debug, Clone, PartialEq)]
enum MState {
    Closed,
    Open {
        until: u64,
    },
    HalfOpen {
        in_flight: Vec<(u64, u64)>,
        successes: u32,
    },
    ForcedOpen,
    Disabled,
}

#[derive(Debug, Clone, Copy)]
enum MPermit {
    Closed {
        generation: u64,
        admitted: u64,
    },
    Probe {
        generation: u64,
        id: u64,
        admitted: u64,
    },
    Unrecorded,
}

#[derive(Debug, PartialEq)]
enum Admission {
    Admitted,
    Open,
    HalfOpenFull,
}

struct Model {
    s: Settings,
    state: MState,
    generation: u64,
    /// (completed at, outcome) of the current closed period, oldest first.
    window: VecDeque<(u64, Outcome)>,
    failed_probes: u32,
    next_probe: u64,
}

impl Model {
    fn new(s: Settings) -> Model {
        Model {
            s,
            state: MState::Closed,
            generation: 0,
            window: VecDeque::new(),
            failed_probes: 0,
            next_probe: 0,
        }
    }

    fn bucket_nanos(&self, span_ms: u64) -> u64 {
        (span_ms * MS).div_ceil(10)
    }

    /// What the window holds now: the last N outcomes, or those whose bucket is among the
    /// current one and the ten before it.
    fn tally(&self, now: u64) -> (u32, u32, u32) {
        let held: Vec<Outcome> = match self.s.window {
            WindowKind::Count(n) => self
                .window
                .iter()
                .rev()
                .take(n as usize)
                .map(|(_, o)| *o)
                .collect(),
            WindowKind::Time(ms) => {
                let width = self.bucket_nanos(ms);
                let current = now / width;
                self.window
                    .iter()
                    .filter(|(t, _)| current - t / width <= 10)
                    .map(|(_, o)| *o)
                    .collect()
            }
        };
        let count = |o: Outcome| held.iter().filter(|h| **h == o).count() as u32;
        (
            held.len() as u32,
            count(Outcome::Failure),
            count(Outcome::Slow),
        )
    }

    fn transition(&mut self, to: MState) {
        self.generation += 1;
        if to == MState::Closed {
            self.window.clear();
            self.failed_probes = 0;
        }
        self.state = to;
    }

    fn break_ms(&self) -> u64 {
        match self.s.max_break_ms {
            None => self.s.break_ms,
            Some(max) => self
                .s
                .break_ms
                .saturating_mul(1u64 << self.failed_probes.min(40))
                .min(max),
        }
    }

    fn admit(&mut self, now: u64) -> (Admission, MPermit) {
        match &mut self.state {
            MState::Closed => (
                Admission::Admitted,
                MPermit::Closed {
                    generation: self.generation,
                    admitted: now,
                },
            ),
            MState::Disabled => (Admission::Admitted, MPermit::Unrecorded),
            MState::ForcedOpen => (Admission::Open, MPermit::Unrecorded),
            MState::Open { until } if now < *until => (Admission::Open, MPermit::Unrecorded),
            MState::Open { .. } => {
                self.transition(MState::HalfOpen {
                    in_flight: Vec::new(),
                    successes: 0,
                });
                self.admit(now)
            }
            MState::HalfOpen { in_flight, .. } => {
                let give_up = self.s.break_ms * MS;
                in_flight.retain(|(_, at)| now - at < give_up);
                if in_flight.len() as u32 >= self.s.probes {
                    return (Admission::HalfOpenFull, MPermit::Unrecorded);
                }
                let id = self.next_probe;
                self.next_probe += 1;
                in_flight.push((id, now));
                (
                    Admission::Admitted,
                    MPermit::Probe {
                        generation: self.generation,
                        id,
                        admitted: now,
                    },
                )
            }
        }
    }

    fn classify(&self, verdict: Option<Verdict>, admitted: u64, now: u64) -> Option<Outcome> {
        match verdict? {
            Verdict::Ignore => None,
            Verdict::Failure => Some(Outcome::Failure),
            Verdict::Success => match self.s.slow_call_ms {
                Some(slow) if now - admitted > slow * MS => Some(Outcome::Slow),
                _ => Some(Outcome::Success),
            },
        }
    }

    /// `verdict` is `None` for a cancelled call.
    fn finish(&mut self, permit: MPermit, verdict: Option<Verdict>, now: u64) {
        match permit {
            MPermit::Unrecorded => {}
            MPermit::Closed {
                generation,
                admitted,
            } => {
                if generation != self.generation || self.state != MState::Closed {
                    return;
                }
                let Some(outcome) = self.classify(verdict, admitted, now) else {
                    return;
                };
                self.window.push_back((now, outcome));
                let (calls, failures, slow) = self.tally(now);
                let reached = |part: u32, ppm: u32| {
                    u64::from(part) * 1_000_000 >= u64::from(ppm) * u64::from(calls)
                };
                let slow_reached =
                    self.s.slow_call_ms.is_some() && reached(slow, self.s.slow_threshold_ppm);
                if calls >= self.s.min_calls
                    && (reached(failures, self.s.threshold_ppm) || slow_reached)
                {
                    let until = now + self.break_ms() * MS;
                    self.transition(MState::Open { until });
                }
            }
            MPermit::Probe {
                generation,
                id,
                admitted,
            } => {
                if generation != self.generation {
                    return;
                }
                let outcome = self.classify(verdict, admitted, now);
                let MState::HalfOpen {
                    in_flight,
                    successes,
                } = &mut self.state
                else {
                    return;
                };
                in_flight.retain(|(i, _)| *i != id);
                match outcome {
                    None => {}
                    Some(Outcome::Success) => {
                        *successes += 1;
                        if *successes >= self.s.probes {
                            self.transition(MState::Closed);
                        }
                    }
                    Some(Outcome::Failure | Outcome::Slow) => {
                        self.failed_probes += 1;
                        let until = now + self.break_ms() * MS;
                        self.transition(MState::Open { until });
                    }
                }
            }
        }
    }

    fn command(&mut self, to: MState) {
        if self.state == to && to != MState::Closed {
            return;
        }
        self.transition(to);
    }

    fn state(&self) -> State {
        match self.state {
            MState::Closed => State::Closed,
            MState::Open { .. } => State::Open,
            MState::HalfOpen { .. } => State::HalfOpen,
            MState::ForcedOpen => State::ForcedOpen,
            MState::Disabled => State::Disabled,
        }
    }
}

// --- Running both side by side -------------------------------------------------------------------

fn admission_of(result: &Result<Permit<'_>, BreakerError>) -> Admission {
    match result {
        Ok(_) => Admission::Admitted,
        Err(BreakerError::Open { .. }) => Admission::Open,
        Err(BreakerError::HalfOpenFull { .. }) => Admission::HalfOpenFull,
        Err(other) => panic!("unexpected answer {other:?}"),
    }
}

fn check(breaker: &Breaker, model: &Model, step: usize, op: Op) -> Result<(), TestCaseError> {
    let now = clock_nanos(Instant::now());
    let snapshot = breaker.snapshot();
    prop_assert_eq!(
        snapshot.state,
        model.state(),
        "state after step {} ({:?})",
        step,
        op
    );
    if model.state == MState::Closed {
        let (calls, failures, slow) = model.tally(now);
        prop_assert_eq!(
            (snapshot.calls, snapshot.failures, snapshot.slow),
            (calls, failures, slow),
            "window after step {} ({:?})",
            step,
            op
        );
    }
    if let MState::HalfOpen { in_flight, .. } = &model.state {
        // A probe running for the break has given up its slot, whether or not a new probe
        // has taken it yet.
        let give_up = model.s.break_ms * MS;
        let holding = in_flight
            .iter()
            .filter(|(_, at)| now - at < give_up)
            .count();
        prop_assert_eq!(
            snapshot.probes_in_flight,
            holding as u32,
            "probes after step {} ({:?})",
            step,
            op
        );
    }
    Ok(())
}

fn run(settings: Settings, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async move {
        let breaker = Breaker::new(settings.config());
        let mut model = Model::new(settings);
        let mut held: Vec<(Permit<'_>, MPermit)> = Vec::new();
        for (step, op) in ops.into_iter().enumerate() {
            let now = clock_nanos(Instant::now());
            match op {
                Op::Admit => {
                    let real = breaker.try_acquire();
                    let (expected, permit) = model.admit(now);
                    prop_assert_eq!(admission_of(&real), expected, "admission at step {}", step);
                    if let Ok(real) = real {
                        held.push((real, permit));
                    }
                }
                Op::Succeed(i) | Op::Fail(i) | Op::Ignore(i) | Op::Cancel(i)
                    if !held.is_empty() =>
                {
                    let (real, permit) = held.swap_remove(i % held.len());
                    let verdict = match op {
                        Op::Succeed(_) => Some(Verdict::Success),
                        Op::Fail(_) => Some(Verdict::Failure),
                        Op::Ignore(_) => Some(Verdict::Ignore),
                        _ => None,
                    };
                    match verdict {
                        Some(v) => real.record(v),
                        None => drop(real),
                    }
                    model.finish(permit, verdict, now);
                }
                Op::Succeed(_) | Op::Fail(_) | Op::Ignore(_) | Op::Cancel(_) => {}
                Op::Advance(ms) => tokio::time::advance(Duration::from_millis(ms)).await,
                Op::ForceOpen => {
                    breaker.force_open();
                    model.command(MState::ForcedOpen);
                }
                Op::Disable => {
                    breaker.disable();
                    model.command(MState::Disabled);
                }
                Op::Reset => {
                    breaker.reset();
                    model.command(MState::Closed);
                }
            }
            check(&breaker, &model, step, op)?;
        }
        Ok(())
    })
}

fn settings(window: impl Strategy<Value = WindowKind>) -> impl Strategy<Value = Settings> {
    (
        window,
        prop::sample::select(vec![10_000u32, 333_333, 500_000, 660_000, 1_000_000]),
        1u32..=6,
        prop::sample::select(vec![50u64, 100, 250]),
        prop::option::of(prop::sample::select(vec![250u64, 1_000])),
        1u32..=3,
        prop::option::of(prop::sample::select(vec![20u64, 80])),
        prop::sample::select(vec![250_000u32, 500_000, 1_000_000]),
    )
        .prop_map(
            |(
                window,
                threshold_ppm,
                min_calls,
                break_ms,
                max_break_ms,
                probes,
                slow_call_ms,
                slow_threshold_ppm,
            )| {
                let min_calls = match window {
                    WindowKind::Count(n) => min_calls.min(n),
                    WindowKind::Time(_) => min_calls,
                };
                Settings {
                    threshold_ppm,
                    window,
                    min_calls,
                    break_ms,
                    max_break_ms: max_break_ms.map(|m| m.max(break_ms)),
                    probes,
                    slow_call_ms,
                    slow_threshold_ppm,
                }
            },
        )
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        6 => Just(Op::Admit),
        4 => any::<usize>().prop_map(Op::Succeed),
        4 => any::<usize>().prop_map(Op::Fail),
        1 => any::<usize>().prop_map(Op::Ignore),
        1 => any::<usize>().prop_map(Op::Cancel),
        3 => prop::sample::select(vec![1u64, 10, 30, 49, 50, 99, 100, 250, 400]).prop_map(Op::Advance),
        1 => Just(Op::ForceOpen),
        1 => Just(Op::Disable),
        1 => Just(Op::Reset),
    ];
    prop::collection::vec(op, 1..80)
}

/// 400 cases a run in CI; `PROPTEST_CASES=20000` for a deeper search.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn the_breaker_agrees_with_the_model_with_a_count_window(
        settings in settings((1u32..=6).prop_map(WindowKind::Count)),
        ops in ops(),
    ) {
        run(settings, ops)?;
    }

    #[test]
    fn the_breaker_agrees_with_the_model_with_a_time_window(
        settings in settings(prop::sample::select(vec![100u64, 1_000]).prop_map(WindowKind::Time)),
        ops in ops(),
    ) {
        run(settings, ops)?;
    }
}
