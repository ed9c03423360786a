//! The call path's long way while faults are injected ([`Breaker::inject`]): the draw, the
//! wait of a delay, and the failure that stands for an outage. Out of line, so the calls that
//! take the short way carry none of it.
//!
//! [`Breaker::inject`]: crate::Breaker::inject

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::time::sleep_until;

use super::{Run, RunProj, Stage, conclude_timed_out, polled_after_completion};
use crate::base::clock::{self, duration_nanos};
use crate::core::breaker::observer::{self, CallEvent, Ending};
use crate::core::breaker::permit::Admitted;
use crate::core::injection::Fault;
use crate::outcome::classify::Classify;
use crate::outcome::error::BreakerError;

/// What the long way answers: the permit back, to run the call as usual, or the injection's
/// own answer in place of the call's. Never the body's value, so the poll that every guarded
/// fn inlines gets nothing larger back than an error (a `Poll` of the body's value cost the
/// attribute's closed call 0.4 ns, benchmarked).
type Resumed<P> = Result<P, Answer>;

/// The injection's answer in place of the call's.
pub(super) enum Answer {
    /// The delay has not passed.
    Waiting,
    /// The call failed by injection, or timed out during its delay.
    Failed(BreakerError),
}

impl Answer {
    pub(super) fn answer<T>(self) -> Poll<Result<T, BreakerError>> {
        match self {
            Answer::Waiting => Poll::Pending,
            Answer::Failed(error) => Poll::Ready(Err(error)),
        }
    }
}

impl<P, F, C> Run<P, F, C>
where
    P: Admitted,
    F: Future,
    C: Classify<F::Output>,
{
    /// Draws a fault for a call just admitted while an injection runs.
    #[cold]
    #[inline(never)]
    pub(super) fn draw(
        mut self: Pin<&mut Self>,
        mut permit: P,
        cx: &mut Context<'_>,
    ) -> Resumed<P> {
        let Some((fault, delay)) = permit.breaker().draw_fault(permit.kind()) else {
            return Ok(permit);
        };
        let this = self.as_mut().project();
        if !fault.delays() {
            return Err(Answer::Failed(fail(this, permit, fault)));
        }
        permit.delay();
        // The delay counts from the call's start, as the timeout does: the sooner of the two
        // ends the wait.
        let start = permit.started().unwrap_or_else(clock::now);
        let mut until = start.saturating_add(duration_nanos(delay));
        if let Some(limit) = permit.breaker().timeout() {
            until = until.min(start.saturating_add(duration_nanos(limit)));
        }
        let mut this = this;
        this.deadline
            .set(Some(sleep_until(clock::to_instant(until))));
        *this.stage = if fault.fails() {
            Stage::DelayingThenFailing
        } else {
            Stage::Delaying
        };
        *this.permit = Some(permit);
        self.delayed(cx)
    }

    /// Goes on with a call the injection holds: draws a permit taken beforehand, or waits out
    /// its delay.
    #[cold]
    #[inline(never)]
    pub(super) fn resume(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Resumed<P> {
        let this = self.as_mut().project();
        match *this.stage {
            Stage::Drawing => {
                let Some(permit) = this.permit.take() else {
                    polled_after_completion()
                };
                *this.stage = Stage::Running;
                self.draw(permit, cx)
            }
            Stage::Delaying | Stage::DelayingThenFailing => self.delayed(cx),
            Stage::Admitting | Stage::Running | Stage::Done => polled_after_completion(),
        }
    }

    /// Waits out a delay, then fails the call, times it out, or lets it run.
    fn delayed(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Resumed<P> {
        let mut this = self.as_mut().project();
        let Some(timer) = this.deadline.as_mut().as_pin_mut() else {
            polled_after_completion()
        };
        if timer.poll(cx).is_pending() {
            return Err(Answer::Waiting);
        }
        let Some(mut permit) = this.permit.take() else {
            polled_after_completion()
        };
        let now = clock::now();
        let start = permit.started().unwrap_or(now);
        let timeout = permit.breaker().timeout();
        if let Some(limit) = timeout {
            if now >= start.saturating_add(duration_nanos(limit)) {
                *this.stage = Stage::Done;
                this.body.set(None);
                return Err(Answer::Failed(conclude_timed_out(permit, limit)));
            }
        }
        if *this.stage == Stage::DelayingThenFailing {
            // Announced as the delay and the failure it led to, not as the delay alone.
            permit.undelay();
            let error = fail(this, permit, Fault::DelayThenFailure);
            return Err(Answer::Failed(error));
        }
        // The call runs now, under its timeout from its start.
        match (timeout, this.deadline.as_mut().as_pin_mut()) {
            (Some(limit), Some(timer)) => {
                timer.reset(clock::to_instant(
                    start.saturating_add(duration_nanos(limit)),
                ));
            }
            _ => this.deadline.set(None),
        }
        Ok(permit)
    }
}

/// Fails the call with the injected failure: announced as injected just before its end,
/// recorded as a failure, noted as what the circuit opened on, and the body dropped unrun.
fn fail<P: Admitted, F, C>(this: RunProj<'_, P, F, C>, permit: P, fault: Fault) -> BreakerError {
    *this.stage = Stage::Done;
    if observer::installed() {
        observer::notify(permit.breaker(), CallEvent::Injected { fault });
    }
    let mut body = this.body;
    body.set(None);
    let error = BreakerError::Injected {
        breaker: permit.breaker().name().clone(),
    };
    permit.conclude_noting(Ending::Failure, &error);
    error
}
