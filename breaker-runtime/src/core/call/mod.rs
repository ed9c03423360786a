//! The call path: permit, then timeout, then classify, then record.
//!
//! [`Call`] is one flat future: it asks for its permit on first poll, polls the body, arms the
//! timeout's timer only if the body has to wait, and records the outcome on the permit. Nothing
//! is boxed and nothing allocates. [`OwnedCall`] is the same call admitted beforehand with an
//! [`OwnedPermit`], for futures that must not borrow the breaker; both run one shared poll.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::{Sleep, sleep_until};

use crate::base::clock::{self, Nanos, duration_nanos};
use crate::core::breaker::Breaker;
use crate::core::breaker::observer::Ending;
use crate::core::breaker::permit::{Admitted, OwnedPermit, Permit};
use crate::outcome::classify::{ByIsFailure, Classify, IsFailure, Verdict};
use crate::outcome::error::BreakerError;

mod injected;

impl Breaker {
    /// Runs `body` through the breaker: rejected at once while the circuit is open, cancelled
    /// and counted as a failure if it outlives the timeout, and otherwise recorded as its value's
    /// [`IsFailure`] says.
    ///
    /// The value is returned whatever it is: a failure counts against the dependency but is
    /// still the caller's to handle. `Err` holds only the breaker's own answers, a rejection or
    /// a timeout. A panic in `body` counts as a failure and continues to the caller; dropping
    /// the returned future records nothing. The permit is asked for when the future is first
    /// polled, not when it is created.
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
    pub fn call<F>(&self, body: F) -> Call<'_, F>
    where
        F: Future,
        F::Output: IsFailure,
    {
        Call::new(self, None, body, ByIsFailure)
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
    pub fn call_with<F, C>(&self, body: F, classify: C) -> Call<'_, F, C>
    where
        F: Future,
        C: FnOnce(&F::Output) -> Verdict,
    {
        Call::new(self, None, body, classify)
    }
}

impl Breaker {
    /// [`call_with`](Self::call_with) with any [`Classify`]: the attribute's expansion, whose
    /// classifier also says what a failure said.
    pub(crate) fn call_classified<F: Future, C: Classify<F::Output>>(
        &self,
        body: F,
        classify: C,
    ) -> Call<'_, F, C> {
        Call::new(self, None, body, classify)
    }
}

impl<'a> Permit<'a> {
    /// Runs the admitted call: under the breaker's timeout, classified with `classify`, its
    /// outcome recorded on this permit.
    ///
    /// The timeout's timer is only set if `body` does not finish on its first poll, so a call
    /// that is ready at once costs no timer and no clock read. The deadline counts from the
    /// call's start when slow calls are detected (the start is read anyway), otherwise from that
    /// first poll.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, Verdict};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let breaker = Breaker::new(Config::default());
    /// let permit = breaker.try_acquire().unwrap();
    /// let answer = permit.run(async { Ok::<_, std::io::Error>(42) }, Verdict::of).await;
    /// assert_eq!(answer.unwrap().unwrap(), 42);
    /// # }
    /// ```
    pub fn run<F, C>(self, body: F, classify: C) -> Call<'a, F, C>
    where
        F: Future,
        C: FnOnce(&F::Output) -> Verdict,
    {
        let breaker = self.breaker();
        Call::new(breaker, Some(self), body, classify)
    }
}

pin_project! {
    /// The future of a call through a breaker: see [`Breaker::call`].
    ///
    /// Resolves to the body's value, or to the [`BreakerError`] the breaker answered with
    /// instead. Polling it again after that never completes. It is a named type, so it can be
    /// stored in a struct or returned from a trait method without boxing.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Call, Config, Verdict};
    ///
    /// fn lookup(breaker: &Breaker) -> Call<'_, std::future::Ready<Result<u32, std::io::Error>>> {
    ///     breaker.call(std::future::ready(Ok(7)))
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let breaker = Breaker::new(Config::default());
    /// assert_eq!(lookup(&breaker).await.unwrap().unwrap(), 7);
    /// # }
    /// ```
    #[must_use = "futures do nothing unless polled"]
    pub struct Call<'a, F, C = ByIsFailure> {
        breaker: &'a Breaker,
        #[pin]
        run: Run<Permit<'a>, F, C>,
    }
}

pin_project! {
    /// The future of a call admitted with an [`OwnedPermit`]: see [`OwnedPermit::run`]. It
    /// borrows nothing, so it is `'static` whenever its body and classifier are.
    ///
    /// Resolves to the body's value, or to the timeout's [`BreakerError`]; the outcome is
    /// recorded exactly as [`Call`] records it, and dropping it records nothing.
    #[must_use = "futures do nothing unless polled"]
    pub struct OwnedCall<F, C = ByIsFailure> {
        #[pin]
        run: Run<OwnedPermit, F, C>,
    }
}

pin_project! {
    /// An admitted call under way, whichever permit admitted it.
    #[project = RunProj]
    struct Run<P, F, C> {
        stage: Stage,
        permit: Option<P>,
        classify: Option<C>,
        // Emptied the moment the call times out, so the body is dropped before the caller
        // hears of the timeout; a body that finished is dropped with the future.
        #[pin]
        body: Option<F>,
        #[pin]
        deadline: Option<Sleep>,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Admitting,
    /// Admitted beforehand while faults are injected: the first poll draws it.
    Drawing,
    Running,
    /// An injected delay: the timer is the delay's end (or the timeout's, if that is sooner).
    Delaying,
    /// The same, and then an injected failure in place of the call.
    DelayingThenFailing,
    Done,
}

impl<P: Admitted, F, C> Run<P, F, C> {
    fn new(permit: Option<P>, body: F, classify: C) -> Self {
        let stage = match &permit {
            // One load of the word the admission just read, so a permit taken beforehand is
            // drawn for a fault like a call admitted on its first poll.
            Some(permit) if permit.breaker().injecting() => Stage::Drawing,
            Some(_) => Stage::Running,
            None => Stage::Admitting,
        };
        Run {
            stage,
            permit,
            classify: Some(classify),
            body: Some(body),
            deadline: None,
        }
    }
}

impl<'a, F, C> Call<'a, F, C> {
    fn new(breaker: &'a Breaker, permit: Option<Permit<'a>>, body: F, classify: C) -> Self {
        Call {
            breaker,
            run: Run::new(permit, body, classify),
        }
    }
}

impl OwnedPermit {
    /// Runs the admitted call: under the breaker's timeout, classified with `classify`, its
    /// outcome recorded on this permit, like [`Permit::run`]; the future holds the breaker, so
    /// it can be spawned or returned from a tower service.
    pub fn run<F, C>(self, body: F, classify: C) -> OwnedCall<F, C>
    where
        F: Future,
        C: FnOnce(&F::Output) -> Verdict,
    {
        self.run_classified(body, classify)
    }

    /// [`run`](Self::run) with any [`Classify`], for integrations with a classifier of their
    /// own type.
    pub(crate) fn run_classified<F, C>(self, body: F, classify: C) -> OwnedCall<F, C> {
        OwnedCall {
            run: Run::new(Some(self), body, classify),
        }
    }
}

impl<F, C> Future for Call<'_, F, C>
where
    F: Future,
    C: Classify<F::Output>,
{
    type Output = Result<F::Output, BreakerError>;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut run = this.run;
        // One place polls the body, whichever way the permit came: the poll inlines into every
        // guarded fn, and a second copy of it would push the body's poll out of line.
        let permit = if *run.as_mut().project().stage == Stage::Admitting {
            // The closed circuit's admission yields the permit itself, not a `Result` carrying
            // a rejection beside it, so the permit stays in registers.
            match this.breaker.admit_closed() {
                Some(permit) => permit,
                None => match this.breaker.admit_otherwise() {
                    Ok(permit) if !this.breaker.injecting() => permit,
                    // Drawn on the long way, which answers no more than it must (the permit to
                    // run, or the injection's own answer), so that the permit and the body's
                    // value reach the poll below by the ways they did.
                    Ok(permit) => match run.as_mut().draw(permit, cx) {
                        Ok(permit) => permit,
                        Err(injected) => return injected.answer(),
                    },
                    Err(rejection) => {
                        let mut run = run.project();
                        *run.stage = Stage::Done;
                        run.body.set(None);
                        return Poll::Ready(Err(rejection));
                    }
                },
            }
        } else {
            match run.as_mut().parked() {
                Some(permit) => permit,
                None => match run.as_mut().resume(cx) {
                    Ok(permit) => permit,
                    Err(injected) => return injected.answer(),
                },
            }
        };
        run.drive(permit, cx)
    }
}

impl<F, C> Future for OwnedCall<F, C>
where
    F: Future,
    C: Classify<F::Output>,
{
    type Output = Result<F::Output, BreakerError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut run = self.project().run;
        let permit = match run.as_mut().parked() {
            Some(permit) => permit,
            None => match run.as_mut().resume(cx) {
                Ok(permit) => permit,
                Err(injected) => return injected.answer(),
            },
        };
        run.drive(permit, cx)
    }
}

/// A future polled again after it returned `Ready` is a bug in the caller's executor or
/// combinator; saying so beats hanging the task forever, as `async fn`s do too.
#[cold]
#[inline(never)]
#[track_caller]
fn polled_after_completion() -> ! {
    panic!("a circuit breaker call was polled after it completed")
}

impl<P, F, C> Run<P, F, C>
where
    P: Admitted,
    F: Future,
    C: Classify<F::Output>,
{
    /// The permit of a call admitted earlier, waiting in the future; `None` once it ended,
    /// or while an injection has it ([`resume`](Self::resume)). (An owned call is admitted
    /// before it is built, so it is never `Admitting`.)
    #[inline(always)]
    fn parked(self: Pin<&mut Self>) -> Option<P> {
        let this = self.project();
        match this.stage {
            Stage::Running => this.permit.take(),
            Stage::Admitting
            | Stage::Drawing
            | Stage::Delaying
            | Stage::DelayingThenFailing
            | Stage::Done => None,
        }
    }

    /// Polls the body with the call's permit in hand.
    #[inline(always)]
    fn drive(
        self: Pin<&mut Self>,
        permit: P,
        cx: &mut Context<'_>,
    ) -> Poll<Result<F::Output, BreakerError>> {
        let this = self.project();
        *this.stage = Stage::Running;
        poll_admitted(this, permit, cx)
    }
}

/// One poll of an admitted call. The permit is held in a local while the body is polled and
/// only parked in the future if the body has to wait: a call that is ready at once never copies
/// it there and back.
#[inline(always)]
fn poll_admitted<P, F, C>(
    mut this: RunProj<'_, P, F, C>,
    permit: P,
    cx: &mut Context<'_>,
) -> Poll<Result<F::Output, BreakerError>>
where
    P: Admitted,
    F: Future,
    C: Classify<F::Output>,
{
    let Some(body) = this.body.as_mut().as_pin_mut() else {
        // Only a finished call has no body, and it returned earlier; keep the permit anyway.
        *this.permit = Some(permit);
        return Poll::Pending;
    };

    // A panic in the body (or its classifier) is a failure, and then goes on to the caller.
    // It is caught here rather than by a guard that owns the permit, so the permit stays a
    // local that is never moved into the guard and back out through memory.
    let classify = &mut *this.classify;
    let polled = panic::catch_unwind(AssertUnwindSafe(|| match body.poll(cx) {
        Poll::Ready(value) => {
            let verdict = classify
                .take()
                .map_or(Verdict::Success, |classify| classify.classify(&value));
            Poll::Ready((value, verdict))
        }
        Poll::Pending => Poll::Pending,
    }));
    match polled {
        Ok(Poll::Ready((value, Verdict::Failure))) => {
            conclude_failed::<P, F::Output, C>(permit, &value);
            *this.stage = Stage::Done;
            return Poll::Ready(Ok(value));
        }
        Ok(Poll::Ready((value, verdict))) => {
            // A timed call may be traced: a business answer leaves its mark for the trace.
            // (Every call is timed once a trace has started.)
            if permit.started().is_some()
                && verdict == Verdict::Success
                && C::is_business_answer(&value)
            {
                crate::base::business_answer::mark();
            }
            permit.conclude(Ending::of(verdict));
            *this.stage = Stage::Done;
            return Poll::Ready(Ok(value));
        }
        Ok(Poll::Pending) => {}
        Err(panic) => {
            *this.stage = Stage::Done;
            conclude_unwinding(permit, panic);
        }
    }

    if let Some(limit) = permit.breaker().timeout() {
        if expired(this.deadline, permit.started(), limit, cx) {
            *this.stage = Stage::Done;
            this.body.set(None);
            return Poll::Ready(Err(conclude_timed_out(permit, limit)));
        }
    }
    *this.permit = Some(permit);
    Poll::Pending
}

/// Records the panic of a call's body, and lets it go on to the caller. Out of line, so the
/// poll that inlines into every guarded fn carries none of it.
#[cold]
#[inline(never)]
fn conclude_unwinding<P: Admitted>(permit: P, panic: Box<dyn std::any::Any + Send>) -> ! {
    permit.conclude(Ending::Panic);
    panic::resume_unwind(panic)
}

/// Records a counted failure, and tells the breaker what it said in case it opened on it.
/// Out of line: the success that every closed call hopes for carries none of it.
#[cold]
#[inline(never)]
fn conclude_failed<P: Admitted, T, C: Classify<T>>(permit: P, value: &T) {
    match C::__failure(value) {
        Some(message) => permit.conclude_noting(Ending::Failure, &message),
        None => permit.conclude(Ending::Failure),
    }
}

/// Records a call's timeout: the error to answer with. Out of line, like the panic's.
#[cold]
#[inline(never)]
fn conclude_timed_out<P: Admitted>(permit: P, limit: Duration) -> BreakerError {
    let error = BreakerError::Timeout {
        breaker: permit.breaker().name().clone(),
        limit,
    };
    permit.conclude_noting(Ending::Timeout, &error);
    error
}

/// Arms the timeout's timer on the first wait and polls it: whether the call ran out of time.
/// Out of line, and the same for every body, so a call that is ready at once carries none of it.
#[inline(never)]
fn expired(
    mut deadline: Pin<&mut Option<Sleep>>,
    started: Option<Nanos>,
    limit: Duration,
    cx: &mut Context<'_>,
) -> bool {
    if deadline.is_none() {
        let start = started.unwrap_or_else(clock::now);
        let at = clock::to_instant(start.saturating_add(duration_nanos(limit)));
        deadline.set(Some(sleep_until(at)));
    }
    deadline
        .as_pin_mut()
        .is_some_and(|timer| timer.poll(cx).is_ready())
}
