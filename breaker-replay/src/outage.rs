//! Outages, found in the trace alone (never in what a candidate did), so that every candidate is
//! judged against the same ones.
//!
//! The rule: cut the trace into whole seconds by admission time (`at_ms / 1000`). A second is
//! *failing* when at least half of its calls with a known outcome failed (`failure` or
//! `timeout`, against `success`, `healthy` and `slow`; `ignored` and `rejected` calls are not
//! known outcomes). An outage is a run of failing seconds, with no second between them whose
//! known calls mostly answered (seconds without a known outcome neither break nor extend a
//! run), holding at least [`MIN_FAILURES`] failures. It starts at its first failure and ends
//! at the end of its last failing second.

use breaker_runtime::trace::{Entry, Outcome};
use serde::Serialize;

/// The width of the buckets the rule judges, in milliseconds.
pub const SECOND_MS: u64 = 1_000;

/// The fewest failures a run of failing seconds needs to be an outage: fewer is noise.
pub const MIN_FAILURES: u64 = 5;

/// A run of failures in the trace: see the [module](self) for the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Outage {
    /// When its first failure was admitted, in milliseconds since the trace's start.
    pub start_ms: u64,
    /// The end of its last failing second.
    pub end_ms: u64,
    /// Its failures.
    pub failures: u64,
    /// Its calls with a known outcome.
    pub calls: u64,
}

/// One second of the trace with at least one known outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Second {
    /// Which second, counting from 0.
    pub index: u64,
    /// Calls admitted in it with a known outcome.
    pub known: u64,
    /// Of those, the failures.
    pub failures: u64,
    /// When its first failure was admitted, if it has one.
    pub first_failure_ms: Option<u64>,
}

impl Second {
    /// Whether at least half of its known calls failed.
    pub fn is_failing(&self) -> bool {
        self.failures > 0 && self.failures * 2 >= self.known
    }

    /// Its failure rate, in percent.
    pub fn failure_rate(&self) -> f64 {
        100.0 * self.failures as f64 / self.known.max(1) as f64
    }
}

/// Whether the dependency answered the call (`success`, `healthy` or `slow`): a healthy call.
pub(crate) fn answered(outcome: Outcome) -> bool {
    matches!(outcome, Outcome::Success | Outcome::Healthy | Outcome::Slow)
}

/// The trace's seconds that hold a known outcome, in order.
pub fn seconds(trace: &[Entry]) -> Vec<Second> {
    let mut seconds: Vec<Second> = Vec::new();
    for entry in trace {
        let failed = match entry.outcome {
            Outcome::Failure | Outcome::Timeout => true,
            Outcome::Success | Outcome::Healthy | Outcome::Slow => false,
            _ => continue,
        };
        let index = entry.at_ms / SECOND_MS;
        let second = match seconds.last_mut() {
            Some(last) if last.index == index => last,
            _ => {
                seconds.push(Second {
                    index,
                    known: 0,
                    failures: 0,
                    first_failure_ms: None,
                });
                let last = seconds.len() - 1;
                &mut seconds[last]
            }
        };
        second.known += 1;
        if failed {
            second.failures += 1;
            second.first_failure_ms.get_or_insert(entry.at_ms);
        }
    }
    seconds
}

/// The trace's outages, in order.
///
/// ```
/// use breaker_runtime::trace::{Entry, Outcome};
///
/// let call = |at_ms, outcome| Entry { at_ms, duration_ms: 10, outcome };
/// let mut trace: Vec<Entry> = (0..10).map(|i| call(i * 100, Outcome::Success)).collect();
/// trace.extend((0..6).map(|i| call(1_200 + i * 100, Outcome::Failure)));
/// trace.push(call(2_500, Outcome::Success));
/// let outages = breaker_replay::outages(&trace);
/// assert_eq!(outages.len(), 1);
/// assert_eq!((outages[0].start_ms, outages[0].end_ms, outages[0].failures), (1_200, 2_000, 6));
/// ```
pub fn outages(trace: &[Entry]) -> Vec<Outage> {
    let mut outages = Vec::new();
    let mut current: Option<Outage> = None;
    for second in seconds(trace) {
        if second.is_failing() {
            let end_ms = (second.index + 1).saturating_mul(SECOND_MS);
            let outage = current.get_or_insert(Outage {
                start_ms: second.first_failure_ms.unwrap_or(second.index * SECOND_MS),
                end_ms,
                failures: 0,
                calls: 0,
            });
            outage.end_ms = end_ms;
            outage.failures += second.failures;
            outage.calls += second.known;
        } else if let Some(outage) = current.take() {
            outages.extend(Some(outage).filter(|o| o.failures >= MIN_FAILURES));
        }
    }
    outages.extend(current.filter(|o| o.failures >= MIN_FAILURES));
    outages
}
