//! How a member takes part in the fleet.

use std::sync::Arc;
use std::time::Duration;

use breaker_runtime::Breaker;

/// A breaker that takes part.
#[derive(Debug, Clone)]
pub(crate) enum Choice {
    /// The registered breaker of this name, once it exists.
    Named(String),
    /// This breaker, registered or not.
    Given(Arc<Breaker>),
}

/// Settings of a fleet member: see each setter for its default.
#[derive(Debug, Clone)]
pub struct Options {
    pub(crate) flush: Duration,
    pub(crate) min_calls: Option<u32>,
    pub(crate) count_window_span: Duration,
    pub(crate) lease: Duration,
    pub(crate) jitter: f64,
    pub(crate) breakers: Vec<Choice>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            flush: Duration::from_millis(100),
            min_calls: None,
            count_window_span: Duration::from_secs(10),
            lease: Duration::from_secs(2),
            jitter: 0.10,
            breakers: Vec::new(),
        }
    }
}

impl Options {
    /// How often each breaker's outcomes go to the fleet window (100 ms by default).
    pub fn flush(mut self, every: Duration) -> Self {
        self.flush = every.max(Duration::from_millis(1));
        self
    }

    /// Outcomes the fleet window must hold before the fleet judges it (by default each
    /// breaker's own `min_calls`).
    pub fn min_calls(mut self, calls: u32) -> Self {
        self.min_calls = Some(calls);
        self
    }

    /// The longest span of the fleet window for a breaker whose own window counts calls (10 s
    /// by default). Such a window spans the time the member's last N calls took at its recent
    /// rate, so the fleet judges about N calls per member, and at most this; a breaker with a
    /// time window uses its own span.
    pub fn count_window_span(mut self, span: Duration) -> Self {
        self.count_window_span = span.max(Duration::from_millis(1));
        self
    }

    /// How long the probe lease lasts (2 s by default). The member that holds it renews it
    /// while its probes run, however long they take; one that dies frees it when it expires.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(1));
        self
    }

    /// The most each member moves its probe attempt past the break's end, as a fraction of
    /// the break (0.10 by default), so the fleet does not come back in lockstep.
    pub fn jitter(mut self, fraction: f64) -> Self {
        self.jitter = if fraction.is_finite() {
            fraction.clamp(0.0, 1.0)
        } else {
            0.0
        };
        self
    }

    /// Takes part with the registered breaker of this name. Without any, every breaker in the
    /// [registry](breaker_runtime::registry) takes part, those registered later included.
    pub fn breaker(mut self, name: &str) -> Self {
        self.breakers.push(Choice::Named(name.to_owned()));
        self
    }

    /// Takes part with this breaker, registered or not (several members of one fleet in one
    /// process, as in tests and the demo, each need breakers of their own).
    pub fn with(mut self, breaker: Arc<Breaker>) -> Self {
        self.breakers.push(Choice::Given(breaker));
        self
    }
}
