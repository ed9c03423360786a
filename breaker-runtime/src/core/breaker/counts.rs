//! Monotonic counts of outcomes, for whoever exports them (a fleet sharing one window across
//! processes, a metrics pipeline that wants deltas). Off until first asked for, so a breaker
//! nobody counts keeps its hot path: a closed success into a window full of successes records
//! nothing at all.

use crate::base::sync::{AtomicU64, Ordering};
use crate::core::breaker::Breaker;
use crate::core::state::Word;
use crate::core::window::Outcome;

/// How many outcomes the closed circuit recorded since counting began
/// ([`Breaker::counts`]): each only grows, so the difference of two readings is what happened
/// between them.
///
/// ```
/// use breaker_runtime::{Breaker, Config, Counts, Verdict};
///
/// let breaker = Breaker::new(Config::default());
/// assert_eq!(breaker.counts(), Counts::default(), "counting begins with the first reading");
/// breaker.try_acquire().unwrap().record(Verdict::Success);
/// breaker.try_acquire().unwrap().record(Verdict::Failure);
/// let counts = breaker.counts();
/// assert_eq!((counts.calls, counts.failures, counts.slow), (2, 1, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// Outcomes recorded (successes, slow successes and failures; ignored and cancelled calls
    /// are not outcomes).
    pub calls: u64,
    /// Failures among them, timeouts and panics included.
    pub failures: u64,
    /// Slow successes among them.
    pub slow: u64,
}

impl Counts {
    /// What happened between `earlier` and this reading.
    pub fn since(self, earlier: Counts) -> Counts {
        Counts {
            calls: self.calls.saturating_sub(earlier.calls),
            failures: self.failures.saturating_sub(earlier.failures),
            slow: self.slow.saturating_sub(earlier.slow),
        }
    }
}

/// The counters, allocated when counting begins.
#[derive(Default)]
pub(crate) struct Counters {
    calls: AtomicU64,
    failures: AtomicU64,
    slow: AtomicU64,
}

impl Breaker {
    /// Monotonic counts of the outcomes the closed circuit recorded (probes and calls through a
    /// disabled breaker are not counted). The first call turns counting on and reads zeros;
    /// from then on every closed call is recorded, which costs a closed success a few
    /// nanoseconds more where a count window full of successes would have skipped recording.
    pub fn counts(&self) -> Counts {
        let counters = &self.outside().counters;
        if !self.word().counted() {
            // Marked under the lock: a locked transition stores a word derived from the one it
            // read, and must not store it over the mark. The one lock-free change (open to
            // half-open) compares and swaps the whole word, so it sees the mark or retries.
            // Relaxed: the counters it points recorders to are published by `outside`'s once.
            let _cold = self.cold();
            self.state.fetch_or(Word::COUNTED_BIT, Ordering::Relaxed);
        }
        Counts {
            calls: counters.calls.load(Ordering::Relaxed),
            failures: counters.failures.load(Ordering::Relaxed),
            slow: counters.slow.load(Ordering::Relaxed),
        }
    }

    /// Adds one outcome. Relaxed: each counter is one number read on its own, and nothing else
    /// is published through it.
    pub(super) fn count(&self, outcome: Outcome) {
        let Some(outside) = self.outside.get() else {
            return;
        };
        let counters = &outside.counters;
        counters.calls.fetch_add(1, Ordering::Relaxed);
        match outcome {
            Outcome::Success => {}
            Outcome::Slow => {
                counters.slow.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Failure => {
                counters.failures.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
