//! Admission: a permit for the call, or the rejection to answer with.

use std::sync::Arc;
use std::time::Duration;

use crate::base::clock::{self, Nanos, Reading};
use crate::base::sync::Ordering;
use crate::core::breaker::Breaker;
use crate::core::breaker::kind::Kind;
use crate::core::breaker::observer::{self, CallEvent};
use crate::core::breaker::permit::{OwnedPermit, Permit};
use crate::core::breaker::transition::Change;
use crate::core::state::{State, Word};
use crate::core::window::Tally;
use crate::outcome::error::{BreakerError, ProbeTime};

impl Breaker {
    /// Asks to make a call: a [`Permit`] to run it, or the rejection to answer with instead.
    ///
    /// The permit must be given the call's outcome ([`Permit::record`]); a permit dropped
    /// without one counts as a cancelled call and records nothing.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, Verdict};
    ///
    /// let breaker = Breaker::new(Config::default());
    /// let permit = breaker.try_acquire().expect("a new breaker is closed");
    /// permit.record(Verdict::Success);
    /// assert_eq!(breaker.snapshot().calls, 1);
    /// ```
    #[inline]
    pub fn try_acquire(&self) -> Result<Permit<'_>, BreakerError> {
        match self.admit_closed() {
            Some(permit) => Ok(permit),
            None => self.admit_otherwise(),
        }
    }

    /// [`try_acquire`](Self::try_acquire) for a breaker behind an `Arc`: the permit holds the
    /// breaker, so it can live in a `'static` future (a tower service's response future, a
    /// spawned task). Cancel-safe like the borrowed one: dropped without an outcome, it records
    /// nothing and frees the probe slot it held.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breaker_runtime::{Breaker, Config, State};
    ///
    /// let breaker = Arc::new(Breaker::new(Config::builder().count_window(1).build().unwrap()));
    /// let permit = breaker.try_acquire_owned().unwrap();
    /// std::thread::spawn(move || permit.failure()).join().unwrap();
    /// assert_eq!(breaker.state(), State::Open);
    /// assert!(breaker.try_acquire_owned().unwrap_err().is_rejection());
    /// ```
    #[inline]
    pub fn try_acquire_owned(self: &Arc<Self>) -> Result<OwnedPermit, BreakerError> {
        Breaker::admit_owned(Arc::clone(self))
    }

    /// [`try_acquire_owned`](Self::try_acquire_owned) for a caller that holds its own `Arc`
    /// already: a rejection drops it, an admission moves it into the permit.
    #[inline]
    pub(crate) fn admit_owned(breaker: Arc<Breaker>) -> Result<OwnedPermit, BreakerError> {
        let (kind, started) = breaker.try_acquire()?.into_parts();
        Ok(OwnedPermit::from_parts(breaker, kind, started))
    }

    /// Admission through the closed circuit, or `None` in any other state (and while faults
    /// are injected, whose draw is on the long way): one load of the state word. Kept apart from the `Result` of [`try_acquire`](Self::try_acquire) so the
    /// permit stays in registers on the hot path instead of going through a large enum.
    #[inline]
    pub(crate) fn admit_closed(&self) -> Option<Permit<'_>> {
        let word = self.word();
        if !word.plainly_closed() {
            return None;
        }
        let kind = Kind::closed(word);
        let permit = Permit::new(self, kind, self.start_clock_for(word));
        if observer::installed() {
            self.observe_admission(true);
        }
        Some(permit)
    }

    /// Admission in every state but closed (and in closed too, if it closed meanwhile). The
    /// rejection of an open circuit far from the end of its break is answered here, inline,
    /// because an overloaded service takes that path more than any other but the closed one.
    #[inline]
    pub(crate) fn admit_otherwise(&self) -> Result<Permit<'_>, BreakerError> {
        let word = self.word();
        if let Some(until) = self.far_from_probe(word) {
            if word.shadow() {
                return Ok(self.admit_in_shadow());
            }
            self.count_rejection();
            if word.flight() {
                self.record_rejection(word);
            }
            if observer::installed() {
                self.observe_admission(false);
            }
            return Err(self.rejected_open(Some(until)));
        }
        self.admit_slow()
    }

    /// A call the breaker would have turned away, let through because it is in shadow mode:
    /// it records nothing (nothing would have been recorded), and observers hear of it.
    #[cold]
    #[inline(never)]
    pub(super) fn admit_in_shadow(&self) -> Permit<'_> {
        observer::notify(self, CallEvent::ShadowRejected);
        Permit::new(self, Kind::Unrecorded, self.start_clock())
    }

    /// The open circuit's next probe time, when the coarse clock can tell it is still well
    /// ahead; `None` when the precise clock has to decide (or the circuit is not open).
    #[inline]
    fn far_from_probe(&self, word: Word) -> Option<Nanos> {
        if !word.open_on_coarse_clock() {
            return None;
        }
        // Relaxed: the word, read with Acquire first, published the deadline written before it.
        let until = self.open_until.load(Ordering::Relaxed);
        clock::surely_before(until).then_some(until)
    }

    #[cold]
    #[inline(never)]
    fn admit_slow(&self) -> Result<Permit<'_>, BreakerError> {
        let admitted = self.try_acquire_slow(self.word());
        if admitted.is_err() {
            if self.word().shadow() {
                return Ok(self.admit_in_shadow());
            }
            // Before the observers hear of it, so a snapshot they take counts it.
            self.count_rejection();
            let word = self.word();
            if word.flight() || word.flight_pending() {
                self.record_rejection(word);
            }
        }
        if observer::installed() {
            self.observe_admission(admitted.is_ok());
        }
        admitted
    }

    #[cold]
    #[inline(never)]
    pub(super) fn observe_admission(&self, admitted: bool) {
        observer::notify(
            self,
            if admitted {
                CallEvent::Admitted
            } else {
                CallEvent::Rejected
            },
        );
    }

    pub(super) fn try_acquire_slow(&self, seen: Word) -> Result<Permit<'_>, BreakerError> {
        let mut word = seen;
        if word.flight_pending() {
            self.begin_flight();
            word = self.word();
        }
        if word.warm_pending() {
            self.begin_warm_up();
            word = self.word();
        }
        loop {
            match word.state() {
                State::Closed => {
                    let kind = Kind::closed(word);
                    return Ok(Permit::new(self, kind, self.start_clock()));
                }
                State::Disabled => {
                    return Ok(Permit::new(self, Kind::Unrecorded, self.start_clock()));
                }
                State::ForcedOpen => {
                    // A drill past its end is put back by the first call that sees it.
                    if !self.end_overdue_drill() {
                        return Err(self.rejected_open(None));
                    }
                }
                State::Open => {
                    // A deadline far ahead was already answered by the coarse clock
                    // (`admit_otherwise`); here the precise clock decides, so the probe comes
                    // at the exact instant.
                    // Relaxed, as in `far_from_probe`.
                    let until = self.open_until.load(Ordering::Relaxed);
                    let now = clock::now();
                    if now < until {
                        return Err(self.rejected_open(Some(until)));
                    }
                    if let Some(admitted) = self.probe_after_break(word, now) {
                        return admitted;
                    }
                }
                State::HalfOpen => return self.admit_probe(word),
            }
            word = self.word();
        }
    }

    /// The time a call starts, when slow calls are detected, an observer wants durations or the
    /// flight recorder keeps the call; otherwise no clock is read.
    pub(super) fn start_clock(&self) -> Option<Nanos> {
        self.start_clock_for(self.word())
    }

    /// [`start_clock`](Self::start_clock) for a breaker whose state word is `word`. Slow calls
    /// and observers are timed by tokio's clock; a call only the recorder times, by the
    /// recorder's clock (the coarse one, where tokio's runs), which its end reads again.
    #[inline]
    pub(super) fn start_clock_for(&self, word: Word) -> Option<Nanos> {
        if self.config.slow_call_nanos() > 0 || observer::installed() {
            Some(clock::now())
        } else if word.flight() {
            Some(flight_clock(word.flight_coarse()))
        } else {
            None
        }
    }

    #[inline]
    fn rejected_open(&self, until: Option<Nanos>) -> BreakerError {
        BreakerError::Open {
            breaker: self.name().clone(),
            next_probe_at: until.map(ProbeTime::from_nanos),
        }
    }

    /// The first call after the break: it moves the circuit to half-open and becomes its probe.
    /// `None` when another task moved the state first; a rejection when racing calls hold
    /// every slot of the half-open period they are about to announce (waiting for them would
    /// be a spin).
    ///
    /// No lock: the half-open period needs nothing prepared but its run of successes (begun
    /// here, and only ever forward) and its first probe's slot, both taken before the
    /// compare-and-swap announces the period, so no racing call can take that slot first. Of
    /// the calls racing here, only the one holding a slot of the new period tries the swap,
    /// and a lost swap gives the slot back.
    ///
    /// Out of line: once per break, and it keeps the announcement's code out of the rejection
    /// path around it.
    #[inline(never)]
    fn probe_after_break(
        &self,
        seen: Word,
        now: Nanos,
    ) -> Option<Result<Permit<'_>, BreakerError>> {
        let mut next = seen.next(State::HalfOpen);
        if seen.coarse_clock() {
            next = next.with_coarse_clock();
        }
        let generation = next.generation();
        self.probes().begin(generation);
        let Some(id) = self
            .probes()
            .admit(generation, now, self.give_up_after(seen))
        else {
            return Some(Err(self.half_open_full()));
        };
        let listeners = || {
            seen.listened()
                .then(|| self.cold().listeners.clone())
                .flatten()
        };
        let change = Change::local(Tally::EMPTY, now);
        let Some(mut announcement) = self.publish(seen, next, change, listeners) else {
            self.probes().release(generation, id);
            return None;
        };
        announcement.swapped_alone();
        self.emit(announcement);
        let started = self.start_clock_from(
            self.word(),
            Reading {
                at: now,
                coarse: false,
            },
        );
        Some(Ok(Permit::new(
            self,
            Kind::Probe { generation, id },
            started,
        )))
    }

    /// A probe, if a slot is free. A call admitted just as its period ends holds a slot of
    /// that period, and its outcome is recorded nowhere, like any late outcome.
    fn admit_probe(&self, word: Word) -> Result<Permit<'_>, BreakerError> {
        let generation = word.generation();
        let now = self.probe_clock(word);
        match self
            .probes()
            .admit(generation, now, self.give_up_after(word))
        {
            Some(id) => {
                let kind = Kind::Probe { generation, id };
                let reading = Reading {
                    at: now,
                    coarse: word.coarse_clock(),
                };
                Ok(Permit::new(
                    self,
                    kind,
                    self.start_clock_from(word, reading),
                ))
            }
            None => Err(self.half_open_full()),
        }
    }

    /// [`start_clock_for`](Self::start_clock_for) for a call whose admission read the clock
    /// already: it starts at that reading when the call is timed by the same clock, so that a
    /// probe reads one clock, not two.
    #[inline(always)]
    fn start_clock_from(&self, word: Word, admitted: Reading) -> Option<Nanos> {
        let precise = self.config.slow_call_nanos() > 0 || observer::installed();
        let coarse = if precise {
            false
        } else if word.flight() {
            word.flight_coarse()
        } else {
            return None;
        };
        if admitted.coarse == coarse {
            Some(admitted.at)
        } else {
            self.start_clock_for(word)
        }
    }

    /// The rejection of a call beyond the probes, with the latest a slot can take to free up.
    #[cold]
    fn half_open_full(&self) -> BreakerError {
        let break_duration = Duration::from_nanos(self.config.break_nanos());
        let held = match self.config.timeout() {
            Some(timeout) => timeout.min(break_duration),
            None => break_duration,
        };
        let ms = held.as_nanos().div_ceil(1_000_000);
        BreakerError::HalfOpenFull {
            breaker: self.name().clone(),
            probes: self.probes().capacity(),
            retry_after_ms: u32::try_from(ms).unwrap_or(u32::MAX),
        }
    }

    /// The clock that dates the probes of a half-open period: the coarse one where the circuit
    /// opened on a clock that runs (a few milliseconds of error cannot matter against a break),
    /// tokio's otherwise.
    #[inline]
    pub(super) fn probe_clock(&self, word: Word) -> Nanos {
        if word.coarse_clock() {
            clock::estimate()
        } else {
            clock::now()
        }
    }

    /// How long a probe may hold its slot: the break, and on the coarse clock the margin that
    /// covers its error, so that a probe is never given up early.
    pub(super) fn give_up_after(&self, word: Word) -> Nanos {
        let margin = if word.coarse_clock() {
            clock::COARSE_MARGIN
        } else {
            0
        };
        self.config.break_nanos().saturating_add(margin)
    }
}

/// The flight recorder's reading at a call's start. Out of line: inlined, the precise clock's
/// code took the closed admission itself out of its callers.
#[inline(never)]
fn flight_clock(coarse: bool) -> Nanos {
    clock::reading(coarse)
}
