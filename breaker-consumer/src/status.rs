//! Where a consumer stands, as its breaker and its source's last fetch say: for logs and
//! health checks.

use std::fmt;
use std::sync::Arc;

use breaker_runtime::{Breaker, Mode, State};
use tokio::time::Instant;

/// Whether a consumer is pulling messages, and if not, until when or why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// The circuit is closed (or the breaker is in shadow mode, where it never rejects):
    /// pulling with full concurrency.
    Running,
    /// The circuit is half-open: pulling a few messages as probes.
    Probing,
    /// The circuit is open: pulling nothing.
    Paused {
        /// When the break ends and the first probe may be fetched, on tokio's clock; `None`
        /// while an operator holds the circuit open.
        resumes_at: Option<Instant>,
    },
    /// The source's fetches fail (the broker is down or unreachable, the stream or queue is
    /// gone): nothing is handled, whatever the circuit says. The consumer keeps trying with a
    /// backoff and records nothing in its breaker; the first fetch that succeeds ends it.
    Degraded {
        /// The first failed fetch of this stretch, on tokio's clock.
        since: Instant,
        /// What the last failed fetch said.
        reason: Arc<str>,
    },
}

impl Status {
    /// The status of a consumer that pulls through `breaker`, from the breaker alone: never
    /// [`Degraded`](Status::Degraded), which only [`Consumer::status`](crate::Consumer::status)
    /// can tell.
    pub fn of(breaker: &Breaker) -> Status {
        if breaker.mode() == Mode::Shadow {
            // It never rejects, so the consumer never stops pulling.
            return Status::Running;
        }
        match breaker.state() {
            State::Closed | State::Disabled => Status::Running,
            State::HalfOpen => Status::Probing,
            // Open, forced open, or a state this crate does not know yet: not pulling.
            _ => Status::Paused {
                resumes_at: breaker.snapshot().next_probe_at,
            },
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Running => f.write_str("running"),
            Status::Probing => f.write_str("probing"),
            Status::Paused {
                resumes_at: Some(at),
            } => {
                let left = at.saturating_duration_since(Instant::now());
                write!(f, "paused, resuming in {:.1}s", left.as_secs_f64())
            }
            Status::Paused { resumes_at: None } => f.write_str("paused until an operator resets"),
            Status::Degraded { since, reason } => write!(
                f,
                "degraded for {:.1}s: the source cannot fetch: {reason}",
                since.elapsed().as_secs_f64()
            ),
        }
    }
}
