//! What a row must meet to be on the front: the constraints of a request, in calls and
//! milliseconds.

use breaker_options::Rate;
use serde::Serialize;

use super::knobs::Knob;
use crate::front::Figures;

/// A limit on healthy calls turned away: a number of calls, or a share of the trace's healthy
/// calls (`success`, `healthy` and `slow`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HealthyLost {
    /// At most this many calls.
    Calls(u64),
    /// At most this share of the trace's healthy calls, rounded down.
    Share(Rate),
}

impl HealthyLost {
    /// `"1%"` or `"20"`.
    pub fn parse(text: &str) -> Result<HealthyLost, String> {
        let text = text.trim();
        if let Some(percent) = text.strip_suffix('%') {
            return percent
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(Rate::from_percent)
                .map(HealthyLost::Share)
                .ok_or_else(|| format!("`{text}` is not a percentage from 0% to 100%"));
        }
        text.parse().map(HealthyLost::Calls).map_err(|_| {
            format!(
                "`{text}` is neither a count of calls (20) nor a share of the healthy ones (1%)"
            )
        })
    }

    pub(super) fn calls(self, healthy: u64) -> u64 {
        match self {
            HealthyLost::Calls(calls) => calls,
            HealthyLost::Share(rate) => (healthy as f64 * rate.percent() / 100.0).floor() as u64,
        }
    }
}

/// The constraints a row must meet to be on the front.
#[derive(Debug, Clone, Serialize)]
pub struct Constraints {
    /// The longest delay, in milliseconds.
    pub max_delay_ms: Option<u64>,
    /// The most healthy calls lost, in calls.
    pub max_healthy_lost: Option<u64>,
    /// The options not moved.
    pub keep: Vec<Knob>,
}

impl Constraints {
    pub(super) const NONE: Constraints = Constraints {
        max_delay_ms: None,
        max_healthy_lost: None,
        keep: Vec::new(),
    };

    pub(super) fn allow(&self, figures: &Figures) -> bool {
        let delay_ok = self
            .max_delay_ms
            .is_none_or(|max| figures.delay_ms.is_some_and(|d| d <= max));
        let lost_ok = self
            .max_healthy_lost
            .is_none_or(|max| figures.healthy_lost <= max);
        delay_ok && lost_ok
    }
}
