//! What goes around a breaker's calls: retries with a full-jitter backoff and a retry budget,
//! a deadline over all attempts, and a bulkhead.
//!
//! The order is fixed, so the pieces cannot be stacked wrong: the retries outside, the breaker
//! inside them (every attempt is admitted and recorded on its own), the timeout innermost (per
//! attempt). A rejection is never retried: not the breaker's (open, half-open full), not the
//! bulkhead's, not an empty budget's.
//!
//! | file | its job |
//! |---|---|
//! | `attempts.rs` | one call's attempts: slots, retry or not, the wait, the deadline |
//! | `bulkhead.rs` | at most `max_concurrent` calls at once, lock-free |
//! | `budget.rs` | retries at most a share of recent calls, lock-free |

use std::future::Future;
use std::time::Duration;

use breaker_options::{Backoff, ConfigError, PolicySettings, Rate, RetryBudget};

use crate::core::breaker::Breaker;
use crate::outcome::classify::{IsFailure, Verdict};
use crate::outcome::error::BreakerError;

pub(crate) mod attempts;
pub(crate) mod budget;
pub(crate) mod bulkhead;

use attempts::{Attempted, Attempts};
use budget::Budget;
use bulkhead::Bulkhead;

/// Retries, a deadline and a bulkhead around a breaker's calls, each off unless set. The
/// attribute's options of the same names build one for its fn; by hand, pair one with a
/// breaker:
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
/// use breaker_runtime::{Breaker, Config, Policy};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let breaker = Breaker::new(Config::builder().name("stock").build()?);
/// let policy = Policy::builder()
///     .retries(2)
///     .backoff(Duration::from_millis(10), Duration::from_secs(1))
///     .deadline(Duration::from_secs(5))
///     .max_concurrent(32)
///     .build()?;
///
/// let attempts = AtomicU32::new(0);
/// let answer = policy
///     .call(&breaker, || async {
///         match attempts.fetch_add(1, Ordering::Relaxed) {
///             0 => Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
///             _ => Ok("in stock"),
///         }
///     })
///     .await?;
/// assert_eq!(answer?, "in stock");
/// assert_eq!(attempts.load(Ordering::Relaxed), 2, "one failure, one retry");
/// assert_eq!(breaker.snapshot().failures, 1, "each attempt is recorded");
/// # Ok(())
/// # }
/// ```
pub struct Policy {
    settings: PolicySettings,
    pub(crate) bulkhead: Option<Bulkhead>,
    pub(crate) budget: Option<Budget>,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("settings", &self.settings)
            .field("in_flight", &self.in_flight())
            .finish()
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy::__checked(PolicySettings::DEFAULT)
    }
}

impl Policy {
    /// A builder starting with everything off.
    pub fn builder() -> PolicyBuilder {
        PolicyBuilder::default()
    }

    /// A policy from settings, once they pass [`PolicySettings::check`].
    pub fn new(settings: PolicySettings) -> Result<Policy, ConfigError> {
        settings.check()?;
        Ok(Policy::__checked(settings))
    }

    /// A policy from settings already checked (by the attribute at compile time).
    #[doc(hidden)]
    pub fn __checked(settings: PolicySettings) -> Policy {
        let budget = match settings.retry_budget() {
            RetryBudget::Share(share) if settings.retries > 0 => Some(Budget::new(share)),
            RetryBudget::Share(_) | RetryBudget::Off => None,
        };
        Policy {
            settings,
            bulkhead: settings.max_concurrent.map(Bulkhead::new),
            budget,
        }
    }

    /// The settings it was built from.
    pub fn settings(&self) -> PolicySettings {
        self.settings
    }

    /// Calls in the bulkhead now (0 without one).
    pub fn in_flight(&self) -> u32 {
        self.bulkhead.as_ref().map_or(0, Bulkhead::in_flight)
    }

    /// Runs the call `make` builds, through `breaker`, as often as the policy allows: each
    /// attempt takes a bulkhead slot, goes through the breaker (admitted, timed out, recorded
    /// on its own) and is classified by its value's [`IsFailure`]. Another attempt follows a
    /// counted failure or a timeout, after the backoff's wait, while `retries` and the budget
    /// allow; a rejection ends the call at once. `Ok` holds the last attempt's value, failure
    /// or not; `Err` the breaker's own answer (a rejection, a timeout, the deadline).
    ///
    /// Dropping the future cancels the call: an attempt in flight and a wait record nothing,
    /// and its slot is given back.
    pub async fn call<F, Fut>(
        &self,
        breaker: &Breaker,
        make: F,
    ) -> Result<Fut::Output, BreakerError>
    where
        F: FnMut() -> Fut,
        Fut: Future,
        Fut::Output: IsFailure,
    {
        self.call_with(breaker, make, Verdict::of).await
    }

    /// [`call`](Self::call) with a classifier of your own.
    pub async fn call_with<F, Fut, C>(
        &self,
        breaker: &Breaker,
        mut make: F,
        classify: C,
    ) -> Result<Fut::Output, BreakerError>
    where
        F: FnMut() -> Fut,
        Fut: Future,
        C: Fn(&Fut::Output) -> Verdict,
    {
        let mut attempts = Attempts::begin(self, breaker);
        let run = async {
            loop {
                let slot = match attempts.slot_now() {
                    Some(slot) => slot,
                    None => attempts.slot().await?,
                };
                // Classified once, inside the breaker's call (where a panicking classifier
                // counts as a failure), and the verdict kept beside the value for the retry.
                let body = make();
                let outcome = breaker
                    .call_with(
                        async {
                            let value = body.await;
                            let verdict = classify(&value);
                            (value, verdict)
                        },
                        |(_, verdict)| *verdict,
                    )
                    .await;
                drop(slot);
                match attempts.retry(Attempted::of(&outcome)) {
                    None => return outcome.map(|(value, _)| value),
                    Some(wait) => attempts::backoff(wait).await,
                }
            }
        };
        // As the attribute does: a free slot is taken at once, the policy is asked after an
        // attempt ends, and attempts without a deadline are not wrapped in one.
        if self.settings.deadline.is_none() {
            return run.await;
        }
        attempts::within_deadline(self, breaker, run).await
    }
}

/// Builds a [`Policy`]; every value is checked by [`PolicyBuilder::build`].
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{ConfigError, Policy};
///
/// let err = Policy::builder().max_wait(Duration::from_millis(50)).build().unwrap_err();
/// assert_eq!(err, ConfigError::MaxWaitWithoutMaxConcurrent);
/// ```
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct PolicyBuilder {
    settings: PolicySettings,
    // Kept as given until `build`, which refuses those outside (0, 100].
    budget_percent: Option<f64>,
}

impl PolicyBuilder {
    /// At most this many attempts after the first, each after a counted failure or a timeout
    /// (default 0, at most [`MAX_RETRIES`](crate::MAX_RETRIES)).
    pub fn retries(mut self, retries: u32) -> Self {
        self.settings.retries = retries;
        self
    }
    /// The full-jitter backoff's bounds: the `n`-th retry waits a random time up to
    /// `min(initial × 2ⁿ, max)` (default 100 ms to 10 s; needs `retries`).
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.settings.backoff = Some(Backoff { initial, max });
        self
    }
    /// Retries at most `percent` of the calls of the last 10 s, and at least 10 a second
    /// (default 20; needs `retries`).
    pub fn retry_budget(mut self, percent: f64) -> Self {
        self.budget_percent = Some(percent);
        self
    }
    /// Retries limited by `retries` alone (needs `retries`).
    pub fn no_retry_budget(mut self) -> Self {
        self.budget_percent = None;
        self.settings.retry_budget = Some(RetryBudget::Off);
        self
    }
    /// One bound on all attempts and the waits between them (default none).
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.settings.deadline = Some(deadline);
        self
    }
    /// At most this many calls at once through the breaker; the rest are rejected with
    /// [`BreakerError::BulkheadFull`] (default: no limit).
    pub fn max_concurrent(mut self, calls: u32) -> Self {
        self.settings.max_concurrent = Some(calls);
        self
    }
    /// How long a call over `max_concurrent` waits for a slot before it is rejected (default:
    /// rejected at once; needs `max_concurrent`).
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.settings.max_wait = Some(wait);
        self
    }
    /// Starts from `settings` instead of everything off.
    pub fn settings(mut self, settings: PolicySettings) -> Self {
        self.budget_percent = None;
        self.settings = settings;
        self
    }
    /// Checks every value and returns the policy, or the first rule broken.
    pub fn build(mut self) -> Result<Policy, ConfigError> {
        if let Some(percent) = self.budget_percent {
            let share = Rate::from_percent(percent).ok_or(ConfigError::Percentage {
                field: "retry_budget",
                value: percent,
            })?;
            self.settings.retry_budget = Some(RetryBudget::Share(share));
        }
        Policy::new(self.settings)
    }
}
