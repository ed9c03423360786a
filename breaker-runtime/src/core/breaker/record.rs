//! Recording: how an admitted call ended, into the window or the probe run.

use std::time::Duration;

use crate::base::clock::{self, Nanos, Reading};
use crate::core::breaker::Breaker;
use crate::core::breaker::durations::Durations;
use crate::core::breaker::kind::Kind;
use crate::core::breaker::observer::{self, CallEvent, Ending};
use crate::core::breaker::transition::Change;
use crate::core::injection::Fault;
use crate::core::probes::ProbeId;
use crate::core::state::State;
use crate::core::window::{Moved, Outcome, Tally};

impl Breaker {
    /// Records how a call admitted as `kind` ended. Ignored and cancelled calls record nothing,
    /// and free their probe slot if they held one.
    #[inline]
    pub(crate) fn finish(&self, kind: Kind, started: Option<Nanos>, ending: Ending) {
        // The hot path, kept small enough to inline into the caller: a success through the
        // closed circuit into a count window already full of successes changes nothing. (No
        // start time means no slow-call detection and no observer when the call was admitted.)
        // The window built with the breaker, without asking the state word whether a
        // reconfiguration replaced it: a replaced window is sealed, and a sealed window is
        // never full of successes, so the call takes the path below to the window in force.
        if let (Kind::Closed { generation }, Ending::Success, None) = (kind, ending, started) {
            if self.window.is_full_of_successes(generation) && !observer::installed() {
                return;
            }
        }
        // The same success timed only for the flight recorder: dated and kept, and no more.
        if let (Kind::Closed { generation }, Ending::Success, Some(started)) =
            (kind, ending, started)
        {
            if self.flown_success(generation, started) {
                return;
            }
        }
        // The same success on a counted breaker adds one to its thread's count and no more.
        if let (Kind::Counted { generation }, Ending::Success, None) = (kind, ending, started) {
            if self.window.is_full_of_successes(generation) && !observer::installed() {
                self.count(Outcome::Success);
                return;
            }
        }
        self.finish_and_record(kind, started, ending);
    }

    /// A success through the closed circuit into a count window already full of successes,
    /// timed for the flight recorder alone: kept there, and nothing else to do. Out of line,
    /// so that `finish` stays small enough to inline.
    #[inline(never)]
    fn flown_success(&self, generation: u32, started: Nanos) -> bool {
        if !self.window.is_full_of_successes(generation)
            || observer::installed()
            || self.config.slow_call_nanos() > 0
        {
            return false;
        }
        let Some(flight) = self.flight() else {
            return false;
        };
        let took = clock::reading(flight.coarse()).saturating_sub(started);
        flight.add(started, took, crate::core::trace::Outcome::Success);
        true
    }

    #[inline(never)]
    fn finish_and_record(&self, kind: Kind, started: Option<Nanos>, ending: Ending) {
        let (kind, delayed) = kind.undelayed();
        // One reading of the clock serves the slow-call rule, the observers, the durations and
        // the flight recorder, on the clock the start was read on. A call timed for the recorder
        // alone leaves the window's durations (an operator's figure, kept while something asks
        // for timing) as they were.
        let precise = self.config.slow_call_nanos() > 0 || observer::installed();
        let timed = started.map(|started| {
            let ended = if precise {
                Reading {
                    at: clock::now(),
                    coarse: false,
                }
            } else {
                self.flight_end_clock()
            };
            (ended, ended.at.saturating_sub(started))
        });
        let took = timed.map(|(_, took)| took);
        let outcome = match ending {
            Ending::Success => Some(self.slow_or(Outcome::Success, took)),
            Ending::Slow => Some(Outcome::Slow),
            Ending::Failure | Ending::Timeout | Ending::Panic => Some(Outcome::Failure),
            Ending::Ignored | Ending::Cancelled => None,
        };
        if observer::installed() {
            self.observe_finish(delayed, ending, outcome, took);
        }
        if let (Some(started), Some(took)) = (started, took) {
            self.record_flight(started, took, ending, outcome);
        }
        match kind {
            Kind::Closed { generation } | Kind::Counted { generation } => {
                if let Some(outcome) = outcome {
                    if let Some((ended, took)) = timed.filter(|_| precise) {
                        let ended = ended.at;
                        self.keep_duration(generation, ended, took);
                    }
                    if matches!(kind, Kind::Counted { .. }) {
                        self.count(outcome);
                    }
                    self.record_closed(generation, outcome);
                }
            }
            Kind::Probe { generation, id } => {
                let ended = timed.map(|(ended, _)| ended);
                self.finish_probe(generation, id, outcome, ended);
            }
            // (A delayed call was taken apart above, into the kind it was admitted as.)
            Kind::Unrecorded
            | Kind::Done
            | Kind::DelayedClosed { .. }
            | Kind::DelayedCounted { .. }
            | Kind::DelayedProbe { .. } => {}
        }
    }

    #[cold]
    #[inline(never)]
    fn observe_finish(
        &self,
        delayed: bool,
        ending: Ending,
        outcome: Option<Outcome>,
        took: Option<Nanos>,
    ) {
        // A call an injected delay held: the failure that may follow a delay is announced
        // where it replaces the call (`call/injected.rs`), which takes the mark off first.
        if delayed {
            observer::notify(
                self,
                CallEvent::Injected {
                    fault: Fault::Delay,
                },
            );
        }
        let ending = if outcome == Some(Outcome::Slow) {
            Ending::Slow
        } else {
            ending
        };
        let elapsed = took.map(Duration::from_nanos);
        observer::notify(self, CallEvent::Finished { ending, elapsed });
    }

    /// Keeps a timed closed call's duration for the window's summary, unless the call belongs
    /// to a closed period that has ended.
    #[inline(never)]
    fn keep_duration(&self, generation: u32, ended: Nanos, took: Nanos) {
        if generation != self.generation() {
            return;
        }
        self.outside()
            .durations
            .get_or_init(|| Box::new(Durations::new(self.config.window(), ended)))
            .record(ended, took);
    }

    #[inline]
    fn slow_or(&self, outcome: Outcome, took: Option<Nanos>) -> Outcome {
        let limit = self.config.slow_call_nanos();
        match took {
            Some(took) if limit > 0 && took > limit => Outcome::Slow,
            _ => outcome,
        }
    }

    // Always: the count window's path through `finish_and_record` is measured with it inlined.
    #[inline(always)]
    fn record_closed(&self, generation: u32, outcome: Outcome) {
        // The breaker's own window first, as on the hot path: replaced, it is sealed, and the
        // outcome goes on to the window in force.
        let tally = match self
            .window
            .record(generation, outcome, || self.generation())
        {
            Ok(tally) => tally,
            Err(Moved) => self.record_moved(generation, outcome),
        };
        if let Some(tally) = tally.filter(|t| self.should_open(*t)) {
            self.trip(generation, tally);
        }
    }

    /// Records an outcome that found the breaker's own window sealed, in the window in force.
    /// Should that one be sealed too, a reconfiguration is replacing it and holds the lock until
    /// its successor is in place: the outcome waits for that lock (for a copy of at most a
    /// window's outcomes) rather than spinning, and tries again.
    #[inline(never)]
    fn record_moved(&self, generation: u32, outcome: Outcome) -> Option<Tally> {
        loop {
            match self
                .window()
                .record(generation, outcome, || self.generation())
            {
                Ok(tally) => return tally,
                Err(Moved) => drop(self.cold()),
            }
        }
    }

    fn should_open(&self, t: Tally) -> bool {
        self.trips(t.calls, t.failures, t.slow)
    }

    #[cold]
    fn trip(&self, generation: u32, tally: Tally) {
        let event = {
            let mut cold = self.cold();
            let seen = self.word();
            if !seen.is(generation, State::Closed) {
                return;
            }
            let now = clock::now();
            if self.warming_up(now) {
                // The outcomes stay in the window, and the next one is judged whatever it does
                // to the counts (a failure pushing a failure out changes none): the first
                // judgement after the warm-up sees them.
                self.window().rules_changed();
                return;
            }
            self.transition(&mut cold, seen, State::Open, Change::local(tally, now))
        };
        if let Some(event) = event {
            self.emit(event);
        }
    }

    /// Counts a probe's outcome; `ended` is the clock reading that ended the call, if one was
    /// read, for the transition it may make to reuse.
    fn finish_probe(
        &self,
        generation: u32,
        id: ProbeId,
        outcome: Option<Outcome>,
        ended: Option<Reading>,
    ) {
        // An outcome that ends the period leaves its slot as it is: the next half-open period
        // counts every slot of this one as free.
        match outcome {
            None => self.give_back(generation, id),
            Some(outcome) if id.judged_by_rate() => {
                self.answer_probe(generation, id, outcome, ended);
            }
            Some(Outcome::Success) => {
                if self.probes().succeeded(generation) == Some(true) {
                    self.end_half_open(generation, State::Closed, ended);
                } else {
                    self.give_back(generation, id);
                }
            }
            // A slow probe only exists when slow calls are detected, and then it fails.
            Some(Outcome::Failure | Outcome::Slow) => {
                self.end_half_open(generation, State::Open, ended);
            }
        }
    }

    /// Frees a probe's slot for the next probe, and wakes whoever waits for one.
    fn give_back(&self, generation: u32, id: ProbeId) {
        self.probes().release(generation, id);
        self.wake_after_swap();
    }

    /// Closes the circuit after its run of successful probes, or opens it again after a failed
    /// one (or after the rate rule's verdict), if the half-open period of `generation` is still
    /// on.
    ///
    /// The transition is dated by `ended`, the reading that ended the probe, when it was read
    /// on the clock the transition needs: one clock read, not two.
    #[cold]
    pub(super) fn end_half_open(&self, generation: u32, to: State, ended: Option<Reading>) {
        let event = {
            let mut cold = self.cold();
            let seen = self.word();
            if !seen.is(generation, State::HalfOpen) {
                return;
            }
            // The next break is timed from here, on the precise clock. (The transition counts
            // the failed probe, so the break grows.) A close is dated by the probes' clock.
            let coarse = to != State::Open && seen.coarse_clock();
            let now = match ended {
                Some(ended) if ended.coarse == coarse => ended.at,
                _ => clock::reading(coarse),
            };
            self.transition(&mut cold, seen, to, Change::local(Tally::EMPTY, now))
        };
        if let Some(event) = event {
            self.emit(event);
        }
    }
}
