//! The windows of recorded outcomes a closed circuit is judged over: the last N calls, the last
//! span of time, or what the current interval of a fixed window has seen.
//!
//! Both kinds record with atomic words and no allocation, and both tag what they hold with the
//! generation of the closed period it belongs to: a period starts with an empty window without
//! anyone sweeping it, and a late outcome from an earlier period is turned away in the same atomic
//! step that would have counted it. The count window's words are 64-bit and lock-free
//! everywhere; the time window's buckets are 128-bit, lock-free where the processor has a
//! 128-bit compare-and-swap (x86-64 with `cmpxchg16b`, aarch64), and behind a lock of
//! `portable-atomic`'s elsewhere.

mod count;
mod time;

pub(crate) use count::CountWindow;
pub(crate) use time::TimeWindow;

use crate::base::clock::Nanos;
use crate::core::config::{Window as WindowConfig, WindowKind};

/// The window was replaced by a reconfiguration before the outcome was written to it: record
/// it again, in the window in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Moved;

/// What a window holds, to carry to another process.
pub(crate) enum Held {
    Count(Vec<Outcome>),
    Time(Vec<(Nanos, Tally)>),
}

/// What recording an outcome came to: the tally to judge, nothing to judge, or [`Moved`].
pub(crate) type Recorded = Result<Option<Tally>, Moved>;

/// What a window replaced in the middle of a closed period held of it, for its successor.
pub(crate) enum Carried {
    Count(Vec<Outcome>),
    Time(time::Sealed),
}

/// What a recorded call ended in, as far as the window cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    /// A success that took longer than `slow_call`.
    Slow,
    Failure,
}

/// What a window holds: recorded outcomes, of which some failed and some were slow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) calls: u32,
    pub(crate) failures: u32,
    pub(crate) slow: u32,
}

impl Tally {
    pub(crate) const EMPTY: Tally = Tally {
        calls: 0,
        failures: 0,
        slow: 0,
    };

    /// Failures as a percentage of the outcomes (0 for none).
    pub(crate) fn failure_rate(self) -> f64 {
        percent(self.failures, self.calls)
    }

    /// Slow successes as a percentage of the outcomes (0 for none).
    pub(crate) fn slow_rate(self) -> f64 {
        percent(self.slow, self.calls)
    }

    fn add(&mut self, outcome: Outcome) {
        self.calls += 1;
        match outcome {
            Outcome::Success => {}
            Outcome::Slow => self.slow += 1,
            Outcome::Failure => self.failures += 1,
        }
    }
}

fn percent(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        0.0
    } else {
        f64::from(part) * 100.0 / f64::from(whole)
    }
}

/// Either kind of window.
pub(crate) enum Window {
    Count(CountWindow),
    Time(TimeWindow),
}

impl Window {
    pub(crate) fn new(config: WindowConfig, kind: WindowKind, generation: u32) -> Window {
        match config {
            WindowConfig::Count(size) => Window::Count(CountWindow::new(size, generation)),
            WindowConfig::Time(span) => Window::Time(TimeWindow::new(span, kind)),
        }
    }

    /// Records an outcome of a call admitted in `generation`, completing now. Returns the tally
    /// to judge, or `None` when there is nothing new to judge: the outcome belonged to an earlier
    /// period or found its bucket full, it was a success into a window holding no failure and no
    /// slow call, or it left the counts as the rules in force last judged them; or [`Moved`]
    /// when the window was sealed first. After [`rules_changed`](Self::rules_changed) the next
    /// outcome is judged even if it changes no count.
    #[inline]
    pub(crate) fn record(
        &self,
        generation: u32,
        outcome: Outcome,
        current_generation: impl Fn() -> u32,
    ) -> Recorded {
        match self {
            Window::Count(w) => w.record(generation, outcome, current_generation),
            Window::Time(w) => w.record(generation, outcome, current_generation),
        }
    }

    /// Whether a success would change nothing: a count window full of successes. (A success
    /// into a time window is counted, and judged only when it could reach a threshold.)
    #[inline]
    pub(crate) fn is_full_of_successes(&self, generation: u32) -> bool {
        match self {
            Window::Count(w) => w.is_full_of_successes(generation),
            Window::Time(_) => false,
        }
    }

    /// What the window holds for the closed period of `generation`, now.
    pub(crate) fn tally(&self, generation: u32) -> Tally {
        match self {
            Window::Count(w) => w.tally(generation),
            Window::Time(w) => w.tally(generation),
        }
    }

    /// The rules that judge the window changed (a reconfiguration, or a warm-up that held the
    /// circuit closed when the window said open): its next outcome is judged
    /// even if it changes no count. (A time window judges every outcome that could open it.)
    pub(crate) fn rules_changed(&self) {
        match self {
            Window::Count(w) => w.rules_changed(),
            Window::Time(_) => {}
        }
    }

    /// Starts the closed period of `generation` with an empty window. Called before the state
    /// word announces the period, so no call of the period can record before it.
    pub(crate) fn reset(&self, generation: u32) {
        match self {
            Window::Count(w) => w.reset(generation),
            // Buckets carry their generation; those of other periods already read as empty.
            Window::Time(_) => {}
        }
    }

    /// Seals the window a reconfiguration replaces: from here on a recorder records in its
    /// successor instead. Returns what the closed period of `generation` holds in it.
    pub(crate) fn seal(&self, generation: u32) -> Carried {
        match self {
            Window::Count(w) => Carried::Count(w.seal(generation)),
            Window::Time(w) => Carried::Time(w.seal(generation)),
        }
    }

    /// The window `config` describes for the closed period of `generation`, holding what
    /// `carried` can keep: the newest outcomes a count window has room for, the outcomes a time
    /// window's span still covers. A window of the other kind starts empty, since a count
    /// window's outcomes carry no time and a time window's no order, and a fixed window's
    /// interval and a sliding window's buckets do not line up.
    pub(crate) fn holding(
        config: WindowConfig,
        kind: WindowKind,
        generation: u32,
        carried: &Carried,
    ) -> Window {
        match (config, carried) {
            (WindowConfig::Count(size), Carried::Count(outcomes)) => {
                Window::Count(CountWindow::holding(size, generation, outcomes))
            }
            (WindowConfig::Time(span), Carried::Time(sealed)) if sealed.kind() == kind => {
                Window::Time(TimeWindow::holding(span, kind, generation, sealed))
            }
            (config, _) => Window::new(config, kind, generation),
        }
    }

    /// What the period of `generation` holds now: a count window's outcomes, oldest first, or
    /// a time window's buckets, each with when it began.
    pub(crate) fn held(&self, generation: u32) -> Held {
        match self {
            Window::Count(w) => Held::Count(w.outcomes(generation)),
            Window::Time(w) => Held::Time(w.buckets(generation)),
        }
    }

    /// Puts back outcomes another process's window held, into the period of `generation`:
    /// a count window records them in their order (keeping the newest it has room for), a
    /// time window adds each bucket it still covers. Returns how many it kept. The circuit is
    /// not judged: the state is put back apart.
    pub(crate) fn put_back(&self, generation: u32, held: &Held) -> u64 {
        match (self, held) {
            (Window::Count(w), Held::Count(outcomes)) => {
                for &outcome in outcomes {
                    let _ = w.record(generation, outcome, || generation);
                }
                u64::from(w.tally(generation).calls)
            }
            (Window::Time(w), Held::Time(buckets)) => {
                let mut kept = 0;
                for &(began, tally) in buckets {
                    if w.put_back(generation, began, tally) {
                        kept += u64::from(tally.calls);
                    }
                }
                kept
            }
            _ => 0,
        }
    }

    /// Bytes on the heap behind this window.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Window::Count(w) => w.heap_bytes(),
            Window::Time(w) => w.heap_bytes(),
        }
    }
}
