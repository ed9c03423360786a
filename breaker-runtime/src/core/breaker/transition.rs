//! Every change of state, and its announcement once no lock is held.

use std::sync::Arc;

use crate::base::clock::{self, Nanos};
use crate::base::sync::Ordering;
use crate::core::breaker::{Breaker, Cold};
use crate::core::events::{self, Listeners, Origin, Transition};
use crate::core::opening::{Evidence, OpenReason, Opened};
use crate::core::state::{State, Word};
use crate::core::window::Tally;

impl Breaker {
    /// Moves from `from` (which the caller checked under the lock) to `to`, preparing the new
    /// period before [`publish`](Self::publish) announces it. `None` when the word moved
    /// meanwhile, which only the lock-free move from open to half-open can do, and only to an
    /// open circuit.
    ///
    /// Inlined, so that the `Change` stays in registers: passed through memory, it was written
    /// in 4- and 8-byte pieces and read back 16 bytes at a time, a failed store-to-load forward
    /// that cost a probe closing the circuit 12 ns.
    #[inline(always)]
    pub(super) fn transition(
        &self,
        cold: &mut Cold,
        from: Word,
        to: State,
        change: Change,
    ) -> Option<Announcement> {
        let Change {
            tally,
            now,
            open_for,
            origin,
        } = change;
        let mut next = from.next(to);
        // Under the lock, which every reconfiguration holds: one configuration, whole. Only an
        // opening needs it (its break, and the threshold that tripped it).
        let config = (to == State::Open).then(|| self.config.settled());
        match to {
            State::Closed => {
                self.window().reset(next.generation());
                self.restart_durations(now);
            }
            State::Open => {
                if from.state() == State::HalfOpen && open_for.is_none() {
                    next = next.with_failed_probe();
                }
                let pause = open_for.unwrap_or_else(|| {
                    config
                        .as_ref()
                        .map_or(0, |c| c.break_after(next.failed_probes()))
                });
                // Relaxed: published by the word's Release below.
                self.open_until
                    .store(now.saturating_add(pause), Ordering::Relaxed);
                if clock::anchor_coarse() {
                    next = next.with_coarse_clock();
                }
            }
            // The first call after the break begins half-open without the lock
            // (`probe_after_break`); an order from outside begins it here.
            State::HalfOpen => self.probes().begin(next.generation()),
            State::ForcedOpen | State::Disabled => {}
        }
        if matches!(to, State::Open | State::HalfOpen | State::ForcedOpen) {
            self.prepare_to_reject();
        }
        let listeners = cold.listeners.clone();
        let mut announcement = self.publish(from, next, change, || listeners)?;
        // After the new word, whose store would undo the mark a replacement sets: no state but
        // half-open uses the probe slots, and the circuit can only get there from here through
        // an opening, which takes the lock this holds.
        self.apply_pending(cold, to);
        let period = (now, next.generation());
        let before = cold.opened.as_deref().map(|o| o.evidence);
        let judged = (config.as_ref(), origin == Origin::Ordered);
        if let Some(evidence) = Evidence::of((from.state(), to), tally, period, before, judged) {
            announcement.reason = Some(evidence.reason());
            // A new opening: its failure's message is the caller's to tell (`note_failure`).
            match &mut cold.opened {
                Some(kept) => {
                    kept.evidence = evidence;
                    kept.last_failure = None;
                }
                None => {
                    cold.opened = Some(Box::new(Opened {
                        evidence,
                        last_failure: None,
                    }));
                }
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
    #[inline(always)]
    pub(super) fn publish(
        &self,
        from: Word,
        next: Word,
        change: Change,
        listeners: impl FnOnce() -> Option<Arc<Listeners>>,
    ) -> Option<Announcement> {
        // From open, `SeqCst`: the first call after the break, which changes nothing else
        // after the swap, then orders it against a waiter's count with no fence
        // ([`wake_after_swap`](Self::wake_after_swap)), at the price of a `Release` swap on
        // x86-64, where every read-modify-write is a full barrier.
        if from.state() == State::Open {
            self.state
                .compare_exchange(from.0, next.0, Ordering::SeqCst, Ordering::Relaxed)
                .ok()?;
        } else {
            self.state.store(next.0, Ordering::Release);
        }
        // A display value: a transition racing this one between its swap and here may have
        // its time overwritten by this earlier one, not worth a read-modify-write.
        self.mark_transition(change.now);
        if let Some(outside) = self.outside.get() {
            outside.counters.restart_rejections();
        }
        Some(Announcement {
            from: from.state(),
            to: next.state(),
            change,
            listeners: listeners(),
            registered: next.registered(),
            reason: None,
            swapped: false,
        })
    }

    /// Allocates what counting rejections needs before the circuit rejects, so that no
    /// rejection allocates.
    #[cold]
    #[inline(never)]
    fn prepare_to_reject(&self) {
        let _ = self.outside();
    }

    /// Records when the last transition happened (0 stands for none, so at least 1).
    pub(super) fn mark_transition(&self, now: Nanos) {
        self.last_transition.store(now.max(1), Ordering::Relaxed);
    }

    /// Traces the transition and hands it to the listeners captured with it, after every lock
    /// is released. Inlined for the reason [`transition`](Self::transition) is: the announcement
    /// stays in registers.
    #[inline(always)]
    pub(super) fn emit(&self, announcement: Announcement) {
        let Announcement {
            from,
            to,
            change,
            reason,
            ..
        } = announcement;
        if announcement.swapped {
            self.wake_after_swap();
        } else {
            self.wake_waiters();
        }
        self.record_transition(change.now, from, to);
        events::trace(self.name(), (from, to), change.tally, reason);
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
            change,
            listeners,
            ..
        } = announcement;
        let tally = change.tally;
        let transition = Transition {
            breaker: self.name().clone(),
            from,
            to,
            at: clock::to_instant(change.now),
            failure_rate: tally.failure_rate(),
            slow_rate: tally.slow_rate(),
            calls: tally.calls,
            origin: change.origin,
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
    change: Change,
    listeners: Option<Arc<Listeners>>,
    registered: bool,
    /// Why the circuit opened, for an opening's log line.
    reason: Option<OpenReason>,
    /// Whether the change was the word's `SeqCst` swap alone, which orders it against the
    /// waiters' count without a fence.
    swapped: bool,
}

impl Announcement {
    /// Marks the change as the word's `SeqCst` swap and nothing after it: the first call after
    /// the break. A transition under the lock changes more after its swap (a reconfiguration
    /// waiting for it, say), which the waiters must see too: it fences.
    pub(super) fn swapped_alone(&mut self) {
        self.swapped = true;
    }

    /// Marks an operator's opening as a drill's, in its log line.
    pub(super) fn drilled(&mut self) {
        if self.reason == Some(OpenReason::Forced) {
            self.reason = Some(OpenReason::Drill);
        }
    }
}

/// What a transition carries besides its two states.
#[derive(Debug, Clone, Copy)]
pub(super) struct Change {
    /// The window that led to it: empty unless the circuit tripped.
    pub(super) tally: Tally,
    /// When, on the breaker's clock.
    pub(super) now: Nanos,
    /// How long an opening lasts when an order says so; otherwise the breaker's own break.
    pub(super) open_for: Option<Nanos>,
    pub(super) origin: Origin,
}

impl Change {
    /// A change this process decided, on `tally`, at `now`.
    pub(super) fn local(tally: Tally, now: Nanos) -> Change {
        Change {
            tally,
            now,
            open_for: None,
            origin: Origin::Local,
        }
    }
}
