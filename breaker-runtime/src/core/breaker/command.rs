//! What an operator or a subscriber asks of a breaker from outside its calls.

use std::sync::Arc;

use crate::base::clock;
use crate::base::sync::Ordering;
use crate::core::breaker::transition::Change;
use crate::core::breaker::{Breaker, Cold};
use crate::core::config::Mode;
use crate::core::events::{Subscription, Transition};
use crate::core::opening::clipped;
use crate::core::state::{State, Word};
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

    /// Moves an open circuit, open by its own judgement or held open by an operator, to
    /// half-open now, without waiting out the break: the next calls are its probes, and they
    /// decide as after any break (a failed probe opens it again, for a longer break if it
    /// grows). Returns whether it moved; a circuit in any other state is left as it is.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, State};
    ///
    /// let breaker = Breaker::new(Config::builder().count_window(1).build().unwrap());
    /// breaker.try_acquire().unwrap().failure();
    /// assert_eq!(breaker.state(), State::Open);
    /// assert!(breaker.half_open(), "the operator saw the dependency recover");
    /// assert_eq!(breaker.state(), State::HalfOpen);
    /// breaker.try_acquire().expect("the next call is a probe").success();
    /// assert_eq!(breaker.state(), State::Closed);
    /// assert!(!breaker.half_open(), "a closed circuit stays closed");
    /// ```
    pub fn half_open(&self) -> bool {
        let (event, drill) = {
            let mut cold = self.cold();
            loop {
                let seen = self.word();
                if !seen.state().rejects() {
                    return false;
                }
                let change = Change::local(Tally::EMPTY, clock::now());
                if let Some(event) = self.transition(&mut cold, seen, State::HalfOpen, change) {
                    break (event, self.overtake_drill(&mut cold));
                }
            }
        };
        if let Some(drill) = drill {
            drill.log(self, "half_open");
        }
        self.emit(event);
        true
    }

    /// Switches a live breaker between enforcing and [shadow](Mode::Shadow) mode. Its state,
    /// window and probes carry on as they are: a breaker switched to enforce while open
    /// rejects from the next call. Logged, with the breaker and the mode.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, Mode};
    ///
    /// let breaker = Breaker::new(Config::builder().count_window(1).mode(Mode::Shadow).build().unwrap());
    /// breaker.try_acquire().unwrap().failure();
    /// assert!(breaker.state().rejects(), "it judges as usual…");
    /// assert!(breaker.try_acquire().is_ok(), "…but lets the call run");
    /// breaker.set_mode(Mode::Enforce);
    /// assert!(breaker.try_acquire().unwrap_err().is_rejection());
    /// ```
    pub fn set_mode(&self, mode: Mode) {
        let cold = self.cold();
        // Release, under the lock like every change of the word's marks (see `counts`): a call
        // admitted after it reads the mode with its state.
        match mode {
            Mode::Shadow => self.state.fetch_or(Word::SHADOW_BIT, Ordering::Release),
            Mode::Enforce => self.state.fetch_and(!Word::SHADOW_BIT, Ordering::Release),
        };
        drop(cold);
        // Tasks waiting for admission are let in now, in shadow mode.
        self.wake_waiters();
        tracing::info!(breaker = %self.name(), mode = mode.as_str(), "circuit breaker mode set");
    }

    /// Whether the breaker rejects calls while open, or only reports it would have.
    pub fn mode(&self) -> Mode {
        self.word().mode()
    }

    /// Tells the breaker what a counted failure said, so that if the circuit opened on it, its
    /// [`last_opened`](crate::Snapshot::last_opened) says so too (`last_failure`). The attribute
    /// and [`call`](Self::call) tell it themselves; call this after recording a failure through
    /// a [`Permit`](crate::Permit) by hand. It costs one atomic load unless the circuit has just
    /// opened and heard no message yet; a message is cut at 240 bytes.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config};
    ///
    /// let breaker = Breaker::new(Config::builder().count_window(1).build().unwrap());
    /// breaker.try_acquire().unwrap().failure();
    /// breaker.note_failure(&"connection refused by ledger-db:5432");
    /// let opened = breaker.snapshot().last_opened.unwrap();
    /// assert_eq!(opened.last_failure.as_deref(), Some("connection refused by ledger-db:5432"));
    /// ```
    #[inline]
    pub fn note_failure(&self, failure: &dyn std::fmt::Display) {
        if self.word().state() == State::Open {
            self.keep_failure(failure);
        }
    }

    #[cold]
    #[inline(never)]
    fn keep_failure(&self, failure: &dyn std::fmt::Display) {
        let generation = self.word().generation();
        let wanted = |cold: &Cold| {
            cold.opened
                .as_deref()
                .is_some_and(|o| o.last_failure.is_none() && o.evidence.began(generation))
        };
        if !wanted(&self.cold()) {
            return;
        }
        // Formatted with no lock held: a failure's `Display` is the caller's code, and that of
        // a rejection reads this very breaker's evidence.
        let message = clipped(failure.to_string());
        let mut cold = self.cold();
        if wanted(&cold) {
            if let Some(opened) = cold.opened.as_deref_mut() {
                opened.last_failure = Some(message);
            }
        }
    }

    fn command(&self, to: State) {
        let (event, drill) = {
            let mut cold = self.cold();
            // The operator's command wins over a drill, even one that changes no state (held
            // open by the drill, then by the operator): the drill's end must not undo it.
            let drill = self.overtake_drill(&mut cold);
            // Tried again if the first call after the break moved the circuit meanwhile.
            loop {
                let seen = self.word();
                if seen.state() == to && to != State::Closed {
                    break (None, drill);
                }
                if let Some(event) = self.transition(
                    &mut cold,
                    seen,
                    to,
                    Change::local(Tally::EMPTY, clock::now()),
                ) {
                    break (Some(event), drill);
                }
            }
        };
        if let Some(drill) = drill {
            drill.log(self, to.as_str());
        }
        if let Some(event) = event.filter(|event| event.from != event.to) {
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
        // Marked after the listener is in the list, and Release, so a transition that reads
        // the mark with the word (Acquire) finds the listener. Under the lock, like every
        // change of the word's marks: see `Breaker::counts`.
        self.state.fetch_or(Word::LISTENED_BIT, Ordering::Release);
        drop(cold);
        subscription
    }

    pub(crate) fn set_registered(&self, registered: bool) {
        let _cold = self.cold();
        // Relaxed: the registry's listeners are found through their own lock, not the mark.
        if registered {
            self.state.fetch_or(Word::REGISTERED_BIT, Ordering::Relaxed);
        } else {
            self.state
                .fetch_and(!Word::REGISTERED_BIT, Ordering::Relaxed);
        }
    }
}
