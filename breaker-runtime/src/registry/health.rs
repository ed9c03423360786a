//! What a readiness probe asks of the breakers: which are not closed, and whether one the
//! service cannot do without turns its calls away.
//!
//! A tripped breaker whose fallback works is the service doing its job, not a service to take
//! out of rotation: an orchestrator that pulled every pod whose breaker opened would turn one
//! sick dependency into an outage of the whole service. So a breaker that is not closed makes
//! the service *degraded*, never *down*; only a breaker the service names as critical (its
//! calls have no useful fallback) makes it down, and only while it turns calls away.

use crate::base::name::Name;
use crate::core::breaker::Breaker;
use crate::core::config::Mode;
use crate::core::state::State;

/// The breakers' part of a service's health: [`Registry::health`](crate::Registry::health).
///
/// ```
/// use std::sync::Arc;
/// use breaker_runtime::{Breaker, Config, HealthStatus, registry};
///
/// let payments = Arc::new(Breaker::new(Config::builder().name("health-doc::payments").build()?));
/// registry().register(Arc::clone(&payments))?;
/// assert_eq!(registry().health().status(&["health-doc::payments"]), HealthStatus::Up);
///
/// payments.force_open();
/// let health = registry().health();
/// assert!(health.degraded.iter().any(|d| d.name == "health-doc::payments"));
/// assert_eq!(health.status(&[] as &[&str]), HealthStatus::Degraded, "not critical: degraded");
/// assert_eq!(health.status(&["health-doc::payments"]), HealthStatus::Down, "critical and open");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// How many breakers the registry holds.
    pub breakers: usize,
    /// Those not closed, by name: open, half-open, held open or held closed by an operator.
    pub degraded: Vec<Degraded>,
}

/// A breaker that is not closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Degraded {
    /// Its name.
    pub name: Name,
    /// Its state.
    pub state: State,
    /// Its mode: in shadow mode it turns nothing away, whatever its state.
    pub mode: Mode,
}

impl Degraded {
    /// Whether it turns calls away: open or held open, and enforcing. (Half-open lets its
    /// probes through and is on its way back.)
    pub fn turns_calls_away(&self) -> bool {
        matches!(self.state, State::Open | State::ForcedOpen) && self.mode == Mode::Enforce
    }

    /// Whether `critical` names it.
    pub fn named_in(&self, critical: &[impl AsRef<str>]) -> bool {
        critical.iter().any(|name| self.name == name.as_ref())
    }
}

/// The service's health as the breakers see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthStatus {
    /// Every breaker closed.
    Up,
    /// Some breaker is not closed, none of those named critical turns calls away: the service
    /// answers, with fallbacks.
    Degraded,
    /// A breaker named critical turns calls away.
    Down,
}

impl HealthStatus {
    /// `up`, `degraded` or `down`.
    pub fn as_str(self) -> &'static str {
        match self {
            HealthStatus::Up => "up",
            HealthStatus::Degraded => "degraded",
            HealthStatus::Down => "down",
        }
    }
}

impl Health {
    /// The breakers named in `critical` that turn calls away.
    pub fn down<'a>(&'a self, critical: &[impl AsRef<str>]) -> Vec<&'a Degraded> {
        self.degraded
            .iter()
            .filter(|d| d.turns_calls_away())
            .filter(|d| d.named_in(critical))
            .collect()
    }

    /// Down when a breaker named in `critical` turns calls away, degraded when any breaker is
    /// not closed, up otherwise.
    pub fn status(&self, critical: &[impl AsRef<str>]) -> HealthStatus {
        if !self.down(critical).is_empty() {
            HealthStatus::Down
        } else if self.degraded.is_empty() {
            HealthStatus::Up
        } else {
            HealthStatus::Degraded
        }
    }
}

/// The health of these breakers.
pub(crate) fn of(breakers: &[std::sync::Arc<Breaker>]) -> Health {
    Health {
        breakers: breakers.len(),
        degraded: breakers
            .iter()
            .filter(|b| b.state() != State::Closed)
            .map(|b| Degraded {
                name: b.name().clone(),
                state: b.state(),
                mode: b.mode(),
            })
            .collect(),
    }
}
