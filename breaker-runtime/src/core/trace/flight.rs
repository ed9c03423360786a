//! The flight recorder: a breaker's recent calls, kept from its first call on without anyone
//! asking, so that an incident can be replayed after the fact.
//!
//! Each call is one word, written with one store: when it was admitted (milliseconds since the
//! recorder began, 38 bits: eight years), how long it ran (milliseconds, 23 bits: two hours and
//! more, saturating), and how it ended (3 bits; 0 marks a slot never written). A reader loads
//! each word once, so a record is never torn, whatever the writers do meanwhile.
//!
//! The words live in shards, each its own ring of [`CALLS`] words, allocated by its first
//! write. A thread holding a small number ([`thread_slot`]) writes the shard of that number
//! alone, with a plain load and store of the shard's cursor (no read-modify-write, no cache
//! line shared with another thread's); every other thread shares the last shard, through a
//! `fetch_add`. So a single-threaded service keeps its last [`CALLS`] calls in one shard, and a
//! service on `n` worker threads up to `n` shards' worth, of which a reading keeps the newest
//! [`CALLS`] that every shard still holds.
//!
//! The breaker's own transitions are kept beside them, one word each in a ring of their own
//! (allocated by the first), written with a `fetch_add` and a store: a probe that closes the
//! circuit makes two, and a lock for each was a tenth of its price.

use std::sync::OnceLock;

use crate::base::clock::Nanos;
use crate::base::sync::{AtomicU64, Ordering};
use crate::base::thread_slot;
use crate::core::state::State;
use crate::core::trace::{Entry, Outcome};

/// The calls a shard keeps, and the most a reading hands out.
pub(crate) const CALLS: usize = 20_000;
/// Shards per breaker; the last one is shared by the threads without one of their own.
const SHARDS: usize = 8;
const SHARED: usize = SHARDS - 1;
/// The transitions kept.
const TRANSITIONS: usize = 1_000;

const MILLI: Nanos = 1_000_000;
const OUTCOME_BITS: u32 = 3;
const DURATION_BITS: u32 = 23;
const AT_SHIFT: u32 = OUTCOME_BITS + DURATION_BITS;
const MAX_DURATION_MS: u64 = (1 << DURATION_BITS) - 1;
const MAX_AT_MS: u64 = (1 << (64 - AT_SHIFT)) - 1;
const _: () = assert!(
    MAX_AT_MS / (365 * 24 * 3_600_000) >= 8,
    "eight years of milliseconds"
);

/// Bytes a recorded call takes.
pub(crate) const BYTES_PER_CALL: usize = size_of::<u64>();

/// One breaker's flight recorder.
pub(crate) struct Flight {
    /// The clock reading the records count from.
    epoch: Nanos,
    /// Whether calls are dated by the coarse clock (tokio's runs and cannot be paused where the
    /// recorder began) rather than tokio's.
    coarse: bool,
    /// The words a shard holds: [`CALLS`] but in tests.
    capacity: usize,
    shards: [Shard; SHARDS],
    /// The transitions, each packed in a word ([`Moved::pack`]), 0 for none yet.
    transitions: OnceLock<Box<[AtomicU64]>>,
    /// Transitions written so far: the next one's slot, round the ring.
    next_transition: AtomicU64,
}

/// A transition as the recorder keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Moved {
    pub(crate) at: Nanos,
    pub(crate) from: State,
    pub(crate) to: State,
}

/// The states a transition's word can name, by their code less one.
const STATES: [State; 5] = [
    State::Closed,
    State::Open,
    State::HalfOpen,
    State::ForcedOpen,
    State::Disabled,
];
const STATE_BITS: u32 = 3;
/// A transition's time in its word: 2^58 ns, nine years of the process's clock.
const MAX_TRANSITION_AT: Nanos = (1 << (64 - 2 * STATE_BITS)) - 1;

impl Moved {
    /// One word: the time above the two states' codes (each at least 1, so no word is 0).
    fn pack(self) -> u64 {
        let code = |state: State| {
            STATES
                .iter()
                .position(|s| *s == state)
                .map_or(0, |i| i as u64 + 1)
        };
        self.at.min(MAX_TRANSITION_AT) << (2 * STATE_BITS)
            | code(self.from) << STATE_BITS
            | code(self.to)
    }

    fn unpack(word: u64) -> Option<Moved> {
        let state = |code: u64| STATES.get((code as usize).checked_sub(1)?).copied();
        let mask = (1 << STATE_BITS) - 1;
        Some(Moved {
            at: word >> (2 * STATE_BITS),
            from: state(word >> STATE_BITS & mask)?,
            to: state(word & mask)?,
        })
    }
}

// A cache line (two, for the adjacent-line prefetcher) of its own: the cursor is written on
// every call by the shard's thread.
#[repr(align(128))]
struct Shard {
    /// The next slot to write (the shard's own thread), or the calls written so far (shared).
    next: AtomicU64,
    slots: OnceLock<Box<[AtomicU64]>>,
}

impl Flight {
    pub(crate) fn new(epoch: Nanos, coarse: bool) -> Flight {
        Flight::with_capacity(epoch, coarse, CALLS)
    }

    pub(crate) fn with_capacity(epoch: Nanos, coarse: bool, capacity: usize) -> Flight {
        Flight {
            epoch,
            coarse,
            capacity: capacity.max(1),
            shards: std::array::from_fn(|_| Shard {
                next: AtomicU64::new(0),
                slots: OnceLock::new(),
            }),
            transitions: OnceLock::new(),
            next_transition: AtomicU64::new(0),
        }
    }

    /// Whether the recorder dates calls by the coarse clock.
    #[inline(always)]
    pub(crate) fn coarse(&self) -> bool {
        self.coarse
    }

    /// Adds a call admitted at `at` that ran for `took`.
    #[inline]
    pub(crate) fn add(&self, at: Nanos, took: Nanos, outcome: Outcome) {
        let word = pack(
            at.saturating_sub(self.epoch) / MILLI,
            took.saturating_add(MILLI - 1) / MILLI,
            outcome,
        );
        match thread_slot::current() {
            Some(number) if number < SHARED => self.add_own(&self.shards[number], word),
            _ => self.add_shared(word),
        }
    }

    /// A shard only its thread writes: the cursor moves by a plain load and store.
    #[inline(always)]
    fn add_own(&self, shard: &Shard, word: u64) {
        let Some(slots) = shard.slots.get() else {
            return self.add_first(shard, word);
        };
        // Relaxed: only this thread writes the cursor, and a reader takes every slot as it finds it.
        let index = shard.next.load(Ordering::Relaxed) as usize;
        let next = if index + 1 >= slots.len() {
            0
        } else {
            index + 1
        };
        shard.next.store(next as u64, Ordering::Relaxed);
        if let Some(slot) = slots.get(index) {
            slot.store(word, Ordering::Relaxed);
        }
    }

    #[cold]
    #[inline(never)]
    fn add_shared(&self, word: u64) {
        let shard = &self.shards[SHARED];
        let slots = self.slots(shard);
        let index = shard.next.fetch_add(1, Ordering::Relaxed) % slots.len() as u64;
        slots[index as usize].store(word, Ordering::Relaxed);
    }

    #[cold]
    #[inline(never)]
    fn add_first(&self, shard: &Shard, word: u64) {
        let _ = self.slots(shard);
        self.add_own(shard, word);
    }

    fn slots<'a>(&self, shard: &'a Shard) -> &'a [AtomicU64] {
        shard
            .slots
            .get_or_init(|| (0..self.capacity).map(|_| AtomicU64::new(0)).collect())
    }

    /// Keeps a transition of the breaker, at `at`.
    pub(crate) fn transition(&self, at: Nanos, from: State, to: State) {
        let ring = self
            .transitions
            .get_or_init(|| (0..TRANSITIONS).map(|_| AtomicU64::new(0)).collect());
        let next = self.next_transition.fetch_add(1, Ordering::Relaxed);
        // Release: a reader that loads the word sees it whole (it is one word anyway).
        ring[(next % TRANSITIONS as u64) as usize]
            .store(Moved { at, from, to }.pack(), Ordering::Release);
    }

    /// The calls admitted at `since` or later, oldest first, as times on the breaker's clock:
    /// at most [`CALLS`], the newest, and only as far back as every shard still holds, so that
    /// what is handed out has no gap.
    pub(crate) fn calls(&self, since: Nanos) -> Vec<(Nanos, Entry)> {
        let mut calls = Vec::new();
        let mut complete_from = 0;
        for shard in &self.shards {
            let Some(slots) = shard.slots.get() else {
                continue;
            };
            let first = calls.len();
            let mut oldest = u64::MAX;
            let mut full = true;
            for slot in slots.iter() {
                let Some((at_ms, duration_ms, outcome)) = unpack(slot.load(Ordering::Relaxed))
                else {
                    full = false;
                    continue;
                };
                oldest = oldest.min(at_ms);
                calls.push(Entry {
                    at_ms,
                    duration_ms,
                    outcome,
                });
            }
            // A shard that came round has dropped older calls: the other shards' older calls
            // would be a history with a hole in it.
            if full && calls.len() > first {
                complete_from = complete_from.max(oldest);
            }
        }
        let since_ms = since.saturating_sub(self.epoch) / MILLI;
        let from = since_ms.max(complete_from);
        calls.retain(|e| e.at_ms >= from);
        calls.sort_by_key(|e| e.at_ms);
        let excess = calls.len().saturating_sub(CALLS);
        calls
            .drain(excess..)
            .map(|e| (self.epoch + e.at_ms * MILLI, e))
            .collect()
    }

    /// The transitions at `since` or later, oldest first.
    pub(crate) fn transitions(&self, since: Nanos) -> Vec<Moved> {
        let Some(ring) = self.transitions.get() else {
            return Vec::new();
        };
        let written = self.next_transition.load(Ordering::Relaxed);
        // Oldest first, in the order they were written, which keeps two transitions of one
        // instant in their order through the sort by time (a writer racing the reading may
        // leave an older word in its slot: it sorts before, where it belongs).
        let first = written.saturating_sub(TRANSITIONS as u64);
        let mut kept: Vec<Moved> = (first..written)
            .filter_map(|n| {
                Moved::unpack(ring[(n % TRANSITIONS as u64) as usize].load(Ordering::Acquire))
            })
            .filter(|m| m.at >= since)
            .collect();
        kept.sort_by_key(|m| m.at);
        kept
    }

    /// Bytes on the heap: the shards written so far, and the transitions' ring.
    pub(crate) fn heap_bytes(&self) -> usize {
        let shards: usize = self
            .shards
            .iter()
            .filter_map(|s| s.slots.get())
            .map(|slots| slots.len() * BYTES_PER_CALL)
            .sum();
        let transitions = self
            .transitions
            .get()
            .map_or(0, |ring| ring.len() * size_of::<u64>());
        shards + transitions
    }
}

fn code(outcome: Outcome) -> u64 {
    match outcome {
        Outcome::Success => 1,
        Outcome::Failure => 2,
        Outcome::Slow => 3,
        Outcome::Timeout => 4,
        Outcome::Ignored => 5,
        Outcome::Healthy => 6,
        Outcome::Rejected => 7,
    }
}

#[inline(always)]
fn pack(at_ms: u64, duration_ms: u64, outcome: Outcome) -> u64 {
    (at_ms.min(MAX_AT_MS) << AT_SHIFT)
        | (duration_ms.min(MAX_DURATION_MS) << OUTCOME_BITS)
        | code(outcome)
}

fn unpack(word: u64) -> Option<(u64, u64, Outcome)> {
    let outcome = match word & ((1 << OUTCOME_BITS) - 1) {
        0 => return None,
        1 => Outcome::Success,
        2 => Outcome::Failure,
        3 => Outcome::Slow,
        4 => Outcome::Timeout,
        5 => Outcome::Ignored,
        6 => Outcome::Healthy,
        _ => Outcome::Rejected,
    };
    Some((
        word >> AT_SHIFT,
        (word >> OUTCOME_BITS) & MAX_DURATION_MS,
        outcome,
    ))
}

#[cfg(all(test, not(breaker_loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_packs_and_unpacks_and_the_fields_saturate() {
        for outcome in Outcome::ALL {
            assert_eq!(unpack(pack(123, 45, outcome)), Some((123, 45, outcome)));
        }
        assert_eq!(
            unpack(pack(u64::MAX, u64::MAX, Outcome::Timeout)),
            Some((MAX_AT_MS, MAX_DURATION_MS, Outcome::Timeout))
        );
        assert_eq!(unpack(0), None, "a slot never written");
    }

    #[test]
    fn a_shard_keeps_its_newest_calls_and_a_reading_its_newest_overall() {
        let flight = Flight::with_capacity(5 * MILLI, false, 3);
        for i in 0..5 {
            flight.add((5 + i) * MILLI, MILLI + 1, Outcome::Success);
        }
        let kept: Vec<(u64, u64)> = flight
            .calls(0)
            .iter()
            .map(|(at, e)| (*at / MILLI, e.at_ms))
            .collect();
        assert_eq!(kept, [(7, 2), (8, 3), (9, 4)]);
        assert_eq!(flight.calls(0)[0].1.duration_ms, 2, "rounded up");
        let since: Vec<u64> = flight
            .calls(9 * MILLI)
            .iter()
            .map(|(_, e)| e.at_ms)
            .collect();
        assert_eq!(since, [4]);
    }

    #[test]
    fn a_reading_stops_where_a_shard_that_came_round_begins() {
        let flight = Flight::with_capacity(0, false, 4);
        // This thread's shard (or the shared one) and another thread's.
        for i in 0..2 {
            flight.add(i * MILLI, 0, Outcome::Failure);
        }
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..6 {
                    flight.add((10 + i) * MILLI, 0, Outcome::Success);
                }
            });
        });
        let kept: Vec<u64> = flight.calls(0).iter().map(|(_, e)| e.at_ms).collect();
        // Wherever each thread wrote, the answer is a history without a hole: if the two
        // shared a shard of 4, its newest 4; otherwise from the other shard's oldest kept on.
        assert_eq!(kept, [12, 13, 14, 15]);
    }

    #[test]
    fn four_threads_lose_and_tear_nothing() {
        let flight = Flight::with_capacity(0, false, 1_000);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let flight = &flight;
                s.spawn(move || {
                    for i in 0..250u64 {
                        flight.add((t * 1_000 + i) * MILLI, t * MILLI, Outcome::ALL[t as usize]);
                    }
                });
            }
        });
        let calls = flight.calls(0);
        assert_eq!(calls.len(), 1_000);
        for (_, e) in calls {
            let t = e.at_ms / 1_000;
            assert_eq!(
                (e.duration_ms, e.outcome),
                (t, Outcome::ALL[t as usize]),
                "{e}"
            );
        }
    }

    #[test]
    fn a_transition_packs_into_one_word_and_back() {
        for (i, &from) in STATES.iter().enumerate() {
            let to = STATES[(i + 2) % STATES.len()];
            let moved = Moved {
                at: 123_456_789_012,
                from,
                to,
            };
            assert_eq!(Moved::unpack(moved.pack()), Some(moved));
        }
        assert_eq!(Moved::unpack(0), None, "an empty slot");
    }

    #[test]
    fn transitions_of_one_instant_keep_their_order() {
        let flight = Flight::new(0, false);
        flight.transition(7, State::Open, State::HalfOpen);
        flight.transition(7, State::HalfOpen, State::Closed);
        let kept = flight.transitions(0);
        assert_eq!(
            kept.iter().map(|m| (m.from, m.to)).collect::<Vec<_>>(),
            [
                (State::Open, State::HalfOpen),
                (State::HalfOpen, State::Closed)
            ]
        );
    }

    #[test]
    fn transitions_are_kept_in_order_and_bounded() {
        let flight = Flight::new(0, false);
        for i in 0..(TRANSITIONS as u64 + 5) {
            flight.transition(i, State::Closed, State::Open);
        }
        let kept = flight.transitions(0);
        assert_eq!(kept.len(), TRANSITIONS);
        assert_eq!(kept[0].at, 5);
        assert_eq!(flight.transitions(TRANSITIONS as u64 + 4).len(), 1);
    }
}
