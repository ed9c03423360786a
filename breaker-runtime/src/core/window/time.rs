//! Every outcome recorded in the last D, as a ring of eleven buckets of D/10 each.
//!
//! An outcome is credited to the bucket of the moment it completes. The window sums the current
//! bucket and the ten before it, so an outcome leaves it no earlier than D and no later than
//! D + D/10 after it was recorded. A bucket is one 128-bit word holding its period's generation,
//! its epoch (which D/10 slice of time it counts) and its three counts, so it is claimed, reused
//! and counted into with one CAS and never needs sweeping.
//!
//! Every ordering is `Relaxed`, for the count window's reason: a bucket's value says which
//! period and which slice of time it counts, and nothing else is published through it.

use std::time::Duration;

use super::{Outcome, Tally};
use crate::base::clock::{Nanos, duration_nanos};
use crate::base::sync::{AtomicU128, Ordering};

/// Ten full buckets behind the one being filled.
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

const _: () = assert!(GEN_BITS + EPOCH_BITS + CALL_BITS + 2 * COUNT_BITS == 128);

pub(crate) struct TimeWindow {
    bucket_nanos: u64,
    buckets: Box<[AtomicU128]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bucket {
    generation: u32,
    epoch: u64,
    tally: Tally,
}

impl TimeWindow {
    pub(crate) fn new(span: Duration) -> TimeWindow {
        // Rounded up, so ten buckets always cover at least the whole span.
        let bucket_nanos = duration_nanos(span).div_ceil(10).max(1);
        TimeWindow {
            bucket_nanos,
            // Generation and epoch bits all set: no period's bucket, and no epoch a real clock
            // reading maps to for thousands of years.
            buckets: (0..BUCKETS).map(|_| AtomicU128::new(u128::MAX)).collect(),
        }
    }

    fn epoch(&self, now: Nanos) -> u64 {
        (now / self.bucket_nanos) & EPOCH_MASK
    }

    pub(crate) fn record(
        &self,
        generation: u32,
        outcome: Outcome,
        now: Nanos,
        current_generation: impl Fn() -> u32,
    ) -> Option<Tally> {
        if current_generation() != generation {
            return None;
        }
        let epoch = self.epoch(now);
        let cell = &self.buckets[(epoch % BUCKETS) as usize];
        let mut seen = cell.load(Ordering::Relaxed);
        loop {
            let bucket = unpack(seen);
            let mut tally = if bucket.generation == generation & GEN_MASK as u32 {
                match epoch_distance(bucket.epoch, epoch) {
                    Distance::Same => bucket.tally,
                    Distance::Older => Tally::EMPTY,
                    // The clock read before we got here is already a whole round behind: the
                    // outcome would be leaving the window now, so it is not worth a slot.
                    Distance::Newer => return None,
                }
            } else if current_generation() == generation {
                // A bucket of an earlier period: ours to reuse while our period lasts. Should it
                // end before the CAS, the bucket carries our generation and reads as empty to
                // the next period.
                Tally::EMPTY
            } else {
                return None;
            };
            if tally.calls >= BUCKET_CAPACITY {
                return Some(self.tally(generation, now));
            }
            tally.add(outcome);
            let next = pack(Bucket {
                generation,
                epoch,
                tally,
            });
            match cell.compare_exchange_weak(seen, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(self.tally(generation, now)),
                Err(actual) => seen = actual,
            }
        }
    }

    pub(crate) fn tally(&self, generation: u32, now: Nanos) -> Tally {
        let epoch = self.epoch(now);
        let mut sum = Tally::EMPTY;
        for cell in self.buckets.iter() {
            let bucket = unpack(cell.load(Ordering::Relaxed));
            let age = epoch.wrapping_sub(bucket.epoch) & EPOCH_MASK;
            if bucket.generation == generation & GEN_MASK as u32 && age < BUCKETS {
                sum.calls += bucket.tally.calls;
                sum.failures += bucket.tally.failures;
                sum.slow += bucket.tally.slow;
            }
        }
        sum
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.buckets)
    }
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
mod tests {
    use super::*;
    use Outcome::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn buckets_round_trip() {
        let b = Bucket {
            generation: 12345,
            epoch: EPOCH_MASK,
            tally: Tally {
                calls: BUCKET_CAPACITY,
                failures: BUCKET_CAPACITY,
                slow: 7,
            },
        };
        assert_eq!(unpack(pack(b)), b);
        assert_ne!(unpack(u128::MAX).generation, 0);
    }

    #[test]
    fn an_outcome_stays_at_least_the_span_and_at_most_a_tenth_longer() {
        let w = TimeWindow::new(Duration::from_secs(10));
        let recorded_at = 123 * MS;
        w.record(0, Failure, recorded_at, || 0);
        let span = 10_000 * MS;
        assert_eq!(
            w.tally(0, recorded_at + span).failures,
            1,
            "still there at exactly D"
        );
        assert_eq!(
            w.tally(0, recorded_at + span + span / 10 + 1).failures,
            0,
            "gone after D + D/10"
        );
    }

    #[test]
    fn every_outcome_in_the_span_counts() {
        let w = TimeWindow::new(Duration::from_secs(1));
        for i in 0..100 {
            let outcome = if i % 4 == 0 { Failure } else { Success };
            w.record(3, outcome, i * 10 * MS, || 3);
        }
        assert_eq!(
            w.tally(3, 990 * MS),
            Tally {
                calls: 100,
                failures: 25,
                slow: 0
            }
        );
    }

    #[test]
    fn other_periods_and_stale_rounds_read_as_empty() {
        let w = TimeWindow::new(Duration::from_secs(1));
        w.record(1, Failure, 0, || 1);
        assert_eq!(w.tally(2, 0), Tally::EMPTY);
        assert_eq!(
            w.record(1, Failure, 0, || 2),
            None,
            "a late outcome records nothing"
        );
        // The same bucket a whole ring later reads as empty for the same period.
        assert_eq!(w.tally(1, BUCKETS * 100 * MS), Tally::EMPTY);
        w.record(1, Success, BUCKETS * 100 * MS, || 1);
        assert_eq!(
            w.tally(1, BUCKETS * 100 * MS),
            Tally {
                calls: 1,
                failures: 0,
                slow: 0
            }
        );
    }
}
