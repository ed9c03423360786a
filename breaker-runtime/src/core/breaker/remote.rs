//! Orders from outside: another process (a fleet sharing one circuit) decided to open,
//! half-open or close this breaker. Each carries the sender's generation, so news that arrives
//! late or out of order is dropped instead of undoing a newer decision.

use std::time::Duration;

use crate::base::clock::{self, duration_nanos};
use crate::base::sync::Ordering;
use crate::core::breaker::Breaker;
use crate::core::breaker::transition::Change;
use crate::core::events::Origin;
use crate::core::state::State;
use crate::core::window::Tally;

/// A decision made elsewhere, for [`Breaker::apply_order`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Order {
    /// Open for this long from now: the time left of the sender's break, as a duration, so no
    /// two clocks need agree.
    Open {
        /// The time left.
        remaining: Duration,
    },
    /// Move to half-open now: the next calls probe.
    HalfOpen,
    /// Close with an empty window and the break back at its base length.
    Close,
}

/// What became of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Heeded {
    /// Applied: the breaker is now in the state the order asked for.
    Applied,
    /// Dropped: an order of this generation or a newer one was applied before.
    Stale,
    /// Dropped: an operator holds the breaker forced open or disabled, which only
    /// [`reset`](Breaker::reset) ends.
    Held,
}

impl Breaker {
    /// Applies a decision made outside this process, if it is newer than the last one applied:
    /// `generation` must grow with every decision of its sender. The transition is announced
    /// like any other, with [`Origin::Ordered`] (a fleet relays only its own), and an opening
    /// reads [`OpenReason::Ordered`](crate::OpenReason::Ordered) in the snapshot.
    ///
    /// An operator's forced state wins over any order; an order wins over a
    /// [drill](Self::drill) (unless the drill interrupted a disabled circuit), which ends
    /// without putting anything back. Nothing here touches the call path: a
    /// closed call costs what it did.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config, Heeded, Order, State};
    ///
    /// let breaker = Breaker::new(Config::default());
    /// let open = Order::Open { remaining: Duration::from_secs(10) };
    /// assert_eq!(breaker.apply_order(7, open), Heeded::Applied);
    /// assert_eq!(breaker.state(), State::Open);
    /// assert_eq!(breaker.apply_order(6, Order::Close), Heeded::Stale, "older news");
    /// assert_eq!(breaker.apply_order(8, Order::Close), Heeded::Applied);
    /// assert_eq!(breaker.state(), State::Closed);
    /// ```
    pub fn apply_order(&self, generation: u64, order: Order) -> Heeded {
        let (to, open_for) = match order {
            Order::Open { remaining } => (State::Open, Some(duration_nanos(remaining))),
            Order::HalfOpen => (State::HalfOpen, None),
            Order::Close => (State::Closed, None),
        };
        // One more than the generation, so that 0 stands for none applied yet.
        let stamp = generation.saturating_add(1);
        let last_order = &self.outside().last_order;
        let (announcement, drill) = {
            let mut cold = self.cold();
            // Relaxed: read and written under the lock, which orders them.
            if stamp <= last_order.load(Ordering::Relaxed) {
                return Heeded::Stale;
            }
            // Tried again if the first call after the break moved the circuit meanwhile.
            loop {
                let seen = self.word();
                if self.held_against_orders(&cold, seen) {
                    return Heeded::Held;
                }
                let change = Change {
                    tally: Tally::EMPTY,
                    now: clock::now(),
                    open_for,
                    origin: Origin::Ordered,
                };
                if let Some(announcement) = self.transition(&mut cold, seen, to, change) {
                    last_order.store(stamp, Ordering::Relaxed);
                    break (announcement, self.overtake_drill(&mut cold));
                }
            }
        };
        if let Some(drill) = drill {
            drill.log(self, "order");
        }
        // The same state again (a new deadline, a fresh half-open period, an emptied window)
        // is no transition to announce, but waiters must look at the new deadline.
        if announcement.from == announcement.to {
            self.wake_waiters();
        } else {
            self.emit(announcement);
        }
        Heeded::Applied
    }
}
