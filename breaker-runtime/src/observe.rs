//! Every call's fate, for metrics and accounting: one optional, process-wide observer.
//!
//! With no observer installed, the cost is one atomic load per admission and per outcome.

use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use crate::Breaker;

/// What happened to one call through a breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallEvent {
    /// The breaker let the call run (as a closed call, a probe, or through a disabled breaker).
    Admitted,
    /// The breaker answered instead: the circuit was open, or every probe slot was taken.
    Rejected,
    /// An admitted call ended.
    Finished {
        /// How it ended.
        ending: Ending,
        /// How long it ran, when the breaker read the clock at its start (always, while an
        /// observer is installed).
        elapsed: Option<Duration>,
    },
}

/// How an admitted call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Ending {
    /// The dependency answered.
    Success,
    /// The dependency answered, slower than `slow_call`.
    Slow,
    /// The dependency is unwell.
    Failure,
    /// The call outlived the timeout: a failure.
    Timeout,
    /// The call panicked: a failure.
    Panic,
    /// Neither success nor failure: nothing recorded.
    Ignored,
    /// The caller dropped the call before it ended: nothing recorded.
    Cancelled,
}

impl Ending {
    /// A stable lower-case name, for metrics labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Success => "success",
            Ending::Slow => "slow",
            Ending::Failure => "failure",
            Ending::Timeout => "timeout",
            Ending::Panic => "panic",
            Ending::Ignored => "ignored",
            Ending::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Sees every call through every breaker of the process. It runs on the caller's task, so it
/// must be quick and must not block: count, don't log.
pub trait CallObserver: Send + Sync + 'static {
    /// Called once when a call is admitted or rejected, and once when an admitted call ends.
    fn on_call(&self, breaker: &Breaker, event: CallEvent);
}

static OBSERVER: OnceLock<Box<dyn CallObserver>> = OnceLock::new();

/// A call observer was installed already: a process has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a call observer is installed already; a process has one")]
pub struct ObserverAlreadySet;

/// Installs the process's call observer. There can be one.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use breaker_runtime::{Breaker, CallEvent, CallObserver, Config, set_call_observer};
///
/// static REJECTED: AtomicU64 = AtomicU64::new(0);
///
/// struct CountRejections;
///
/// impl CallObserver for CountRejections {
///     fn on_call(&self, breaker: &Breaker, event: CallEvent) {
///         if event == CallEvent::Rejected && breaker.name() == "inventory" {
///             REJECTED.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// set_call_observer(CountRejections).unwrap();
/// assert!(set_call_observer(CountRejections).is_err(), "one per process");
/// let breaker = Breaker::new(Config::builder().name("inventory").build().unwrap());
/// breaker.force_open();
/// assert!(breaker.try_acquire().is_err());
/// assert_eq!(REJECTED.load(Ordering::Relaxed), 1);
/// ```
pub fn set_call_observer(observer: impl CallObserver) -> Result<(), ObserverAlreadySet> {
    OBSERVER
        .set(Box::new(observer))
        .map_err(|_| ObserverAlreadySet)
}

#[inline]
pub(crate) fn installed() -> bool {
    OBSERVER.get().is_some()
}

#[inline]
pub(crate) fn notify(breaker: &Breaker, event: CallEvent) {
    if let Some(observer) = OBSERVER.get() {
        observer.on_call(breaker, event);
    }
}
