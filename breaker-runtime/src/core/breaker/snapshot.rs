//! What a breaker holds, for dashboards and health checks, and what it costs in memory.

use std::fmt;
use std::num::NonZeroU64;
use std::time::Duration;

use tokio::time::Instant;

use crate::base::clock::{self, Age};
use crate::base::name::Name;
use crate::base::sync::Ordering;
use crate::core::breaker::Breaker;
use crate::core::breaker::durations::Summary;
use crate::core::breaker::reconfigured::ConfigSource;
use crate::core::config::{Config, Mode, Window as WindowConfig};
use crate::core::injection::Injecting;
use crate::core::opening::{Opened, Opening};
use crate::core::state::State;
use crate::core::window::Tally;
use crate::outcome::error::ProbeTime;

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
///
/// Its `Debug` shows each instant as its distance from the moment it is printed, on tokio's
/// clock (the breaker's): `last_transition: Some(12.3s ago)`, `next_probe_at: Some(in 3.4s)`,
/// and the opening's `at: 12.3s ago`. Every other field prints as a derived `Debug` would.
#[derive(Clone)]
#[non_exhaustive]
pub struct Snapshot {
    /// The breaker's configuration, its name included.
    pub config: Config,
    /// Its state.
    pub state: State,
    /// Whether it rejects while open, or only reports it would have ([`Mode::Shadow`]).
    pub mode: Mode,
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
    /// Calls turned away since the breaker was built: the circuit was open or every probe slot
    /// was taken. (A breaker in shadow mode turns none away; a caller waiting in
    /// [`admitted`](Breaker::admitted) is not turned away either.)
    pub rejected: u64,
    /// Calls turned away since the last transition.
    pub rejected_since_transition: u64,
    /// The mean duration of the window's calls, and [`max_duration`](Self::max_duration) the
    /// longest, alongside [`calls`](Self::calls) and with the same rule for each state. Known
    /// only for the calls the breaker timed: it times them while it detects slow calls
    /// (`slow_call`) or while a call observer is installed (`metrics`, `opentelemetry`, the
    /// `http-endpoint` router); `None` otherwise, or when the window holds no timed call. Of a
    /// window of more than 1 024 calls, the latest 1 024; a call of more than 268 s counts as
    /// 268 s.
    pub mean_duration: Option<Duration>,
    /// The longest of the window's calls: see [`mean_duration`](Self::mean_duration).
    pub max_duration: Option<Duration>,
    /// When the configuration last changed ([`Breaker::reconfigure`]); `None` if it never has.
    /// The configuration in force is [`config`](Self::config).
    pub config_changed: Option<Instant>,
    /// Where the configuration in force came from: as built, code, the endpoint, or a file
    /// (and which), changed last at [`config_changed`](Self::config_changed).
    pub config_source: ConfigSource,
    /// Whether the breaker records its calls ([`Breaker::start_trace`]).
    pub tracing: bool,
    /// When the running [drill](Breaker::drill) ends, if one is running (the circuit then
    /// reads `ForcedOpen`).
    pub drill_ends: Option<Instant>,
    /// The running [fault injection](Breaker::inject), if one runs: what it injects, when it
    /// ends, and how many calls it drew and injected into so far.
    pub injection: Option<Injecting>,
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Taken apart whole, so that a field added later cannot be left out of the output.
        let Snapshot {
            config,
            state,
            mode,
            calls,
            failures,
            slow,
            failure_rate,
            slow_rate,
            probes_in_flight,
            next_probe_at,
            last_transition,
            last_opened,
            rejected,
            rejected_since_transition,
            mean_duration,
            max_duration,
            config_changed,
            config_source,
            tracing,
            drill_ends,
            injection,
        } = self;
        // One moment for both instants, so that they read consistently with each other.
        let now = clock::now_instant();
        let age = |at: &Option<Instant>| at.map(|at| Age::seen_from(at, now));
        f.debug_struct("Snapshot")
            .field("config", config)
            .field("state", state)
            .field("mode", mode)
            .field("calls", calls)
            .field("failures", failures)
            .field("slow", slow)
            .field("failure_rate", failure_rate)
            .field("slow_rate", slow_rate)
            .field("probes_in_flight", probes_in_flight)
            .field("next_probe_at", &age(next_probe_at))
            .field("last_transition", &age(last_transition))
            .field("last_opened", last_opened)
            .field("rejected", rejected)
            .field("rejected_since_transition", rejected_since_transition)
            .field("mean_duration", mean_duration)
            .field("max_duration", max_duration)
            .field("config_changed", &age(config_changed))
            .field("config_source", config_source)
            .field("tracing", tracing)
            .field("drill_ends", &age(drill_ends))
            .field("injection", injection)
            .finish()
    }
}

impl Snapshot {
    /// The breaker's name.
    pub fn name(&self) -> &Name {
        self.config.name()
    }
}

impl Breaker {
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
            State::HalfOpen => self.probes().in_flight(
                word.generation(),
                self.probe_clock(word),
                self.give_up_after(word),
            ),
            _ => 0,
        };
        let (opened, last_opened, config_changed, config_source) = {
            let cold = self.cold();
            let opened = cold.opened.as_deref();
            (
                opened.map(|o| o.evidence),
                opened.map(Opened::opening),
                self.replaced().and_then(|r| r.changed_at()),
                self.config_source_locked(),
            )
        };
        let tally = match word.state() {
            State::Closed => self.window().tally(word.generation()),
            State::Open => opened
                .and_then(|o| o.tally_during(word.generation()))
                .unwrap_or(Tally::EMPTY),
            _ => Tally::EMPTY,
        };
        let durations = (tally.calls > 0)
            .then(|| self.window_durations(word.state(), last_transition))
            .flatten();
        let (rejected, rejected_since_transition) = self.rejections();
        let next_probe_at = (word.state() == State::Open)
            .then(|| clock::to_instant(self.open_until.load(Ordering::Relaxed)));
        Snapshot {
            config: self.config(),
            state: word.state(),
            mode: word.mode(),
            calls: tally.calls,
            failures: tally.failures,
            slow: tally.slow,
            failure_rate: tally.failure_rate(),
            slow_rate: tally.slow_rate(),
            probes_in_flight,
            next_probe_at,
            last_transition: last_transition.map(|at| clock::to_instant(at.get())),
            last_opened,
            rejected,
            rejected_since_transition,
            mean_duration: durations.map(|d| d.mean),
            max_duration: durations.map(|d| d.max),
            config_changed,
            config_source,
            tracing: self.is_tracing(),
            drill_ends: self.drill_end_reading(),
            injection: self.injection(),
        }
    }

    /// Why the circuit is open, while it is still in the opening whose break ends at `probe`.
    pub(crate) fn opening_until(&self, probe: ProbeTime) -> Option<Opening> {
        let cold = self.cold();
        // Read under the lock, which every opening but the lock-free move to half-open holds:
        // the deadline and the evidence are those of one opening.
        let word = self.word();
        let until = ProbeTime::from_nanos(self.open_until.load(Ordering::Relaxed));
        if word.state() != State::Open || until != probe {
            return None;
        }
        Some(cold.opened.as_deref()?.opening())
    }

    /// The summary of the durations the window's calls took: those of the closed period now,
    /// or, open after the window tripped, those of the window that tripped it.
    fn window_durations(
        &self,
        state: State,
        last_transition: Option<NonZeroU64>,
    ) -> Option<Summary> {
        let durations = self.outside.get()?.durations.get()?;
        let span = match self.config.window() {
            WindowConfig::Time(span) => Some(span),
            WindowConfig::Count(_) => None,
        };
        match state {
            State::Closed => durations.summary(clock::now(), span),
            State::Open => durations.summary(last_transition?.get(), span),
            _ => None,
        }
    }

    /// Bytes this breaker occupies, its heap included: the struct, the window's slots or
    /// buckets, the probe slots, the listener list once something subscribed, the state of
    /// the outside seams (counts, waiters, orders) once one was used, and the flight recorder
    /// once a call was made (8 bytes a call, 160 000 bytes for each thread's 20 000 calls; see
    /// [`recent`](Self::recent)).
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
        let opened = cold.opened.as_ref().map_or(0, |o| {
            size_of::<Opened>() + o.last_failure.as_ref().map_or(0, |m| m.len())
        });
        std::mem::size_of::<Breaker>()
            + self.window.heap_bytes()
            + self.probes.heap_bytes()
            + listeners
            + opened
            + self.outside_bytes()
            + self.flight_bytes()
    }
}
