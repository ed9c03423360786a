//! The calls admitted and not yet ended, in the order they end: by their end, then by their
//! place in the trace. The order holds small keys; the permits wait in slots of their own, so
//! that keeping the order moves 24 bytes a step, not a permit.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use breaker_runtime::Permit;

use super::Ending;

/// An admitted call, ending.
pub(super) struct Ended<'b> {
    /// When, in milliseconds since the trace's start.
    pub ends_ms: u64,
    /// Its place in the trace.
    pub index: usize,
    pub permit: Permit<'b>,
    pub ending: Ending,
}

#[derive(Default)]
pub(super) struct Running<'b> {
    /// (end, place in the trace, slot), the soonest first.
    order: BinaryHeap<Reverse<(u64, usize, usize)>>,
    slots: Vec<Option<(Permit<'b>, Ending)>>,
    free: Vec<usize>,
}

impl<'b> Running<'b> {
    pub(super) fn push(&mut self, ends_ms: u64, index: usize, permit: Permit<'b>, ending: Ending) {
        let held = Some((permit, ending));
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = held;
                slot
            }
            None => {
                self.slots.push(held);
                self.slots.len() - 1
            }
        };
        self.order.push(Reverse((ends_ms, index, slot)));
    }

    /// The next call to end, if it ends by `until_ms`.
    pub(super) fn pop_until(&mut self, until_ms: u64) -> Option<Ended<'b>> {
        let &Reverse((ends_ms, index, slot)) = self.order.peek()?;
        if ends_ms > until_ms {
            return None;
        }
        self.order.pop();
        let (permit, ending) = self.slots.get_mut(slot)?.take()?;
        self.free.push(slot);
        Some(Ended {
            ends_ms,
            index,
            permit,
            ending,
        })
    }
}
