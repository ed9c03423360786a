//! How long the window's calls took, for operators: their mean and the longest.
//!
//! Kept only for the calls a breaker times anyway (it detects slow calls, or a call observer is
//! installed), so an untimed closed call reads no clock for it; and only in a ring allocated by
//! the first timed call, so a breaker nobody times carries none of it. The ring holds the latest
//! calls, as many as a count window holds (at most [`MOST`]); a reading keeps those of the
//! closed period the window belongs to and, for a time window, those within its span.

use std::time::Duration;

use crate::base::clock::Nanos;
use crate::base::sync::{AtomicU64, Ordering};
use crate::core::config::Window as WindowConfig;

/// The most durations a ring holds: a reading sums them all.
pub(crate) const MOST: usize = 1024;

/// The longest duration a slot holds, in microseconds; a longer call counts as this long.
const LONGEST_MICROS: u64 = (1 << MICROS_BITS) - 2;
const MICROS_BITS: u32 = 28;

/// The durations of the latest timed calls, each with the millisecond it ended.
pub(crate) struct Durations {
    /// `ended_ms << 28 | (micros + 1)`; 0 while empty.
    slots: Box<[AtomicU64]>,
    cursor: AtomicU64,
    /// The millisecond the current closed period began: slots that ended before it belong to
    /// an earlier window.
    since_ms: AtomicU64,
}

/// The window's call durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Summary {
    pub(crate) mean: Duration,
    pub(crate) max: Duration,
}

impl Durations {
    pub(crate) fn new(window: WindowConfig, now: Nanos) -> Durations {
        let len = match window {
            WindowConfig::Count(size) => usize::try_from(size).unwrap_or(MOST).clamp(1, MOST),
            WindowConfig::Time(_) => MOST,
        };
        Durations {
            slots: (0..len).map(|_| AtomicU64::new(0)).collect(),
            cursor: AtomicU64::new(0),
            since_ms: AtomicU64::new(millis(now)),
        }
    }

    /// Keeps one call's duration. Relaxed: each slot is one number, read on its own for display.
    pub(crate) fn record(&self, ended: Nanos, took: Nanos) {
        let turn = self.cursor.fetch_add(1, Ordering::Relaxed);
        // The remainder is below the length, itself a usize.
        let index = (turn % self.slots.len() as u64) as usize;
        let micros = (took / 1_000).min(LONGEST_MICROS);
        self.slots[index].store(
            (millis(ended) << MICROS_BITS) | (micros + 1),
            Ordering::Relaxed,
        );
    }

    /// Leaves the durations kept so far to the closed period that ended.
    pub(crate) fn restart(&self, now: Nanos) {
        self.since_ms.store(millis(now), Ordering::Relaxed);
    }

    /// The mean and the longest of the calls of the current closed period, and of those within
    /// `span` of `now` for a time window; `None` when there is none.
    pub(crate) fn summary(&self, now: Nanos, span: Option<Duration>) -> Option<Summary> {
        let since = self.since_ms.load(Ordering::Relaxed);
        let oldest = match span {
            Some(span) => since.max(millis(now).saturating_sub(span.as_millis() as u64)),
            None => since,
        };
        let (mut count, mut sum, mut max) = (0_u64, 0_u64, 0_u64);
        for slot in &self.slots {
            let packed = slot.load(Ordering::Relaxed);
            if packed == 0 || packed >> MICROS_BITS < oldest {
                continue;
            }
            let micros = (packed & ((1 << MICROS_BITS) - 1)) - 1;
            count += 1;
            sum += micros;
            max = max.max(micros);
        }
        (count > 0).then(|| Summary {
            mean: Duration::from_micros(sum / count),
            max: Duration::from_micros(max),
        })
    }

    /// The ring's heap.
    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.slots)
    }
}

/// Milliseconds since the clock's origin: 36 bits of them last two years.
fn millis(nanos: Nanos) -> u64 {
    nanos / 1_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn the_mean_and_the_longest_of_the_calls_kept() {
        let durations = Durations::new(WindowConfig::Count(4), 0);
        assert_eq!(durations.summary(10 * MS, None), None);
        for (ended, took) in [(1, 10), (2, 20), (3, 60)] {
            durations.record(ended * MS, took * MS);
        }
        let summary = durations.summary(10 * MS, None).unwrap();
        assert_eq!(summary.mean, Duration::from_millis(30));
        assert_eq!(summary.max, Duration::from_millis(60));
    }

    #[test]
    fn a_count_window_keeps_its_size_in_calls() {
        let durations = Durations::new(WindowConfig::Count(2), 0);
        for (ended, took) in [(1, 500), (2, 10), (3, 30)] {
            durations.record(ended * MS, took * MS);
        }
        let summary = durations.summary(10 * MS, None).unwrap();
        assert_eq!(
            summary.max,
            Duration::from_millis(30),
            "the 500 ms call left"
        );
        assert_eq!(summary.mean, Duration::from_millis(20));
    }

    #[test]
    fn a_time_window_keeps_its_span_and_a_new_period_starts_empty() {
        let durations = Durations::new(WindowConfig::Time(Duration::from_secs(1)), 0);
        durations.record(100 * MS, 700 * MS);
        durations.record(1_500 * MS, 5 * MS);
        let summary = durations.summary(1_600 * MS, Some(Duration::from_secs(1)));
        assert_eq!(summary.unwrap().max, Duration::from_millis(5));
        durations.restart(1_700 * MS);
        assert_eq!(
            durations.summary(1_800 * MS, Some(Duration::from_secs(1))),
            None
        );
    }

    #[test]
    fn a_very_long_call_counts_as_the_longest_a_slot_holds() {
        let durations = Durations::new(WindowConfig::Count(1), 0);
        durations.record(MS, Nanos::MAX / 2);
        let max = durations.summary(MS, None).unwrap().max;
        assert_eq!(max, Duration::from_micros(LONGEST_MICROS));
        assert!(max > Duration::from_secs(260));
    }
}
