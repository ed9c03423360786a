//! The bulkhead: at most `max_concurrent` calls through a breaker at once, lock-free to enter
//! and leave; a call over the cap is rejected at once, or waits up to `max_wait` for a slot.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

pub(crate) struct Bulkhead {
    cap: u32,
    in_flight: AtomicU32,
    /// Calls waiting for a slot: a leaving call wakes one only when there is one.
    waiting: AtomicU32,
    freed: Notify,
}

/// A call's place in the bulkhead, given back when dropped (at the end of its attempt, or when
/// the call is cancelled).
#[must_use = "the slot is given back when dropped"]
pub struct Slot<'a>(&'a Bulkhead);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let bulkhead = self.0;
        // Release: the work done in the slot happens before the next holder's entry (Acquire).
        bulkhead.in_flight.fetch_sub(1, Ordering::Release);
        // SeqCst, with the waiter's SeqCst increment: either the leaver sees the waiter and
        // wakes it, or the waiter's retry after registering sees the freed slot.
        if bulkhead.waiting.load(Ordering::SeqCst) > 0 {
            bulkhead.freed.notify_one();
        }
    }
}

impl Bulkhead {
    pub(crate) fn new(cap: u32) -> Bulkhead {
        Bulkhead {
            cap,
            in_flight: AtomicU32::new(0),
            waiting: AtomicU32::new(0),
            freed: Notify::new(),
        }
    }

    pub(crate) fn cap(&self) -> u32 {
        self.cap
    }

    pub(crate) fn in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// A slot if one is free, without waiting. A compare-and-swap, so the count never passes
    /// the cap, not even for a moment.
    #[inline]
    pub(crate) fn try_enter(&self) -> Option<Slot<'_>> {
        let mut current = self.in_flight.load(Ordering::Relaxed);
        loop {
            if current >= self.cap {
                return None;
            }
            // Acquire: see the work of the call whose slot this was.
            match self.in_flight.compare_exchange_weak(
                current,
                current + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(Slot(self)),
                Err(now) => current = now,
            }
        }
    }

    /// A slot, waiting up to `wait` on tokio's clock for one to be freed; `None` if none was.
    /// Cancel-safe: a call dropped while it waits holds nothing.
    pub(crate) async fn enter(&self, wait: Option<Duration>) -> Option<Slot<'_>> {
        if let Some(slot) = self.try_enter() {
            return Some(slot);
        }
        let wait = wait?;
        let deadline = tokio::time::Instant::now() + wait;
        let _waiting = Waiting::register(self);
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(slot) = self.try_enter() {
                return Some(slot);
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return self.try_enter();
            }
        }
    }
}

/// A waiter counted while it waits, uncounted however it stops (a slot, the wait's end, or
/// cancellation).
struct Waiting<'a>(&'a Bulkhead);

impl<'a> Waiting<'a> {
    fn register(bulkhead: &'a Bulkhead) -> Waiting<'a> {
        bulkhead.waiting.fetch_add(1, Ordering::SeqCst);
        Waiting(bulkhead)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        // A wake-up this waiter received and did not use is passed on by tokio's `Notified`
        // itself when it is dropped.
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_holds_and_a_slot_comes_back_when_dropped() {
        let bulkhead = Bulkhead::new(2);
        let one = bulkhead.try_enter().expect("a slot");
        let two = bulkhead.try_enter().expect("a second slot");
        assert!(bulkhead.try_enter().is_none());
        assert_eq!(bulkhead.in_flight(), 2);
        drop(one);
        let three = bulkhead.try_enter().expect("the freed slot");
        drop((two, three));
        assert_eq!(bulkhead.in_flight(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiter_gets_a_freed_slot_or_gives_up_at_its_wait() {
        let bulkhead = std::sync::Arc::new(Bulkhead::new(1));
        let held = bulkhead.try_enter().expect("a slot");
        let start = tokio::time::Instant::now();
        assert!(
            bulkhead
                .enter(Some(Duration::from_millis(50)))
                .await
                .is_none()
        );
        assert_eq!(
            start.elapsed(),
            Duration::from_millis(50),
            "gave up at its wait"
        );

        let waiter = {
            let bulkhead = std::sync::Arc::clone(&bulkhead);
            tokio::spawn(async move {
                let got = bulkhead.enter(Some(Duration::from_secs(1))).await.is_some();
                (got, tokio::time::Instant::now())
            })
        };
        tokio::time::sleep(Duration::from_millis(30)).await;
        let freed_at = tokio::time::Instant::now();
        drop(held);
        let (got, at) = waiter.await.unwrap();
        assert!(got, "the freed slot went to the waiter");
        assert_eq!(
            at, freed_at,
            "woken when the slot was freed, not at its wait's end"
        );
        assert_eq!(bulkhead.in_flight(), 0);
        assert_eq!(bulkhead.waiting.load(Ordering::SeqCst), 0);
    }
}
