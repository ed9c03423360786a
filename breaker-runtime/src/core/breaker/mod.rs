//! The state machine: admission, recording, and every transition in one place.
//!
//! The closed circuit is the hot path and takes no lock: admission is one atomic load, recording
//! goes to the lock-free window. Half-open probes take and give back their slots without a lock
//! too, and so does the first call after the break, which moves the open circuit to half-open.
//! Every other transition, an operator's command and an order from outside run under one mutex
//! whose critical sections do no I/O, call no user code and never await. Every transition, with
//! the lock or without, is published by one function (`transition.rs`); racing tasks cause
//! exactly one transition, and events are delivered after the mutex is released.
//!
//! | file | its job |
//! |---|---|
//! | `admit.rs` | a permit, or the rejection to answer with |
//! | `record.rs` | an outcome into the window or the probe run |
//! | `transition.rs` | every change of state, and its announcement |
//! | `command.rs` | force open, disable, reset, half-open, mode, subscribe |
//! | `drill.rs` | the circuit held open on purpose for a while, then put back as it was |
//! | `inject.rs` | faults injected into a share of the calls for a while, and the draw |
//! | `reconfigure.rs`, `reconfigured.rs` | new options for a live breaker, keeping its state and window; what a change says |
//! | `remote.rs` | orders from outside (a fleet), dropped when stale |
//! | `wait.rs` | waiting for admission, on tokio's clock |
//! | `counts.rs` | monotonic outcome counts, for export, and rejections |
//! | `durations.rs` | how long the window's calls took, for operators |
//! | `snapshot.rs` | what it holds, for dashboards |
//! | `trace.rs` | its calls recorded one by one, when asked, for replay |
//! | `flight.rs` | its recent calls and transitions, recorded always (unless `record = "off"`) |
//! | `warm_up.rs` | a while after its first call when the circuit does not open |
//! | `permit.rs`, `kind.rs` | the permit a call carries, and what it was admitted as |
//! | `observer.rs` | the hook call observers (metrics) subscribe to |

use std::fmt;
use std::sync::{Arc, OnceLock, PoisonError};

use tokio::sync::Notify;

use crate::base::name::Name;
use crate::base::sync::{AtomicU64, Mutex, MutexGuard, Ordering};
use crate::core::config::{Config, Mode, Record};
use crate::core::events::Listeners;
use crate::core::live_config::LiveConfig;
use crate::core::opening::Opened;
use crate::core::probes::Probes;
use crate::core::state::{State, Word};

use crate::core::trace::flight::Flight;
use crate::core::trace::recording::Recording;
use crate::core::window::Window;

mod admit;
mod command;
pub(crate) mod counts;
mod drill;
mod durations;
mod flight;
mod inject;
pub(crate) mod kind;
pub(crate) mod observer;
pub(crate) mod permit;
mod probe_rule;
mod reconfigure;
mod reconfigured;
mod record;
pub(crate) mod remote;
mod restore;
pub(crate) mod snapshot;
mod trace;
pub(crate) mod transition;
mod wait;
mod warm_up;

use counts::Counters;
pub use drill::DrillError;
use durations::Durations;
use reconfigure::Replaced;
pub use reconfigured::ConfigSource;
pub use reconfigured::Reconfigured;
#[cfg(any(feature = "http-endpoint", feature = "config-file"))]
pub(crate) use reconfigured::Requester;
#[cfg(feature = "config-file")]
pub(crate) use reconfigured::changed;

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
    /// The window it was built with. A reconfiguration may replace it with one of another size
    /// or kind, found beside the others it replaced (`reconfigure.rs`), while this stays.
    window: Window,
    /// Likewise, the probe slots.
    probes: Probes,
    /// Clock reading of the last transition (at least 1), or 0 if there was none.
    last_transition: AtomicU64,
    config: LiveConfig,
    cold: Mutex<Cold>,
    /// What only the seams to the outside use (counting, waiting, orders), allocated by the
    /// first of them: most breakers never need it.
    outside: OnceLock<Box<Outside>>,
}

/// The state of the seams to the outside.
#[derive(Default)]
struct Outside {
    /// Monotonic outcome counts, once [`Breaker::counts`] began them; rejections always.
    counters: Counters,
    /// The window's call durations, once a call was timed.
    durations: OnceLock<Box<Durations>>,
    /// Tasks waiting for admission ([`Breaker::admitted`]); woken by every transition and
    /// every probe slot given back.
    waiters: Notify,
    /// How many tasks wait for admission: no waker pays for `Notify`'s lock while none does.
    waiting: AtomicU64,
    /// The generation of the last order applied ([`Breaker::apply_order`]), plus one: 0 for
    /// none. Read and written under the cold lock.
    last_order: AtomicU64,
    /// What reconfigurations made: the windows and probe slots that replaced the breaker's
    /// own, the sequence number of its configuration's writers, and the changes so far.
    replaced: OnceLock<Box<Replaced>>,
    /// The calls recorded since [`Breaker::start_trace`], allocated by the first.
    trace: OnceLock<Box<Recording>>,
    /// The running drill, allocated by the first.
    drill: OnceLock<Box<drill::Slot>>,
    /// The running injection, allocated by the first.
    injection: OnceLock<Box<inject::Slot>>,
    /// The flight recorder, allocated by the first call while `record` is on.
    flight: OnceLock<Box<Flight>>,
    /// The warm-up, for a breaker that has one.
    warm_up: warm_up::WarmUp,
    /// The half-open probes' rate rule as set, for a breaker that has one.
    probe_rule: probe_rule::ProbeRule,
}

/// What only the rare paths touch.
struct Cold {
    /// Allocated by the first subscriber: most breakers never have one.
    listeners: Option<Arc<Listeners>>,
    /// Why the circuit last opened. Boxed, so a breaker that never opens does not carry it.
    opened: Option<Box<Opened>>,
}

impl Breaker {
    /// A closed breaker with an empty window.
    pub fn new(config: Config) -> Breaker {
        let config =
            config.with_record_resolved(crate::core::config::default_record::default_record());
        let mut start = Word::new(0, State::Closed);
        if config.mode() == Mode::Shadow {
            start = Word(start.0 | Word::SHADOW_BIT);
        }
        if config.record() != Some(Record::Off) {
            start = Word(start.0 | Word::FLIGHT_PENDING_BIT);
        }
        let warm_up = config.warm_up();
        let probe_threshold = config.probe_threshold();
        let breaker = Breaker {
            state: AtomicU64::new(start.0),
            open_until: AtomicU64::new(0),
            window: Window::new(config.window(), config.window_kind(), start.generation()),
            probes: Probes::new(config.probes(), probe_threshold),
            last_transition: AtomicU64::new(0),
            cold: Mutex::new(Cold {
                listeners: None,
                opened: None,
            }),
            outside: OnceLock::new(),
            config: LiveConfig::new(config),
        };
        if warm_up.is_some() {
            breaker.set_warm_up(warm_up);
        }
        breaker.set_probe_threshold(probe_threshold);
        breaker
    }

    /// The breaker's name.
    pub fn name(&self) -> &Name {
        self.config.name()
    }

    /// The configuration in force: the one it was built with, or the last one
    /// [`reconfigure`](Self::reconfigure) gave it, in the mode the breaker runs in now (an
    /// operator's [`set_mode`](Self::set_mode) included). (A copy: a reconfiguration may
    /// replace it at any time.)
    pub fn config(&self) -> Config {
        Config::from_words(self.name().clone(), self.config_words())
            .with_mode(self.word().mode())
            .with_warm_up(self.warm_up())
            .with_probe_threshold(self.probe_threshold())
    }

    /// The words of the configuration in force, never half of one configuration and half of
    /// the next.
    fn config_words(&self) -> [u64; crate::core::config::WORDS] {
        // A breaker never reconfigured has no writer, and reads no more than its state word to
        // know it: the sequence lives beside the outside seams, a cache line or two away.
        let sequence = || {
            if Word(self.state.load(Ordering::Acquire)).reconfigured() {
                self.replaced()
                    .map_or(0, |r| r.sequence.load(Ordering::Acquire))
            } else {
                0
            }
        };
        self.config.try_words(sequence).unwrap_or_else(|| {
            let _writer_done = self.cold();
            self.config.settled_words()
        })
    }

    /// The rule that opens the circuit, by the configuration in force.
    fn trips(&self, calls: u32, failures: u32, slow: u32) -> bool {
        Config::trips(&self.config_words(), calls, failures, slow)
    }

    /// The call's timeout by the configuration in force.
    #[inline]
    pub(crate) fn timeout(&self) -> Option<std::time::Duration> {
        self.config.timeout()
    }

    fn replaced(&self) -> Option<&Replaced> {
        self.outside.get()?.replaced.get().map(|r| &**r)
    }

    /// The window in force.
    #[inline]
    fn window(&self) -> &Window {
        // Acquire pairs with the Release that sets the mark once the replacement is in place.
        if Word(self.state.load(Ordering::Acquire)).replaced() {
            self.replaced_window()
        } else {
            &self.window
        }
    }

    #[cold]
    #[inline(never)]
    fn replaced_window(&self) -> &Window {
        match self.replaced() {
            Some(r) => r.windows.get(&self.window),
            None => &self.window,
        }
    }

    /// The probe slots in force.
    #[inline]
    fn probes(&self) -> &Probes {
        if Word(self.state.load(Ordering::Acquire)).replaced() {
            self.replaced_probes()
        } else {
            &self.probes
        }
    }

    #[cold]
    #[inline(never)]
    fn replaced_probes(&self) -> &Probes {
        match self.replaced() {
            Some(r) => r.probes.get(&self.probes),
            None => &self.probes,
        }
    }

    /// The breaker's state now. An open circuit whose break has passed still reads `Open` until
    /// the next call arrives and becomes its probe. A [drill](Self::drill) past its end reads
    /// as the state it puts back, even before its task has put it back.
    pub fn state(&self) -> State {
        let state = self.word().state();
        if state == State::ForcedOpen {
            return self.state_after_drill().unwrap_or(state);
        }
        state
    }

    #[inline]
    fn word(&self) -> Word {
        // Acquire pairs with the Release store of every transition, so whoever sees a state also
        // sees what the transition prepared for it (the emptied window, the open deadline).
        Word(self.state.load(Ordering::Acquire))
    }

    /// Whether faults are injected into its calls ([`inject`](Self::inject)).
    #[inline]
    pub(crate) fn injecting(&self) -> bool {
        self.word().injecting()
    }

    #[inline]
    pub(crate) fn generation(&self) -> u32 {
        self.word().generation()
    }

    fn outside(&self) -> &Outside {
        self.outside.get_or_init(Box::default)
    }

    fn outside_bytes(&self) -> usize {
        self.outside.get().map_or(0, |o| {
            let durations = o
                .durations
                .get()
                .map_or(0, |d| size_of::<Durations>() + d.heap_bytes());
            let replaced = o.replaced.get().map_or(0, |r| r.bytes());
            let trace = o
                .trace
                .get()
                .map_or(0, |t| size_of::<Recording>() + t.heap_bytes());
            let drill = o.drill.get().map_or(0, |_| size_of::<drill::Slot>());
            let injection = o.injection.get().map_or(0, |_| size_of::<inject::Slot>());
            size_of::<Outside>()
                + o.counters.heap_bytes()
                + durations
                + replaced
                + trace
                + drill
                + injection
        })
    }

    fn cold(&self) -> MutexGuard<'_, Cold> {
        // No code that can panic runs under this lock, but a poisoned lock must not wedge the
        // breaker either: its data is consistent after every statement.
        self.cold.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for Breaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Breaker")
            .field("name", self.name())
            .field("state", &self.state())
            .field("config", &self.config())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod footprint {
    use crate::core::breaker::Breaker;
    use crate::core::config::Config;

    #[test]
    fn a_permit_fits_in_five_words() {
        // Larger, and a closed admission hands its permit over through memory, not registers.
        assert!(std::mem::size_of::<crate::core::breaker::permit::Permit<'_>>() <= 40);
    }

    #[test]
    fn a_rejection_fits_in_five_words() {
        // A variant as large as `Timeout` beside it costs the niche, and a word more on every
        // `Result` that carries the error: the permit API's closed call went from 5 to 14 ns.
        assert!(std::mem::size_of::<crate::outcome::error::BreakerError>() <= 40);
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
        // An opening allocates what counting rejections needs, so that no rejection allocates.
        let outside = breaker.outside_bytes();
        let opened = breaker.memory_footprint() - closed - outside;
        // 48 bytes before the threshold and window that judged the trip were kept with it.
        assert!(
            opened > 0 && opened <= 56,
            "why it last opened is kept on the heap, once it has opened: {opened} bytes"
        );
        let _ = breaker.counts();
        assert_eq!(
            breaker.outside_bytes(),
            outside,
            "counting needs nothing more"
        );
        let shards = breaker.outside.get().unwrap().counters.heap_bytes();
        // The counts' shards, the waiters, the last order, the durations' ring once a call
        // is timed (8 bytes more than before the ring: the struct above has no room for it),
        // and what reconfigurations make once one is made (16 more: the struct above keeps its
        // size, and a breaker never reconfigured finds its window and probes where it did), and
        // the trace once one is started (16 more, for the same reason), the drill once one
        // is started (16 more, likewise), the injection once one is started (16 more), the
        // flight recorder once the breaker is called (16 more), the warm-up's length and
        // start (16 more: read only by the judgement that would open the circuit), and the
        // half-open probes' rate rule as set (8 more: the slots in force carry the rule they
        // judge by, which waits for the circuit to close when changed while it is not), and
        // the count of tasks waiting for admission (8 more: a probe giving its slot back skips
        // tokio's `Notify`, and its lock, while it is zero).
        assert!(
            outside - shards <= 184,
            "the outside seams' state, once one is used: {} bytes",
            outside - shards
        );
        // A cache line per thread number (4 to 64 of them) and the shared one.
        assert!(
            shards % 64 == 0 && (5 * 64..=65 * 64).contains(&shards),
            "the counts' shards: {shards} bytes"
        );
    }
}

#[cfg(all(test, not(breaker_loom)))]
mod reconfigured_footprint {
    use crate::core::breaker::Breaker;
    use crate::core::config::Config;

    #[test]
    fn a_reconfigured_breaker_counts_what_it_keeps_and_new_options_alone_keep_little() {
        let breaker = Breaker::new(Config::builder().count_window(100).build().unwrap());
        let built = breaker.memory_footprint();
        breaker
            .reconfigure(
                Config::builder()
                    .count_window(100)
                    .threshold(20.0)
                    .build()
                    .unwrap(),
            )
            .unwrap();
        let options = breaker.memory_footprint() - built;
        // What the first change allocates: the outside seams' state it lives in (with the
        // counts' shards, a cache line per thread number) and the record of the changes (three
        // configurations, each 8 bytes longer since it carries `record` and 8 more since it
        // carries `warm_up`, 8 more in the record for a probe rule waiting beside a number of
        // probes, and 16 bytes more in the outside seams for the flight recorder's slot, 16 for
        // the warm-up, 8 for the probes' rate rule as set, 8 for the count of waiting tasks).
        let shards = breaker.outside.get().unwrap().counters.heap_bytes();
        assert!(
            options - shards <= 608,
            "new options alone: {options} bytes, {shards} of them the counts' shards"
        );
        breaker
            .reconfigure(Config::builder().count_window(1_000).build().unwrap())
            .unwrap();
        let window = breaker.memory_footprint() - built - options;
        // A window of 1 000 calls (8 bytes for each 21, and the cursor), the table of the
        // list it is kept in (allocated by the first window that replaces one: 24 chunks of
        // 16 bytes), and its slot.
        assert!(
            (8 * 49..=8 * 49 + 24 * 16 + 256).contains(&window),
            "the new window, and where it is kept: {window} bytes"
        );
    }
}

#[cfg(all(test, not(breaker_loom)))]
mod coarse_clock {
    use std::time::Duration;

    use crate::core::breaker::Breaker;
    use crate::core::config::Config;
    use crate::core::state::State;

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
        std::thread::sleep(
            Duration::from_nanos(crate::base::clock::COARSE_MARGIN) + break_duration,
        );
        assert_eq!(breaker.snapshot().probes_in_flight, 0);
        assert!(
            breaker.try_acquire().unwrap().is_probe(),
            "the hung probe's slot"
        );
        drop(hung);
    }
}
