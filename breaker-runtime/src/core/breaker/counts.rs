//! Monotonic counts of outcomes, for whoever exports them (a fleet sharing one window across
//! processes, a metrics pipeline that wants deltas). Off until first asked for, so a breaker
//! nobody counts keeps its hot path: a closed success into a window full of successes records
//! nothing at all.

use crate::base::clock::Nanos;
use crate::base::sync::{AtomicU64, Ordering};
use crate::base::thread_slot;
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
/// breaker.try_acquire().unwrap().record(Verdict::Failure);
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

/// The counters, allocated when counting begins: a shard per thread number
/// ([`thread_slot`]), so a thread adds to its own with a load and a store, which costs a closed
/// call far less than a read-modify-write on a line every thread writes; threads without a
/// shard of their own share the last one, with read-modify-writes. A reading sums the shards.
pub(crate) struct Counters {
    shards: Box<[Shard]>,
}

/// One thread's counts, on a cache line of its own so that threads counting side by side do
/// not take the line from each other.
#[derive(Default)]
#[repr(align(64))]
struct Shard {
    calls: AtomicU64,
    failures: AtomicU64,
    slow: AtomicU64,
    rejected: AtomicU64,
    /// The shared shard's alone: the rejections counted before the last transition. (In the
    /// others, room the cache line has anyway.)
    rejected_before: AtomicU64,
}

impl Default for Counters {
    fn default() -> Self {
        // Room for the threads a service usually records from (its runtime's workers, a few
        // more), plus the shared shard; the rest share it.
        let owned = std::thread::available_parallelism()
            .map_or(4, usize::from)
            .saturating_mul(2)
            .clamp(4, 64);
        Counters {
            shards: (0..=owned).map(|_| Shard::default()).collect(),
        }
    }
}

impl Counters {
    /// This thread's own shard, or `None` when the thread shares the last one.
    #[inline]
    fn own_shard(&self) -> Option<&Shard> {
        let last = self.shards.len() - 1;
        thread_slot::current()
            .filter(|n| *n < last)
            .map(|n| &self.shards[n])
    }

    #[inline]
    fn add(&self, outcome: Outcome) {
        match self.own_shard() {
            // Relaxed, and a plain load and store: this thread alone writes this shard (a
            // thread's number is given back, under a lock, only when it exits), and readers
            // only load it.
            Some(shard) => {
                bump(&shard.calls);
                match outcome {
                    Outcome::Success => {}
                    Outcome::Slow => bump(&shard.slow),
                    Outcome::Failure => bump(&shard.failures),
                }
            }
            None => {
                let shard = self.shared();
                shard.calls.fetch_add(1, Ordering::Relaxed);
                match outcome {
                    Outcome::Success => {}
                    Outcome::Slow => {
                        shard.slow.fetch_add(1, Ordering::Relaxed);
                    }
                    Outcome::Failure => {
                        shard.failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
    }

    /// Adds a rejection: as an outcome is added, to the thread's own shard.
    #[inline]
    fn add_rejection(&self) {
        match self.own_shard() {
            // Relaxed, and a plain load and store, as in `add`.
            Some(shard) => bump(&shard.rejected),
            None => {
                self.shared().rejected.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Every rejection so far, and those since [`restart_rejections`](Self::restart_rejections).
    fn rejected(&self) -> (u64, u64) {
        let total = self
            .shards
            .iter()
            .map(|shard| shard.rejected.load(Ordering::Relaxed))
            .sum::<u64>();
        let before = self.shared().rejected_before.load(Ordering::Relaxed);
        (total, total.saturating_sub(before))
    }

    /// Counts rejections since now, beside the total: at every transition.
    #[cold]
    #[inline(never)]
    pub(super) fn restart_rejections(&self) {
        let (total, _) = self.rejected();
        self.shared()
            .rejected_before
            .store(total, Ordering::Relaxed);
    }

    fn shared(&self) -> &Shard {
        &self.shards[self.shards.len() - 1]
    }

    /// The shards' heap.
    pub(super) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.shards)
    }

    /// The sum of the shards. Each only grows and each is read once, so a later reading from
    /// the same thread is never below an earlier one.
    fn read(&self) -> Counts {
        self.shards
            .iter()
            .fold(Counts::default(), |sum, shard| Counts {
                calls: sum.calls + shard.calls.load(Ordering::Relaxed),
                failures: sum.failures + shard.failures.load(Ordering::Relaxed),
                slow: sum.slow + shard.slow.load(Ordering::Relaxed),
            })
    }
}

#[inline]
fn bump(counter: &AtomicU64) {
    counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
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
        counters.read()
    }

    /// Counts a call turned away. Unlike outcomes, rejections are always counted, in the
    /// counters every opening allocates before it rejects anything (so no rejection allocates,
    /// and the rejection path carries no allocating code).
    #[inline]
    pub(super) fn count_rejection(&self) {
        if let Some(outside) = self.outside.get() {
            outside.counters.add_rejection();
        }
    }

    /// Calls turned away since the breaker was built, and since its last transition.
    pub(super) fn rejections(&self) -> (u64, u64) {
        self.outside
            .get()
            .map_or((0, 0), |outside| outside.counters.rejected())
    }

    /// Leaves the durations kept so far to the closed period that ends now.
    pub(super) fn restart_durations(&self, now: Nanos) {
        if let Some(durations) = self.outside.get().and_then(|o| o.durations.get()) {
            durations.restart(now);
        }
    }

    /// Adds one outcome. Relaxed: each counter is one number read on its own, and nothing else
    /// is published through it.
    #[inline]
    pub(super) fn count(&self, outcome: Outcome) {
        if let Some(outside) = self.outside.get() {
            outside.counters.add(outcome);
        }
    }
}
