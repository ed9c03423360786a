//! Every outcome recorded in the last D, as a ring of eleven buckets of D/10 each; or, for a
//! fixed window, every outcome recorded since the last edge of an interval of D, as one bucket
//! of D.
//!
//! An outcome is credited to the bucket of the moment it completes. The sliding window sums the
//! current bucket and the ten before it, so an outcome leaves it no earlier than D and no later
//! than D + D/10 after it was recorded; the fixed window reads the current bucket alone, so all
//! of its outcomes leave it together at the bucket's end. A bucket is one 128-bit word holding
//! its period's generation, its epoch (which slice of time it counts) and its three counts, so it
//! is claimed, reused and counted into with one CAS and never needs sweeping: a fixed window
//! is the same ring with buckets ten times as long and a view of one, which is why it costs the
//! closed call what the sliding window costs and clears without a sweep.
//!
//! A success is the common case and cannot open the circuit unless the window holds a failure
//! or a slow call (every threshold is above 0%), so a success into a window that holds neither is
//! counted and not judged; the window keeps the first epoch at which every failure and slow call
//! recorded so far has left it. And on a clock that runs and cannot be paused, a period's
//! outcomes are dated by the coarse clock (the kernel's last tick, a quarter of the price), which
//! moves bucket edges by a tick or so: only for buckets of 100 ms and more (sliding windows of
//! 1 s and more, fixed windows of 100 ms and more), where a tick is a tenth of a bucket at most.
//!
//! Orderings are `Relaxed`, for the count window's reason (a bucket says which period and which
//! slice of time it counts, and nothing else is published through it), except four that are
//! `SeqCst` for one reason: a failure marks the window before it counts and sums it, and a success
//! counts before it reads the mark, so of two such calls at the same time one surely sees the
//! other, and a success that brings the window to `min_calls` is never left unjudged.

use std::time::Duration;

use super::{Moved, Outcome, Recorded, Tally};
use crate::base::clock::{self, Nanos, duration_nanos};
use crate::base::sync::{AtomicU64, AtomicU128, Ordering};
use crate::core::config::WindowKind;

/// Ten full buckets behind the one being filled: the sliding window's view. A fixed window
/// views the one being filled alone, in a ring of the same size.
const BUCKETS: u64 = 11;
const GEN_BITS: u32 = 22;
const EPOCH_BITS: u32 = 42;
const CALL_BITS: u32 = 22;
const COUNT_BITS: u32 = 21;
const GEN_MASK: u128 = (1 << GEN_BITS) - 1;
const EPOCH_MASK: u64 = (1 << EPOCH_BITS) - 1;
const COUNT_MASK: u128 = (1 << COUNT_BITS) - 1;
/// A bucket stops counting at two million outcomes, which keeps its failures and slow counts,
/// each at most its calls, within their fields. Its rates stay those of what it counted.
const BUCKET_CAPACITY: u32 = (1 << COUNT_BITS) - 1;
/// The shortest bucket the coarse clock dates: ten of the slowest common kernel ticks.
const COARSE_BUCKET: Nanos = 100_000_000;

const _: () = assert!(GEN_BITS + EPOCH_BITS + CALL_BITS + 2 * COUNT_BITS == 128);

/// A bucket no outcome has reached yet: generation and epoch bits all set, no period's bucket
/// and no epoch a real clock reading maps to for thousands of years.
const FRESH: u128 = u128::MAX - 1;
/// A bucket of a window a reconfiguration replaced ([`TimeWindow::seal`]): a recorder that meets
/// it counts nothing and records again in the window in force.
const SEALED: u128 = u128::MAX;

pub(crate) struct TimeWindow {
    bucket_nanos: u64,
    /// 2^64 / `bucket_nanos`, rounded down, so that an epoch is a multiplication rather than a
    /// division (see [`TimeWindow::epoch`]).
    per_epoch: u64,
    ring: Box<Ring>,
}

/// The window's shared state, on the heap so that the breaker stays as small with a time window
/// as with a count window.
struct Ring {
    /// How many buckets, the current one and those before it, the window holds: `BUCKETS`
    /// sliding, 1 fixed. Here rather than beside `bucket_nanos`, where it would make every
    /// breaker a word larger.
    view: u64,
    /// Which clock dates the outcomes of which closed period: the generation shifted left once,
    /// with the low bit set for the coarse clock. `u64::MAX` before any period chose.
    dating: AtomicU64,
    /// The first epoch at which every failure and slow call recorded so far is out of the window.
    clean_from: AtomicU64,
    buckets: [AtomicU128; BUCKETS as usize],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bucket {
    generation: u32,
    epoch: u64,
    tally: Tally,
}

/// A tenth of the span, rounded up, so ten buckets always cover at least the whole span; or
/// the whole span, for a fixed window.
fn bucket_nanos(span: Duration, kind: WindowKind) -> u64 {
    match kind {
        WindowKind::Sliding => duration_nanos(span).div_ceil(10).max(2),
        WindowKind::Fixed => duration_nanos(span).max(2),
    }
}

fn view(kind: WindowKind) -> u64 {
    match kind {
        WindowKind::Sliding => BUCKETS,
        WindowKind::Fixed => 1,
    }
}

/// 2^64 / `bucket_nanos`, rounded down.
fn per_epoch(bucket_nanos: u64) -> u64 {
    u64::MAX / bucket_nanos
}

impl TimeWindow {
    pub(crate) fn new(span: Duration, kind: WindowKind) -> TimeWindow {
        let bucket_nanos = bucket_nanos(span, kind);
        TimeWindow {
            bucket_nanos,
            per_epoch: per_epoch(bucket_nanos),
            ring: Box::new(Ring {
                view: view(kind),
                dating: AtomicU64::new(u64::MAX),
                clean_from: AtomicU64::new(0),
                buckets: std::array::from_fn(|_| AtomicU128::new(FRESH)),
            }),
        }
    }

    /// When the bucket of a window of `span` that `now` falls in began: where a trace counts
    /// from, so that a replay starting at a bucket's start puts each call in the bucket this
    /// window put it in.
    pub(crate) fn bucket_start(span: Duration, kind: WindowKind, now: Nanos) -> Nanos {
        let per_epoch = u128::from(per_epoch(bucket_nanos(span, kind)));
        let epoch = (u128::from(now) * per_epoch) >> 64;
        // The first instant whose epoch (as `epoch` computes it) is this one: never after `now`.
        u64::try_from((epoch << 64).div_ceil(per_epoch)).map_or(now, |start| start.min(now))
    }

    /// The slice of time `now` falls in. `now * per_epoch / 2^64` never exceeds `now /
    /// bucket_nanos` and steps by one at most every `bucket_nanos` (plus a fraction of a
    /// nanosecond per bucket for buckets over four seconds): a bucket is never shorter than D/10
    /// (D, fixed).
    #[inline]
    fn epoch(&self, now: Nanos) -> u64 {
        ((u128::from(now) * u128::from(self.per_epoch)) >> 64) as u64 & EPOCH_MASK
    }

    /// Records an outcome of the closed period of `generation`, now. Returns the tally to judge,
    /// or `None` when nothing can have been reached: the outcome belonged to an earlier period or
    /// found its bucket full, or it was a success into a window holding no failure and no slow
    /// call.
    ///
    /// Out of line, so that the count window's path through the same caller stays as it is.
    #[inline(never)]
    pub(crate) fn record(
        &self,
        generation: u32,
        outcome: Outcome,
        current_generation: impl Fn() -> u32,
    ) -> Recorded {
        let now = self.dated(generation, &current_generation);
        self.record_at(generation, outcome, now, current_generation)
    }

    #[inline]
    fn record_at(
        &self,
        generation: u32,
        outcome: Outcome,
        now: Nanos,
        current_generation: impl Fn() -> u32,
    ) -> Recorded {
        if current_generation() != generation {
            return Ok(None);
        }
        let epoch = self.epoch(now);
        if outcome != Outcome::Success {
            // Before it is counted: see the module's note on orderings.
            self.ring
                .clean_from
                .fetch_max(epoch + self.ring.view, Ordering::SeqCst);
        }
        match self.count(generation, outcome, epoch, current_generation) {
            Counted::Yes => {}
            Counted::Late | Counted::Full => return Ok(None),
            Counted::Moved => return Err(Moved),
        }
        if outcome == Outcome::Success && epoch >= self.ring.clean_from.load(Ordering::SeqCst) {
            return Ok(None);
        }
        Ok(Some(self.tally_at(generation, now)))
    }

    #[inline]
    fn count(
        &self,
        generation: u32,
        outcome: Outcome,
        epoch: u64,
        current_generation: impl Fn() -> u32,
    ) -> Counted {
        let cell = &self.ring.buckets[(epoch % BUCKETS) as usize];
        let mut seen = cell.load(Ordering::Relaxed);
        loop {
            if seen == SEALED {
                return Counted::Moved;
            }
            let bucket = unpack(seen);
            let mut tally = if bucket.generation == generation & GEN_MASK as u32 {
                match epoch_distance(bucket.epoch, epoch) {
                    Distance::Same => bucket.tally,
                    Distance::Older => Tally::EMPTY,
                    // The clock read before we got here is already a whole round behind: the
                    // outcome would be leaving the window now, so it is not worth a slot.
                    Distance::Newer => return Counted::Late,
                }
            } else if current_generation() == generation {
                // A bucket of an earlier period: ours to reuse while our period lasts. Should it
                // end before the CAS, the bucket carries our generation and reads as empty to
                // the next period.
                Tally::EMPTY
            } else {
                return Counted::Late;
            };
            if tally.calls >= BUCKET_CAPACITY {
                return Counted::Full;
            }
            tally.add(outcome);
            let next = pack(Bucket {
                generation,
                epoch,
                tally,
            });
            match cell.compare_exchange_weak(seen, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => return Counted::Yes,
                Err(actual) => seen = actual,
            }
        }
    }

    /// The time an outcome of `generation` is dated at, by the clock its period dates by. The
    /// period's first outcome chooses the clock, so that all of them are dated alike.
    #[inline]
    fn dated(&self, generation: u32, current_generation: impl Fn() -> u32) -> Nanos {
        let dating = self.ring.dating.load(Ordering::Relaxed);
        if dating | 1 == dating_tag(generation, true) {
            clock::reading(dating & 1 == 1)
        } else {
            self.choose_clock(generation, dating, current_generation)
        }
    }

    #[cold]
    #[inline(never)]
    fn choose_clock(
        &self,
        generation: u32,
        seen: u64,
        current_generation: impl Fn() -> u32,
    ) -> Nanos {
        let coarse = self.bucket_nanos >= COARSE_BUCKET && clock::anchor_coarse();
        let mut tag = dating_tag(generation, coarse);
        // Only the period that is on chooses, so that a late outcome of an earlier one does not
        // undo the choice. Should the period end before the CAS, its successor chooses again.
        if current_generation() == generation {
            if let Err(chosen) =
                self.ring
                    .dating
                    .compare_exchange(seen, tag, Ordering::Relaxed, Ordering::Relaxed)
            {
                if chosen | 1 == tag | 1 {
                    tag = chosen;
                }
            }
        }
        clock::reading(tag & 1 == 1)
    }

    /// What the window holds for `generation`, now, by the clock its period dates by.
    pub(crate) fn tally(&self, generation: u32) -> Tally {
        self.tally_at(generation, self.now(generation))
    }

    /// Now, by the clock the period of `generation` dates its outcomes by.
    fn now(&self, generation: u32) -> Nanos {
        let coarse = self.ring.dating.load(Ordering::Relaxed) == dating_tag(generation, true);
        clock::reading(coarse)
    }

    #[inline(never)]
    fn tally_at(&self, generation: u32, now: Nanos) -> Tally {
        let epoch = self.epoch(now);
        let mut sum = Tally::EMPTY;
        for cell in &self.ring.buckets {
            let bucket = unpack(cell.load(Ordering::SeqCst));
            let age = epoch.wrapping_sub(bucket.epoch) & EPOCH_MASK;
            if bucket.generation == generation & GEN_MASK as u32 && age < self.ring.view {
                sum.calls += bucket.tally.calls;
                sum.failures += bucket.tally.failures;
                sum.slow += bucket.tally.slow;
            }
        }
        sum
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Ring>()
    }

    /// Seals the window that a reconfiguration replaces, and returns what the period of
    /// `generation` counted in it. Each bucket is sealed with one swap: an outcome counted
    /// before is in what the swap returned, and one that comes after counts nothing here and is
    /// recorded again in the window in force.
    pub(crate) fn seal(&self, generation: u32) -> Sealed {
        let buckets = self
            .ring
            .buckets
            .iter()
            .map(|cell| unpack(cell.swap(SEALED, Ordering::SeqCst)))
            .filter(|bucket| bucket.generation == generation & GEN_MASK as u32)
            .collect();
        Sealed {
            bucket_nanos: self.bucket_nanos,
            view: self.ring.view,
            dating: self.ring.dating.load(Ordering::Relaxed),
            buckets,
        }
    }

    /// A window of `span` for the period of `generation`, holding what `sealed` counted that
    /// falls within the new span of now. Each old bucket moves whole into the new bucket where
    /// it began, so the new window keeps the outcomes inside it to within an old bucket (a
    /// tenth of the old span, or a fixed window's whole interval). The caller keeps the kind:
    /// a window of the other kind starts empty.
    pub(crate) fn holding(
        span: Duration,
        kind: WindowKind,
        generation: u32,
        sealed: &Sealed,
    ) -> TimeWindow {
        let window = TimeWindow::new(span, kind);
        // The period's clock stays the one its first outcome chose.
        window.ring.dating.store(sealed.dating, Ordering::Relaxed);
        let coarse = sealed.dating == dating_tag(generation, true);
        let now = window.epoch(clock::reading(coarse));
        let old_kind = sealed.kind();
        let old_span = match old_kind {
            WindowKind::Sliding => sealed.bucket_nanos.saturating_mul(10),
            WindowKind::Fixed => sealed.bucket_nanos,
        };
        let old = TimeWindow::new(Duration::from_nanos(old_span), old_kind);
        for bucket in &sealed.buckets {
            let began = old.began(bucket.epoch);
            window.add(generation, began, bucket.tally, now);
        }
        window
    }

    /// When the bucket of `epoch` began.
    fn began(&self, epoch: u64) -> Nanos {
        ((u128::from(epoch) << 64) / u128::from(self.per_epoch.max(1))).min(u128::from(u64::MAX))
            as u64
    }

    /// Adds `tally`, counted in a bucket that began at `began`, to the bucket of the period of
    /// `generation` where `began` falls, if the window still holds it at epoch `now`: how a
    /// window replaced by a reconfiguration, or saved by another process, is carried over.
    /// The caller is the only writer (a window being built, or a breaker being restored).
    fn add(&self, generation: u32, began: Nanos, tally: Tally, now: u64) {
        let epoch = self.epoch(began);
        if now.wrapping_sub(epoch) & EPOCH_MASK >= self.ring.view {
            return;
        }
        let cell = &self.ring.buckets[(epoch % BUCKETS) as usize];
        let mut into = unpack(cell.load(Ordering::Relaxed));
        if into.generation != generation & GEN_MASK as u32 || into.epoch != epoch {
            into = Bucket {
                generation,
                epoch,
                tally: Tally::EMPTY,
            };
        }
        into.tally.calls += tally.calls;
        into.tally.failures += tally.failures;
        into.tally.slow += tally.slow;
        into.tally.calls = into.tally.calls.min(BUCKET_CAPACITY);
        into.tally.failures = into.tally.failures.min(into.tally.calls);
        into.tally.slow = into.tally.slow.min(into.tally.calls - into.tally.failures);
        cell.swap(pack(into), Ordering::Relaxed);
        if tally.failures + tally.slow > 0 {
            self.ring
                .clean_from
                .fetch_max(epoch + self.ring.view, Ordering::Relaxed);
        }
    }

    /// The buckets the period of `generation` holds now, each with when it began.
    pub(crate) fn buckets(&self, generation: u32) -> Vec<(Nanos, Tally)> {
        let now = self.epoch(self.now(generation));
        let mut held: Vec<(Nanos, Tally)> = self
            .ring
            .buckets
            .iter()
            .map(|cell| unpack(cell.load(Ordering::Relaxed)))
            .filter(|b| {
                b.generation == generation & GEN_MASK as u32
                    && now.wrapping_sub(b.epoch) & EPOCH_MASK < self.ring.view
                    && b.tally.calls > 0
            })
            .map(|b| (self.began(b.epoch), b.tally))
            .collect();
        held.sort_by_key(|(began, _)| *began);
        held
    }

    /// Puts back a bucket that began at `began` (on this process's clock), for the period of
    /// `generation`, if the window still holds it now. Returns whether it did.
    pub(crate) fn put_back(&self, generation: u32, began: Nanos, tally: Tally) -> bool {
        let now = self.epoch(self.now(generation));
        if now.wrapping_sub(self.epoch(began)) & EPOCH_MASK >= self.ring.view {
            return false;
        }
        self.add(generation, began, tally, now);
        true
    }
}

/// What a sealed time window counted: its buckets of the period, and how to read them.
pub(crate) struct Sealed {
    bucket_nanos: u64,
    view: u64,
    dating: u64,
    buckets: Vec<Bucket>,
}

impl Sealed {
    /// The kind of the window sealed.
    pub(crate) fn kind(&self) -> WindowKind {
        if self.view == 1 {
            WindowKind::Fixed
        } else {
            WindowKind::Sliding
        }
    }
}

fn dating_tag(generation: u32, coarse: bool) -> u64 {
    u64::from(generation) << 1 | u64::from(coarse)
}

enum Counted {
    Yes,
    /// The outcome's period or its bucket's round is over.
    Late,
    /// The bucket is at its capacity.
    Full,
    /// The window was sealed: record again in the window in force.
    Moved,
}

enum Distance {
    Same,
    Older,
    Newer,
}

fn epoch_distance(bucket: u64, now: u64) -> Distance {
    let ahead = bucket.wrapping_sub(now) & EPOCH_MASK;
    if ahead == 0 {
        Distance::Same
    } else if ahead < (1 << (EPOCH_BITS - 1)) {
        Distance::Newer
    } else {
        Distance::Older
    }
}

fn pack(b: Bucket) -> u128 {
    (u128::from(b.generation) & GEN_MASK) << (128 - GEN_BITS)
        | (u128::from(b.epoch & EPOCH_MASK) << (CALL_BITS + 2 * COUNT_BITS))
        | (u128::from(b.tally.calls) << (2 * COUNT_BITS))
        | ((u128::from(b.tally.failures) & COUNT_MASK) << COUNT_BITS)
        | (u128::from(b.tally.slow) & COUNT_MASK)
}

fn unpack(word: u128) -> Bucket {
    // Every field is masked to its width, so the casts are exact.
    Bucket {
        generation: (word >> (128 - GEN_BITS)) as u32,
        epoch: ((word >> (CALL_BITS + 2 * COUNT_BITS)) as u64) & EPOCH_MASK,
        tally: Tally {
            calls: ((word >> (2 * COUNT_BITS)) & ((1 << CALL_BITS) - 1)) as u32,
            failures: ((word >> COUNT_BITS) & COUNT_MASK) as u32,
            slow: (word & COUNT_MASK) as u32,
        },
    }
}

#[cfg(test)]
mod tests;
