//! Waiting for admission: a consumer that must not pull work while the circuit is open sleeps
//! until a call would be admitted, on tokio's clock, without polling.

use std::pin::pin;
use std::sync::Arc;

use tokio::time::Instant;

use crate::base::clock;
use crate::base::sync::{AtomicU64, Ordering, fence};
use crate::core::breaker::Breaker;
use crate::core::breaker::observer;
use crate::core::breaker::permit::{OwnedPermit, Permit};
use crate::outcome::error::BreakerError;

impl Breaker {
    /// Waits until the breaker admits a call, and returns the call's permit.
    ///
    /// Closed or disabled, that is at once. Open, it sleeps until the break ends and the call
    /// becomes the probe; half-open with every probe slot taken, until a probe gives its slot
    /// back (or has held it for the break, when a hung probe's slot frees); forced open, until
    /// an operator lets go. Any transition wakes it to look again. It reads tokio's clock, so a
    /// paused clock drives it, and it never polls in between.
    ///
    /// Cancel-safe: dropped while waiting, it holds nothing; the permit is taken in the same
    /// step that ends the wait. Waiting is not a rejection: call observers see one admission
    /// when it ends, and no rejection while it lasts.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config, State};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let breaker = Breaker::new(
    ///     Config::builder().count_window(1).break_duration(Duration::from_secs(30)).build().unwrap(),
    /// );
    /// breaker.try_acquire().unwrap().failure();
    /// assert_eq!(breaker.state(), State::Open);
    ///
    /// let started = tokio::time::Instant::now();
    /// let probe = breaker.admitted().await; // sleeps through the break
    /// assert_eq!(started.elapsed(), Duration::from_secs(30));
    /// assert!(probe.is_probe());
    /// probe.success();
    /// assert_eq!(breaker.state(), State::Closed);
    /// # }
    /// ```
    pub async fn admitted(&self) -> Permit<'_> {
        let outside = self.outside();
        let waiters = &outside.waiters;
        let mut counted = None;
        loop {
            let mut woken = pin!(waiters.notified());
            // Registered before the state is read, so a transition between the read and the
            // wait still wakes it.
            woken.as_mut().enable();
            // Counted once registered, and before the state is read: a waker that sees the
            // count wakes a registered waiter, and one that does not changed the state before
            // the waiter reads it (see `wake_waiters`).
            if counted.is_none() {
                counted = Some(Waiting::count(&outside.waiting));
            }
            let rejection = match self.try_acquire_slow(self.word()) {
                Ok(permit) => {
                    if observer::installed() {
                        self.observe_admission(true);
                    }
                    return permit;
                }
                Err(_) if self.word().shadow() => return self.admit_in_shadow(),
                Err(rejection) => rejection,
            };
            match self.look_again_at(&rejection) {
                Some(at) => {
                    let _ = tokio::time::timeout_at(at, woken).await;
                }
                None => woken.await,
            }
        }
    }

    /// [`admitted`](Self::admitted) for a breaker behind an `Arc`: the permit holds the
    /// breaker, for a `'static` future (a spawned handler).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breaker_runtime::{Breaker, Config};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let breaker = Arc::new(Breaker::new(Config::default()));
    /// let permit = breaker.admitted_owned().await;
    /// tokio::spawn(async move { permit.success() }).await.unwrap();
    /// assert_eq!(breaker.snapshot().calls, 1);
    /// # }
    /// ```
    pub async fn admitted_owned(self: &Arc<Self>) -> OwnedPermit {
        let (kind, started) = self.admitted().await.into_parts();
        OwnedPermit::from_parts(Arc::clone(self), kind, started)
    }

    /// When a rejected waiter must look again even if nothing wakes it: at the end of the
    /// break, or once a probe may have held its slot long enough to lose it. `None` waits for a
    /// transition alone (a forced state, which only an operator ends).
    fn look_again_at(&self, rejection: &BreakerError) -> Option<Instant> {
        match rejection {
            BreakerError::Open {
                next_probe_at: Some(at),
                ..
            } => Some(at.instant()),
            BreakerError::Open { .. } => None,
            _ => {
                let word = self.word();
                let give_up = self.give_up_after(word);
                Some(clock::to_instant(clock::now().saturating_add(give_up)))
            }
        }
    }

    /// Wakes every task waiting for admission, if one waits: after every transition and
    /// every change of what admits a call. The caller changed the state word (or what an
    /// admission reads) before. A waiter registers with the `Notify`, counts itself, fences and
    /// reads the state; of this fence and the waiter's, one comes first: either the waiter
    /// reads the change, or this reads the count (acquiring the registration before it, so the
    /// notification reaches it).
    pub(super) fn wake_waiters(&self) {
        if let Some(outside) = self.outside.get() {
            fence(Ordering::SeqCst);
            if outside.waiting.load(Ordering::Acquire) > 0 {
                outside.waiters.notify_waiters();
            }
        }
    }

    /// Wakes every task waiting for admission, if one waits, after a change made by a `SeqCst`
    /// read-modify-write alone (a probe slot given back, the first call's swap from open to
    /// half-open): that, and this `SeqCst` read, order the change and the waiter's count as
    /// [`wake_waiters`](Self::wake_waiters)' fence does, without a fence on the half-open path.
    /// (tokio's `notify_waiters` takes a lock even when nobody waits: it was a sixth of a
    /// half-open call.)
    pub(super) fn wake_after_swap(&self) {
        if let Some(outside) = self.outside.get() {
            if outside.waiting.load(Ordering::SeqCst) > 0 {
                outside.waiters.notify_waiters();
            }
        }
    }
}

/// A task counted among those waiting for admission while it waits.
struct Waiting<'a>(&'a AtomicU64);

impl<'a> Waiting<'a> {
    fn count(waiting: &'a AtomicU64) -> Waiting<'a> {
        waiting.fetch_add(1, Ordering::SeqCst);
        // Before the waiter reads the state: see `wake_waiters`.
        fence(Ordering::SeqCst);
        Waiting(waiting)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}
