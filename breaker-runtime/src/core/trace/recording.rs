//! The trace a breaker keeps while asked to: bounded, the oldest calls dropped first.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::{Entry, Limits, Outcome};
use crate::base::clock::Nanos;

const MILLI: Nanos = 1_000_000;

/// A breaker's trace: allocated when first started, kept (and readable) after it stops.
pub(crate) struct Recording {
    /// Whether calls are being added. Read on every call's end while a trace observer is
    /// installed, so it is an atomic beside the lock rather than behind it.
    on: AtomicBool,
    ring: Mutex<Ring>,
}

struct Ring {
    /// The clock reading the trace counts from.
    began: Nanos,
    limits: Limits,
    entries: VecDeque<Entry>,
    /// The JSON Lines bytes of `entries`.
    bytes: usize,
}

impl Recording {
    pub(crate) fn new() -> Recording {
        Recording {
            on: AtomicBool::new(false),
            ring: Mutex::new(Ring {
                began: 0,
                limits: Limits::DEFAULT,
                entries: VecDeque::new(),
                bytes: 0,
            }),
        }
    }

    /// Starts a new trace at `now`: what the last one held is dropped.
    pub(crate) fn start(&self, now: Nanos, limits: Limits) {
        let mut ring = self.ring();
        ring.began = now;
        ring.limits = limits;
        ring.entries = VecDeque::new();
        ring.bytes = 0;
        // Relaxed: a call that ends meanwhile takes the lock to add itself, after this one.
        self.on.store(true, Ordering::Relaxed);
    }

    pub(crate) fn stop(&self) {
        self.on.store(false, Ordering::Relaxed);
    }

    pub(crate) fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Adds a call admitted at `at` that ran for `took`, unless it was admitted before the trace
    /// began.
    pub(crate) fn add(&self, at: Nanos, took: Nanos, outcome: Outcome) {
        let mut ring = self.ring();
        // Checked again under the lock: a call that ends as the trace stops is not added after.
        if !self.is_on() || at < ring.began {
            return;
        }
        let entry = Entry {
            at_ms: (at - ring.began) / MILLI,
            duration_ms: took.div_ceil(MILLI),
            outcome,
        };
        let len = entry.line_len();
        while !ring.entries.is_empty()
            && (ring.entries.len() >= ring.limits.max_entries
                || ring.bytes + len > ring.limits.max_bytes)
        {
            if let Some(oldest) = ring.entries.pop_front() {
                ring.bytes -= oldest.line_len();
            }
        }
        if ring.limits.max_entries == 0 || len > ring.limits.max_bytes {
            return;
        }
        ring.bytes += len;
        ring.entries.push_back(entry);
    }

    /// The calls kept, in the order they were admitted. (They are kept in the order they ended:
    /// a long call admitted early ends after short ones admitted later.)
    pub(crate) fn entries(&self) -> Vec<Entry> {
        let mut entries: Vec<Entry> = self.ring().entries.iter().copied().collect();
        entries.sort_by_key(|e| e.at_ms);
        entries
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.ring().entries.capacity() * size_of::<Entry>()
    }

    fn ring(&self) -> std::sync::MutexGuard<'_, Ring> {
        // Every statement under the lock leaves the ring whole.
        self.ring.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_entries: usize, max_bytes: usize) -> Limits {
        Limits {
            max_entries,
            max_bytes,
        }
    }

    #[test]
    fn a_call_takes_24_bytes_as_the_limits_say() {
        assert_eq!(size_of::<Entry>(), 24);
    }

    #[test]
    fn the_oldest_calls_go_first_past_either_bound() {
        let recording = Recording::new();
        recording.start(5 * MILLI, limits(3, usize::MAX));
        for i in 0..5 {
            recording.add((5 + i) * MILLI, 1, Outcome::Success);
        }
        let kept: Vec<u64> = recording.entries().iter().map(|e| e.at_ms).collect();
        assert_eq!(kept, [2, 3, 4]);

        // Each of these lines is 53 bytes: two fit in 110, not three.
        recording.start(0, limits(100, 110));
        for i in 0..4 {
            recording.add(i * MILLI, 0, Outcome::Failure);
        }
        let kept: Vec<u64> = recording.entries().iter().map(|e| e.at_ms).collect();
        assert_eq!(kept, [2, 3]);
    }

    #[test]
    fn times_are_milliseconds_from_the_start_and_durations_round_up() {
        let recording = Recording::new();
        recording.start(10 * MILLI + 500, Limits::DEFAULT);
        recording.add(10 * MILLI, MILLI, Outcome::Success);
        recording.add(12 * MILLI + 499, MILLI + 1, Outcome::Slow);
        recording.add(11 * MILLI, 0, Outcome::Rejected);
        let entries = recording.entries();
        assert_eq!(entries.len(), 2, "admitted before the start: not kept");
        assert_eq!((entries[0].at_ms, entries[0].duration_ms), (0, 0));
        assert_eq!((entries[1].at_ms, entries[1].duration_ms), (1, 2));
    }

    #[test]
    fn a_stopped_trace_adds_nothing_and_keeps_what_it_has() {
        let recording = Recording::new();
        recording.start(0, Limits::DEFAULT);
        recording.add(0, 0, Outcome::Success);
        recording.stop();
        recording.add(MILLI, 0, Outcome::Success);
        assert_eq!(recording.entries().len(), 1);
        recording.start(0, limits(0, 0));
        recording.add(0, 0, Outcome::Success);
        assert!(recording.entries().is_empty());
    }
}
