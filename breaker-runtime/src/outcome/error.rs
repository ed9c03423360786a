//! Why the breaker answered instead of the dependency.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::time::Instant;

use crate::base::clock::{self, Age, Nanos};
use crate::base::name::Name;
use crate::outcome::classify::IsFailure;

/// The breaker answered instead of the dependency: the circuit was open, every half-open probe
/// slot was taken, or the call ran past its timeout.
///
/// A rejection means nothing was called, so it is never recorded and a retry layer should not
/// retry it; [`is_rejection`](Self::is_rejection) tells it apart. A timeout is a failure of the
/// dependency and is recorded as one.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Breaker, BreakerError, Config};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let breaker = Breaker::new(Config::builder().name("inventory").build().unwrap());
/// breaker.force_open();
/// let err = breaker.call(async { Ok::<_, std::io::Error>(()) }).await.unwrap_err();
/// assert!(err.is_rejection());
/// assert_eq!(err.breaker(), "inventory");
/// assert_eq!(err.to_string(), "circuit breaker `inventory` is held open by an operator");
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BreakerError {
    /// The circuit is open; nothing was called. Its `Display` says why the circuit opened when
    /// the breaker is registered (every declared breaker is) and still in that opening: the
    /// rule, the window that met it, and the failure it opened on.
    #[error("circuit breaker `{breaker}` {}", open_detail(.breaker, *.next_probe_at))]
    Open {
        /// The breaker that rejected the call.
        breaker: Name,
        /// When the next probe will be let through; `None` while an operator holds it open.
        next_probe_at: Option<ProbeTime>,
    },
    /// The circuit is half-open and every probe slot is taken; nothing was called.
    #[error("circuit breaker `{breaker}` is half-open and its {probes} probe slot(s) are taken{}", full_detail(*.retry_after_ms))]
    HalfOpenFull {
        /// The breaker that rejected the call.
        breaker: Name,
        /// How many probes it runs at once.
        probes: u32,
        /// The latest a slot can take to free up, in milliseconds from the rejection (rounded
        /// up; 0 when not known): a probe in flight ends by its timeout, or gives its slot up
        /// after the break, whichever is shorter. Not an instant: with one, every `Result`
        /// carrying this error would grow by a word (see `DeadlineExceeded`).
        retry_after_ms: u32,
    },
    /// The call was still running at the deadline; it was cancelled and counted as a failure.
    #[error("call through circuit breaker `{breaker}` timed out after {}", Humane(*.limit))]
    Timeout {
        /// The breaker whose timeout expired.
        breaker: Name,
        /// The timeout.
        limit: Duration,
    },
    /// The breaker's bulkhead (`max_concurrent`) was full, and stayed full for `max_wait` if
    /// one was set; nothing was called, and nothing is recorded.
    #[error(
        "circuit breaker `{breaker}` already runs its {max_concurrent} call(s) at once (max_concurrent)"
    )]
    BulkheadFull {
        /// The breaker whose bulkhead was full.
        breaker: Name,
        /// How many calls it runs at once.
        max_concurrent: u32,
    },
    /// The call's `deadline` passed, over all its attempts and the waits between them. An
    /// attempt it cut short was cancelled and records nothing; earlier attempts were recorded.
    #[error("call through circuit breaker `{breaker}` ran out of its {} deadline", Humane(Duration::from_millis(*.limit_ms)))]
    DeadlineExceeded {
        /// The breaker the call went through.
        breaker: Name,
        /// The deadline, in milliseconds (rounded up). Not a `Duration`: a second variant as
        /// large as `Timeout` would grow every `Result` that carries this error by a word,
        /// the closed path's included.
        limit_ms: u64,
    },
    /// A fault injected on purpose ([`Breaker::inject`](crate::Breaker::inject)) failed the
    /// call instead of running it; it is recorded as a failure, like the outage it stands for.
    #[error("call through circuit breaker `{breaker}` failed by fault injection")]
    Injected {
        /// The breaker the fault was injected into.
        breaker: Name,
    },
}

fn full_detail(retry_after_ms: u32) -> String {
    match retry_after_ms {
        0 => String::new(),
        ms => format!(
            "; a slot frees within {}",
            Humane(Duration::from_millis(ms.into()))
        ),
    }
}

fn open_detail(breaker: &Name, next_probe_at: Option<ProbeTime>) -> String {
    match next_probe_at {
        Some(at) => {
            let mut detail = format!("is open; next probe in {}", Humane(at.remaining()));
            if let Some(why) = EXPLAIN_OPENING
                .get()
                .and_then(|explain| explain(breaker, at))
            {
                detail.push_str(". Why: ");
                detail.push_str(&why);
            }
            detail
        }
        None => String::from("is held open by an operator"),
    }
}

/// How an open rejection finds the evidence of the opening behind it, for its `Display`: set by
/// the registry, which alone can find a breaker by its name (from a layer above this one). It
/// answers only while the breaker is still in the opening that turned the call away.
pub(crate) static EXPLAIN_OPENING: OnceLock<fn(&Name, ProbeTime) -> Option<String>> =
    OnceLock::new();

/// A duration as a person reads it: `1 s`, not `999.992135ms`; `250 ms`, `1.5 s`, `2 min 5 s`,
/// `1 h 30 min`. Rounded to the millisecond, then to the unit shown.
struct Humane(Duration);

/// A duration as a person reads it ([`Humane`]).
pub(crate) fn humane(duration: Duration) -> impl fmt::Display {
    Humane(duration)
}

impl fmt::Display for Humane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = (self.0.as_nanos() + 500_000) / 1_000_000;
        match ms {
            ms if ms < 1_000 => write!(f, "{ms} ms"),
            ms if ms < 60_000 => {
                let tenths = (ms + 50) / 100;
                match tenths % 10 {
                    0 => write!(f, "{} s", tenths / 10),
                    t => write!(f, "{}.{t} s", tenths / 10),
                }
            }
            ms if ms < 3_600_000 => {
                let s = (ms + 500) / 1_000;
                match s % 60 {
                    0 => write!(f, "{} min", s / 60),
                    rest => write!(f, "{} min {rest} s", s / 60),
                }
            }
            ms => {
                let min = (ms + 30_000) / 60_000;
                match min % 60 {
                    0 => write!(f, "{} h", min / 60),
                    rest => write!(f, "{} h {rest} min", min / 60),
                }
            }
        }
    }
}

impl BreakerError {
    /// Whether the breaker turned the call away without calling the dependency. Retrying a
    /// rejection at once only meets the same open circuit.
    pub fn is_rejection(&self) -> bool {
        matches!(
            self,
            BreakerError::Open { .. }
                | BreakerError::HalfOpenFull { .. }
                | BreakerError::BulkheadFull { .. }
        )
    }

    /// Whether the call ran past the breaker's timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, BreakerError::Timeout { .. })
    }

    /// Whether the call's `deadline` ran out, over all its attempts.
    pub fn is_deadline(&self) -> bool {
        matches!(self, BreakerError::DeadlineExceeded { .. })
    }

    /// Whether a fault injected on purpose failed the call
    /// ([`Breaker::inject`](crate::Breaker::inject)).
    pub fn is_injected(&self) -> bool {
        matches!(self, BreakerError::Injected { .. })
    }

    /// The name of the breaker that answered.
    pub fn breaker(&self) -> &str {
        match self {
            BreakerError::Open { breaker, .. }
            | BreakerError::HalfOpenFull { breaker, .. }
            | BreakerError::Timeout { breaker, .. }
            | BreakerError::BulkheadFull { breaker, .. }
            | BreakerError::DeadlineExceeded { breaker, .. }
            | BreakerError::Injected { breaker } => breaker,
        }
    }

    /// How long to wait before calling again: until the open circuit lets its next probe
    /// through, or until a half-open circuit's probe slot frees up at the latest. `None` when
    /// that is not known (held open by an operator, a full bulkhead) or the answer is not a
    /// rejection (a timeout, a deadline).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            BreakerError::Open {
                next_probe_at: Some(at),
                ..
            } => Some(at.remaining()),
            BreakerError::HalfOpenFull { retry_after_ms, .. } if *retry_after_ms > 0 => {
                Some(Duration::from_millis((*retry_after_ms).into()))
            }
            _ => None,
        }
    }
}

/// When an open circuit lets its next probe through, on tokio's clock.
///
/// Kept as the breaker keeps it and turned into an [`Instant`] only when asked, because
/// rejections are the one path an overloaded service takes most and most callers never look.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::ProbeTime;
/// use tokio::time::Instant;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let at = Instant::now() + Duration::from_secs(5);
/// let probe = ProbeTime::from(at);
/// assert_eq!(probe.instant(), at);
/// assert_eq!(probe.remaining(), Duration::from_secs(5), "on the paused clock, to the nanosecond");
/// tokio::time::advance(Duration::from_secs(2)).await;
/// assert_eq!(probe.remaining(), Duration::from_secs(3));
/// # }
/// ```
///
/// Its `Debug` shows the instant as its distance from the moment it is printed, on tokio's
/// clock: `ProbeTime(in 3.4s)`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProbeTime(
    // The reading plus one, never zero, so that `Option<ProbeTime>` is one word: a rejection
    // is then small enough to be moved in whole words.
    NonZeroU64,
);

impl ProbeTime {
    pub(crate) fn from_nanos(nanos: Nanos) -> ProbeTime {
        ProbeTime(NonZeroU64::MIN.saturating_add(nanos))
    }

    fn nanos(self) -> Nanos {
        self.0.get() - 1
    }

    /// The instant the next probe is let through.
    pub fn instant(self) -> Instant {
        clock::to_instant(self.nanos())
    }

    /// How long until then; zero once it has passed.
    pub fn remaining(self) -> Duration {
        Duration::from_nanos(self.nanos().saturating_sub(clock::now()))
    }
}

impl From<Instant> for ProbeTime {
    fn from(at: Instant) -> ProbeTime {
        ProbeTime::from_nanos(clock::to_nanos(at))
    }
}

impl fmt::Debug for ProbeTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ProbeTime")
            .field(&Age::of(self.instant()))
            .finish()
    }
}

/// For functions that return `std::io::Result`: a timeout becomes `TimedOut`, a rejection
/// `Other`, each carrying the `BreakerError` (reach it with `get_ref` and `downcast_ref`). The
/// `IsFailure` impl of `io::Error` looks for it, so an outer breaker ignores an inner one's
/// rejection.
///
/// ```
/// use std::io;
/// use breaker_runtime::{BreakerError, IsFailure};
///
/// let rejected = BreakerError::Open { breaker: "inner".into(), next_probe_at: None };
/// let io: io::Error = rejected.into();
/// assert_eq!(io.kind(), io::ErrorKind::Other);
/// assert!(io.is_ignored());
/// ```
impl From<BreakerError> for std::io::Error {
    fn from(error: BreakerError) -> Self {
        let kind = if error.is_timeout() {
            std::io::ErrorKind::TimedOut
        } else {
            std::io::ErrorKind::Other
        };
        std::io::Error::new(kind, error)
    }
}

/// A timeout is a failure, and so is an injected failure, which stands for one; a rejection by
/// a nested breaker is ignored, since nothing was called.
impl IsFailure for BreakerError {
    fn is_failure(&self) -> bool {
        self.is_timeout() || self.is_injected()
    }

    fn is_ignored(&self) -> bool {
        self.is_rejection()
    }

    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        Some(self)
    }
}

#[cfg(test)]
mod humane {
    use std::time::Duration;

    use super::Humane;

    #[test]
    fn durations_read_as_a_person_would_say_them() {
        let said = |d: Duration| Humane(d).to_string();
        assert_eq!(said(Duration::from_nanos(999_992_135)), "1 s");
        assert_eq!(said(Duration::from_millis(250)), "250 ms");
        assert_eq!(said(Duration::ZERO), "0 ms");
        assert_eq!(said(Duration::from_millis(1_500)), "1.5 s");
        assert_eq!(said(Duration::from_millis(29_960)), "30 s");
        assert_eq!(said(Duration::from_secs(125)), "2 min 5 s");
        assert_eq!(said(Duration::from_secs(120)), "2 min");
        assert_eq!(said(Duration::from_secs(5_400)), "1 h 30 min");
        assert_eq!(said(Duration::from_secs(30 * 24 * 3_600)), "720 h");
    }
}
