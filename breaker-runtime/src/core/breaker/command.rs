//! What an operator or a subscriber asks of a breaker from outside its calls.

use std::sync::Arc;

use crate::base::clock;
use crate::base::sync::Ordering;
use crate::core::breaker::{Breaker, LISTENED, REGISTERED};
use crate::core::events::{Subscription, Transition};
use crate::core::state::State;
use crate::core::window::Tally;

impl Breaker {
    /// Holds the circuit open: every call is rejected until [`reset`](Self::reset).
    pub fn force_open(&self) {
        self.command(State::ForcedOpen);
    }

    /// Holds the circuit closed: every call runs and nothing is recorded, until
    /// [`reset`](Self::reset).
    pub fn disable(&self) {
        self.command(State::Disabled);
    }

    /// Closes the circuit with an empty window and the break back at its base length,
    /// releasing a forced state.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, State};
    ///
    /// let breaker = Breaker::new(Config::default());
    /// breaker.force_open();
    /// assert_eq!(breaker.state(), State::ForcedOpen);
    /// breaker.reset();
    /// assert_eq!(breaker.state(), State::Closed);
    /// ```
    pub fn reset(&self) {
        self.command(State::Closed);
    }

    fn command(&self, to: State) {
        let event = {
            let mut cold = self.cold();
            // Tried again if the first call after the break moved the circuit meanwhile.
            loop {
                let seen = self.word();
                if seen.state() == to && to != State::Closed {
                    return;
                }
                if let Some(event) =
                    self.transition(&mut cold, seen, to, Tally::EMPTY, clock::now())
                {
                    break event;
                }
            }
        };
        if event.from != event.to {
            self.emit(event);
        }
    }

    /// Calls `listener` after every transition of this breaker, outside every lock of the
    /// breaker's, so it may call back into it.
    pub fn on_transition(
        &self,
        listener: impl Fn(&Transition) + Send + Sync + 'static,
    ) -> Subscription {
        let mut cold = self.cold();
        let listeners = Arc::clone(cold.listeners.get_or_insert_with(Arc::default));
        let subscription = listeners.subscribe(listener);
        // After the listener is in the list, so a transition that sees the mark finds it.
        self.audience.fetch_or(LISTENED, Ordering::AcqRel);
        drop(cold);
        subscription
    }

    pub(crate) fn set_registered(&self, registered: bool) {
        if registered {
            self.audience.fetch_or(REGISTERED, Ordering::Relaxed);
        } else {
            self.audience.fetch_and(!REGISTERED, Ordering::Relaxed);
        }
    }
}
