//! A clock set by hand, for driving breakers through a recorded history as fast as the
//! machine goes: what `breaker-replay` runs every candidate on.
//!
//! While a [`SimulatedClock`] lives, every reading a breaker takes on that thread (admission,
//! break deadlines, time windows, slow calls, probe ages) is the clock's, and moves only when
//! the clock is moved. Nothing else changes: the same state machine, windows and rules run, with
//! no runtime, no task and no timer. Futures that wait on tokio's timers (a [`Breaker::call`]'s
//! timeout, [`Breaker::admitted`]) still wait on tokio's clock, so a simulation ends each call
//! itself through the permit API at the instant it chooses.
//!
//! The feature costs a thread-local read on every clock reading of every breaker in the
//! process, so only the tools that simulate turn it on; a service never needs it.
//!
//! ```
//! use std::time::Duration;
//! use breaker_runtime::simulation::SimulatedClock;
//! use breaker_runtime::{Breaker, Config, State};
//!
//! let mut clock = SimulatedClock::start()?;
//! let config = Config::builder().count_window(2).break_duration(Duration::from_secs(30));
//! let breaker = Breaker::new(config.build()?);
//! breaker.try_acquire().unwrap().failure();
//! breaker.try_acquire().unwrap().failure();
//! assert_eq!(breaker.state(), State::Open);
//!
//! clock.advance(Duration::from_secs(30));
//! let probe = breaker.try_acquire().expect("the break is over");
//! assert_eq!(breaker.state(), State::HalfOpen);
//! probe.success();
//! assert_eq!(breaker.state(), State::Closed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Breaker::call`]: crate::Breaker::call
//! [`Breaker::admitted`]: crate::Breaker::admitted

use std::marker::PhantomData;
use std::time::Duration;

use tokio::time::Instant;

use crate::base::clock::{self, Nanos, SIMULATED};

/// This thread's breaker clock, set by hand until dropped: see the [module](self).
///
/// It starts at the breaker clock's reading when started and never goes back. It belongs to the
/// thread that started it (it is neither `Send` nor `Sync`).
#[derive(Debug)]
pub struct SimulatedClock {
    now: Nanos,
    /// The reading lives in a thread-local: the clock cannot leave its thread.
    _thread: PhantomData<*const ()>,
}

/// Why a simulated clock could not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "a simulated clock already runs on this thread: drop it first, or run the second simulation on a thread of its own"
)]
pub struct ClockTaken;

impl SimulatedClock {
    /// Takes over this thread's breaker clock, at its current reading.
    pub fn start() -> Result<SimulatedClock, ClockTaken> {
        if clock::simulated().is_some() {
            return Err(ClockTaken);
        }
        // At least 1: 0 says that no simulated clock runs.
        let now = clock::now().max(1);
        SIMULATED.with(|cell| cell.set(now));
        Ok(SimulatedClock {
            now,
            _thread: PhantomData,
        })
    }

    /// Its reading, as the instants breakers report ([`Transition::at`](crate::Transition)).
    pub fn now(&self) -> Instant {
        clock::to_instant(self.now)
    }

    /// Moves it on by `by`.
    #[inline]
    pub fn advance(&mut self, by: Duration) {
        self.set(self.now.saturating_add(clock::duration_nanos(by)));
    }

    /// Moves it on to `at`; an instant already past leaves it where it is.
    #[inline]
    pub fn advance_to(&mut self, at: Instant) {
        self.set(self.now.max(clock::to_nanos(at)));
    }

    #[inline]
    fn set(&mut self, now: Nanos) {
        self.now = now;
        SIMULATED.with(|cell| cell.set(now));
    }
}

impl Drop for SimulatedClock {
    fn drop(&mut self) {
        SIMULATED.with(|cell| cell.set(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::breaker::Breaker;
    use crate::core::config::Config;
    use crate::core::state::State;

    #[test]
    fn one_clock_a_thread_and_tokios_again_once_dropped() {
        let clock = SimulatedClock::start().unwrap();
        assert_eq!(SimulatedClock::start().unwrap_err(), ClockTaken);
        std::thread::spawn(|| assert!(SimulatedClock::start().is_ok(), "another thread's own"))
            .join()
            .unwrap();
        drop(clock);
        assert!(clock::simulated().is_none());
        assert!(SimulatedClock::start().is_ok());
    }

    #[test]
    fn it_never_goes_back_and_breakers_read_it() {
        let mut clock = SimulatedClock::start().unwrap();
        let start = clock.now();
        clock.advance(Duration::from_secs(5));
        clock.advance_to(start);
        assert_eq!(clock.now() - start, Duration::from_secs(5));

        let config = Config::builder()
            .time_window(Duration::from_secs(10))
            .min_calls(2);
        let breaker = Breaker::new(config.build().unwrap());
        breaker.try_acquire().unwrap().failure();
        breaker.try_acquire().unwrap().failure();
        assert_eq!(breaker.state(), State::Open);
        clock.advance(Duration::from_secs(30) - Duration::from_nanos(1));
        assert!(
            breaker.try_acquire().is_err(),
            "the default 30 s break, less a nanosecond"
        );
        clock.advance(Duration::from_nanos(1));
        assert!(breaker.try_acquire().is_ok());
    }
}
