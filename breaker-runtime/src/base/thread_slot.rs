//! A small number owned by the current thread while it lives, so per-thread shards of a counter
//! can be written with a plain load and store instead of a read-modify-write: no other thread
//! writes the shard of a number it does not hold.
//!
//! Numbers are handed out lowest first and given back when their thread exits, so they stay
//! below the number of threads alive at once. A thread that cannot hold one (it is already
//! tearing down its thread-locals) gets `None` and uses the shared shard.

// Under loom only `current` is used (see there).
#![cfg_attr(breaker_loom, allow(dead_code))]

use std::cell::Cell;
use std::sync::Mutex;

/// Not yet asked for.
const UNASSIGNED: u32 = u32::MAX;
/// Given back (or never obtainable): the thread uses the shared shard from now on.
const SHARED: u32 = u32::MAX - 1;

thread_local! {
    // Const-initialised and without a destructor, so reading it is a plain thread-local load
    // with no registration check on the hot path.
    static SLOT: Cell<u32> = const { Cell::new(UNASSIGNED) };
    // The destructor that gives the number back, registered once per thread, off the hot path.
    static HELD: Held = const { Held(Cell::new(UNASSIGNED)) };
}

/// Numbers given back by exited threads, and the next one never handed out.
static FREE: Mutex<Free> = Mutex::new(Free {
    returned: Vec::new(),
    next: 0,
});

struct Free {
    returned: Vec<u32>,
    next: u32,
}

struct Held(Cell<u32>);

impl Drop for Held {
    fn drop(&mut self) {
        let number = self.0.get();
        // Later thread-local destructors of this thread may still record: they use the shared
        // shard, never the number another thread may take from here on.
        SLOT.with(|slot| slot.set(SHARED));
        if number < SHARED {
            // The lock orders this thread's last writes to its shards before the next holder's
            // first read of them.
            let mut free = FREE
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            free.returned.push(number);
        }
    }
}

/// The current thread's number, or `None` when it must share.
#[cfg(not(breaker_loom))]
#[inline]
pub(crate) fn current() -> Option<usize> {
    match SLOT.with(Cell::get) {
        UNASSIGNED => assign(),
        SHARED => None,
        number => Some(number as usize),
    }
}

/// Under loom every modelled thread runs on one OS thread, whose thread-locals they would share:
/// they all use the shared shard, which the model then checks.
#[cfg(breaker_loom)]
pub(crate) fn current() -> Option<usize> {
    None
}

#[cold]
#[inline(never)]
fn assign() -> Option<usize> {
    let registered = HELD.try_with(|held| {
        let number = take();
        held.0.set(number);
        number
    });
    let number = registered.unwrap_or(SHARED);
    SLOT.with(|slot| slot.set(number));
    (number < SHARED).then_some(number as usize)
}

fn take() -> u32 {
    let mut free = FREE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Lowest first keeps the numbers of a long-lived pool of threads small.
    if let Some(lowest) = free
        .returned
        .iter()
        .enumerate()
        .min_by_key(|(_, n)| **n)
        .map(|(i, _)| i)
    {
        return free.returned.swap_remove(lowest);
    }
    if free.next >= SHARED {
        return SHARED;
    }
    free.next += 1;
    free.next - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_keeps_its_number_and_threads_alive_at_once_differ() {
        let mine = current();
        assert_eq!(current(), mine, "asked twice, the same number");
        let barrier = &std::sync::Barrier::new(2);
        let (a, b) = std::thread::scope(|scope| {
            let one = scope.spawn(move || {
                let n = current();
                barrier.wait();
                n
            });
            let two = scope.spawn(move || {
                let n = current();
                barrier.wait();
                n
            });
            (one.join().unwrap(), two.join().unwrap())
        });
        assert!(a.is_some() && b.is_some());
        assert_ne!(a, b, "two live threads never share a number");
        assert_ne!(a, mine);
        assert_ne!(b, mine);
    }

    #[test]
    fn an_exited_threads_number_is_handed_out_again() {
        let first = std::thread::spawn(current).join().unwrap();
        let second = std::thread::spawn(current).join().unwrap();
        assert!(first.is_some());
        // Other tests run threads concurrently, so the lowest free number may belong to one of
        // theirs; what must hold is that numbers are reused rather than grow per thread.
        let many: Vec<_> = (0..50)
            .map(|_| std::thread::spawn(current).join().unwrap().unwrap())
            .collect();
        let highest = many.into_iter().max().unwrap();
        assert!(
            highest < 50,
            "50 threads one after another took numbers up to {highest}: exited threads' numbers \
             were not reused (first {first:?}, second {second:?})"
        );
    }
}
