//! The values that replaced one a reader reaches without a lock.
//!
//! A reader may still hold the value it loaded when a writer replaces it, and nothing on a
//! reader's path says when it lets go (announcing itself would cost the hot path the atomic
//! write this exists to avoid). So no value is dropped before its owner: every replacement
//! stays, in a list that only grows, until the list drops. Replacements are an operator's
//! changes, few in a process's life, each keeping tens of bytes.
//!
//! The first value is the owner's to keep (inline, where reading it costs nothing more than
//! before it could be replaced). Replacements live in chunks of doubling size, so that the n-th
//! is found in two steps whatever n is, each written once (`OnceLock`), which is what lets a
//! reader hold one without `unsafe`.

use std::sync::OnceLock;

use crate::base::sync::{AtomicU64, Ordering};

/// Chunks of 1, 2, 4, ... replacements: room for 2^24 - 1 of them.
const CHUNKS: usize = 24;

pub(crate) struct Replacements<T> {
    /// Which value is current: 0 for the first (the owner's), n for the n-th replacement.
    current: AtomicU64,
    /// Chunk k holds replacements 2^k to 2^(k+1) - 1. Allocated with the first: a breaker
    /// whose options change but whose window never does keeps a word here.
    chunks: OnceLock<Box<Chunks<T>>>,
}

type Chunks<T> = [OnceLock<Box<[OnceLock<T>]>>; CHUNKS];

/// No room for another replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Full;

impl<T> Replacements<T> {
    pub(crate) fn new() -> Replacements<T> {
        Replacements {
            current: AtomicU64::new(0),
            chunks: OnceLock::new(),
        }
    }

    /// The current value: `first`, or the last replacement.
    #[inline]
    pub(crate) fn get<'a>(&'a self, first: &'a T) -> &'a T {
        // Acquire pairs with the Release of `replace`: whoever loads the new index sees its
        // value written.
        match self.current.load(Ordering::Acquire) {
            0 => first,
            n => self.nth(n).unwrap_or(first),
        }
    }

    fn nth(&self, n: u64) -> Option<&T> {
        let (chunk, offset) = place(n);
        self.chunks.get()?.get(chunk)?.get()?.get(offset)?.get()
    }

    /// Whether another value can be put in.
    pub(crate) fn has_room(&self) -> bool {
        place(self.current.load(Ordering::Relaxed) + 1).0 < CHUNKS
    }

    /// Makes `value` the current one. The caller is the only writer (it holds the owner's
    /// lock); the value replaced stays, for readers that still hold it.
    pub(crate) fn replace(&self, value: T) -> Result<(), Full> {
        let n = self.current.load(Ordering::Relaxed) + 1;
        let (chunk, offset) = place(n);
        let values = self
            .chunks
            .get_or_init(|| Box::new(std::array::from_fn(|_| OnceLock::new())))
            .get(chunk)
            .ok_or(Full)?
            .get_or_init(|| (0..1usize << chunk).map(|_| OnceLock::new()).collect());
        values[offset].set(value).map_err(|_| Full)?;
        self.current.store(n, Ordering::Release);
        Ok(())
    }

    /// Every replacement so far, the current one last.
    pub(crate) fn all(&self) -> impl Iterator<Item = &T> {
        (1..=self.current.load(Ordering::Acquire)).filter_map(|n| self.nth(n))
    }

    /// Bytes on the heap behind the chunks (their values' own heap aside).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.chunks.get().map_or(0, |chunks| {
            size_of::<Chunks<T>>()
                + chunks
                    .iter()
                    .filter_map(OnceLock::get)
                    .map(|values| size_of_val(&**values))
                    .sum::<usize>()
        })
    }
}

/// The chunk and the place in it of replacement `n` (from 1).
fn place(n: u64) -> (usize, usize) {
    let chunk = (u64::BITS - 1 - n.leading_zeros()) as usize;
    (chunk, (n - (1 << chunk)) as usize)
}

#[cfg(all(test, not(breaker_loom)))]
mod tests {
    use super::Replacements;

    #[test]
    fn every_replacement_is_current_in_turn_and_all_are_kept() {
        let first = 0u32;
        let list = Replacements::new();
        assert_eq!(*list.get(&first), 0);
        for n in 1..=100 {
            list.replace(n).unwrap();
            assert_eq!(*list.get(&first), n);
        }
        assert_eq!(
            list.all().copied().collect::<Vec<_>>(),
            (1..=100).collect::<Vec<_>>()
        );
    }

    #[test]
    fn replacements_find_their_place_in_chunks_of_doubling_size() {
        assert_eq!(super::place(1), (0, 0));
        assert_eq!(super::place(2), (1, 0));
        assert_eq!(super::place(3), (1, 1));
        assert_eq!(super::place(4), (2, 0));
        assert_eq!(super::place(7), (2, 3));
        assert_eq!(super::place(8), (3, 0));
        assert_eq!(super::place((1 << 24) - 1).0, 23);
    }
}
