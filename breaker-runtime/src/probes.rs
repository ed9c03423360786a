//! The half-open circuit's probe slots.
//!
//! At most `probes` calls hold a slot at once. A slot is freed by its probe's outcome, by its
//! cancellation, or, for a probe that never answers, once it has held the slot for the break
//! duration: a hung probe cannot keep the circuit half-open for ever.

use crate::clock::Nanos;

#[derive(Debug)]
pub(crate) struct Probes {
    slots: Box<[Slot]>,
    /// No held slot was admitted before this (`Nanos::MAX` when none is held), so none can
    /// have hung before this plus the break: until then, admission scans nothing.
    earliest: Nanos,
    /// Admissions so far (wrapping); a probe's id is this count above its slot's index.
    admitted: u32,
    /// Successful probes in a row in the current half-open period.
    pub(crate) successes: u32,
}

/// Bits of a probe id that name its slot: room for [`MAX_PROBES`](crate::MAX_PROBES).
const INDEX_BITS: u32 = 10;
const _: () = assert!(crate::config::MAX_PROBES <= 1 << INDEX_BITS);

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// 0 while free; ids start above every index.
    id: u64,
    admitted_at: Nanos,
}

impl Slot {
    const FREE: Slot = Slot {
        id: 0,
        admitted_at: 0,
    };

    fn is_free(self) -> bool {
        self.id == 0
    }
}

impl Probes {
    pub(crate) fn new(capacity: u32) -> Probes {
        Probes {
            slots: vec![Slot::FREE; capacity as usize].into_boxed_slice(),
            earliest: Nanos::MAX,
            admitted: 0,
            successes: 0,
        }
    }

    /// Empties every slot for a new half-open period.
    pub(crate) fn clear(&mut self) {
        self.slots.fill(Slot::FREE);
        self.earliest = Nanos::MAX;
        self.successes = 0;
    }

    /// Takes a slot for a new probe, first freeing those held for `give_up_after` or longer.
    /// The slots are only scanned for hung probes once one may have hung, so admitting a probe
    /// costs no scan while the probes answer in time.
    pub(crate) fn admit(&mut self, now: Nanos, give_up_after: Nanos) -> Option<u64> {
        if now.saturating_sub(self.earliest) >= give_up_after {
            self.free_hung(now, give_up_after);
        }
        let index = self.slots.iter().position(|slot| slot.is_free())?;
        // Never 0, so an id is never the free mark, even for slot 0 after a wrap.
        self.admitted = self.admitted.wrapping_add(1).max(1);
        let id = (u64::from(self.admitted) << INDEX_BITS) | index as u64;
        self.slots[index] = Slot {
            id,
            admitted_at: now,
        };
        self.earliest = self.earliest.min(now);
        Some(id)
    }

    fn free_hung(&mut self, now: Nanos, give_up_after: Nanos) {
        let mut earliest = Nanos::MAX;
        for slot in self.slots.iter_mut().filter(|slot| !slot.is_free()) {
            if now.saturating_sub(slot.admitted_at) >= give_up_after {
                *slot = Slot::FREE;
            } else {
                earliest = earliest.min(slot.admitted_at);
            }
        }
        self.earliest = earliest;
    }

    /// Frees the probe's slot, if it still holds one.
    pub(crate) fn release(&mut self, id: u64) {
        let index = (id & ((1 << INDEX_BITS) - 1)) as usize;
        if let Some(slot) = self.slots.get_mut(index).filter(|slot| slot.id == id) {
            *slot = Slot::FREE;
        }
    }

    /// Bytes on the heap behind the slots.
    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.slots)
    }

    pub(crate) fn in_flight(&self) -> u32 {
        self.slots.iter().filter(|s| !s.is_free()).count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_capacity_and_frees_on_release() {
        let mut probes = Probes::new(2);
        let a = probes.admit(0, 100).unwrap();
        let _b = probes.admit(0, 100).unwrap();
        assert_eq!(probes.admit(0, 100), None);
        probes.release(a);
        assert!(probes.admit(0, 100).is_some());
        assert_eq!(probes.in_flight(), 2);
    }

    #[test]
    fn hung_probes_are_freed_at_the_first_admission_after_they_hang() {
        let mut probes = Probes::new(3);
        let hung = probes.admit(0, 100).unwrap();
        let _ = probes.admit(50, 100).unwrap();
        assert_eq!(probes.in_flight(), 2);
        let _ = probes.admit(120, 100).unwrap();
        assert_eq!(
            probes.in_flight(),
            2,
            "the first gave up its slot, the second runs on"
        );
        probes.release(hung);
        assert_eq!(probes.in_flight(), 2, "its late answer frees nothing");
        let _ = probes.admit(149, 100).unwrap();
        assert_eq!(probes.admit(149, 100), None);
        assert!(probes.admit(150, 100).is_some(), "the second hung at 150");
    }

    #[test]
    fn ids_name_their_slot_and_are_never_reused() {
        let mut probes = Probes::new(3);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10 {
            let id = probes.admit(0, 100).unwrap();
            assert!(seen.insert(id));
            probes.release(id);
        }
        assert_eq!(probes.in_flight(), 0);
    }

    #[test]
    fn a_probe_held_for_the_break_gives_up_its_slot() {
        let mut probes = Probes::new(1);
        let hung = probes.admit(10, 100).unwrap();
        assert_eq!(probes.admit(109, 100), None);
        let next = probes.admit(110, 100).unwrap();
        probes.release(hung);
        assert_eq!(
            probes.in_flight(),
            1,
            "the hung probe's late release frees nothing of the next"
        );
        probes.release(next);
        assert_eq!(probes.in_flight(), 0);
    }
}
