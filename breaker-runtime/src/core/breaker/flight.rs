//! The flight recorder's seams: allocated by a breaker's first call, fed by its calls, its
//! rejections and its transitions, switched by `record`, and read back as a trace.

use std::time::Duration;

use crate::base::clock::{self, Nanos, Reading};
use crate::base::sync::Ordering;
use crate::core::breaker::Breaker;
use crate::core::breaker::observer::Ending;
use crate::core::config::Record;
use crate::core::state::{State, Word};
use crate::core::trace::flight::Flight;
use crate::core::trace::{self, Entry, Outcome, Recent, StateChange};
use crate::core::window::Outcome as Judged;

const MILLI: Nanos = 1_000_000;

/// The marks of a state word whose recorder keeps calls, by its clock.
fn marks(flight: &Flight) -> u64 {
    if flight.coarse() {
        Word::FLIGHT_BIT | Word::FLIGHT_COARSE_BIT
    } else {
        Word::FLIGHT_BIT
    }
}

impl Breaker {
    /// The calls of the last `last` (at most the span `record` keeps, and at most the last
    /// 20 000 calls), and the breaker's transitions over them, from its flight recorder: what
    /// happened before anyone thought to start a trace. Empty when `record = "off"` from the
    /// start, or before the breaker's first call.
    ///
    /// The calls are dated as a started trace's are ([`trace`](crate::trace)), in
    /// milliseconds from the start of the time window's bucket the first of them fell in (or
    /// from the first of them, with a count window), so `breaker-replay` buckets them as the
    /// breaker did. A call is recorded when it ends, and handed out in the order calls were
    /// admitted; a call still running is not in it yet.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::trace::Outcome;
    /// use breaker_runtime::{Breaker, Config, State};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let breaker = Breaker::new(Config::builder().name("stock").count_window(2).build().unwrap());
    /// for _ in 0..3 {
    ///     let _ = breaker.call(async { Err::<(), _>(std::io::Error::other("down")) }).await;
    ///     tokio::time::sleep(Duration::from_millis(10)).await;
    /// }
    /// let recent = breaker.recent(Duration::from_secs(60));
    /// let outcomes: Vec<Outcome> = recent.calls.iter().map(|e| e.outcome).collect();
    /// assert_eq!(outcomes, [Outcome::Failure, Outcome::Failure, Outcome::Rejected]);
    /// assert_eq!(recent.calls[2].at_ms, 20);
    /// assert_eq!((recent.changes[0].at_ms, recent.changes[0].to), (10, State::Open));
    /// # }
    /// ```
    pub fn recent(&self, last: Duration) -> Recent {
        let Some(flight) = self.flight() else {
            return Recent::default();
        };
        let span = match self.config.record() {
            Record::Last(span) => last.min(span),
            Record::Off => last,
        };
        let now = clock::reading(flight.coarse());
        let since = now.saturating_sub(clock::duration_nanos(span));
        let calls = flight.calls(since);
        let changes = flight.transitions(since);
        let first = calls
            .first()
            .map(|(at, _)| *at)
            .into_iter()
            .chain(changes.first().map(|m| m.at))
            .min();
        let Some(first) = first else {
            return Recent::default();
        };
        let origin = trace::began(self.config.window(), self.config.window_kind(), first);
        Recent {
            calls: calls
                .into_iter()
                .map(|(at, entry)| Entry {
                    at_ms: at.saturating_sub(origin) / MILLI,
                    ..entry
                })
                .collect(),
            changes: changes
                .into_iter()
                .map(|moved| StateChange {
                    at_ms: moved.at.saturating_sub(origin) / MILLI,
                    from: moved.from,
                    to: moved.to,
                })
                .collect(),
        }
    }

    /// The recorder, once allocated (it may be off since).
    #[inline]
    pub(super) fn flight(&self) -> Option<&Flight> {
        self.outside.get()?.flight.get().map(|f| &**f)
    }

    /// The recorder, while it keeps calls.
    fn flight_on(&self) -> Option<&Flight> {
        self.flight().filter(|_| self.word().flight())
    }

    /// Allocates the recorder, on the first call that finds it wanted, and marks the word so
    /// that calls feed it. Its clock is chosen here, once: the coarse one where tokio's runs
    /// and cannot be paused, tokio's otherwise (so a paused test dates every call exactly).
    #[cold]
    #[inline(never)]
    pub(super) fn begin_flight(&self) {
        let _cold = self.cold();
        if !self.word().flight_pending() {
            return;
        }
        let coarse = clock::anchor_coarse();
        let flight = self.outside().flight.get_or_init(|| {
            let epoch = trace::began(
                self.config.window(),
                self.config.window_kind(),
                clock::reading(coarse),
            );
            Box::new(Flight::new(epoch, coarse))
        });
        // Under the lock, as every mark is; the open circuit's lock-free swap retries.
        self.state.fetch_or(marks(flight), Ordering::Release);
        self.state
            .fetch_and(!Word::FLIGHT_PENDING_BIT, Ordering::Release);
    }

    /// Switches the recorder as `record` says. The caller holds the lock.
    pub(super) fn apply_record(&self, record: Record) {
        match record {
            Record::Off => {
                self.state.fetch_and(
                    !(Word::FLIGHT_BITS | Word::FLIGHT_PENDING_BIT),
                    Ordering::Release,
                );
            }
            Record::Last(_) => match self.flight() {
                Some(flight) => {
                    self.state.fetch_or(marks(flight), Ordering::Release);
                }
                None => {
                    self.state
                        .fetch_or(Word::FLIGHT_PENDING_BIT, Ordering::Release);
                }
            },
        }
    }

    /// Records a call turned away.
    #[cold]
    #[inline(never)]
    pub(super) fn record_rejection(&self, word: Word) {
        let word = if word.flight_pending() {
            self.begin_flight();
            self.word()
        } else {
            word
        };
        if word.flight() {
            if let Some(flight) = self.flight() {
                flight.add(clock::reading(flight.coarse()), 0, Outcome::Rejected);
            }
        }
    }

    /// Records how a timed call ended, `took` after `started`; `judged` is what the window was
    /// told (`None` for nothing).
    #[inline(never)]
    pub(super) fn record_flight(
        &self,
        started: Nanos,
        took: Nanos,
        ending: Ending,
        judged: Option<Judged>,
    ) {
        let Some(flight) = self.flight_on() else {
            return;
        };
        let outcome = match ending {
            Ending::Success if judged == Some(Judged::Slow) => Outcome::Slow,
            Ending::Success => Outcome::Success,
            Ending::Slow => Outcome::Slow,
            Ending::Failure | Ending::Panic => Outcome::Failure,
            Ending::Timeout => Outcome::Timeout,
            Ending::Ignored => Outcome::Ignored,
            // Says nothing of the dependency: a replay would invent its end.
            Ending::Cancelled => return,
        };
        flight.add(started, took, outcome);
    }

    /// Keeps a transition, if the recorder runs.
    pub(super) fn record_transition(&self, at: Nanos, from: State, to: State) {
        if let Some(flight) = self.flight_on() {
            flight.transition(at, from, to);
        }
    }

    /// The reading that ends a call [`start_clock_for`](Self::start_clock_for) timed for the
    /// recorder alone: on the recorder's clock, as its start was, and which clock that is.
    #[inline]
    pub(super) fn flight_end_clock(&self) -> Reading {
        let coarse = self.flight().is_some_and(Flight::coarse);
        Reading {
            at: clock::reading(coarse),
            coarse,
        }
    }

    /// Bytes on the heap behind the recorder.
    pub(super) fn flight_bytes(&self) -> usize {
        self.flight()
            .map_or(0, |f| size_of::<Flight>() + f.heap_bytes())
    }
}
