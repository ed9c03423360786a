//! Outcomes counted across the fleet, and the rule that opens a circuit on them.

use breaker_runtime::{Config, Counts};

/// Outcomes of closed calls: what one process recorded between two flushes, or what the whole
/// fleet recorded over the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Tally {
    /// Outcomes recorded (successes, slow successes, failures).
    pub calls: u64,
    /// Failures among them.
    pub failures: u64,
    /// Slow successes among them.
    pub slow: u64,
}

/// Which rate opened the fleet's circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The failure rate reached the threshold.
    FailureRate,
    /// The slow-call rate reached the slow threshold.
    SlowRate,
}

impl Tally {
    /// What happened between two readings of a breaker's counts.
    pub(crate) fn between(earlier: Counts, later: Counts) -> Tally {
        let delta = later.since(earlier);
        Tally {
            calls: delta.calls,
            failures: delta.failures,
            slow: delta.slow,
        }
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.calls == 0
    }

    /// The rule this window breaks for a breaker of `config`, judged only once it holds
    /// `min_calls` outcomes: the breaker's own thresholds, over the fleet's outcomes.
    pub fn trips(&self, config: &Config, min_calls: u64) -> Option<Rule> {
        if self.calls == 0 || self.calls < min_calls {
            return None;
        }
        let reaches = |part: u64, ppm: u32| {
            u128::from(part) * 1_000_000 >= u128::from(ppm) * u128::from(self.calls)
        };
        if reaches(self.failures, config.threshold().ppm()) {
            return Some(Rule::FailureRate);
        }
        if config.slow_call().is_some() && reaches(self.slow, config.slow_threshold().ppm()) {
            return Some(Rule::SlowRate);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn config() -> Config {
        Config::builder()
            .threshold(50.0)
            .count_window(20)
            .slow_call(Duration::from_millis(100))
            .slow_threshold(80.0)
            .build()
            .unwrap()
    }

    fn tally(calls: u64, failures: u64, slow: u64) -> Tally {
        Tally {
            calls,
            failures,
            slow,
        }
    }

    #[test]
    fn the_failure_rate_trips_at_the_threshold_and_not_below() {
        assert_eq!(
            tally(20, 10, 0).trips(&config(), 10),
            Some(Rule::FailureRate)
        );
        assert_eq!(tally(20, 9, 0).trips(&config(), 10), None);
    }

    #[test]
    fn nothing_is_judged_below_min_calls() {
        assert_eq!(tally(9, 9, 0).trips(&config(), 10), None);
        assert_eq!(tally(0, 0, 0).trips(&config(), 0), None);
    }

    #[test]
    fn the_slow_rate_trips_only_with_slow_call_detection_on() {
        assert_eq!(tally(10, 0, 8).trips(&config(), 10), Some(Rule::SlowRate));
        let no_slow = Config::builder().threshold(50.0).build().unwrap();
        assert_eq!(tally(10, 0, 10).trips(&no_slow, 10), None);
    }
}
