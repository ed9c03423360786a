//! The half-open circuit's probe slots.
//!
//! At most `probes` calls hold a slot at once. A slot is freed by its probe's outcome, by its
//! cancellation, or, for a probe that never answers, once it has held the slot for the break
//! duration: a hung probe cannot keep the circuit half-open for ever.

use crate::clock::Nanos;

#[derive(Debug)]
pub(crate) struct Probes {
    slots: Box<[Slot]>,
    /// Ids start at 1: id 0 marks a free slot.
    last_id: u64,
    /// Successful probes in a row in the current half-open period.
    pub(crate) successes: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
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
            last_id: 0,
            successes: 0,
        }
    }

    /// Empties every slot for a new half-open period.
    pub(crate) fn clear(&mut self) {
        self.slots.fill(Slot::FREE);
        self.successes = 0;
    }

    /// Takes a slot for a new probe, first freeing those held for `give_up_after` or longer.
    pub(crate) fn admit(&mut self, now: Nanos, give_up_after: Nanos) -> Option<u64> {
        for slot in self.slots.iter_mut() {
            if !slot.is_free() && now.saturating_sub(slot.admitted_at) >= give_up_after {
                *slot = Slot::FREE;
            }
        }
        let free = self.slots.iter_mut().find(|slot| slot.is_free())?;
        self.last_id += 1;
        *free = Slot {
            id: self.last_id,
            admitted_at: now,
        };
        Some(self.last_id)
    }

    /// Frees the probe's slot, if it still holds one.
    pub(crate) fn release(&mut self, id: u64) {
        if let Some(slot) = self.slots.iter_mut().find(|s| s.id == id) {
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
