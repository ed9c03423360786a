//! The half-open circuit's probe slots and its run of successes (or its probes' answers), kept
//! without a lock.
//!
//! At most `probes` calls hold a slot at once. A slot is freed by its probe's outcome, by its
//! cancellation, or, for a probe that never answers, once it has held the slot for the break
//! duration: a hung probe cannot keep the circuit half-open for ever. Under the rate rule
//! (`probe_threshold`) a probe's outcome does not free its slot but marks it answered, so that
//! the period admits `probes` answers and no more, and the answers are judged together once
//! the last is in; an ignored or cancelled probe, and a hung one, still free theirs.
//!
//! A held slot holds its probe's *stamp*: the low bits of the half-open period's generation and
//! of the admission time. The stamp does three jobs at once. It names the holder, so that a
//! probe gives back only its own slot (one compare-and-swap); it dates the holder, so that a hung
//! one can be told without a clock per slot; and it names the period, so a slot taken in an
//! earlier half-open period counts as free in a later one, and nothing has to be emptied when a
//! period begins, while a call that saw an earlier period and takes its slot late never takes
//! one held in a later period. Two holders of one slot never share a stamp: a
//! slot is taken from a probe that still holds it only once that probe has held it for the break
//! (which is never zero), and a slot of the same period is otherwise only retaken once freed.
//!
//! Every ordering is `Relaxed` but a give-back's: a slot's stamp and the run's counter each say
//! in their own value which period they belong to, and nothing else is published through them.
//! What the period begins with (its run, its first slot) is published by the state word that
//! announces it. A give-back is `SeqCst`, for the tasks waiting for a slot ([`Probes::release`]).

use crate::base::clock::Nanos;
use crate::base::sync::{AtomicU64, Ordering};
use crate::core::config::Rate;
use crate::core::window::{Outcome, Tally};

pub(crate) struct Probes {
    /// The slots, then, under the rate rule, the rule's word (`RULE_WORD` and the threshold in
    /// millionths), which no probe ever takes: a breaker of the default rule keeps no word
    /// for a rule it does not have, and the rule never changes (a change of rule replaces the
    /// slots).
    slots: Box<[AtomicU64]>,
    /// The period's generation in the high half and, in the low half, its successful probes
    /// (the default rule) or its answers (the rate rule: `ANSWER_BITS` each of answers,
    /// failures and slow successes), so that an outcome from an earlier period is never
    /// counted in this one; `RATE_RULE` marks it for good under the rate rule.
    successes: AtomicU64,
}

/// Set in the run, whatever the period, under the rate rule.
const RATE_RULE: u64 = 1 << 31;
/// Marks the rule's word: not free, and not held.
const RULE_WORD: u64 = ANSWERED;

/// What a probe's answer came to under the rate rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answered {
    /// Counted; others are still out.
    Counted,
    /// The last of the period's answers: the period's probes, to judge.
    All(Tally),
    /// Its period is over, or its slot was given to another after it hung: counted nowhere.
    Late,
}

/// Bits of each count of the rate rule's answers: at most `MAX_PROBES` each.
const ANSWER_BITS: u32 = 10;
const ANSWER_MASK: u64 = (1 << ANSWER_BITS) - 1;
const _: () = assert!(crate::core::config::MAX_PROBES as u64 <= ANSWER_MASK);

/// A probe's claim on its slot: the slot's index above the admission time. With the period's
/// generation, which the permit keeps anyway, it gives the stamp back; one word keeps every
/// permit small enough to be handed over in registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProbeId(u64);

/// Bits of a stamp that hold the admission time, in nanoseconds: 2^53 ns is about 104 days.
/// Above them one bit set in every stamp, so that no stamp is [`FREE`], one set once the
/// probe answered under the rate rule, and the period's tag.
const TIME_BITS: u32 = 53;
const TIME_MASK: u64 = (1 << TIME_BITS) - 1;
const HELD: u64 = 1 << TIME_BITS;
const ANSWERED: u64 = 1 << (TIME_BITS + 1);
const TAG_SHIFT: u32 = TIME_BITS + 2;
const FREE: u64 = 0;
/// How far another thread's reading may run ahead of ours: a stamp up to this far "in the
/// future" is a probe that has just started.
const SKEW: Nanos = 1_000_000_000;

/// Bits of a probe's claim above the time: the index of its slot, and a mark
/// for a probe judged by the rate rule, so that its outcome finds its way without reading the
/// rule again.
const INDEX_BITS: u32 = 10;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;
const RATE_PROBE: u64 = 1 << 63;
const _: () = assert!(TIME_BITS + INDEX_BITS <= 63);
const _: () = assert!(crate::core::config::MAX_PROBES as u64 <= INDEX_MASK);

impl ProbeId {
    fn new(index: usize, now: Nanos, rate_rule: bool) -> ProbeId {
        let rate = if rate_rule { RATE_PROBE } else { 0 };
        ProbeId(rate | ((index as u64) << TIME_BITS) | (now & TIME_MASK))
    }

    /// The index of its slot.
    fn index(self) -> usize {
        (self.0 >> TIME_BITS & INDEX_MASK) as usize
    }

    /// Whether its outcome is counted by the rate rule.
    pub(crate) fn judged_by_rate(self) -> bool {
        self.0 & RATE_PROBE != 0
    }

    fn stamp(self, generation: u32) -> u64 {
        stamp(generation, self.0)
    }
}

/// The stamp of a probe admitted at `now` in the period of `generation`.
fn stamp(generation: u32, now: Nanos) -> u64 {
    (u64::from(period_tag(generation)) << TAG_SHIFT) | HELD | (now & TIME_MASK)
}

/// The low 9 bits of the generation. Tags are compared as a circle: of two periods less than
/// 256 generations apart, the later one is known, which is all a slot needs (a half-open period
/// lasts at least a break, so a call 256 generations late does not happen).
fn period_tag(generation: u32) -> u16 {
    (generation & TAG_MASK) as u16
}

const TAG_MASK: u32 = 0x1ff;

/// Whether period tag `a` comes after tag `b`.
fn later(a: u16, b: u16) -> bool {
    let ahead = u32::from(a.wrapping_sub(b)) & TAG_MASK;
    ahead != 0 && ahead <= TAG_MASK / 2
}

fn tag_of(stamp: u64) -> u16 {
    (stamp >> TAG_SHIFT) as u16
}

/// Whether the slot can be given to a new probe of the period `generation` at `now`.
fn takeable(held: u64, generation: u32, now: Nanos, give_up_after: Nanos) -> bool {
    if held == FREE {
        return true;
    }
    if held & HELD == 0 {
        // The rate rule's word.
        return false;
    }
    let (ours, theirs) = (period_tag(generation), tag_of(held));
    if ours != theirs {
        // Held in an earlier period, which is over: free. Held in a later one: this call is
        // late for a period that is over, and must not take a slot from the current one.
        return later(ours, theirs);
    }
    if held & ANSWERED != 0 {
        // Spent: the rate rule admits a slot's worth of answers per period.
        return false;
    }
    let held_for = now.wrapping_sub(held) & TIME_MASK;
    let just_started = held_for > TIME_MASK - SKEW;
    !just_started && held_for >= give_up_after
}

impl Probes {
    /// Slots for `capacity` probes at once, judged by the rate rule at `threshold`, or by the
    /// default rule (every probe must succeed) without one.
    pub(crate) fn new(capacity: u32, threshold: Option<Rate>) -> Probes {
        let rule = threshold.map(|rate| RULE_WORD | u64::from(rate.ppm()));
        Probes {
            slots: (0..capacity)
                .map(|_| FREE)
                .chain(rule)
                .map(AtomicU64::new)
                .collect(),
            successes: AtomicU64::new(if rule.is_some() { RATE_RULE } else { 0 }),
        }
    }

    fn rate_rule(&self) -> bool {
        self.successes.load(Ordering::Relaxed) & RATE_RULE != 0
    }

    fn rule(&self) -> u32 {
        match self.slots.last() {
            // Stored from a rate's millionths, so the cast is exact.
            Some(rule) if self.rate_rule() => (rule.load(Ordering::Relaxed) & !RULE_WORD) as u32,
            _ => 0,
        }
    }

    /// The rate rule's threshold, or `None` for the default rule.
    pub(crate) fn threshold(&self) -> Option<Rate> {
        let ppm = self.rule();
        (ppm > 0).then(|| Rate::from_ppm(ppm))
    }

    /// Starts the half-open period of `generation` with no success, unless it or a later one
    /// has begun: calls racing to begin the same period, or one late for it, must not wipe the
    /// successes already counted. Called before the state word announces the period, whose
    /// Release publishes this.
    pub(crate) fn begin(&self, generation: u32) {
        if self.counts_nothing() {
            return;
        }
        let mut current = self.successes.load(Ordering::Relaxed);
        let fresh = u64::from(generation) << 32 | (current & RATE_RULE);
        // Generations are compared as a circle, as the state word advances them.
        while (generation.wrapping_sub((current >> 32) as u32) as i32) > 0 {
            match self.successes.compare_exchange_weak(
                current,
                fresh,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Takes a slot for a probe of the period `generation`: a free one, or one whose probe has
    /// held it for `give_up_after` or longer. `None` when every slot is busy.
    pub(crate) fn admit(
        &self,
        generation: u32,
        now: Nanos,
        give_up_after: Nanos,
    ) -> Option<ProbeId> {
        let stamp = stamp(generation, now);
        // The rule's word, where there is one, is never takeable: the rule need not be read
        // before the slots.
        for (index, slot) in self.slots.iter().enumerate() {
            let mut held = slot.load(Ordering::Relaxed);
            while takeable(held, generation, now, give_up_after) {
                match slot.compare_exchange_weak(held, stamp, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => return Some(ProbeId::new(index, now, self.rate_rule())),
                    Err(now_held) => held = now_held,
                }
            }
        }
        None
    }

    /// Gives back the slot of a probe of the period `generation`, if it still holds it.
    /// `SeqCst`, for the waiters: the breaker's `wake_after_swap` reads their count after
    /// it, and a waiter that counted itself before reads the slot free (as cheap as `Relaxed`
    /// where a read-modify-write is a full barrier anyway, as on x86-64).
    pub(crate) fn release(&self, generation: u32, probe: ProbeId) {
        if let Some(slot) = self.slots.get(probe.index()) {
            // Fails when the slot was taken from a hung probe: the new holder keeps it.
            let stamp = probe.stamp(generation);
            let _ = slot.compare_exchange(stamp, FREE, Ordering::SeqCst, Ordering::Relaxed);
        }
    }

    /// Counts a successful probe of the period `generation` under the default rule: whether
    /// the run of successes is now whole (`probes` in a row), or `None` when that period is
    /// over. With one slot the success is the whole run and nothing is counted: the answer is
    /// yes, and whoever acts on it checks the period itself.
    pub(crate) fn succeeded(&self, generation: u32) -> Option<bool> {
        if self.counts_nothing() {
            return Some(true);
        }
        // Under the default rule every word is a slot.
        let capacity = self.slots.len() as u64;
        let mut current = self.successes.load(Ordering::Relaxed);
        loop {
            if (current >> 32) as u32 != generation {
                return None;
            }
            let next = current.wrapping_add(1);
            match self.successes.compare_exchange_weak(
                current,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some((next & u64::from(u32::MAX) & !RATE_RULE) >= capacity),
                Err(actual) => current = actual,
            }
        }
    }

    /// Counts the answer of a probe of the period `generation` under the rate rule, and marks
    /// its slot spent for the period. A probe whose slot was given to another after it hung,
    /// or whose period is over, is counted nowhere.
    pub(crate) fn answer(&self, generation: u32, probe: ProbeId, outcome: Outcome) -> Answered {
        let Some(slot) = self.slots.get(probe.index()) else {
            return Answered::Late;
        };
        let stamp = probe.stamp(generation);
        if slot
            .compare_exchange(
                stamp,
                stamp | ANSWERED,
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return Answered::Late;
        }
        let added = 1
            | u64::from(outcome == Outcome::Failure) << ANSWER_BITS
            | u64::from(outcome == Outcome::Slow) << (2 * ANSWER_BITS);
        let mut current = self.successes.load(Ordering::Relaxed);
        loop {
            if (current >> 32) as u32 != generation {
                return Answered::Late;
            }
            // Each count stays within its bits: a slot answers once a period.
            let next = current + added;
            match self.successes.compare_exchange_weak(
                current,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    let tally = Tally {
                        calls: (next & ANSWER_MASK) as u32,
                        failures: (next >> ANSWER_BITS & ANSWER_MASK) as u32,
                        slow: (next >> (2 * ANSWER_BITS) & ANSWER_MASK) as u32,
                    };
                    return if tally.calls >= self.capacity() {
                        Answered::All(tally)
                    } else {
                        Answered::Counted
                    };
                }
                Err(actual) => current = actual,
            }
        }
    }

    /// One probe's success is the whole run under the default rule: no count to keep (nor
    /// its read-modify-write).
    fn counts_nothing(&self) -> bool {
        // One slot: a rule would be a second word.
        self.slots.len() == 1
    }

    /// How many probes may hold a slot at once, and how many successes in a row close the
    /// circuit: the `probes` these slots were made for.
    pub(crate) fn capacity(&self) -> u32 {
        // At most MAX_PROBES slots, and the rule's word after them, so the cast is exact.
        (self.slots.len() - usize::from(self.rate_rule())) as u32
    }

    /// Bytes on the heap behind the slots.
    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.slots)
    }

    /// Probes of the period `generation` holding a slot at `now`: a hung probe has given
    /// its slot up, whether or not a new probe took it yet, and one that answered under the
    /// rate rule holds none.
    pub(crate) fn in_flight(&self, generation: u32, now: Nanos, give_up_after: Nanos) -> u32 {
        self.slots
            .iter()
            .map(|slot| slot.load(Ordering::Relaxed))
            .filter(|&held| held & ANSWERED == 0 && !takeable(held, generation, now, give_up_after))
            .count() as u32
    }
}

#[cfg(all(test, not(breaker_loom)))]
mod tests {
    use super::*;

    const US: Nanos = 1_000;

    #[test]
    fn admits_up_to_capacity_and_frees_on_release() {
        let probes = Probes::new(2, None);
        let a = probes.admit(7, 0, 100 * US).unwrap();
        let _b = probes.admit(7, 0, 100 * US).unwrap();
        assert_eq!(probes.admit(7, 0, 100 * US), None);
        probes.release(7, a);
        assert!(probes.admit(7, 0, 100 * US).is_some());
        assert_eq!(probes.in_flight(7, 0, 100 * US), 2);
    }

    #[test]
    fn hung_probes_give_up_their_slot_to_the_first_admission_after_they_hang() {
        let probes = Probes::new(2, None);
        let hung = probes.admit(1, 0, 100 * US).unwrap();
        let _ = probes.admit(1, 50 * US, 100 * US).unwrap();
        assert_eq!(probes.admit(1, 100 * US - 1, 100 * US), None, "not yet");
        assert_eq!(probes.in_flight(1, 100 * US, 100 * US), 1, "one has hung");
        let next = probes
            .admit(1, 100 * US, 100 * US)
            .expect("the first hung at 100 µs");
        assert_eq!(probes.in_flight(1, 100 * US, 100 * US), 2);
        probes.release(1, hung);
        assert_eq!(
            probes.in_flight(1, 100 * US, 100 * US),
            2,
            "its late release frees nothing"
        );
        assert_eq!(probes.admit(1, 150 * US - 1, 100 * US), None);
        assert!(
            probes.admit(1, 150 * US, 100 * US).is_some(),
            "the second hung at 150 µs"
        );
        probes.release(1, next);
        assert_eq!(probes.in_flight(1, 150 * US, 100 * US), 1);
    }

    #[test]
    fn a_probe_admitted_a_hair_later_elsewhere_is_not_hung() {
        let probes = Probes::new(1, None);
        let _ = probes.admit(1, 10 * US, 100 * US).unwrap();
        assert_eq!(probes.admit(1, 9 * US, 100 * US), None);
    }

    #[test]
    fn a_slot_of_an_earlier_period_is_free_in_the_next() {
        let probes = Probes::new(1, None);
        let stale = probes.admit(1, 0, 100 * US).unwrap();
        assert_eq!(probes.in_flight(3, 0, 100 * US), 0);
        let current = probes
            .admit(3, 0, 100 * US)
            .expect("the old holder's period is over");
        probes.release(1, stale);
        assert_eq!(
            probes.in_flight(3, 0, 100 * US),
            1,
            "the stale release frees nothing"
        );
        probes.release(3, current);
        assert_eq!(probes.in_flight(3, 0, 100 * US), 0);
    }

    #[test]
    fn a_call_late_for_its_period_takes_no_slot_of_a_later_one() {
        let probes = Probes::new(1, None);
        let current = probes.admit(6, 0, 100 * US).unwrap();
        assert_eq!(probes.admit(4, 0, 100 * US), None, "period 4 is over");
        assert_eq!(probes.in_flight(6, 0, 100 * US), 1);
        probes.release(6, current);
        // Late, but the slot is free: it takes it, and period 6 still counts it as free.
        let late = probes.admit(4, 0, 100 * US).unwrap();
        assert_eq!(probes.in_flight(6, 0, 100 * US), 0);
        assert!(probes.admit(6, 0, 100 * US).is_some());
        probes.release(4, late);
        assert_eq!(
            probes.in_flight(6, 0, 100 * US),
            1,
            "the late release freed nothing"
        );
    }

    #[test]
    fn period_tags_compare_around_the_circle() {
        assert!(later(1, 0) && !later(0, 1) && !later(3, 3));
        assert!(later(0, 0x1ff), "the tag after the last is the first");
        assert!(later(period_tag(700), period_tag(600)));
        assert!(!later(period_tag(600), period_tag(700)));
    }

    #[test]
    fn successes_count_only_in_their_own_period() {
        let probes = Probes::new(2, None);
        probes.begin(4);
        assert_eq!(probes.succeeded(4), Some(false), "one of two");
        assert_eq!(probes.succeeded(3), None);
        assert_eq!(probes.succeeded(4), Some(true), "two of two");
        probes.begin(6);
        assert_eq!(probes.succeeded(4), None);
        assert_eq!(probes.succeeded(6), Some(false));
        probes.begin(6);
        probes.begin(5);
        assert_eq!(
            probes.succeeded(6),
            Some(true),
            "beginning it again, or late, wipes nothing"
        );
    }

    #[test]
    fn one_probe_is_the_whole_run_and_nothing_is_counted() {
        let probes = Probes::new(1, None);
        probes.begin(4);
        assert_eq!(probes.succeeded(4), Some(true));
        assert_eq!(probes.succeeded(4), Some(true), "no run builds up");
        assert_eq!(
            probes.succeeded(3),
            Some(true),
            "the caller checks the period itself"
        );
    }

    fn half() -> Option<Rate> {
        Some(Rate::from_ppm(500_000))
    }

    #[test]
    fn the_rate_rule_admits_a_slots_worth_of_answers_and_judges_them_together() {
        let probes = Probes::new(3, half());
        probes.begin(2);
        let a = probes.admit(2, 0, 100 * US).unwrap();
        let b = probes.admit(2, 0, 100 * US).unwrap();
        let c = probes.admit(2, 0, 100 * US).unwrap();
        assert_eq!(probes.answer(2, a, Outcome::Failure), Answered::Counted);
        assert_eq!(
            probes.admit(2, 0, 100 * US),
            None,
            "an answered slot is spent for the period"
        );
        assert_eq!(probes.in_flight(2, 0, 100 * US), 2);
        assert_eq!(probes.answer(2, b, Outcome::Slow), Answered::Counted);
        assert_eq!(
            probes.answer(2, c, Outcome::Success),
            Answered::All(Tally {
                calls: 3,
                failures: 1,
                slow: 1
            })
        );
        assert_eq!(
            probes.answer(2, c, Outcome::Success),
            Answered::Late,
            "once"
        );
        probes.begin(4);
        assert!(
            probes.admit(4, 0, 100 * US).is_some(),
            "the next period's slots are free"
        );
    }

    #[test]
    fn under_the_rate_rule_a_hung_probes_late_answer_is_counted_nowhere() {
        let probes = Probes::new(1, half());
        probes.begin(2);
        let hung = probes.admit(2, 0, 100 * US).unwrap();
        let next = probes.admit(2, 100 * US, 100 * US).expect("it hung");
        assert_eq!(probes.answer(2, hung, Outcome::Failure), Answered::Late);
        assert_eq!(
            probes.answer(2, next, Outcome::Success),
            Answered::All(Tally {
                calls: 1,
                failures: 0,
                slow: 0
            })
        );
    }

    #[test]
    fn under_the_rate_rule_a_released_slot_is_admitted_again() {
        let probes = Probes::new(1, half());
        probes.begin(2);
        let ignored = probes.admit(2, 0, 100 * US).unwrap();
        probes.release(2, ignored);
        let next = probes.admit(2, 0, 100 * US).expect("freed");
        assert!(matches!(
            probes.answer(2, next, Outcome::Failure),
            Answered::All(_)
        ));
        assert_eq!(
            probes.answer(3, next, Outcome::Failure),
            Answered::Late,
            "another period's"
        );
    }
}
