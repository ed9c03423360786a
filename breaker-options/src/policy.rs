//! What wraps the breaker's calls: retries, their backoff and budget, a deadline over all
//! attempts, and a bulkhead, with their defaults and the rules between them.

use std::time::Duration;

use crate::error::ConfigError;
use crate::limits::{MAX_CONCURRENT, MAX_RETRIES};
use crate::rate::Rate;
use crate::settings::{duration, first};

/// The bounds of the full-jitter exponential backoff between attempts: attempt `n` (from 0)
/// waits a random time in `[0, min(initial × 2ⁿ, max)]`, as gRPC's retry design (A6) does.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::{grammar, Backoff};
///
/// let backoff = grammar::backoff("100ms..10s")?;
/// assert_eq!(backoff, Backoff::DEFAULT);
/// assert_eq!(backoff.cap(0), Duration::from_millis(100));
/// assert_eq!(backoff.cap(3), Duration::from_millis(800));
/// assert_eq!(backoff.cap(20), Duration::from_secs(10));
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The cap of the first wait.
    pub initial: Duration,
    /// The cap no wait exceeds, however many attempts came before.
    pub max: Duration,
}

impl Backoff {
    /// `"100ms..10s"`: the default when `retries` is set.
    pub const DEFAULT: Backoff = Backoff {
        initial: Duration::from_millis(100),
        max: Duration::from_secs(10),
    };

    /// The longest wait after the `attempt`-th attempt (from 0): `min(initial × 2ⁿ, max)`.
    pub fn cap(&self, attempt: u32) -> Duration {
        self.initial
            .saturating_mul(2u32.saturating_pow(attempt))
            .min(self.max)
    }
}

/// The share of calls that may be retried: a retry budget, per breaker, over the last
/// [`RETRY_BUDGET_WINDOW`], with a floor of [`RETRY_BUDGET_FLOOR`] retries per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryBudget {
    /// Retries are limited by `retries` alone.
    Off,
    /// At most this share of the calls in the window, or the floor, whichever is more.
    Share(Rate),
}

impl RetryBudget {
    /// `"20%"`, Envoy's and tower's default.
    pub const DEFAULT: RetryBudget = RetryBudget::Share(Rate::from_ppm(200_000));
}

/// How far back the retry budget looks.
pub const RETRY_BUDGET_WINDOW: Duration = Duration::from_secs(10);

/// Retries per second the budget always allows, however few the calls: a service with little
/// traffic can still retry a blip.
pub const RETRY_BUDGET_FLOOR: u32 = 10;

/// The options around the breaker's calls, as plain named values, each absent one at its
/// default: what the attribute hands the runtime and what the runtime's `Policy` builder fills
/// in, both checked by [`PolicySettings::check`].
///
/// ```
/// use std::time::Duration;
/// use breaker_options::{Backoff, ConfigError, PolicySettings, RetryBudget};
///
/// let retrying = PolicySettings { retries: 3, ..PolicySettings::DEFAULT };
/// assert_eq!(retrying.check(), Ok(()));
/// assert_eq!(retrying.backoff(), Backoff::DEFAULT);
/// assert_eq!(retrying.retry_budget(), RetryBudget::DEFAULT);
///
/// let waiting = PolicySettings { max_wait: Some(Duration::from_millis(50)), ..PolicySettings::DEFAULT };
/// assert_eq!(waiting.check(), Err(ConfigError::MaxWaitWithoutMaxConcurrent));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicySettings {
    /// Attempts after the first, each after a counted failure or a timeout (default 0).
    pub retries: u32,
    /// The backoff between attempts; `None` for [`Backoff::DEFAULT`]. Needs `retries`.
    pub backoff: Option<Backoff>,
    /// The retry budget; `None` for [`RetryBudget::DEFAULT`]. Needs `retries`.
    pub retry_budget: Option<RetryBudget>,
    /// One bound on all attempts and the waits between them; `None` for none (default).
    pub deadline: Option<Duration>,
    /// Calls at once through the breaker (a bulkhead); `None` for no limit (default).
    pub max_concurrent: Option<u32>,
    /// How long a call over `max_concurrent` may wait for a slot; `None` to reject it at once
    /// (default). Needs `max_concurrent`.
    pub max_wait: Option<Duration>,
}

impl Default for PolicySettings {
    fn default() -> Self {
        PolicySettings::DEFAULT
    }
}

impl PolicySettings {
    /// Nothing around the call: no retries, no deadline, no bulkhead.
    pub const DEFAULT: PolicySettings = PolicySettings {
        retries: 0,
        backoff: None,
        retry_budget: None,
        deadline: None,
        max_concurrent: None,
        max_wait: None,
    };

    /// Whether these settings change nothing about a call: the attribute then expands exactly
    /// as it does without them.
    pub const fn is_inert(&self) -> bool {
        self.retries == 0 && self.deadline.is_none() && self.max_concurrent.is_none()
    }

    /// `backoff`, its default filled in.
    pub const fn backoff(&self) -> Backoff {
        match self.backoff {
            Some(backoff) => backoff,
            None => Backoff::DEFAULT,
        }
    }

    /// `retry_budget`, its default filled in.
    pub const fn retry_budget(&self) -> RetryBudget {
        match self.retry_budget {
            Some(budget) => budget,
            None => RetryBudget::DEFAULT,
        }
    }

    /// The first rule these settings break, if any.
    pub fn check(&self) -> Result<(), ConfigError> {
        first(self.violations())
    }

    /// Every rule these settings break, in the order of the options.
    pub fn violations(&self) -> Vec<ConfigError> {
        let mut found = Vec::new();
        if self.retries > MAX_RETRIES {
            found.push(ConfigError::Retries {
                value: self.retries,
                max: MAX_RETRIES,
            });
        }
        if let Some(backoff) = self.backoff {
            if self.retries == 0 {
                found.push(ConfigError::WithoutRetries { field: "backoff" });
            }
            for value in [backoff.initial, backoff.max] {
                duration(&mut found, "backoff", Some(value));
            }
            if backoff.initial > backoff.max {
                found.push(ConfigError::BackoffReversed {
                    initial: backoff.initial,
                    max: backoff.max,
                });
            }
        }
        if self.retry_budget.is_some() && self.retries == 0 {
            found.push(ConfigError::WithoutRetries {
                field: "retry_budget",
            });
        }
        duration(&mut found, "deadline", self.deadline);
        if let Some(value) = self.max_concurrent {
            if !(1..=MAX_CONCURRENT).contains(&value) {
                found.push(ConfigError::MaxConcurrent {
                    value,
                    max: MAX_CONCURRENT,
                });
            }
        }
        if let Some(wait) = self.max_wait {
            if self.max_concurrent.is_none() {
                found.push(ConfigError::MaxWaitWithoutMaxConcurrent);
            }
            duration(&mut found, "max_wait", Some(wait));
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_doubles_from_initial_and_stops_at_max() {
        let backoff = Backoff {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(500),
        };
        let caps: Vec<u128> = (0..5).map(|n| backoff.cap(n).as_millis()).collect();
        assert_eq!(caps, [100, 200, 400, 500, 500]);
        assert_eq!(backoff.cap(u32::MAX), Duration::from_millis(500));
    }

    #[test]
    fn every_rule_is_reported() {
        let all_wrong = PolicySettings {
            retries: MAX_RETRIES + 1,
            backoff: None,
            retry_budget: None,
            deadline: Some(Duration::ZERO),
            max_concurrent: Some(0),
            max_wait: None,
        };
        let fields: Vec<_> = all_wrong.violations().iter().map(|e| e.field()).collect();
        assert_eq!(fields, ["retries", "deadline", "max_concurrent"]);
        let without = PolicySettings {
            backoff: Some(Backoff {
                initial: Duration::from_secs(2),
                max: Duration::from_secs(1),
            }),
            retry_budget: Some(RetryBudget::Off),
            max_wait: Some(Duration::from_millis(5)),
            ..PolicySettings::DEFAULT
        };
        assert_eq!(
            without.violations(),
            [
                ConfigError::WithoutRetries { field: "backoff" },
                ConfigError::BackoffReversed {
                    initial: Duration::from_secs(2),
                    max: Duration::from_secs(1)
                },
                ConfigError::WithoutRetries {
                    field: "retry_budget"
                },
                ConfigError::MaxWaitWithoutMaxConcurrent,
            ]
        );
    }
}
