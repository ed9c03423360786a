//! The call path: permit, then timeout, then classify, then record.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;

use tokio::time::{Sleep, sleep_until};

use crate::clock::{self, duration_nanos};
use crate::{Breaker, BreakerError, IsFailure, Permit, Verdict};

impl Breaker {
    /// Runs `body` through the breaker: rejected at once while the circuit is open, cancelled
    /// and counted as a failure if it outlives the timeout, and otherwise recorded as its value's
    /// [`IsFailure`] says.
    ///
    /// The value is returned whatever it is: a failure counts against the dependency but is
    /// still the caller's to handle. `Err` holds only the breaker's own answers, a rejection or
    /// a timeout. A panic in `body` counts as a failure and continues to the caller; dropping
    /// the returned future records nothing.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let breaker = Breaker::new(Config::builder().timeout(Duration::from_secs(1)).build().unwrap());
    /// let slow = async {
    ///     tokio::time::sleep(Duration::from_secs(5)).await;
    ///     Ok::<_, std::io::Error>("late")
    /// };
    /// assert!(breaker.call(slow).await.unwrap_err().is_timeout());
    /// assert_eq!(breaker.snapshot().failures, 1);
    /// # }
    /// ```
    pub async fn call<F>(&self, body: F) -> Result<F::Output, BreakerError>
    where
        F: Future,
        F::Output: IsFailure,
    {
        self.call_with(body, Verdict::of).await
    }

    /// [`call`](Self::call) with a classifier of your own, for values without an [`IsFailure`]
    /// impl.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, Verdict};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let breaker = Breaker::new(Config::default());
    /// let status = breaker
    ///     .call_with(async { 503u16 }, |s| if *s >= 500 { Verdict::Failure } else { Verdict::Success })
    ///     .await;
    /// assert_eq!(status.unwrap(), 503);
    /// assert_eq!(breaker.snapshot().failures, 1);
    /// # }
    /// ```
    pub async fn call_with<F, C>(&self, body: F, classify: C) -> Result<F::Output, BreakerError>
    where
        F: Future,
        C: FnOnce(&F::Output) -> Verdict,
    {
        self.try_acquire()?.run(body, classify).await
    }
}

impl Permit<'_> {
    /// Runs the admitted call: under the breaker's timeout, classified with `classify`, its
    /// outcome recorded on this permit.
    ///
    /// The timeout's timer is only set if `body` does not finish on its first poll, so a call
    /// that is ready at once costs no timer and no clock read. The deadline counts from the
    /// call's start when slow calls are detected (the start is read anyway), otherwise from that
    /// first poll.
    pub async fn run<F, C>(self, body: F, classify: C) -> Result<F::Output, BreakerError>
    where
        F: Future,
        C: FnOnce(&F::Output) -> Verdict,
    {
        let breaker = self.breaker;
        let limit = breaker.config().timeout();
        let started = self.started;
        let mut permit = Some(self);
        let mut classify = Some(classify);
        let mut body = pin!(body);
        let mut deadline = pin!(None::<Sleep>);
        poll_fn(|cx| {
            let guard = PanicGuard(&mut permit);
            if let Poll::Ready(value) = body.as_mut().poll(cx) {
                let verdict = classify
                    .take()
                    .map_or(Verdict::Success, |classify| classify(&value));
                if let Some(permit) = guard.0.take() {
                    permit.record(verdict);
                }
                return Poll::Ready(Ok(value));
            }
            let Some(limit) = limit else {
                return Poll::Pending;
            };
            if deadline.is_none() {
                let start = started.unwrap_or_else(clock::now);
                let at = clock::to_instant(start.saturating_add(duration_nanos(limit)));
                deadline.set(Some(sleep_until(at)));
            }
            if let Some(timer) = deadline.as_mut().as_pin_mut() {
                if timer.poll(cx).is_ready() {
                    if let Some(permit) = guard.0.take() {
                        permit.failure();
                    }
                    return Poll::Ready(Err(BreakerError::Timeout {
                        breaker: breaker.name().clone(),
                        limit,
                    }));
                }
            }
            Poll::Pending
        })
        .await
        // `body` is dropped here, before the caller sees the timeout.
    }
}

/// Records a failure if the body (or its classifier) panics while being polled; the panic then
/// continues to the caller.
struct PanicGuard<'p, 'a>(&'p mut Option<Permit<'a>>);

impl Drop for PanicGuard<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Some(permit) = self.0.take() {
                permit.failure();
            }
        }
    }
}
