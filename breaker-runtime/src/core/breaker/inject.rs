//! Fault injection on the real call path: a share of the admitted calls fails or waits, for a
//! while, so that the timeout, the window, the trip, the probes and the fallback run as in an
//! outage.
//!
//! A running injection marks the state word, so that the closed admission, which reads the
//! word anyway, sends calls the long way round while it runs and pays nothing otherwise. The
//! long way draws each call under this slot's lock (a counter and a copy of the terms); the
//! call itself carries its fault from there (`call.rs`).

use std::sync::PoisonError;
use std::time::Duration;

use tokio::time::Instant;

use crate::base::clock::{self, Nanos, duration_nanos};
use crate::base::sync::{Mutex, MutexGuard, Ordering};
use crate::core::breaker::Breaker;
use crate::core::breaker::kind::Kind;
use crate::core::injection::{
    Fault, InjectError, Injecting, Injection, MAX_INJECTION, Odds, fresh_seed,
};
use crate::core::state::Word;

/// Where a breaker keeps its injection, allocated by its first: most breakers never get one.
pub(super) struct Slot {
    running: Mutex<Option<Running>>,
}

impl Slot {
    fn running(&self) -> MutexGuard<'_, Option<Running>> {
        // No code that can panic runs under this lock.
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running injection.
struct Running {
    injection: Injection,
    odds: Odds,
    seed: u64,
    ends: Nanos,
    drawn: u64,
    injected: u64,
}

impl Running {
    fn reading(&self) -> Injecting {
        Injecting {
            injection: self.injection,
            ends: clock::to_instant(self.ends),
            drawn: self.drawn,
            injected: self.injected,
        }
    }
}

/// How an injection ended, for its log line.
#[derive(Clone, Copy)]
enum Ended {
    Elapsed,
    Stopped,
}

impl Breaker {
    /// Injects faults into this breaker's calls for `length`: a share of the admitted calls
    /// fails without running, a share waits before it runs, as `injection` says. Returns when
    /// it ends, on tokio's clock.
    ///
    /// The faults go through the real call path, so everything an outage would exercise runs:
    /// an injected failure is recorded as a failure (and opens the circuit like a real one), a
    /// delay counts against the timeout and `slow_call`, a probe can be injected too, and the
    /// attribute's fallback serves the caller. Calls turned away by an open circuit are not
    /// drawn, and neither are calls through a disabled breaker (which records nothing).
    ///
    /// Injection acts on the calls the breaker runs: [`call`](Self::call),
    /// [`call_with`](Self::call_with), the attribute, [`Permit::run`](crate::Permit::run),
    /// [`OwnedPermit::run`](crate::OwnedPermit::run) and the adapters built on them. A permit
    /// whose outcome the caller records by hand runs its own call, and nothing is injected.
    ///
    /// Each injected call is announced to the call observers as
    /// [`CallEvent::Injected`](crate::CallEvent::Injected), just before its `Finished`; the
    /// metrics label it `injected="true"`; [`injection`](Self::injection) and the snapshot
    /// read the running injection. Its start and end are logged.
    ///
    /// It always ends: `length` is at most [`MAX_INJECTION`], and
    /// [`stop_injection`](Self::stop_injection) ends it early. Refused in shadow mode (the
    /// breaker would never turn the failures away, so callers would get them all), while
    /// another injection runs, and for terms that inject nothing. Nothing is ever injected
    /// unless this is called: no option of the attribute turns it on. A change of mode or of
    /// options leaves it running.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config, Injection, State};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let breaker = Breaker::new(Config::builder().count_window(4).build().unwrap());
    /// breaker.inject(Injection::new().fail(100.0), Duration::from_secs(60)).unwrap();
    /// for _ in 0..4 {
    ///     let err = breaker.call(async { Ok::<_, std::io::Error>(()) }).await.unwrap_err();
    ///     assert!(err.is_injected());
    /// }
    /// assert_eq!(breaker.state(), State::Open, "injected failures open it like real ones");
    /// # }
    /// ```
    pub fn inject(&self, injection: Injection, length: Duration) -> Result<Instant, InjectError> {
        let odds = injection.odds()?;
        if length.is_zero() {
            return Err(InjectError::Zero);
        }
        if length > MAX_INJECTION {
            return Err(InjectError::TooLong);
        }
        // Allocated before the lock is taken.
        let slot = self.injection_slot();
        let ends = {
            // Under the cold lock, which orders it with a change of mode.
            let _cold = self.cold();
            if self.word().shadow() {
                return Err(InjectError::Shadow);
            }
            let mut running = slot.running();
            if let Some(running) = running.as_ref() {
                return Err(InjectError::Injecting {
                    ends: clock::to_instant(running.ends),
                });
            }
            let ends = clock::now().saturating_add(duration_nanos(length));
            *running = Some(Running {
                injection,
                odds,
                seed: injection.seed_given().unwrap_or_else(fresh_seed),
                ends,
                drawn: 0,
                injected: 0,
            });
            // Release: whoever sees the mark finds the injection it marks.
            self.state.fetch_or(Word::INJECTING_BIT, Ordering::Release);
            ends
        };
        tracing::warn!(
            breaker = %self.name(),
            injection = %injection,
            length = ?length,
            "circuit breaker fault injection started"
        );
        Ok(clock::to_instant(ends))
    }

    /// Ends the running injection now; returns what it injected, `None` when none was running.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config, Injection};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let breaker = Breaker::new(Config::default());
    /// breaker.inject(Injection::new().fail(100.0), Duration::from_secs(60)).unwrap();
    /// assert!(breaker.stop_injection().is_some());
    /// assert!(breaker.call(async { Ok::<_, std::io::Error>(()) }).await.is_ok());
    /// assert!(breaker.stop_injection().is_none());
    /// # }
    /// ```
    pub fn stop_injection(&self) -> Option<Injecting> {
        // One past its end had ended already: that is not a stop.
        if self.end_injection(Ended::Elapsed, clock::now()).is_some() {
            return None;
        }
        self.end_injection(Ended::Stopped, Nanos::MAX)
    }

    /// The running injection, with its end and what it drew so far; `None` when none runs
    /// (one past its end has ended, whether or not a call has noticed yet).
    pub fn injection(&self) -> Option<Injecting> {
        if !self.word().injecting() {
            return None;
        }
        let slot = self.outside.get()?.injection.get()?;
        let reading = slot.running().as_ref().map(Running::reading)?;
        (clock::to_instant(clock::now()) < reading.ends).then_some(reading)
    }

    /// The fault to inject into a call just admitted as `kind`, if one is drawn, with the
    /// delay it waits; an injection past its end is ended here.
    #[cold]
    #[inline(never)]
    pub(crate) fn draw_fault(&self, kind: &Kind) -> Option<(Fault, Duration)> {
        if !kind.injectable() {
            return None;
        }
        let slot = self.outside.get()?.injection.get()?;
        let now = clock::now();
        let drawn = {
            let mut running = slot.running();
            let running = running.as_mut()?;
            if now >= running.ends {
                None
            } else {
                let fault = running.odds.draw(running.seed, running.drawn);
                running.drawn += 1;
                running.injected += u64::from(fault.is_some());
                Some(fault.map(|fault| (fault, Duration::from_nanos(running.odds.delay_nanos))))
            }
        };
        match drawn {
            Some(fault) => fault,
            None => {
                self.end_injection(Ended::Elapsed, now);
                None
            }
        }
    }

    /// Ends the running injection if it ends by `by` (`Nanos::MAX`: whenever it ends), and
    /// clears the mark.
    fn end_injection(&self, how: Ended, by: Nanos) -> Option<Injecting> {
        let slot = self.outside.get()?.injection.get()?;
        let ended = {
            let _cold = self.cold();
            let mut running = slot.running();
            if running.as_ref().is_none_or(|r| r.ends > by) {
                return None;
            }
            let ended = running.take().map(|r| r.reading());
            self.state
                .fetch_and(!Word::INJECTING_BIT, Ordering::Release);
            ended
        };
        if let Some(ended) = &ended {
            tracing::warn!(
                breaker = %self.name(),
                injection = %ended.injection,
                drawn = ended.drawn,
                injected = ended.injected,
                ended = match how {
                    Ended::Elapsed => "elapsed",
                    Ended::Stopped => "stopped",
                },
                "circuit breaker fault injection ended"
            );
        }
        ended
    }

    fn injection_slot(&self) -> &Slot {
        self.outside().injection.get_or_init(|| {
            Box::new(Slot {
                running: Mutex::new(None),
            })
        })
    }
}
