//! Fault injection's terms: which share of the admitted calls fails or waits, and the seeded
//! draw that picks them, so that a test can count on the same calls being picked every time.

use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

use crate::core::config::Rate;

/// The longest an injection may run: it always ends, and a day covers any exercise.
pub const MAX_INJECTION: Duration = Duration::from_secs(24 * 60 * 60);

/// What to inject into a breaker's calls ([`Breaker::inject`](crate::Breaker::inject)): a
/// share of them fails without running, a share waits before it runs, or both.
///
/// Shares are percentages of the admitted calls, as the breaker's `threshold` is, and each
/// call is drawn for each fault on its own, so with both a call may wait and then fail. A
/// delay counts in the call's time: against its timeout (a delay as long as the timeout is a
/// timeout), and against `slow_call`.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::Injection;
///
/// let injection = Injection::new().fail(10.0).delay(Duration::from_secs(2), 5.0).seed(7);
/// assert_eq!(injection.to_string(), "10% failures, 5% delays of 2 s");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Injection {
    fail: f64,
    delay: Duration,
    delay_share: f64,
    seed: Option<u64>,
}

impl Injection {
    /// Injects nothing, until given a share of failures or of delays.
    pub const fn new() -> Injection {
        Injection {
            fail: 0.0,
            delay: Duration::ZERO,
            delay_share: 0.0,
            seed: None,
        }
    }

    /// `percent` of the admitted calls fail without running: the breaker records a failure,
    /// and the caller gets [`BreakerError::Injected`](crate::BreakerError::Injected) (through
    /// the attribute: the fallback, as for any counted failure).
    pub const fn fail(mut self, percent: f64) -> Injection {
        self.fail = percent;
        self
    }

    /// `percent` of the admitted calls wait `delay` before they run.
    pub const fn delay(mut self, delay: Duration, percent: f64) -> Injection {
        self.delay = delay;
        self.delay_share = percent;
        self
    }

    /// Picks the calls with a generator seeded with `seed`, so that the same calls, in the
    /// same order, are picked every time. Without a seed, each injection draws a fresh one.
    pub const fn seed(mut self, seed: u64) -> Injection {
        self.seed = Some(seed);
        self
    }

    /// The share of calls that fail, in percent.
    pub const fn fail_percent(&self) -> f64 {
        self.fail
    }

    /// The delay, and the share of calls that wait it, in percent; `None` without delays.
    pub fn delay_of(&self) -> Option<(Duration, f64)> {
        (self.delay_share > 0.0).then_some((self.delay, self.delay_share))
    }

    /// The seed it was given, if any.
    pub const fn seed_given(&self) -> Option<u64> {
        self.seed
    }

    /// The shares as exact rates, or why they cannot be injected.
    pub(crate) fn odds(&self) -> Result<Odds, InjectError> {
        let rate = |percent: f64| match percent {
            0.0 => Ok(0),
            p => Rate::from_percent(p)
                .map(Rate::ppm)
                .ok_or(InjectError::Share { percent: p }),
        };
        let odds = Odds {
            fail: rate(self.fail)?,
            delay: rate(self.delay_share)?,
            delay_nanos: u64::try_from(self.delay.as_nanos()).unwrap_or(u64::MAX),
        };
        if odds.delay > 0 && self.delay.is_zero() {
            return Err(InjectError::ZeroDelay);
        }
        if odds.fail == 0 && odds.delay == 0 {
            return Err(InjectError::Nothing);
        }
        Ok(odds)
    }
}

impl Default for Injection {
    fn default() -> Self {
        Injection::new()
    }
}

impl fmt::Display for Injection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.fail != 0.0 {
            parts.push(format!("{}% failures", self.fail));
        }
        if let Some((delay, share)) = self.delay_of() {
            let delay = crate::outcome::error::humane(delay);
            parts.push(format!("{share}% delays of {delay}"));
        }
        if parts.is_empty() {
            return f.write_str("nothing");
        }
        f.write_str(&parts.join(", "))
    }
}

/// The fault injected into one call ([`CallEvent::Injected`](crate::CallEvent::Injected)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fault {
    /// The call failed without running.
    Failure,
    /// The call waited, then ran.
    Delay,
    /// The call waited, then failed without running.
    DelayThenFailure,
}

impl Fault {
    /// Whether the call failed instead of running.
    pub const fn fails(self) -> bool {
        matches!(self, Fault::Failure | Fault::DelayThenFailure)
    }

    /// Whether the call waited first.
    pub const fn delays(self) -> bool {
        matches!(self, Fault::Delay | Fault::DelayThenFailure)
    }

    /// A stable lower-case name, for logs and metrics labels.
    pub const fn as_str(self) -> &'static str {
        match self {
            Fault::Failure => "failure",
            Fault::Delay => "delay",
            Fault::DelayThenFailure => "delay_then_failure",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A running injection, as [`Breaker::injection`](crate::Breaker::injection) and the snapshot
/// read it.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Injecting {
    /// What it injects.
    pub injection: Injection,
    /// When it ends, on tokio's clock.
    pub ends: Instant,
    /// The calls drawn so far (those it could inject into).
    pub drawn: u64,
    /// The calls it injected a fault into so far.
    pub injected: u64,
}

/// Why an injection did not start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InjectError {
    /// Neither failures nor delays were given a share.
    #[error("nothing to inject: give a share of failures or of delays")]
    Nothing,
    /// A share was not a percentage above 0 and at most 100, with at most 4 decimals (a fault
    /// left out, or given 0, is not injected).
    #[error(
        "{percent}% is not a share of the calls: give a percentage above 0 and at most 100, to 4 decimals at most (leave a fault out to inject none of it)"
    )]
    Share {
        /// The share given.
        percent: f64,
    },
    /// Delays were given a share but no length.
    #[error("a delay of zero delays nothing: give it a length")]
    ZeroDelay,
    /// An injection of no length would inject nothing.
    #[error("an injection must last longer than zero")]
    Zero,
    /// An injection always ends, and within [`MAX_INJECTION`].
    #[error("an injection lasts at most 24 h")]
    TooLong,
    /// The breaker is in shadow mode: it turns no call away, so the failures would reach the
    /// callers without ever opening the circuit. Switch it to enforce first.
    #[error("a breaker in shadow mode turns no call away: switch it to enforce to inject into it")]
    Shadow,
    /// Another injection is running; stop it first
    /// ([`Breaker::stop_injection`](crate::Breaker::stop_injection)).
    #[error(
        "an injection is running already and ends in {}; stop it first with `stop_injection`",
        crate::outcome::error::humane(ends.saturating_duration_since(Instant::now()))
    )]
    Injecting {
        /// When the running injection ends, on tokio's clock.
        ends: Instant,
    },
}

/// The shares in millionths, and the delay, as the draw uses them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Odds {
    pub(crate) fail: u32,
    pub(crate) delay: u32,
    pub(crate) delay_nanos: u64,
}

impl Odds {
    /// The fault for the call drawn `n`-th under `seed`, if any.
    pub(crate) fn draw(&self, seed: u64, n: u64) -> Option<Fault> {
        let picked =
            |ppm: u32, stream: u64| ppm > 0 && mix(seed ^ stream, n) % 1_000_000 < u64::from(ppm);
        match (picked(self.fail, 0), picked(self.delay, STREAM)) {
            (false, false) => None,
            (true, false) => Some(Fault::Failure),
            (false, true) => Some(Fault::Delay),
            (true, true) => Some(Fault::DelayThenFailure),
        }
    }
}

/// Sets the delays' draws apart from the failures', so that the two are independent.
const STREAM: u64 = 0x6a09_e667_f3bc_c909;

/// SplitMix64 of the `n`-th step from `seed`: a good spread from a counter, with no state to
/// share between threads but the counter.
fn mix(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A seed nobody chose, for an injection given none.
pub(crate) fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_checked_and_nothing_is_refused() {
        assert_eq!(Injection::new().odds().unwrap_err(), InjectError::Nothing);
        assert_eq!(
            Injection::new().fail(120.0).odds().unwrap_err(),
            InjectError::Share { percent: 120.0 }
        );
        assert!(Injection::new().fail(-1.0).odds().is_err());
        assert!(Injection::new().fail(f64::NAN).odds().is_err());
        assert_eq!(
            Injection::new()
                .delay(Duration::ZERO, 5.0)
                .odds()
                .unwrap_err(),
            InjectError::ZeroDelay
        );
        let odds = Injection::new()
            .fail(12.5)
            .delay(Duration::from_millis(3), 100.0)
            .odds()
            .unwrap();
        assert_eq!(
            (odds.fail, odds.delay, odds.delay_nanos),
            (125_000, 1_000_000, 3_000_000)
        );
    }

    #[test]
    fn the_draw_is_the_same_for_the_same_seed_and_apart_for_another() {
        let odds = Injection::new().fail(50.0).odds().unwrap();
        let draws = |seed| (0..64).map(|n| odds.draw(seed, n)).collect::<Vec<_>>();
        assert_eq!(draws(1), draws(1));
        assert_ne!(draws(1), draws(2));
    }

    #[test]
    fn every_call_is_picked_at_100_percent_and_none_at_0() {
        let all = Injection::new()
            .fail(100.0)
            .delay(Duration::from_secs(1), 100.0)
            .odds()
            .unwrap();
        let none = Injection::new()
            .delay(Duration::from_secs(1), 100.0)
            .odds()
            .unwrap();
        for n in 0..10_000 {
            assert_eq!(all.draw(9, n), Some(Fault::DelayThenFailure));
            assert_eq!(none.draw(9, n), Some(Fault::Delay));
        }
    }
}
