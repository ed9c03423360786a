//! The options `suggest` moves, each a ladder of values from one end to the other, and a point
//! of the search: one rung of every ladder (written out by `spelling.rs`).
//!
//! | knob | its ladder |
//! |---|---|
//! | `threshold` | 10% to 100% in ten rungs |
//! | `window` | 5 to 200 calls, then 1 s to 2 min |
//! | `min_calls` | the default (the count window's size, or 10), 3 to 100 |
//! | `timeout` | round durations from the trace's median answer to its longest call, and off |
//! | `slow_call` | off, and round durations from the trace's 75th percentile answer to its longest |
//! | `slow_threshold` | 50%, 80%, 100% |
//! | `break_duration` | 1 s to 2 min |
//! | `max_break_duration` | none (no growth), 30 s to 10 min |
//! | `probes` | 1 to 10 |
//!
//! Every ladder holds the current options' own value too, in its place, so the current
//! options are a point of the search.

use std::time::Duration;

use breaker_options::{Rate, Settings, TIME_WINDOW_MIN_CALLS, Window};
use breaker_runtime::trace::Entry;

use crate::outage::answered;
use serde::Serialize;

/// An option `suggest` moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Knob {
    /// `threshold`.
    Threshold,
    /// `window`: its kind and its size.
    Window,
    /// `min_calls`.
    MinCalls,
    /// `timeout_ms`.
    Timeout,
    /// `slow_call`.
    SlowCall,
    /// `slow_threshold`.
    SlowThreshold,
    /// `break_duration`.
    BreakDuration,
    /// `max_break_duration`.
    MaxBreakDuration,
    /// `probes`.
    Probes,
}

/// How many knobs there are.
pub const KNOBS: usize = 9;

impl Knob {
    /// Every knob, in the order options are spelled.
    pub const ALL: [Knob; KNOBS] = [
        Knob::Threshold,
        Knob::Window,
        Knob::MinCalls,
        Knob::Timeout,
        Knob::SlowCall,
        Knob::SlowThreshold,
        Knob::BreakDuration,
        Knob::MaxBreakDuration,
        Knob::Probes,
    ];

    /// The option's name in the attribute.
    pub fn name(self) -> &'static str {
        match self {
            Knob::Threshold => "threshold",
            Knob::Window => "window",
            Knob::MinCalls => "min_calls",
            Knob::Timeout => "timeout",
            Knob::SlowCall => "slow_call",
            Knob::SlowThreshold => "slow_threshold",
            Knob::BreakDuration => "break_duration",
            Knob::MaxBreakDuration => "max_break_duration",
            Knob::Probes => "probes",
        }
    }

    /// The knob an option's name (or its other spelling, `timeout_ms`) names.
    pub fn named(name: &str) -> Option<Knob> {
        let name = name.trim();
        if name == "timeout_ms" {
            return Some(Knob::Timeout);
        }
        Knob::ALL.into_iter().find(|knob| knob.name() == name)
    }

    pub(super) fn index(self) -> usize {
        self as usize
    }
}

/// One rung of a ladder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Value {
    Rate(Rate),
    Window(Window),
    /// A count, or `None` for the option left to its default.
    Count(Option<u32>),
    /// A duration, or `None` for off (or, for `max_break_duration`, none).
    Duration(Option<Duration>),
}

impl Value {
    /// Where it stands on its ladder: ladders run from the smallest to the largest, a count
    /// window before any time window, and the default or off where it acts.
    fn order(&self) -> (u8, u128) {
        match *self {
            Value::Rate(rate) => (0, (rate.percent() * 1_000.0) as u128),
            Value::Window(Window::Count(n)) => (0, u128::from(n)),
            Value::Window(Window::Time(d)) => (1, d.as_nanos()),
            Value::Count(None) => (0, 0),
            Value::Count(Some(n)) => (1, u128::from(n)),
            Value::Duration(Some(d)) => (0, d.as_nanos()),
            // Off acts as the longest: no timeout, no slow call, no growth.
            Value::Duration(None) => (1, 0),
        }
    }
}

/// Every knob's ladder, for one trace and one current configuration.
#[derive(Debug, Clone)]
pub struct Ladders {
    rungs: [Vec<Value>; KNOBS],
    current: Point,
}

/// A point of the search: a rung of every ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Point(pub [usize; KNOBS]);

impl Ladders {
    /// The ladders for `trace`, each holding `current`'s value.
    pub fn new(trace: &[Entry], current: &Settings) -> Ladders {
        let mut answered: Vec<u64> = trace
            .iter()
            .filter(|e| answered(e.outcome))
            .map(|e| e.duration_ms)
            .collect();
        answered.sort_unstable();
        let longest = trace.iter().map(|e| e.duration_ms).max().unwrap_or(0);
        let percentile = |p: f64| -> u64 {
            let last = answered.len().saturating_sub(1);
            answered
                .get((last as f64 * p) as usize)
                .copied()
                .unwrap_or(0)
        };

        let percent = |p: &[u32]| -> Vec<Value> {
            p.iter()
                .filter_map(|&p| Rate::from_percent(f64::from(p)))
                .map(Value::Rate)
                .collect()
        };
        let seconds = |s: &[u64]| -> Vec<Value> {
            s.iter()
                .map(|&s| Value::Duration(Some(Duration::from_secs(s))))
                .collect()
        };
        let mut timeouts = round_durations(percentile(0.5), longest);
        timeouts.push(Value::Duration(None));
        let mut slow_calls = vec![Value::Duration(None)];
        slow_calls.extend(round_durations(
            percentile(0.75),
            answered.last().copied().unwrap_or(0),
        ));
        let mut max_breaks = vec![Value::Duration(None)];
        max_breaks.extend(seconds(&[30, 60, 120, 300, 600]));

        let mut rungs: [Vec<Value>; KNOBS] = [
            percent(&[10, 20, 25, 30, 40, 50, 60, 75, 90, 100]),
            [5, 10, 20, 50, 100, 200]
                .into_iter()
                .map(|n| Value::Window(Window::Count(n)))
                .chain(
                    [1, 2, 5, 10, 30, 60, 120]
                        .into_iter()
                        .map(|s| Value::Window(Window::Time(Duration::from_secs(s)))),
                )
                .collect(),
            std::iter::once(Value::Count(None))
                .chain([3, 5, 10, 20, 50, 100].map(|n| Value::Count(Some(n))))
                .collect(),
            timeouts,
            slow_calls,
            percent(&[50, 80, 100]),
            seconds(&[1, 2, 5, 10, 20, 30, 60, 120]),
            max_breaks,
            [1, 2, 3, 5, 10]
                .into_iter()
                .map(|n| Value::Count(Some(n)))
                .collect(),
        ];
        let mut current_point = [0; KNOBS];
        for knob in Knob::ALL {
            let ladder = &mut rungs[knob.index()];
            let value = value_of(knob, current);
            let at = match ladder.iter().position(|v| *v == value) {
                Some(at) => at,
                None => {
                    let at = ladder.partition_point(|v| v.order() < value.order());
                    ladder.insert(at, value);
                    at
                }
            };
            current_point[knob.index()] = at;
        }
        Ladders {
            rungs,
            current: Point(current_point),
        }
    }

    /// The current options' point.
    pub fn current(&self) -> Point {
        self.current
    }

    /// How many rungs `knob`'s ladder has.
    pub fn len(&self, knob: Knob) -> usize {
        self.rungs[knob.index()].len()
    }

    /// The value of `knob` at `point`.
    pub(super) fn value(&self, point: Point, knob: Knob) -> Value {
        self.rungs[knob.index()][point.0[knob.index()]]
    }

    /// `point` with `knob` moved by `steps` rungs, if the ladder reaches that far.
    pub fn moved(&self, point: Point, knob: Knob, steps: isize) -> Option<Point> {
        let at = point.0[knob.index()].checked_add_signed(steps)?;
        (at < self.len(knob)).then(|| {
            let mut moved = point;
            moved.0[knob.index()] = at;
            moved
        })
    }
}

/// `knob`'s value in `settings`.
pub(super) fn value_of(knob: Knob, settings: &Settings) -> Value {
    match knob {
        Knob::Threshold => Value::Rate(settings.threshold),
        Knob::Window => Value::Window(settings.window),
        Knob::MinCalls => Value::Count(
            settings
                .min_calls
                .filter(|&n| Some(n) != default_min_calls(Value::Window(settings.window))),
        ),
        Knob::Timeout => Value::Duration(settings.timeout),
        Knob::SlowCall => Value::Duration(settings.slow_call),
        Knob::SlowThreshold => {
            Value::Rate(settings.slow_threshold.unwrap_or(Rate::from_ppm(1_000_000)))
        }
        Knob::BreakDuration => Value::Duration(Some(settings.break_duration)),
        Knob::MaxBreakDuration => Value::Duration(settings.max_break_duration),
        Knob::Probes => Value::Count(Some(settings.probes)),
    }
}

/// The `min_calls` a window has when none is written.
pub(super) fn default_min_calls(window: Value) -> Option<u32> {
    match window {
        Value::Window(Window::Count(size)) => Some(size),
        Value::Window(Window::Time(_)) => Some(TIME_WINDOW_MIN_CALLS),
        _ => None,
    }
}

/// Round durations from `from_ms` to the first at or above `to_ms`.
fn round_durations(from_ms: u64, to_ms: u64) -> Vec<Value> {
    const ROUND_MS: [u64; 18] = [
        10, 20, 50, 100, 200, 300, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 10_000, 20_000,
        30_000, 60_000, 120_000,
    ];
    let mut rungs: Vec<Value> = ROUND_MS
        .iter()
        .copied()
        .skip_while(|&ms| ms < from_ms)
        .take_while(|&ms| ms < to_ms)
        .map(|ms| Value::Duration(Some(Duration::from_millis(ms))))
        .collect();
    if let Some(&ms) = ROUND_MS.iter().find(|&&ms| ms >= to_ms.max(from_ms)) {
        rungs.push(Value::Duration(Some(Duration::from_millis(ms))));
    }
    rungs
}

/// A call of a trace the ladders' tests lay out: admitted at 0, taking `duration_ms`.
#[cfg(test)]
pub(super) fn call(duration_ms: u64, outcome: breaker_runtime::trace::Outcome) -> Entry {
    Entry {
        at_ms: 0,
        duration_ms,
        outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use breaker_runtime::trace::Outcome;

    #[test]
    fn timeouts_run_from_the_median_answer_to_the_longest_call_then_off() {
        let mut trace: Vec<Entry> = (1..=100).map(|i| call(i * 10, Outcome::Success)).collect();
        trace.push(call(2_500, Outcome::Timeout));
        let ladders = Ladders::new(&trace, &Settings::DEFAULT);
        let spelled: Vec<String> = (0..ladders.len(Knob::Timeout))
            .map(|at| {
                let mut point = ladders.current();
                point.0[Knob::Timeout.index()] = at;
                ladders.spell(point, &Settings::DEFAULT)
            })
            .collect();
        assert_eq!(
            spelled,
            [
                "timeout_ms = 500",
                "timeout_ms = 750",
                "timeout_ms = 1000",
                "timeout_ms = 1500",
                "timeout_ms = 2000",
                "timeout_ms = 3000",
                "",
                "timeout = \"off\""
            ],
            "the default 10 s in its place"
        );
    }
}
