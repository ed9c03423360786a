//! Every change of state, and its announcement once no lock is held.

use std::sync::Arc;

use crate::base::clock::{self, Nanos, duration_nanos};
use crate::base::sync::Ordering;
use crate::core::breaker::{Breaker, Cold, LISTENED, REGISTERED};
use crate::core::events::{self, Listeners, Transition};
use crate::core::opening::Evidence;
use crate::core::state::{State, Word};
use crate::core::window::Tally;

impl Breaker {
    /// Moves from `from` (which the caller checked under the lock) to `to`, preparing the new
    /// period before [`publish`](Self::publish) announces it. `None` when the word moved
    /// meanwhile, which only the lock-free move from open to half-open can do, and only to an
    /// open circuit.
    pub(super) fn transition(
        &self,
        cold: &mut Cold,
        from: Word,
        to: State,
        tally: Tally,
        now: Nanos,
    ) -> Option<Announcement> {
        let mut next = from.next(to);
        match to {
            State::Closed => {
                self.window.reset(next.generation());
                cold.failed_probes = 0;
            }
            State::Open => {
                let pause = duration_nanos(self.config.break_after(cold.failed_probes));
                self.open_until
                    .store(now.saturating_add(pause), Ordering::Relaxed);
                if clock::anchor_coarse() {
                    next = next.with_coarse_clock();
                }
            }
            // Half-open needs nothing prepared under the lock: the first call after the break
            // prepares it and publishes without one (`probe_after_break`), and an order from
            // outside does the same under it.
            State::HalfOpen | State::ForcedOpen | State::Disabled => {}
        }
        let listeners = cold.listeners.clone();
        let announcement = self.publish(from, next, now, tally, || listeners)?;
        let period = (now, next.generation());
        let before = cold.opened.as_deref().copied();
        if let Some(opened) = Evidence::of((from.state(), to), tally, period, before, &self.config)
        {
            match &mut cold.opened {
                Some(kept) => **kept = opened,
                None => cold.opened = Some(Box::new(opened)),
            }
        }
        Some(announcement)
    }

    /// Where every change of state is made, under the lock or not: swaps in the `next` word,
    /// stamps the time, and returns what to announce once no lock is held ([`emit`]). `None`
    /// when the word is no longer `from`.
    ///
    /// Only an open circuit's word is ever changed without the lock (by the first call after
    /// the break), so a change from open compare-and-swaps and any other is a store: the lock
    /// alone makes that word ours. Release, either way, publishes with the word what the new
    /// period was given before it (the emptied window, the deadline, the run and first slot
    /// of the probes).
    ///
    /// [`emit`]: Breaker::emit
    pub(super) fn publish(
        &self,
        from: Word,
        next: Word,
        now: Nanos,
        tally: Tally,
        listeners: impl FnOnce() -> Option<Arc<Listeners>>,
    ) -> Option<Announcement> {
        if from.state() == State::Open {
            self.state
                .compare_exchange(from.0, next.0, Ordering::Release, Ordering::Relaxed)
                .ok()?;
        } else {
            self.state.store(next.0, Ordering::Release);
        }
        // A display value: a transition racing this one between its swap and here may have
        // its time overwritten by this earlier one, not worth a read-modify-write.
        self.mark_transition(now);
        Some(self.announcement(from, next.state(), now, tally, listeners()))
    }

    fn announcement(
        &self,
        from: Word,
        to: State,
        at: Nanos,
        tally: Tally,
        listeners: Option<Arc<Listeners>>,
    ) -> Announcement {
        Announcement {
            from: from.state(),
            to,
            at,
            tally,
            listeners,
            registered: self.audience.load(Ordering::Relaxed) & REGISTERED != 0,
        }
    }

    /// Records when the last transition happened (0 stands for none, so at least 1).
    pub(super) fn mark_transition(&self, now: Nanos) {
        self.last_transition.store(now.max(1), Ordering::Relaxed);
    }

    pub(super) fn listened(&self) -> bool {
        self.audience.load(Ordering::Acquire) & LISTENED != 0
    }

    /// Traces the transition and hands it to the listeners captured with it, after every lock
    /// is released.
    #[inline]
    pub(super) fn emit(&self, announcement: Announcement) {
        let Announcement {
            from, to, tally, ..
        } = announcement;
        events::trace(self.name(), from, to, tally);
        let registry_listens = announcement.registered && !events::every_registered().is_empty();
        if announcement.listeners.is_some() || registry_listens {
            self.deliver(announcement, registry_listens);
        }
        // Otherwise there is nobody to hand a `Transition` to: none is built (nor its `Instant`).
    }

    #[cold]
    #[inline(never)]
    fn deliver(&self, announcement: Announcement, registry_listens: bool) {
        let Announcement {
            from,
            to,
            at,
            tally,
            listeners,
            ..
        } = announcement;
        let transition = Transition {
            breaker: self.name().clone(),
            from,
            to,
            at: clock::to_instant(at),
            failure_rate: tally.failure_rate(),
            slow_rate: tally.slow_rate(),
            calls: tally.calls,
        };
        if let Some(listeners) = listeners {
            listeners.deliver(&transition);
        }
        if registry_listens {
            events::every_registered().deliver(&transition);
        }
    }
}

/// A transition, with what it must reach once the lock is released.
pub(super) struct Announcement {
    pub(super) from: State,
    pub(super) to: State,
    /// When, on the breaker's clock.
    at: Nanos,
    /// The window that led to it.
    tally: Tally,
    listeners: Option<Arc<Listeners>>,
    registered: bool,
}
