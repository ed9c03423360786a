//! One call's attempts: the bulkhead slot of each, whether another may follow and the wait
//! before it, and the deadline over them all. [`Policy::call`] and the attribute's expansion
//! both drive a call through this, so the rules are written once.

use std::future::Future;
use std::time::Duration;

use crate::base::random;
use crate::core::breaker::Breaker;
use crate::core::breaker::observer::{self, CallEvent};
use crate::core::state::State;
use crate::outcome::classify::Verdict;
use crate::outcome::error::BreakerError;
use crate::policy::Policy;
use crate::policy::bulkhead::Slot;

/// How an attempt ended, as far as retrying is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempted {
    /// A counted failure, or a timeout: worth another attempt.
    Failed,
    /// A success, a healthy or ignored answer, or the breaker's own rejection: never retried.
    Final,
}

impl Attempted {
    /// The attempt's result as the attribute's expansion holds it: the value and its verdict
    /// (and how to describe its failure), or the breaker's answer.
    pub fn of<O: Verdicted>(outcome: &Result<O, BreakerError>) -> Attempted {
        match outcome {
            Ok(value) if value.verdict() == Verdict::Failure => Attempted::Failed,
            Ok(_) => Attempted::Final,
            Err(error) if error.is_timeout() => Attempted::Failed,
            Err(_) => Attempted::Final,
        }
    }
}

/// A value an attempt ended in, with its verdict beside it.
pub trait Verdicted {
    /// The verdict.
    fn verdict(&self) -> Verdict;
}

impl<T> Verdicted for (T, Verdict) {
    fn verdict(&self) -> Verdict {
        self.1
    }
}

impl<T, D> Verdicted for (T, Verdict, D) {
    fn verdict(&self) -> Verdict {
        self.1
    }
}

/// A call's way through its policy: made by [`Attempts::begin`], asked for a slot before each
/// attempt and whether to [`retry`](Attempts::retry) after it.
pub struct Attempts<'a> {
    policy: &'a Policy,
    breaker: &'a Breaker,
    retried: u32,
}

impl<'a> Attempts<'a> {
    /// The call begins: it counts towards the retry budget.
    #[inline]
    pub fn begin(policy: &'a Policy, breaker: &'a Breaker) -> Attempts<'a> {
        if let Some(budget) = &policy.budget {
            budget.deposit();
        }
        Attempts {
            policy,
            breaker,
            retried: 0,
        }
    }

    /// A place in the bulkhead for the next attempt if one is free now (`Some(None)` without a
    /// bulkhead); `None` when it is full, and [`slot`](Attempts::slot) must wait or refuse. Kept
    /// apart so that an attempt that finds a free place polls no future for it.
    #[inline]
    pub fn slot_now(&self) -> Option<Option<Slot<'a>>> {
        match &self.policy.bulkhead {
            None => Some(None),
            Some(bulkhead) => bulkhead.try_enter().map(Some),
        }
    }

    /// A place in the bulkhead for the next attempt (`None` without a bulkhead), or the
    /// rejection when it is full.
    pub async fn slot(&self) -> Result<Option<Slot<'a>>, BreakerError> {
        let Some(bulkhead) = &self.policy.bulkhead else {
            return Ok(None);
        };
        match bulkhead.enter(self.policy.settings.max_wait).await {
            Some(slot) => Ok(Some(slot)),
            None => {
                observer::notify(self.breaker, CallEvent::BulkheadFull);
                Err(BreakerError::BulkheadFull {
                    breaker: self.breaker.name().clone(),
                    max_concurrent: bulkhead.cap(),
                })
            }
        }
    }

    /// Whether to attempt again after an attempt that ended as `attempted`: the wait before the
    /// next attempt ([`backoff`]), or `None` for no other attempt. Never after a final outcome,
    /// never past `retries`, never beyond the budget. With the circuit open, at once and without
    /// spending the budget: the next attempt is turned away, and its rejection is the call's
    /// answer. A decision without its wait, so that a call whose first attempt answers polls no
    /// future of the policy's at all.
    #[inline]
    pub fn retry(&mut self, attempted: Attempted) -> Option<Duration> {
        if attempted == Attempted::Final || self.retried >= self.policy.settings.retries {
            return None;
        }
        self.retry_failed()
    }

    /// The decision after a failed attempt, out of the way of the calls that answer at once.
    #[cold]
    fn retry_failed(&mut self) -> Option<Duration> {
        let failed = CallEvent::Retry {
            attempt: self.retried + 1,
        };
        if self.breaker.state() == State::Open {
            self.retried += 1;
            observer::notify(self.breaker, failed);
            return Some(Duration::ZERO);
        }
        if let Some(budget) = &self.policy.budget {
            if !budget.withdraw() {
                observer::notify(self.breaker, CallEvent::RetryBudgetExhausted);
                return None;
            }
        }
        let wait = self.wait(self.retried);
        self.retried += 1;
        observer::notify(self.breaker, failed);
        Some(wait)
    }

    /// Full jitter: a random wait in `[0, min(initial × 2ⁿ, max)]` after the `n`-th retry.
    fn wait(&self, retried: u32) -> Duration {
        self.policy
            .settings
            .backoff()
            .cap(retried)
            .mul_f64(random::fraction())
    }
}

/// The wait [`Attempts::retry`] chose before the next attempt; none when it is zero.
pub async fn backoff(wait: Duration) {
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
}

/// Runs a call's `attempts` under its policy's deadline, if it has one.
pub async fn within_deadline<T>(
    policy: &Policy,
    breaker: &Breaker,
    attempts: impl Future<Output = Result<T, BreakerError>>,
) -> Result<T, BreakerError> {
    let Some(limit) = policy.settings.deadline else {
        return attempts.await;
    };
    tokio::time::timeout(limit, attempts)
        .await
        .unwrap_or_else(|_| {
            observer::notify(breaker, CallEvent::DeadlineExceeded);
            Err(BreakerError::DeadlineExceeded {
                breaker: breaker.name().clone(),
                limit_ms: u64::try_from(limit.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX),
            })
        })
}
