//! The state machine: admission, recording, and every transition in one place.
//!
//! The closed circuit is the hot path and takes no lock: admission is one atomic load, recording
//! goes to the lock-free window. Half-open probes take and give back their slots without a lock
//! too, and so does the first call after the break, which moves the open circuit to half-open.
//! Every other transition, and an operator's command, runs under one mutex whose critical
//! sections do no I/O, call no user code and never await. Every transition publishes its new
//! state word with a compare-and-swap from the word that prompted it, so racing tasks cause
//! exactly one transition, and events are delivered after the mutex is released.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::clock::{self, Nanos, duration_nanos};
use crate::events::{self, Listeners, Subscription, Transition};
use crate::observe::{self, CallEvent};
use crate::opening::{Evidence, Opening};
use crate::permit::{Kind, OwnedPermit, Permit};
use crate::probes::{ProbeId, Probes};
use crate::state::Word;
use crate::sync::{AtomicU8, AtomicU64, Mutex, MutexGuard, Ordering};
use crate::window::{Outcome, Tally, Window};
use crate::{BreakerError, Config, Ending, Name, ProbeTime, State};

/// A circuit breaker: admits calls, records their outcomes, and opens when the dependency behind
/// it fails too often, so callers fail fast instead of waiting on it.
///
/// The `#[circuit_breaker]` attribute declares one per function; build one by hand for closures
/// and integrations:
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Breaker, Config, State};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let breaker = Breaker::new(
///     Config::builder().name("search").count_window(4).timeout(Duration::from_millis(200)).build()?,
/// );
/// for _ in 0..4 {
///     let failed: Result<(), std::io::Error> = Err(std::io::ErrorKind::ConnectionRefused.into());
///     let _ = breaker.call(async { failed }).await;
/// }
/// assert_eq!(breaker.state(), State::Open);
/// assert!(breaker.call(async { Ok::<_, std::io::Error>(()) }).await.unwrap_err().is_rejection());
/// # Ok(())
/// # }
/// ```
pub struct Breaker {
    state: AtomicU64,
    /// When the open circuit admits its next probe; written before the state word announces Open.
    open_until: AtomicU64,
    window: Window,
    probes: Probes,
    /// Clock reading of the last transition (at least 1), or 0 if there was none.
    last_transition: AtomicU64,
    /// Who hears of transitions besides the trace: [`LISTENED`] and [`REGISTERED`].
    audience: AtomicU8,
    config: Config,
    cold: Mutex<Cold>,
}

/// Somebody subscribed with [`Breaker::on_transition`]: the listeners are in [`Cold`].
const LISTENED: u8 = 1;
/// Listed in the registry, so its transitions also reach the registry's listeners.
const REGISTERED: u8 = 2;

/// What only the rare paths touch.
struct Cold {
    /// Failed probes in a row since the circuit last closed: the break grows with it.
    failed_probes: u32,
    /// Allocated by the first subscriber: most breakers never have one.
    listeners: Option<Arc<Listeners>>,
    /// Why the circuit last opened. Boxed, so a breaker that never opens does not carry it.
    opened: Option<Box<Evidence>>,
}

/// A point-in-time view of a breaker, for dashboards and health checks.
///
/// ```
/// use breaker_runtime::{Breaker, Config, State};
///
/// let breaker = Breaker::new(Config::builder().name("search").build().unwrap());
/// breaker.force_open();
/// let snapshot = breaker.snapshot();
/// assert_eq!(snapshot.name(), "search");
/// assert_eq!(snapshot.state, State::ForcedOpen);
/// assert!(snapshot.last_transition.is_some());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Snapshot {
    /// The breaker's configuration, its name included.
    pub config: Config,
    /// Its state.
    pub state: State,
    /// Outcomes in the window. Every transition empties the window, but while the circuit is
    /// open after it tripped, these are the counts of the window that opened it (nothing is
    /// recorded while it is open); half-open, forced open or disabled they are 0.
    pub calls: u32,
    /// Failures among them.
    pub failures: u32,
    /// Slow successes among them.
    pub slow: u32,
    /// Failures as a percentage of the window's outcomes.
    pub failure_rate: f64,
    /// Slow successes as a percentage of the window's outcomes.
    pub slow_rate: f64,
    /// Probes holding a slot now (half-open only): a probe that has run for the break has
    /// given its slot up, and no longer counts.
    pub probes_in_flight: u32,
    /// When the open circuit admits its next probe.
    pub next_probe_at: Option<Instant>,
    /// When the breaker last changed state; `None` if it never has.
    pub last_transition: Option<Instant>,
    /// Why the circuit last opened, and the counts that opened it; kept after it closes again.
    /// `None` if it never opened.
    pub last_opened: Option<Opening>,
}

impl Snapshot {
    /// The breaker's name.
    pub fn name(&self) -> &Name {
        self.config.name()
    }
}

impl Breaker {
    /// A closed breaker with an empty window.
    pub fn new(config: Config) -> Breaker {
        let start = Word::new(0, State::Closed);
        Breaker {
            state: AtomicU64::new(start.0),
            open_until: AtomicU64::new(0),
            window: Window::new(config.window(), start.generation()),
            probes: Probes::new(config.probes()),
            last_transition: AtomicU64::new(0),
            audience: AtomicU8::new(0),
            cold: Mutex::new(Cold {
                failed_probes: 0,
                listeners: None,
                opened: None,
            }),
            config,
        }
    }

    /// The breaker's name.
    pub fn name(&self) -> &Name {
        self.config.name()
    }

    /// The breaker's configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The breaker's state now. An open circuit whose break has passed still reads `Open` until
    /// the next call arrives and becomes its probe.
    pub fn state(&self) -> State {
        self.word().state()
    }

    #[inline]
    fn word(&self) -> Word {
        // Acquire pairs with the Release store of every transition, so whoever sees a state also
        // sees what the transition prepared for it (the emptied window, the open deadline).
        Word(self.state.load(Ordering::Acquire))
    }

    #[inline]
    pub(crate) fn generation(&self) -> u32 {
        self.word().generation()
    }

    fn cold(&self) -> MutexGuard<'_, Cold> {
        // No code that can panic runs under this lock, but a poisoned lock must not wedge the
        // breaker either: its data is consistent after every statement.
        self.cold.lock().unwrap_or_else(PoisonError::into_inner)
    }

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

    /// Admission through the closed circuit, or `None` in any other state: one load of the
    /// state word. Kept apart from the `Result` of [`try_acquire`](Self::try_acquire) so the
    /// permit stays in registers on the hot path instead of going through a large enum.
    #[inline]
    pub(crate) fn admit_closed(&self) -> Option<Permit<'_>> {
        let word = self.word();
        if word.state() != State::Closed {
            return None;
        }
        let kind = Kind::Closed {
            generation: word.generation(),
        };
        let permit = Permit::new(self, kind, self.start_clock());
        if observe::installed() {
            self.observe_admission(true);
        }
        Some(permit)
    }

    /// Admission in every state but closed (and in closed too, if it closed meanwhile). The
    /// rejection of an open circuit far from the end of its break is answered here, inline,
    /// because an overloaded service takes that path more than any other but the closed one.
    #[inline]
    pub(crate) fn admit_otherwise(&self) -> Result<Permit<'_>, BreakerError> {
        if let Some(until) = self.far_from_probe(self.word()) {
            if observe::installed() {
                self.observe_admission(false);
            }
            return Err(self.rejected_open(Some(until)));
        }
        self.admit_slow()
    }

    /// The open circuit's next probe time, when the coarse clock can tell it is still well
    /// ahead; `None` when the precise clock has to decide (or the circuit is not open).
    #[inline]
    fn far_from_probe(&self, word: Word) -> Option<Nanos> {
        if !word.open_on_coarse_clock() {
            return None;
        }
        let until = self.open_until.load(Ordering::Acquire);
        clock::surely_before(until).then_some(until)
    }

    #[cold]
    #[inline(never)]
    fn admit_slow(&self) -> Result<Permit<'_>, BreakerError> {
        let admitted = self.try_acquire_slow(self.word());
        if observe::installed() {
            self.observe_admission(admitted.is_ok());
        }
        admitted
    }

    #[cold]
    #[inline(never)]
    fn observe_admission(&self, admitted: bool) {
        observe::notify(
            self,
            if admitted {
                CallEvent::Admitted
            } else {
                CallEvent::Rejected
            },
        );
    }

    fn try_acquire_slow(&self, seen: Word) -> Result<Permit<'_>, BreakerError> {
        let mut word = seen;
        loop {
            match word.state() {
                State::Closed => {
                    let kind = Kind::Closed {
                        generation: word.generation(),
                    };
                    return Ok(Permit::new(self, kind, self.start_clock()));
                }
                State::Disabled => {
                    return Ok(Permit::new(self, Kind::Unrecorded, self.start_clock()));
                }
                State::ForcedOpen => return Err(self.rejected_open(None)),
                State::Open => {
                    // A deadline far ahead was already answered by the coarse clock
                    // (`admit_otherwise`); here the precise clock decides, so the probe comes
                    // at the exact instant.
                    let until = self.open_until.load(Ordering::Acquire);
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

    /// The time a call starts, when slow calls are detected or an observer wants durations;
    /// otherwise no clock is read.
    #[inline]
    fn start_clock(&self) -> Option<Nanos> {
        (self.config.slow_call_nanos() > 0 || observe::installed()).then(clock::now)
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
        self.probes.begin(generation);
        let Some(id) = self.probes.admit(generation, now, self.give_up_after(seen)) else {
            return Some(Err(self.half_open_full()));
        };
        // Release publishes the run begun and the slot taken with the new state.
        if self
            .state
            .compare_exchange(seen.0, next.0, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            self.probes.release(generation, id);
            return None;
        }
        // A command that follows this transition while this thread is between the swap and
        // here may have its time overwritten by this one, earlier by that gap: a display
        // value, not worth a read-modify-write on every probe.
        self.mark_transition(now);
        let listeners = self
            .listened()
            .then(|| self.cold().listeners.clone())
            .flatten();
        self.emit(self.announcement(seen, State::HalfOpen, now, Tally::EMPTY, listeners));
        Some(Ok(Permit::new(
            self,
            Kind::Probe { generation, id },
            self.start_clock(),
        )))
    }

    /// A probe, if a slot is free. A call admitted just as its period ends holds a slot of
    /// that period, and its outcome is recorded nowhere, like any late outcome.
    fn admit_probe(&self, word: Word) -> Result<Permit<'_>, BreakerError> {
        let generation = word.generation();
        match self
            .probes
            .admit(generation, self.probe_clock(word), self.give_up_after(word))
        {
            Some(id) => {
                let kind = Kind::Probe { generation, id };
                Ok(Permit::new(self, kind, self.start_clock()))
            }
            None => Err(self.half_open_full()),
        }
    }

    #[cold]
    fn half_open_full(&self) -> BreakerError {
        BreakerError::HalfOpenFull {
            breaker: self.name().clone(),
            probes: self.config.probes(),
        }
    }

    /// The clock that dates the probes of a half-open period: the coarse one where the circuit
    /// opened on a clock that runs (a few milliseconds of error cannot matter against a break),
    /// tokio's otherwise.
    #[inline]
    fn probe_clock(&self, word: Word) -> Nanos {
        if word.coarse_clock() {
            clock::estimate()
        } else {
            clock::now()
        }
    }

    /// How long a probe may hold its slot: the break, and on the coarse clock the margin that
    /// covers its error, so that a probe is never given up early.
    fn give_up_after(&self, word: Word) -> Nanos {
        let margin = if word.coarse_clock() {
            clock::COARSE_MARGIN
        } else {
            0
        };
        self.config.break_nanos().saturating_add(margin)
    }

    /// Records how a call admitted as `kind` ended. Ignored and cancelled calls record nothing,
    /// and free their probe slot if they held one.
    #[inline]
    pub(crate) fn finish(&self, kind: Kind, started: Option<Nanos>, ending: Ending) {
        // The hot path, kept small enough to inline into the caller: a success through the
        // closed circuit into a count window already full of successes changes nothing. (No
        // start time means no slow-call detection and no observer when the call was admitted.)
        if let (Kind::Closed { generation }, Ending::Success, None) = (kind, ending, started) {
            if self.window.is_full_of_successes(generation) && !observe::installed() {
                return;
            }
        }
        self.finish_and_record(kind, started, ending);
    }

    #[inline(never)]
    fn finish_and_record(&self, kind: Kind, started: Option<Nanos>, ending: Ending) {
        let outcome = match ending {
            Ending::Success => Some(self.slow_or(Outcome::Success, started)),
            Ending::Slow => Some(Outcome::Slow),
            Ending::Failure | Ending::Timeout | Ending::Panic => Some(Outcome::Failure),
            Ending::Ignored | Ending::Cancelled => None,
        };
        if observe::installed() {
            self.observe_finish(ending, outcome, started);
        }
        match kind {
            Kind::Closed { generation } => {
                if let Some(outcome) = outcome {
                    self.record_closed(generation, outcome);
                }
            }
            Kind::Probe { generation, id } => self.finish_probe(generation, id, outcome),
            Kind::Unrecorded | Kind::Done => {}
        }
    }

    #[cold]
    #[inline(never)]
    fn observe_finish(&self, ending: Ending, outcome: Option<Outcome>, started: Option<Nanos>) {
        let ending = if outcome == Some(Outcome::Slow) {
            Ending::Slow
        } else {
            ending
        };
        let elapsed = started.map(|s| Duration::from_nanos(clock::now().saturating_sub(s)));
        observe::notify(self, CallEvent::Finished { ending, elapsed });
    }

    #[inline]
    fn slow_or(&self, outcome: Outcome, started: Option<Nanos>) -> Outcome {
        let limit = self.config.slow_call_nanos();
        match started {
            Some(started) if limit > 0 && clock::now().saturating_sub(started) > limit => {
                Outcome::Slow
            }
            _ => outcome,
        }
    }

    #[inline]
    fn record_closed(&self, generation: u32, outcome: Outcome) {
        let tally = self
            .window
            .record(generation, outcome, clock::now, || self.generation());
        if let Some(tally) = tally.filter(|t| self.should_open(*t)) {
            self.trip(generation, tally);
        }
    }

    fn should_open(&self, t: Tally) -> bool {
        t.calls >= self.config.min_calls()
            && (self.config.threshold().reached_by(t.failures, t.calls)
                || (self.config.slow_call_nanos() > 0
                    && self.config.slow_threshold().reached_by(t.slow, t.calls)))
    }

    #[cold]
    fn trip(&self, generation: u32, tally: Tally) {
        let event = {
            let mut cold = self.cold();
            let seen = self.word();
            if seen != Word::new(generation, State::Closed) {
                return;
            }
            self.transition(&mut cold, seen, State::Open, tally, clock::now())
        };
        if let Some(event) = event {
            self.emit(event);
        }
    }

    fn finish_probe(&self, generation: u32, id: ProbeId, outcome: Option<Outcome>) {
        // An outcome that ends the period leaves its slot as it is: the next half-open period
        // counts every slot of this one as free.
        match outcome {
            None => self.probes.release(generation, id),
            Some(Outcome::Success) => {
                let run = self.probes.succeeded(generation);
                if run.is_some_and(|run| run >= self.config.probes()) {
                    self.end_half_open(generation, State::Closed);
                } else {
                    self.probes.release(generation, id);
                }
            }
            // A slow probe only exists when slow calls are detected, and then it fails.
            Some(Outcome::Failure | Outcome::Slow) => self.end_half_open(generation, State::Open),
        }
    }

    /// Closes the circuit after its run of successful probes, or opens it again after a failed
    /// one, if the half-open period of `generation` is still on.
    #[cold]
    fn end_half_open(&self, generation: u32, to: State) {
        let event = {
            let mut cold = self.cold();
            let seen = self.word();
            if !seen.is(generation, State::HalfOpen) {
                return;
            }
            let now = if to == State::Open {
                cold.failed_probes = cold.failed_probes.saturating_add(1);
                // The next break is timed from here: the precise clock.
                clock::now()
            } else {
                self.probe_clock(seen)
            };
            self.transition(&mut cold, seen, to, Tally::EMPTY, now)
        };
        if let Some(event) = event {
            self.emit(event);
        }
    }

    /// Moves from `from` (which the caller checked under the lock) to `to`, preparing the new
    /// period before the state word announces it. `None` when the word moved meanwhile, which
    /// only the lock-free move from open to half-open can do, and only to an open circuit.
    fn transition(
        &self,
        cold: &mut Cold,
        from: Word,
        to: State,
        tally: Tally,
        now: Nanos,
    ) -> Option<Announcement> {
        let mut next = from.next(to);
        match to {
            State::Closed => {
                self.window.reset(next.generation());
                cold.failed_probes = 0;
            }
            State::Open => {
                let pause = duration_nanos(self.config.break_after(cold.failed_probes));
                self.open_until
                    .store(now.saturating_add(pause), Ordering::Relaxed);
                if clock::anchor_coarse() {
                    next = next.with_coarse_clock();
                }
            }
            // Half-open is entered without the lock (`probe_after_break`).
            State::HalfOpen | State::ForcedOpen | State::Disabled => {}
        }
        // Release publishes the emptied window and the deadline with the new state. Only an
        // open circuit's word is ever changed without the lock (by the first call after the
        // break), so only a transition from open must compare-and-swap; from any other state
        // the lock alone makes the word ours.
        if from.state() == State::Open {
            self.state
                .compare_exchange(from.0, next.0, Ordering::AcqRel, Ordering::Relaxed)
                .ok()?;
        } else {
            self.state.store(next.0, Ordering::Release);
        }
        self.mark_transition(now);
        let period = (now, next.generation());
        let before = cold.opened.as_deref().copied();
        if let Some(opened) = Evidence::of((from.state(), to), tally, period, before, &self.config)
        {
            match &mut cold.opened {
                Some(kept) => **kept = opened,
                None => cold.opened = Some(Box::new(opened)),
            }
        }
        Some(self.announcement(from, to, now, tally, cold.listeners.clone()))
    }

    fn announcement(
        &self,
        from: Word,
        to: State,
        at: Nanos,
        tally: Tally,
        listeners: Option<Arc<Listeners>>,
    ) -> Announcement {
        Announcement {
            from: from.state(),
            to,
            at,
            tally,
            listeners,
            registered: self.audience.load(Ordering::Relaxed) & REGISTERED != 0,
        }
    }

    /// Records when the last transition happened (0 stands for none, so at least 1).
    fn mark_transition(&self, now: Nanos) {
        self.last_transition.store(now.max(1), Ordering::Relaxed);
    }

    fn listened(&self) -> bool {
        self.audience.load(Ordering::Acquire) & LISTENED != 0
    }

    /// Holds the circuit open: every call is rejected until [`reset`](Self::reset).
    pub fn force_open(&self) {
        self.command(State::ForcedOpen);
    }

    /// Holds the circuit closed: every call runs and nothing is recorded, until
    /// [`reset`](Self::reset).
    pub fn disable(&self) {
        self.command(State::Disabled);
    }

    /// Closes the circuit with an empty window and the break back at its base length,
    /// releasing a forced state.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, State};
    ///
    /// let breaker = Breaker::new(Config::default());
    /// breaker.force_open();
    /// assert_eq!(breaker.state(), State::ForcedOpen);
    /// breaker.reset();
    /// assert_eq!(breaker.state(), State::Closed);
    /// ```
    pub fn reset(&self) {
        self.command(State::Closed);
    }

    fn command(&self, to: State) {
        let event = {
            let mut cold = self.cold();
            // Tried again if the first call after the break moved the circuit meanwhile.
            loop {
                let seen = self.word();
                if seen.state() == to && to != State::Closed {
                    return;
                }
                if let Some(event) =
                    self.transition(&mut cold, seen, to, Tally::EMPTY, clock::now())
                {
                    break event;
                }
            }
        };
        if event.from != event.to {
            self.emit(event);
        }
    }

    /// Calls `listener` after every transition of this breaker, outside every lock of the
    /// breaker's, so it may call back into it.
    pub fn on_transition(
        &self,
        listener: impl Fn(&Transition) + Send + Sync + 'static,
    ) -> Subscription {
        let mut cold = self.cold();
        let listeners = Arc::clone(cold.listeners.get_or_insert_with(Arc::default));
        let subscription = listeners.subscribe(listener);
        // After the listener is in the list, so a transition that sees the mark finds it.
        self.audience.fetch_or(LISTENED, Ordering::AcqRel);
        drop(cold);
        subscription
    }

    pub(crate) fn set_registered(&self, registered: bool) {
        if registered {
            self.audience.fetch_or(REGISTERED, Ordering::Relaxed);
        } else {
            self.audience.fetch_and(!REGISTERED, Ordering::Relaxed);
        }
    }

    /// Traces the transition and hands it to the listeners captured with it, after every lock
    /// is released.
    #[inline]
    fn emit(&self, announcement: Announcement) {
        let Announcement {
            from, to, tally, ..
        } = announcement;
        events::trace(self.name(), from, to, tally);
        let registry_listens = announcement.registered && crate::registry::listening();
        if announcement.listeners.is_some() || registry_listens {
            self.deliver(announcement, registry_listens);
        }
        // Otherwise there is nobody to hand a `Transition` to: none is built (nor its `Instant`).
    }

    #[cold]
    #[inline(never)]
    fn deliver(&self, announcement: Announcement, registry_listens: bool) {
        let Announcement {
            from,
            to,
            at,
            tally,
            listeners,
            ..
        } = announcement;
        let transition = Transition {
            breaker: self.name().clone(),
            from,
            to,
            at: clock::to_instant(at),
            failure_rate: tally.failure_rate(),
            slow_rate: tally.slow_rate(),
            calls: tally.calls,
        };
        if let Some(listeners) = listeners {
            listeners.deliver(&transition);
        }
        if registry_listens {
            crate::registry::deliver(&transition);
        }
    }

    /// What the breaker holds now.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, State, Verdict};
    ///
    /// let breaker = Breaker::new(Config::builder().count_window(10).build().unwrap());
    /// breaker.try_acquire().unwrap().record(Verdict::Failure);
    /// breaker.try_acquire().unwrap().record(Verdict::Success);
    /// let snapshot = breaker.snapshot();
    /// assert_eq!((snapshot.state, snapshot.calls, snapshot.failures), (State::Closed, 2, 1));
    /// assert_eq!(snapshot.failure_rate, 50.0);
    /// ```
    pub fn snapshot(&self) -> Snapshot {
        let word = self.word();
        let last_transition = NonZeroU64::new(self.last_transition.load(Ordering::Relaxed));
        let probes_in_flight = match word.state() {
            State::HalfOpen => self.probes.in_flight(
                word.generation(),
                self.probe_clock(word),
                self.give_up_after(word),
            ),
            _ => 0,
        };
        let opened = self.cold().opened.as_deref().copied();
        let tally = match word.state() {
            State::Closed => self.window.tally(word.generation(), clock::now),
            State::Open => opened
                .and_then(|o| o.tally_during(word.generation()))
                .unwrap_or(Tally::EMPTY),
            _ => Tally::EMPTY,
        };
        let next_probe_at = (word.state() == State::Open)
            .then(|| clock::to_instant(self.open_until.load(Ordering::Acquire)));
        Snapshot {
            config: self.config.clone(),
            state: word.state(),
            calls: tally.calls,
            failures: tally.failures,
            slow: tally.slow,
            failure_rate: tally.failure_rate(),
            slow_rate: tally.slow_rate(),
            probes_in_flight,
            next_probe_at,
            last_transition: last_transition.map(|at| clock::to_instant(at.get())),
            last_opened: opened.map(|o| o.opening(&self.config)),
        }
    }

    /// Bytes this breaker occupies, its heap included: the struct, the window's slots or
    /// buckets, the probe slots, and the listener list once something subscribed.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config};
    ///
    /// let breaker = Breaker::new(Config::builder().count_window(100).build().unwrap());
    /// assert!(breaker.memory_footprint() <= 256);
    /// ```
    pub fn memory_footprint(&self) -> usize {
        let cold = self.cold();
        let listeners = cold.listeners.as_ref().map_or(0, |l| l.heap_bytes());
        let opened = cold.opened.as_ref().map_or(0, |_| size_of::<Evidence>());
        std::mem::size_of::<Breaker>()
            + self.window.heap_bytes()
            + self.probes.heap_bytes()
            + listeners
            + opened
    }
}

/// A transition, with what it must reach once the lock is released.
struct Announcement {
    from: State,
    to: State,
    /// When, on the breaker's clock.
    at: Nanos,
    /// The window that led to it.
    tally: Tally,
    listeners: Option<Arc<Listeners>>,
    registered: bool,
}

impl fmt::Debug for Breaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Breaker")
            .field("name", self.name())
            .field("state", &self.state())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod footprint {
    use crate::{Breaker, Config};

    #[test]
    fn a_permit_fits_in_five_words() {
        // Larger, and a closed admission hands its permit over through memory, not registers.
        assert!(std::mem::size_of::<crate::Permit<'_>>() <= 40);
    }

    #[test]
    fn a_breaker_with_a_count_window_of_100_fits_in_256_bytes_heap_included() {
        let breaker = Breaker::new(Config::builder().count_window(100).build().unwrap());
        assert!(
            std::mem::size_of::<Breaker>() <= 200,
            "struct: {}",
            std::mem::size_of::<Breaker>()
        );
        assert!(
            breaker.memory_footprint() <= 256,
            "footprint: {}",
            breaker.memory_footprint()
        );
        let closed = breaker.memory_footprint();
        breaker.force_open();
        let opened = breaker.memory_footprint() - closed;
        assert!(
            opened > 0 && opened <= 32,
            "why it last opened is kept on the heap, once it has opened: {opened} bytes"
        );
    }
}

#[cfg(all(test, not(breaker_loom)))]
mod coarse_clock {
    use std::time::Duration;

    use crate::{Breaker, Config, State};

    fn opened(break_duration: Duration) -> Breaker {
        let config = Config::builder()
            .count_window(1)
            .break_duration(break_duration)
            .build()
            .unwrap();
        let breaker = Breaker::new(config);
        breaker.try_acquire().unwrap().failure();
        assert_eq!(breaker.state(), State::Open);
        breaker
    }

    #[tokio::test(start_paused = true)]
    async fn a_circuit_opened_on_a_paused_clock_judges_every_rejection_precisely() {
        let breaker = opened(Duration::from_secs(30));
        assert!(!breaker.word().coarse_clock());
        tokio::time::advance(Duration::from_secs(30) - Duration::from_nanos(1)).await;
        assert!(breaker.try_acquire().is_err());
        tokio::time::advance(Duration::from_nanos(1)).await;
        assert!(breaker.try_acquire().unwrap().is_probe());
    }

    // The one rule that only a running clock exercises, so it sleeps, briefly: rejections far
    // from the deadline are judged by the coarse clock, and the probe still comes on time.
    #[test]
    fn a_circuit_opened_on_a_running_clock_still_probes_once_the_break_is_over() {
        let break_duration = Duration::from_millis(80);
        let breaker = opened(break_duration);
        assert!(breaker.word().coarse_clock());
        let err = breaker.try_acquire().unwrap_err();
        assert!(err.retry_after().is_some_and(|left| left <= break_duration));
        std::thread::sleep(break_duration);
        assert!(breaker.try_acquire().unwrap().is_probe());
    }

    // Likewise on a running clock: the half-open period after such a circuit dates its probes
    // by the coarse clock, and holds a hung probe's slot for the break plus the coarse margin,
    // never less.
    #[test]
    fn its_half_open_period_gives_a_hung_probe_up_after_the_break_and_the_margin() {
        let break_duration = Duration::from_millis(20);
        let breaker = opened(break_duration);
        std::thread::sleep(break_duration);
        let hung = breaker.try_acquire().unwrap();
        assert!(hung.is_probe());
        assert_eq!(breaker.state(), State::HalfOpen);
        assert!(breaker.word().coarse_clock());
        assert!(breaker.try_acquire().is_err(), "its one slot is taken");
        std::thread::sleep(break_duration);
        assert_eq!(breaker.snapshot().probes_in_flight, 1, "within the margin");
        // The margin, and a kernel tick or two by which the coarse clock may trail.
        std::thread::sleep(Duration::from_nanos(crate::clock::COARSE_MARGIN) + break_duration);
        assert_eq!(breaker.snapshot().probes_in_flight, 0);
        assert!(
            breaker.try_acquire().unwrap().is_probe(),
            "the hung probe's slot"
        );
        drop(hung);
    }
}
