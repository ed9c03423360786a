//! A warm-up (opossum's `allowWarmUp`): for a while after the breaker's first call, the
//! circuit does not open, whatever its window says. Outcomes are recorded all the same, so the
//! first judgement after the warm-up sees them.
//!
//! The clock starts at the first call (admitted or turned away), not when the breaker is built:
//! an attribute's breaker is built when the program starts, and a dependency first called an
//! hour later deserves its warm-up then. The first call finds a mark in the state word and
//! takes the long way once, as it does to allocate the flight recorder, so the closed call
//! reads nothing more. A reset or a change of state leaves the warm-up as it is (it belongs to
//! the process's start, not to the circuit's last closing); a live change of `warm_up` moves
//! its end, counted from the same first call, and a warm-up set live on a breaker that had none
//! starts at its next call. Only the window's judgement waits: an order from a fleet, an
//! operator's command or a drill opens the circuit as ever.

use std::time::Duration;

use crate::base::clock::{self, Nanos, duration_nanos};
use crate::base::sync::{AtomicU64, Ordering};
use crate::core::breaker::Breaker;
use crate::core::state::Word;

/// What a breaker with a warm-up keeps, beside the other outside seams.
#[derive(Default)]
pub(super) struct WarmUp {
    /// Its length in nanoseconds; 0 for none.
    span: AtomicU64,
    /// The clock reading of the first call (at least 1), or 0 before it.
    started: AtomicU64,
}

impl Breaker {
    /// The warm-up this breaker keeps, if any.
    pub(super) fn warm_up(&self) -> Option<Duration> {
        self.warm_up_reading()
            .map(|(span, _)| Duration::from_nanos(span))
    }

    /// The configuration in force with the warm-up and probe rule it keeps beside it, read by
    /// a caller that holds the lock: what a change of options starts from.
    pub(super) fn settled_config(&self) -> crate::core::config::Config {
        self.config
            .settled()
            .with_warm_up(self.warm_up())
            .with_probe_threshold(self.probe_threshold())
    }

    /// Sets the warm-up's length: at build, or by a live change under the lock. One that has
    /// not started waits for the next call.
    pub(super) fn set_warm_up(&self, span: Option<Duration>) {
        let Some(span) = span else {
            if let Some(outside) = self.outside.get() {
                outside.warm_up.span.store(0, Ordering::Relaxed);
            }
            self.state
                .fetch_and(!Word::WARM_PENDING_BIT, Ordering::Release);
            return;
        };
        let warm_up = &self.outside().warm_up;
        warm_up.span.store(duration_nanos(span), Ordering::Relaxed);
        if warm_up.started.load(Ordering::Relaxed) == 0 {
            self.state
                .fetch_or(Word::WARM_PENDING_BIT, Ordering::Release);
        }
    }

    /// Starts the warm-up, at the first call that finds it pending.
    #[cold]
    #[inline(never)]
    pub(super) fn begin_warm_up(&self) {
        let _cold = self.cold();
        if !self.word().warm_pending() {
            return;
        }
        let started = &self.outside().warm_up.started;
        if started.load(Ordering::Relaxed) == 0 {
            started.store(clock::now().max(1), Ordering::Relaxed);
        }
        self.state
            .fetch_and(!Word::WARM_PENDING_BIT, Ordering::Release);
    }

    /// Whether the circuit must not open at `now`: its warm-up has not ended. The caller holds
    /// the lock.
    pub(super) fn warming_up(&self, now: Nanos) -> bool {
        // Not started, with a span: no call was made, and none is judged before one is.
        self.warm_up_reading()
            .is_some_and(|(span, started)| started == 0 || now < started.saturating_add(span))
    }

    /// The warm-up's length and start (0 before the first call), if it has one.
    fn warm_up_reading(&self) -> Option<(Nanos, Nanos)> {
        let warm_up = &self.outside.get()?.warm_up;
        let span = warm_up.span.load(Ordering::Relaxed);
        (span > 0).then(|| (span, warm_up.started.load(Ordering::Relaxed)))
    }

    /// When its warm-up ends (`warm_up` after its first call), once the first call started it;
    /// `None` before that, or without a warm-up. Until then the circuit does not open, whatever
    /// its window says.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config, State};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let config = Config::builder().count_window(2).warm_up(Duration::from_secs(30));
    /// let breaker = Breaker::new(config.build()?);
    /// assert_eq!(breaker.warm_up_ends(), None, "no call yet");
    /// breaker.try_acquire()?.failure();
    /// breaker.try_acquire()?.failure();
    /// assert_eq!(breaker.state(), State::Closed, "warming up: two failures of two, and closed");
    /// assert!(breaker.warm_up_ends().is_some());
    ///
    /// tokio::time::advance(Duration::from_secs(30)).await;
    /// breaker.try_acquire()?.failure();
    /// assert_eq!(breaker.state(), State::Open, "the first judgement after it");
    /// # Ok(())
    /// # }
    /// ```
    pub fn warm_up_ends(&self) -> Option<tokio::time::Instant> {
        let (span, started) = self.warm_up_reading()?;
        (started > 0).then(|| clock::to_instant(started.saturating_add(span)))
    }
}
