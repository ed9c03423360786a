//! The half-open probes judged together by a rate (Resilience4j's
//! `permittedNumberOfCallsInHalfOpenState`), where the default rule wants every probe to
//! succeed and opens the circuit on the first that fails.
//!
//! The probe slots in force carry the rule they judge by (`core/probes.rs`): a change of rule
//! replaces them, as a change of `probes` does, so a period is judged by the rule it began
//! with. The breaker keeps the rule as set beside its other outside seams, for its
//! configuration to tell while a change waits for the period to end.

use crate::base::clock::Reading;
use crate::base::sync::{AtomicU64, Ordering};
use crate::core::breaker::Breaker;
use crate::core::config::Rate;
use crate::core::probes::{Answered, ProbeId};
use crate::core::state::State;
use crate::core::window::{Outcome, Tally};

/// The rate rule as set, in millionths; 0 for the default rule.
#[derive(Default)]
pub(super) struct ProbeRule {
    threshold: AtomicU64,
}

impl Breaker {
    /// The rate rule as set (in force, or waiting for the half-open period to end); `None`
    /// for the default rule.
    pub(super) fn probe_threshold(&self) -> Option<Rate> {
        let ppm = self
            .outside
            .get()?
            .probe_rule
            .threshold
            .load(Ordering::Relaxed);
        // Stored from a rate's millionths, so the cast is exact.
        (ppm > 0).then(|| Rate::from_ppm(ppm as u32))
    }

    /// Sets the rule as set: at build, or by a live change under the lock.
    pub(super) fn set_probe_threshold(&self, threshold: Option<Rate>) {
        if threshold.is_none() && self.outside.get().is_none() {
            return;
        }
        let ppm = threshold.map_or(0, |rate| u64::from(rate.ppm()));
        self.outside()
            .probe_rule
            .threshold
            .store(ppm, Ordering::Relaxed);
    }

    /// Counts a probe's answer under the rate rule, and ends the period once every probe of
    /// it has answered: closed if their failure rate is below the threshold and their
    /// slow-call rate below `slow_threshold` (with `slow_call` on), open again otherwise.
    pub(super) fn answer_probe(
        &self,
        generation: u32,
        id: ProbeId,
        outcome: Outcome,
        ended: Option<Reading>,
    ) {
        let probes = self.probes();
        let Answered::All(tally) = probes.answer(generation, id, outcome) else {
            return;
        };
        let to = match probes.threshold() {
            Some(threshold) if self.probes_fail(threshold, tally) => State::Open,
            _ => State::Closed,
        };
        self.end_half_open(generation, to, ended);
    }

    fn probes_fail(&self, threshold: Rate, tally: Tally) -> bool {
        let config = self.config();
        threshold.reached_by(tally.failures, tally.calls)
            || (config.slow_call().is_some()
                && config.slow_threshold().reached_by(tally.slow, tally.calls))
    }
}
