//! Where a breaker stands, and the one atomic word that says so.
//!
//! The word packs the state with a generation that every transition advances. A permit remembers
//! the generation it was admitted in, so an outcome that arrives after a transition is recognised
//! as belonging to an earlier state period and recorded nowhere.

use std::fmt;

use breaker_options::Mode;

/// The state of a circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum State {
    /// Calls run and their outcomes are recorded in the window.
    Closed,
    /// Calls are rejected until the break has passed.
    Open,
    /// A limited number of probe calls run; their outcomes decide whether the circuit closes.
    HalfOpen,
    /// Held open by an operator until [`Breaker::reset`](crate::Breaker::reset).
    ForcedOpen,
    /// Held closed by an operator: every call runs and nothing is recorded, until
    /// [`Breaker::reset`](crate::Breaker::reset).
    Disabled,
}

impl State {
    /// A stable lower-case name, for logs and metrics labels.
    ///
    /// ```
    /// assert_eq!(breaker_runtime::State::HalfOpen.as_str(), "half_open");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half_open",
            State::ForcedOpen => "forced_open",
            State::Disabled => "disabled",
        }
    }

    /// The state of a stable name ([`as_str`](Self::as_str)), as a trace or a saved state
    /// writes it.
    pub(crate) fn named(name: &str) -> Option<State> {
        [
            State::Closed,
            State::Open,
            State::HalfOpen,
            State::ForcedOpen,
            State::Disabled,
        ]
        .into_iter()
        .find(|state| state.as_str() == name)
    }

    /// Whether calls are turned away in this state (half-open turns away only the calls beyond
    /// its probes, so it is not).
    pub fn rejects(self) -> bool {
        matches!(self, State::Open | State::ForcedOpen)
    }

    const fn code(self) -> u64 {
        match self {
            State::Closed => 0,
            State::Open => 1,
            State::HalfOpen => 2,
            State::ForcedOpen => 3,
            State::Disabled => 4,
        }
    }

    const fn from_code(code: u64) -> State {
        match code {
            1 => State::Open,
            2 => State::HalfOpen,
            3 => State::ForcedOpen,
            4 => State::Disabled,
            _ => State::Closed,
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The packed state word: generation in the high 32 bits, state in the low byte, and between
/// them what a transition needs to know without another load or the lock:
///
/// | bits | what |
/// |---|---|
/// | 0-7 | the state |
/// | 8 | the open circuit (and the half-open one after it) may read the coarse clock |
/// | 9 | outcomes are counted for export, so a closed call cannot skip recording |
/// | 10 | somebody subscribed to this breaker's transitions |
/// | 11 | the breaker is listed in the registry, whose listeners hear it too |
/// | 12 | shadow mode: what would be rejected runs instead |
/// | 13 | a reconfiguration replaced the window or the probe slots: they are found beside it |
/// | 14 | the breaker was reconfigured: its options are read against their writers' sequence |
/// | 15 | faults are injected into its calls: the closed admission takes the long way |
/// | 16-23 | failed probes in a row since the circuit last closed (saturating): the break grows with them |
/// | 24 | the flight recorder is wanted and not yet allocated: the closed admission takes the long way, once |
/// | 25 | the flight recorder keeps the calls: admission reads the clock |
/// | 26 | the flight recorder dates calls by the coarse clock |
/// | 27 | a warm-up waits for the first call to start it: the closed admission takes the long way, once |
/// | 32-63 | the generation, advanced by every transition |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Word(pub(crate) u64);

const STATE_BITS: u64 = 0xff;
const COARSE_CLOCK: u64 = 1 << 8;
const COUNTED: u64 = 1 << 9;
const LISTENED: u64 = 1 << 10;
const REGISTERED: u64 = 1 << 11;
const SHADOW: u64 = 1 << 12;
const REPLACED: u64 = 1 << 13;
const RECONFIGURED: u64 = 1 << 14;
const INJECTING: u64 = 1 << 15;
const FAILED_SHIFT: u32 = 16;
const FAILED_PROBES: u64 = 0xff << FAILED_SHIFT;
const FLIGHT_PENDING: u64 = 1 << 24;
const FLIGHT: u64 = 1 << 25;
const FLIGHT_COARSE: u64 = 1 << 26;
const WARM_PENDING: u64 = 1 << 27;
/// What every later word keeps (failed probes only until the circuit closes).
const KEPT: u64 = COUNTED
    | LISTENED
    | REGISTERED
    | SHADOW
    | REPLACED
    | RECONFIGURED
    | INJECTING
    | FAILED_PROBES
    | FLIGHT_PENDING
    | FLIGHT
    | FLIGHT_COARSE
    | WARM_PENDING;

impl Word {
    pub(crate) const fn new(generation: u32, state: State) -> Word {
        Word(((generation as u64) << 32) | state.code())
    }

    /// The same word, marking that the circuit opened where tokio's clock runs and cannot be
    /// paused, so a rejection may compare the deadline with the coarse clock, and the half-open
    /// period that follows may date its probes by it.
    pub(crate) const fn with_coarse_clock(self) -> Word {
        Word(self.0 | COARSE_CLOCK)
    }

    pub(crate) const fn coarse_clock(self) -> bool {
        self.0 & COARSE_CLOCK != 0
    }

    /// The bit that marks a word as counted ([`Breaker::counts`]), set in place once, under
    /// the breaker's lock; every later word keeps it.
    ///
    /// [`Breaker::counts`]: crate::Breaker::counts
    pub(crate) const COUNTED_BIT: u64 = COUNTED;
    /// The bit that marks a breaker somebody subscribed to, set in place under the lock.
    pub(crate) const LISTENED_BIT: u64 = LISTENED;
    /// The bit that marks a breaker listed in the registry, set and cleared under the lock.
    pub(crate) const REGISTERED_BIT: u64 = REGISTERED;

    /// The bit that marks a breaker in shadow mode, set and cleared under the lock.
    pub(crate) const SHADOW_BIT: u64 = SHADOW;

    /// The bit that marks a breaker whose window or probe slots a reconfiguration replaced (or
    /// whose new number of probes waits for the circuit to close), set once, under the lock,
    /// after the replacement is in place.
    pub(crate) const REPLACED_BIT: u64 = REPLACED;

    /// The bit that marks a breaker reconfigured at least once, set under the lock before the
    /// first new option is written.
    pub(crate) const RECONFIGURED_BIT: u64 = RECONFIGURED;

    /// The bit that marks a breaker whose calls get faults injected, set and cleared under the
    /// lock.
    pub(crate) const INJECTING_BIT: u64 = INJECTING;

    /// The bit that marks a breaker whose flight recorder is wanted but not yet allocated (its
    /// first call allocates it), set and cleared under the lock.
    pub(crate) const FLIGHT_PENDING_BIT: u64 = FLIGHT_PENDING;
    /// The bits that mark a breaker whose flight recorder keeps its calls (and dates them by
    /// the coarse clock), set and cleared under the lock.
    pub(crate) const FLIGHT_BITS: u64 = FLIGHT | FLIGHT_COARSE;
    pub(crate) const FLIGHT_BIT: u64 = FLIGHT;
    pub(crate) const FLIGHT_COARSE_BIT: u64 = FLIGHT_COARSE;

    /// Whether the flight recorder is wanted and not yet allocated.
    #[inline]
    pub(crate) const fn flight_pending(self) -> bool {
        self.0 & FLIGHT_PENDING != 0
    }

    /// The bit that marks a breaker whose warm-up waits for its first call, set and cleared
    /// under the lock (and at build).
    pub(crate) const WARM_PENDING_BIT: u64 = WARM_PENDING;

    /// Whether a warm-up waits for the first call to start it.
    #[inline]
    pub(crate) const fn warm_pending(self) -> bool {
        self.0 & WARM_PENDING != 0
    }

    /// Whether the flight recorder keeps the calls.
    #[inline]
    pub(crate) const fn flight(self) -> bool {
        self.0 & FLIGHT != 0
    }

    /// Whether the flight recorder dates calls by the coarse clock.
    #[inline]
    pub(crate) const fn flight_coarse(self) -> bool {
        self.0 & FLIGHT_COARSE != 0
    }

    /// Whether faults are injected into the breaker's calls.
    #[inline]
    pub(crate) const fn injecting(self) -> bool {
        self.0 & INJECTING != 0
    }

    /// Closed, with nothing injected, no flight recorder to allocate and no warm-up to start: the one test the closed admission makes, as cheap as
    /// asking for the state alone (the closed state's code is 0).
    #[inline]
    pub(crate) const fn plainly_closed(self) -> bool {
        self.0 & (STATE_BITS | INJECTING | FLIGHT_PENDING | WARM_PENDING) == State::Closed.code()
    }

    /// Whether the breaker was ever reconfigured.
    #[inline]
    pub(crate) const fn reconfigured(self) -> bool {
        self.0 & RECONFIGURED != 0
    }

    /// Whether a reconfiguration replaced the window or the probe slots.
    #[inline]
    pub(crate) const fn replaced(self) -> bool {
        self.0 & REPLACED != 0
    }

    /// Whether the breaker is in shadow mode: it never rejects.
    #[inline]
    pub(crate) const fn shadow(self) -> bool {
        self.0 & SHADOW != 0
    }

    /// The breaker's mode, as the word marks it.
    pub(crate) const fn mode(self) -> Mode {
        Mode::shadow_if(self.shadow())
    }

    pub(crate) const fn listened(self) -> bool {
        self.0 & LISTENED != 0
    }

    pub(crate) const fn registered(self) -> bool {
        self.0 & REGISTERED != 0
    }

    /// Failed probes in a row since the circuit last closed.
    pub(crate) const fn failed_probes(self) -> u32 {
        ((self.0 & FAILED_PROBES) >> FAILED_SHIFT) as u32
    }

    /// The same word with one more failed probe (saturating: the break stopped growing long
    /// before).
    pub(crate) const fn with_failed_probe(self) -> Word {
        if self.0 & FAILED_PROBES == FAILED_PROBES {
            self
        } else {
            Word(self.0 + (1 << FAILED_SHIFT))
        }
    }

    /// The same word with `n` failed probes in a row (at most 255, where the break stopped
    /// growing long before): a break's growth put back from a saved state.
    pub(crate) const fn with_failed_probes(self, n: u32) -> Word {
        let n = if n > 255 { 255 } else { n as u64 };
        Word((self.0 & !FAILED_PROBES) | (n << FAILED_SHIFT))
    }

    #[cfg(test)]
    const fn with_counting(self) -> Word {
        Word(self.0 | COUNTED)
    }

    #[inline]
    pub(crate) const fn counted(self) -> bool {
        self.0 & COUNTED != 0
    }

    /// An open circuit whose break the coarse clock may judge.
    #[inline]
    pub(crate) const fn open_on_coarse_clock(self) -> bool {
        self.0 & (STATE_BITS | COARSE_CLOCK) == State::Open.code() | COARSE_CLOCK
    }

    /// The same state of the same period, whatever its marks.
    pub(crate) const fn is(self, generation: u32, state: State) -> bool {
        self.0 & !(KEPT | COARSE_CLOCK) == Word::new(generation, state).0
    }

    pub(crate) const fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }

    pub(crate) const fn state(self) -> State {
        State::from_code(self.0 & STATE_BITS)
    }

    /// The word after a transition to `to`: the next generation, with the marks that last
    /// (the clock mark is the new period's to set; closing forgets the failed probes).
    pub(crate) const fn next(self, to: State) -> Word {
        let kept = match to {
            State::Closed => self.0 & KEPT & !FAILED_PROBES,
            _ => self.0 & KEPT,
        };
        Word(Word::new(self.generation().wrapping_add(1), to).0 | kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_round_trips_every_state_and_wraps_the_generation() {
        for state in [
            State::Closed,
            State::Open,
            State::HalfOpen,
            State::ForcedOpen,
            State::Disabled,
        ] {
            let word = Word::new(u32::MAX, state);
            assert_eq!(word.state(), state);
            assert_eq!(word.generation(), u32::MAX);
            assert_eq!(word.next(State::Closed).generation(), 0);
            let marked = word.with_coarse_clock();
            assert!(marked.coarse_clock() && !word.coarse_clock());
            assert_eq!((marked.state(), marked.generation()), (state, u32::MAX));
            assert!(!marked.next(State::Open).coarse_clock());
            let counted = word.with_counting();
            assert!(counted.counted() && counted.next(State::Open).counted());
            assert!(counted.with_coarse_clock().is(u32::MAX, state));
            assert_eq!(counted.state(), state);
            let failed = word.with_failed_probe().with_failed_probe();
            assert_eq!(failed.failed_probes(), 2);
            assert_eq!(failed.next(State::Open).failed_probes(), 2);
            assert_eq!(failed.next(State::Closed).failed_probes(), 0);
            assert!(failed.is(u32::MAX, state));
            let mut many = word;
            for _ in 0..300 {
                many = many.with_failed_probe();
            }
            assert_eq!((many.failed_probes(), many.state()), (255, state));
        }
    }
}
