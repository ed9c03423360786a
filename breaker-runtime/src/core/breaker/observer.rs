//! Every call's fate, for metrics and accounting: process-wide observers, as many as wanted.
//!
//! With no observer added, the cost is one atomic load per admission and per outcome.

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::core::breaker::Breaker;

/// What happened to one call through a breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallEvent {
    /// The breaker let the call run (as a closed call, a probe, or through a disabled breaker).
    Admitted,
    /// The breaker answered instead: the circuit was open, or every probe slot was taken.
    Rejected,
    /// The breaker would have answered instead, but it is in [shadow mode](crate::Mode::Shadow):
    /// the call runs (recording nothing, as a rejected call would not have), and its end is
    /// reported as usual (`Finished`). In place of `Admitted`.
    ShadowRejected,
    /// An admitted call ended.
    Finished {
        /// How it ended.
        ending: Ending,
        /// How long it ran, when the breaker read the clock at its start (always, while an
        /// observer is installed).
        elapsed: Option<Duration>,
    },
    /// A [`Policy`](crate::Policy) retries: an attempt ended as a counted failure or a timeout,
    /// and attempt number `attempt + 1` follows (after the backoff's wait). `attempt` counts
    /// from 1, the first try.
    Retry {
        /// The attempt that failed.
        attempt: u32,
    },
    /// A [`Policy`](crate::Policy)'s retry budget was spent: an attempt failed and `retries`
    /// allowed another, but none follows.
    RetryBudgetExhausted,
    /// A [`Policy`](crate::Policy)'s bulkhead was full: the call was turned away before the
    /// breaker saw it (so no `Admitted` nor `Rejected` for it).
    BulkheadFull,
    /// A [`Policy`](crate::Policy)'s deadline passed before the call's attempts ended: the
    /// attempt in flight was cancelled (and ends as `Cancelled`).
    DeadlineExceeded,
    /// A fault was injected into the call ([`Breaker::inject`](crate::Breaker::inject)) whose
    /// `Finished` follows at once, on the same thread, with no other event of this observer's
    /// between them: an observer that keeps the mark until the next `Finished` labels that
    /// call (as the metrics do, `injected="true"`).
    Injected {
        /// What was injected.
        fault: crate::core::injection::Fault,
    },
    /// Not a call: the breaker was given new options
    /// ([`Breaker::reconfigure`](crate::Breaker::reconfigure)). The values before and after are
    /// in [`Breaker::last_reconfigured`](crate::Breaker::last_reconfigured).
    Reconfigured,
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
    /// Called once when a call is admitted or rejected, and once when an admitted call ends;
    /// and, for a call under a [`Policy`](crate::Policy), when it retries, runs out of budget,
    /// meets a full bulkhead or its deadline.
    fn on_call(&self, breaker: &Breaker, event: CallEvent);
}

/// The observers, in the order they were added: a list that only grows, so reading it takes
/// no lock and a call with no observer pays one load of its head.
static OBSERVERS: OnceLock<Box<Node>> = OnceLock::new();

struct Node {
    observer: Box<dyn CallObserver>,
    next: OnceLock<Box<Node>>,
}

/// The observer was installed already: [`set_call_observer`] installs one per process, and
/// [`metrics::install`](crate::metrics) and `opentelemetry::install` record once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this call observer is installed already")]
pub struct ObserverAlreadySet;

/// Adds an observer of every call through every breaker of the process. A process may have
/// several (metrics and an observer of its own, say): each sees every call, in the order they
/// were added, and stays for the life of the process.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use breaker_runtime::{add_call_observer, Breaker, CallEvent, CallObserver, Config};
///
/// static REJECTED: AtomicU64 = AtomicU64::new(0);
/// static ADMITTED: AtomicU64 = AtomicU64::new(0);
///
/// struct CountRejections;
/// struct CountAdmissions;
///
/// impl CallObserver for CountRejections {
///     fn on_call(&self, breaker: &Breaker, event: CallEvent) {
///         if event == CallEvent::Rejected && breaker.name() == "inventory" {
///             REJECTED.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// impl CallObserver for CountAdmissions {
///     fn on_call(&self, breaker: &Breaker, event: CallEvent) {
///         if event == CallEvent::Admitted && breaker.name() == "inventory" {
///             ADMITTED.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// add_call_observer(CountRejections);
/// add_call_observer(CountAdmissions);
/// let breaker = Breaker::new(Config::builder().name("inventory").build().unwrap());
/// breaker.try_acquire().unwrap().success();
/// breaker.force_open();
/// assert!(breaker.try_acquire().is_err());
/// assert_eq!(REJECTED.load(Ordering::Relaxed), 1);
/// assert_eq!(ADMITTED.load(Ordering::Relaxed), 1);
/// ```
pub fn add_call_observer(observer: impl CallObserver) {
    let mut node = Box::new(Node {
        observer: Box::new(observer),
        next: OnceLock::new(),
    });
    let mut slot = &OBSERVERS;
    loop {
        match slot.set(node) {
            Ok(()) => return,
            // Taken, by an earlier observer or a racing one: try the slot after it.
            Err(back) => node = back,
        }
        if let Some(taken) = slot.get() {
            slot = &taken.next;
        }
    }
}

/// Installs the process's one call observer, as the crate's first release did: the first call
/// in the process installs `observer` (as [`add_call_observer`] would) and returns `Ok`; every
/// later call returns [`ObserverAlreadySet`] and installs nothing. So code that calls it from
/// several places (`let _ = set_call_observer(..)` at the top of every test) installs one
/// observer, and each call is seen once.
///
/// Only calls to this function count: observers added with [`add_call_observer`] (or by
/// [`metrics::install`](crate::metrics)) neither make it fail nor are refused because of it,
/// and each of them sees every call beside the one installed here.
///
/// ```
/// # #![allow(deprecated)]
/// use breaker_runtime::{Breaker, CallEvent, CallObserver, ObserverAlreadySet, set_call_observer};
///
/// struct Quiet;
/// impl CallObserver for Quiet {
///     fn on_call(&self, _: &Breaker, _: CallEvent) {}
/// }
///
/// assert_eq!(set_call_observer(Quiet), Ok(()));
/// assert_eq!(set_call_observer(Quiet), Err(ObserverAlreadySet));
/// ```
#[deprecated(note = "a process may have several observers: use `add_call_observer`")]
pub fn set_call_observer(observer: impl CallObserver) -> Result<(), ObserverAlreadySet> {
    static SET: AtomicBool = AtomicBool::new(false);
    // Relaxed: the flag only elects the one caller that installs; the list publishes the
    // observer itself.
    if SET.swap(true, Ordering::Relaxed) {
        return Err(ObserverAlreadySet);
    }
    add_call_observer(observer);
    Ok(())
}

/// Makes every breaker time its calls, as it does while an observer is installed, for a view
/// that shows the window's call durations without observing calls itself (the endpoint).
#[cfg(feature = "http-endpoint")]
pub(crate) fn time_calls() {
    struct Timing;
    impl CallObserver for Timing {
        fn on_call(&self, _: &Breaker, _: CallEvent) {}
    }
    static ADDED: AtomicBool = AtomicBool::new(false);
    // Relaxed: the flag only elects the one caller that adds it.
    if !installed() && !ADDED.swap(true, Ordering::Relaxed) {
        add_call_observer(Timing);
    }
}

#[inline]
pub(crate) fn installed() -> bool {
    OBSERVERS.get().is_some()
}

#[inline]
pub(crate) fn notify(breaker: &Breaker, event: CallEvent) {
    let mut next = OBSERVERS.get();
    while let Some(node) = next {
        node.observer.on_call(breaker, event);
        next = node.next.get();
    }
}
