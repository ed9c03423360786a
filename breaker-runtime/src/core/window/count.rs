//! The last N recorded outcomes, as a ring of tagged slots plus one word of tallies.
//!
//! Slots are two bits each, 21 to a 64-bit word whose high bits hold the generation of the
//! period that last wrote it: a word of an earlier period reads as empty, so a new period needs
//! no sweep, and the slots of a window of 100 calls take 40 bytes (48 with the cursor).
//!
//! Recording claims the next position with one `fetch_add` on the cursor, swaps the outcome into
//! that slot with one CAS on its word, and adds the difference between the new outcome and the
//! one it evicted to the tallies with one CAS. The cursor counts past the end of the ring and
//! whoever overshoots pulls it back by the ring's size: a `fetch_add` never retries, so threads
//! recording at once pay one contended write each, not a CAS loop. The cursor lives on the heap
//! beside the slots it hands out, away from the state word and tallies that every call reads.
//! A recorder checks its period against the tallies before it claims, so a late outcome claims
//! nothing; only one racing the very transition can still claim a position of the new period
//! and leave it unwritten, which delays that period's window by one call.
//! The tallies therefore always equal the slots' contents once every recorder has finished; in
//! between, a recorder that evicts an outcome whose own tally update is still in flight makes a
//! count briefly *low*, never high, so a transient can delay an opening but never cause one.
//!
//! When a success evicts a success nothing changes, and the tally CAS is skipped. When the window
//! is full of successes, a success is not written at all (every slot already says the same), so
//! a healthy dependency costs one atomic load per call.
//!
//! Every ordering here is `Relaxed`: each word carries its period's tag in its own value and no
//! other memory is published through it, so what a recorder decides rests on one word at a time,
//! whose read-modify-writes are totally ordered anyway. What a new period must find (the reset
//! words) is published by the breaker's state word, which recorders read with `Acquire` before
//! they get here.

use super::{Moved, Outcome, Recorded, Tally};
use crate::base::sync::{AtomicBool, AtomicU64, Ordering};

/// Generation bits kept in the tally word: a recorder stalled across 4 million transitions could
/// be mistaken for a current one, which no real call outlives.
const GEN_BITS: u32 = 22;
const FIELD_BITS: u32 = 14;
const FIELD_MASK: u64 = (1 << FIELD_BITS) - 1;
const GEN_MASK: u32 = (1 << GEN_BITS) - 1;

/// Two-bit slots per word, below the word's generation.
const SLOTS_PER_WORD: usize = 21;
const CODES_MASK: u64 = (1 << (2 * SLOTS_PER_WORD)) - 1;
const CODE_EMPTY: u64 = 0;
const CODE_SUCCESS: u64 = 1;
const CODE_FAILURE: u64 = 2;
const CODE_SLOW: u64 = 3;
/// A fresh word: the largest generation (no period's until millions of transitions in, and its
/// slots are empty anyway).
const WORD_UNWRITTEN: u64 = (GEN_MASK as u64) << (2 * SLOTS_PER_WORD);
/// A slot word, or the tallies, of a window a reconfiguration replaced ([`CountWindow::seal`]):
/// a recorder that meets it writes nothing and records again in the window in force. (Read as
/// a word, the largest generation with every slot slow; as tallies, counts no period has.)
const SEALED: u64 = u64::MAX;

const _: () = assert!(2 * SLOTS_PER_WORD as u32 + GEN_BITS <= 64);

// Real counts stay below 10 000; a transient negative count reads as 16 384 minus the number of
// recorders in flight, so thousands of them can be mid-record before the two could meet.
const _: () = assert!((crate::core::config::MAX_COUNT_WINDOW as u64) + 4096 < FIELD_MASK);

pub(crate) struct CountWindow {
    size: u32,
    /// Set when the rules that judge the window changed (a reconfiguration), so the next
    /// outcome is judged even if it changes no count: until then, counts that did not change
    /// stand judged by the rules that last judged them. (In the padding beside `size`: the
    /// window keeps its size.)
    rejudge: AtomicBool,
    /// The cursor, then the slot words.
    cells: Box<[AtomicU64]>,
    tallies: AtomicU64,
}

impl CountWindow {
    pub(crate) fn new(size: u32, generation: u32) -> CountWindow {
        let words = (size.max(1) as usize).div_ceil(SLOTS_PER_WORD);
        CountWindow {
            size: size.max(1),
            rejudge: AtomicBool::new(false),
            cells: std::iter::once(pack_cursor(generation, 0))
                .chain(std::iter::repeat_n(WORD_UNWRITTEN, words))
                .map(AtomicU64::new)
                .collect(),
            tallies: AtomicU64::new(pack(generation, Tally::EMPTY)),
        }
    }

    fn cursor(&self) -> &AtomicU64 {
        &self.cells[0]
    }

    fn word(&self, index: usize) -> &AtomicU64 {
        &self.cells[1 + index / SLOTS_PER_WORD]
    }

    #[inline]
    pub(crate) fn record(
        &self,
        generation: u32,
        outcome: Outcome,
        current_generation: impl Fn() -> u32,
    ) -> Recorded {
        let tallies = self.tallies.load(Ordering::Relaxed);
        if gen_of(tallies) != generation & GEN_MASK {
            if tallies == SEALED {
                return Err(Moved);
            }
            // The period is over: a late outcome is recorded nowhere and claims no position.
            return Ok(None);
        }
        if outcome == Outcome::Success && tallies == self.full_of_successes(generation) {
            // Every slot holds a success, so one more success changes neither the counts nor
            // which outcomes the window holds: there is nothing to write. This is the steady
            // state of a healthy dependency, and it costs one load. Nothing to judge either,
            // by any rules: no failure and no slow call reach a threshold above 0%.
            return Ok(None);
        }
        self.write(generation, outcome, tallies, current_generation)
    }

    // Inline: out of line, the path of a success into a window that holds a failure (the
    // `Result` that says whether the window was sealed, and its checks) cost 2 to 5 ns more
    // than before the seal existed; inlined, it costs what it did.
    #[inline]
    fn write(
        &self,
        generation: u32,
        outcome: Outcome,
        tallies: u64,
        current_generation: impl Fn() -> u32,
    ) -> Recorded {
        let Some(index) = self.claim(generation) else {
            return Ok(None);
        };
        // An outcome that changes no count leaves the window as the rules last judged it, and
        // is judged only if those rules changed since (a threshold lowered on a live breaker):
        // the new rules judge from the next recorded outcome, on the counts read before it.
        let unchanged = || {
            // Acquire: pairs with the Release that set it, after the new rules were stored.
            if self.rejudge.load(Ordering::Acquire) {
                self.rejudge.store(false, Ordering::Relaxed);
                Ok(consistent(unpack(tallies)))
            } else {
                Ok(None)
            }
        };
        let word = self.word(index);
        let shift = 2 * (index % SLOTS_PER_WORD);
        let gen_tag = u64::from(generation & GEN_MASK);

        let mut seen = word.load(Ordering::Relaxed);
        if seen != SEALED
            && seen >> (2 * SLOTS_PER_WORD) == gen_tag
            && (seen >> shift) & 3 == encode(outcome)
        {
            // The slot already says what we would write: the window holds the same outcomes
            // in the same places whether we write or not, so we don't.
            return unchanged();
        }
        let evicted = loop {
            if seen == SEALED {
                // Replaced before our write: nothing of ours is in what the seal carried over.
                return Err(Moved);
            }
            let codes = if seen >> (2 * SLOTS_PER_WORD) == gen_tag {
                seen & CODES_MASK
            } else if current_generation() == generation {
                // No recorder of our period has written this word yet: what it holds is from an
                // earlier period, and all of it reads as empty to ours. Writing is right only
                // while our period lasts; the CAS fails if a later period's recorder got here first.
                CODE_EMPTY
            } else {
                return Ok(None);
            };
            let evicted = decode((codes >> shift) & 3);
            let next = (gen_tag << (2 * SLOTS_PER_WORD))
                | (codes & !(3 << shift))
                | (encode(outcome) << shift);
            match word.compare_exchange_weak(seen, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break evicted,
                Err(actual) => seen = actual,
            }
        };
        if evicted == Some(outcome) {
            return unchanged();
        }

        let mut word = self.tallies.load(Ordering::Relaxed);
        loop {
            if gen_of(word) != generation & GEN_MASK {
                // The period ended: our slot write is tagged with the old generation and so
                // reads as empty to the new one. Or the window was sealed after our slot was
                // written, and the seal carried our outcome over with the slot.
                return Ok(None);
            }
            let mut fields = unpack(word);
            if evicted.is_none() {
                fields.calls = fields.calls.wrapping_add(1);
            }
            bump(&mut fields, outcome, 1);
            if let Some(previous) = evicted {
                bump(&mut fields, previous, u32::MAX); // wrapping -1
            }
            let next = pack(generation, fields);
            match self.tallies.compare_exchange_weak(
                word,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(consistent(unpack(next))),
                Err(actual) => word = actual,
            }
        }
    }

    /// The next position of `generation`'s period, or `None` once the period is over.
    fn claim(&self, generation: u32) -> Option<usize> {
        // Relaxed: the position only spreads recorders over the slots; the slot CAS orders
        // what they write.
        let cursor = self.cursor().fetch_add(1, Ordering::Relaxed);
        let size = self.size as usize;
        let mut index = cursor_position(cursor);
        if index >= size {
            self.rewind_cursor();
            index %= size;
        }
        (gen_of(cursor) == generation & GEN_MASK).then_some(index)
    }

    /// Brings an overshooting cursor back into the ring. Subtracting whole laps keeps every
    /// position claimed meanwhile where it was, and only while the cursor is past the end, so
    /// overshooters racing here (or a reset) never take it below zero or into the generation.
    #[cold]
    fn rewind_cursor(&self) {
        let size = u64::from(self.size);
        let mut seen = self.cursor().load(Ordering::Relaxed);
        while cursor_position(seen) as u64 >= size {
            match self.cursor().compare_exchange_weak(
                seen,
                seen - size,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => seen -= size,
                Err(actual) => seen = actual,
            }
        }
    }

    fn full_of_successes(&self, generation: u32) -> u64 {
        pack(
            generation,
            Tally {
                calls: self.size,
                failures: 0,
                slow: 0,
            },
        )
    }

    #[inline]
    pub(crate) fn is_full_of_successes(&self, generation: u32) -> bool {
        self.tallies.load(Ordering::Relaxed) == self.full_of_successes(generation)
    }

    pub(crate) fn tally(&self, generation: u32) -> Tally {
        let word = self.tallies.load(Ordering::Relaxed);
        if gen_of(word) != generation & GEN_MASK {
            return Tally::EMPTY;
        }
        consistent(unpack(word)).unwrap_or(Tally::EMPTY)
    }

    pub(crate) fn reset(&self, generation: u32) {
        restart(self.cursor(), pack_cursor(generation, 0));
        restart(&self.tallies, pack(generation, Tally::EMPTY));
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.cells)
    }

    /// The rules that judge the window changed: the next outcome is judged whatever it does to
    /// the counts. Called under the breaker's lock, after the new rules are in place.
    pub(crate) fn rules_changed(&self) {
        // Release: a recorder that sees the mark reads the new rules.
        self.rejudge.store(true, Ordering::Release);
    }

    /// Seals the window that a reconfiguration replaces, and returns the outcomes of the period
    /// of `generation` it held, oldest first.
    ///
    /// Every slot word is sealed before the tallies, each with one swap. A recorder whose slot
    /// write came first has its outcome in what the swap returned, and whatever it does next
    /// (its tally update fails on the sealed tallies, or lands before them) changes nothing
    /// carried over; a recorder that comes after finds the seal before writing anything, and
    /// records again in the window in force. So an outcome racing the seal is carried over, or
    /// recorded anew, and never both.
    pub(crate) fn seal(&self, generation: u32) -> Vec<Outcome> {
        let words: Vec<u64> = self.cells[1..]
            .iter()
            .map(|word| word.swap(SEALED, Ordering::Relaxed))
            .collect();
        self.tallies.swap(SEALED, Ordering::Relaxed);
        self.outcomes_in(&words, generation)
    }

    /// The outcomes the period of `generation` holds, oldest first, as they are now (a
    /// recorder racing the reading may or may not be in it).
    pub(crate) fn outcomes(&self, generation: u32) -> Vec<Outcome> {
        let words: Vec<u64> = self.cells[1..]
            .iter()
            .map(|word| word.load(Ordering::Relaxed))
            .collect();
        self.outcomes_in(&words, generation)
    }

    /// The outcomes of the period of `generation` that `words` (the slot words) hold, oldest
    /// first.
    fn outcomes_in(&self, words: &[u64], generation: u32) -> Vec<Outcome> {
        let size = self.size as usize;
        let oldest = cursor_position(self.cursor().load(Ordering::Relaxed)) % size;
        let tag = u64::from(generation & GEN_MASK);
        (0..size)
            .map(|k| (oldest + k) % size)
            .filter_map(|index| {
                let word = words[index / SLOTS_PER_WORD];
                if word >> (2 * SLOTS_PER_WORD) != tag {
                    return None;
                }
                decode((word >> (2 * (index % SLOTS_PER_WORD))) & 3)
            })
            .collect()
    }

    /// A window of `size` for the period of `generation`, holding the newest `size` of
    /// `outcomes` (oldest first), in their order.
    pub(crate) fn holding(size: u32, generation: u32, outcomes: &[Outcome]) -> CountWindow {
        let window = CountWindow::new(size, generation);
        let kept = &outcomes[outcomes.len().saturating_sub(window.size as usize)..];
        let tag = u64::from(generation & GEN_MASK) << (2 * SLOTS_PER_WORD);
        let mut tally = Tally::EMPTY;
        for (index, &outcome) in kept.iter().enumerate() {
            let word = window.word(index);
            let codes = word.load(Ordering::Relaxed);
            let codes = if codes >> (2 * SLOTS_PER_WORD) == tag >> (2 * SLOTS_PER_WORD) {
                codes & CODES_MASK
            } else {
                CODE_EMPTY
            };
            word.store(
                tag | codes | (encode(outcome) << (2 * (index % SLOTS_PER_WORD))),
                Ordering::Relaxed,
            );
            tally.add(outcome);
        }
        let next = kept.len() % window.size as usize;
        window
            .cursor()
            .store(pack_cursor(generation, next), Ordering::Relaxed);
        window
            .tallies
            .store(pack(generation, tally), Ordering::Relaxed);
        window
    }
}

/// Sets a word for a new period while recorders of the ending one may be mid-CAS on it. A
/// store is enough: a read-modify-write reads the value just before its own write, so each is
/// ordered wholly before or after the store, and a CAS after it fails on the new generation.
/// loom's store can slip between another thread's read and write (tokio-rs/loom#254), so the
/// model swaps, which it orders as the memory model does.
fn restart(word: &AtomicU64, value: u64) {
    #[cfg(breaker_loom)]
    word.swap(value, Ordering::Relaxed);
    #[cfg(not(breaker_loom))]
    word.store(value, Ordering::Relaxed);
}

fn encode(outcome: Outcome) -> u64 {
    match outcome {
        Outcome::Success => CODE_SUCCESS,
        Outcome::Failure => CODE_FAILURE,
        Outcome::Slow => CODE_SLOW,
    }
}

fn decode(code: u64) -> Option<Outcome> {
    match code {
        CODE_SUCCESS => Some(Outcome::Success),
        CODE_FAILURE => Some(Outcome::Failure),
        CODE_SLOW => Some(Outcome::Slow),
        _ => None,
    }
}

fn bump(fields: &mut Tally, outcome: Outcome, delta: u32) {
    match outcome {
        Outcome::Success => {}
        Outcome::Slow => fields.slow = fields.slow.wrapping_add(delta),
        Outcome::Failure => fields.failures = fields.failures.wrapping_add(delta),
    }
}

/// A tally is judged only when it is consistent; a transient low count that wrapped below zero
/// is not (its recorder is about to finish and judge the settled counts).
fn consistent(t: Tally) -> Option<Tally> {
    (t.failures <= t.calls && t.slow <= t.calls && t.failures + t.slow <= t.calls).then_some(t)
}

/// The cursor: the period's generation (as in the tally word) and the next slot to write.
fn pack_cursor(generation: u32, index: usize) -> u64 {
    (u64::from(generation & GEN_MASK) << (3 * FIELD_BITS)) | index as u64
}

fn cursor_position(cursor: u64) -> usize {
    (cursor & ((1 << (3 * FIELD_BITS)) - 1)) as usize
}

fn gen_of(word: u64) -> u32 {
    (word >> (3 * FIELD_BITS)) as u32
}

fn pack(generation: u32, t: Tally) -> u64 {
    (u64::from(generation & GEN_MASK) << (3 * FIELD_BITS))
        | ((u64::from(t.calls) & FIELD_MASK) << (2 * FIELD_BITS))
        | ((u64::from(t.failures) & FIELD_MASK) << FIELD_BITS)
        | (u64::from(t.slow) & FIELD_MASK)
}

fn unpack(word: u64) -> Tally {
    // Fields are 14-bit counters in modular arithmetic: a transient "-1" reads as 16383, above
    // any real count, which `consistent` turns away; adding the missing 1 wraps it back to 0.
    Tally {
        calls: ((word >> (2 * FIELD_BITS)) & FIELD_MASK) as u32,
        failures: ((word >> FIELD_BITS) & FIELD_MASK) as u32,
        slow: (word & FIELD_MASK) as u32,
    }
}

#[cfg(test)]
mod tests;
