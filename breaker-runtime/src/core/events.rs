//! Transitions as events: a `tracing` event for each, and listeners that subscribe to them.
//!
//! Events are delivered after the breaker has released every lock, so a listener may call back
//! into the breaker (read its snapshot, force it open, reset it).

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, PoisonError, RwLock, Weak};

use tokio::time::Instant;

use crate::base::clock::Age;
use crate::base::name::Name;
use crate::core::opening::OpenReason;
use crate::core::state::State;
use crate::core::window::Tally;

/// One change of a breaker's state.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use breaker_runtime::{Breaker, Config, State, Verdict};
///
/// let breaker = Breaker::new(Config::builder().name("ledger").count_window(2).build().unwrap());
/// let last = Arc::new(Mutex::new(None));
/// let sink = Arc::clone(&last);
/// breaker.on_transition(move |t| *sink.lock().unwrap() = Some(t.clone())).forever();
/// for _ in 0..2 {
///     breaker.try_acquire().unwrap().record(Verdict::Failure);
/// }
/// let t = last.lock().unwrap().clone().unwrap();
/// assert_eq!((t.from, t.to, t.calls, t.failure_rate), (State::Closed, State::Open, 2, 100.0));
/// assert_eq!(t.to_string(), "circuit breaker `ledger`: closed -> open");
/// ```
///
/// Its `Debug` shows `at` as its distance from the moment it is printed, on tokio's clock
/// (`at: 1.2s ago`); every other field prints as a derived `Debug` would.
#[derive(Clone)]
#[non_exhaustive]
pub struct Transition {
    /// The breaker that changed.
    pub breaker: Name,
    /// The state it left.
    pub from: State,
    /// The state it entered.
    pub to: State,
    /// When, on tokio's clock.
    pub at: Instant,
    /// The window's failure rate, in percent, that led to the change (0 when no window was
    /// judged, as when a probe decides or an operator acts).
    pub failure_rate: f64,
    /// The window's slow-call rate, in percent, likewise.
    pub slow_rate: f64,
    /// Outcomes in the window at the change.
    pub calls: u32,
    /// Whether this process decided it, or applied an order from outside
    /// ([`Breaker::apply_order`](crate::Breaker::apply_order)): a fleet relays only its own.
    pub origin: Origin,
}

/// Who decided a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// This process: its calls, its probes, or its operator.
    Local,
    /// An order from outside, as a fleet of processes sends
    /// ([`Breaker::apply_order`](crate::Breaker::apply_order)).
    Ordered,
}

impl fmt::Debug for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Taken apart whole, so that a field added later cannot be left out of the output.
        let Transition {
            breaker,
            from,
            to,
            at,
            failure_rate,
            slow_rate,
            calls,
            origin,
        } = self;
        f.debug_struct("Transition")
            .field("breaker", breaker)
            .field("from", from)
            .field("to", to)
            .field("at", &Age::of(*at))
            .field("failure_rate", failure_rate)
            .field("slow_rate", slow_rate)
            .field("calls", calls)
            .field("origin", origin)
            .finish()
    }
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "circuit breaker `{}`: {} -> {}",
            self.breaker, self.from, self.to
        )
    }
}

type Listener = Arc<dyn Fn(&Transition) + Send + Sync>;

/// A set of listeners, copied on write so that delivering an event holds no lock.
#[derive(Default)]
pub(crate) struct Listeners {
    list: RwLock<Arc<[(u64, Listener)]>>,
    next_id: AtomicU64,
}

impl Listeners {
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        listener: impl Fn(&Transition) + Send + Sync + 'static,
    ) -> Subscription {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut list = self.list.write().unwrap_or_else(PoisonError::into_inner);
        let mut next: Vec<(u64, Listener)> = list.iter().cloned().collect();
        next.push((id, Arc::new(listener)));
        *list = next.into();
        Subscription {
            listeners: Arc::downgrade(self),
            id,
        }
    }

    fn unsubscribe(&self, id: u64) {
        let mut list = self.list.write().unwrap_or_else(PoisonError::into_inner);
        let next: Vec<(u64, Listener)> = list.iter().filter(|(i, _)| *i != id).cloned().collect();
        *list = next.into();
    }

    /// Bytes on the heap for this set: itself (it lives behind an `Arc`) and its list.
    pub(crate) fn heap_bytes(&self) -> usize {
        let list = self.list.read().unwrap_or_else(PoisonError::into_inner);
        2 * std::mem::size_of::<usize>()
            + std::mem::size_of::<Listeners>()
            + std::mem::size_of_val(&**list)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    pub(crate) fn deliver(&self, transition: &Transition) {
        let list = Arc::clone(&self.list.read().unwrap_or_else(PoisonError::into_inner));
        for (_, listener) in list.iter() {
            // A listener's panic must not break the call that happened to cause the transition.
            if catch_unwind(AssertUnwindSafe(|| listener(transition))).is_err() {
                tracing::error!(breaker = %transition.breaker, "a transition listener panicked");
            }
        }
    }
}

/// Keeps a listener subscribed; dropping it unsubscribes.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use breaker_runtime::{Breaker, Config, State};
///
/// let breaker = Breaker::new(Config::default());
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = Arc::clone(&seen);
/// let subscription = breaker.on_transition(move |t| sink.lock().unwrap().push(t.to));
/// breaker.force_open();
/// drop(subscription);
/// breaker.reset();
/// assert_eq!(*seen.lock().unwrap(), vec![State::ForcedOpen]);
/// ```
#[must_use = "dropping a Subscription unsubscribes its listener; call `forever()` to keep it"]
pub struct Subscription {
    listeners: Weak<Listeners>,
    id: u64,
}

impl Subscription {
    /// Keeps the listener subscribed for as long as the breaker lives.
    pub fn forever(self) {
        std::mem::forget(self);
    }
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .finish()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(listeners) = self.listeners.upgrade() {
            listeners.unsubscribe(self.id);
        }
    }
}

/// Listeners of every registered breaker's transitions, subscribed through
/// [`Registry::on_transition`](crate::Registry::on_transition): kept here, beside the breaker
/// that announces to them, so the registry subscribes and the breaker never calls up into it.
static EVERY_REGISTERED: LazyLock<Arc<Listeners>> = LazyLock::new(Arc::default);

/// The listeners of every registered breaker's transitions.
pub(crate) fn every_registered() -> &'static Arc<Listeners> {
    &EVERY_REGISTERED
}

/// The `tracing` event for a transition: a warning when calls start being turned away, info
/// otherwise. Its rates are worked out only if a subscriber takes the event.
pub(crate) fn trace(
    breaker: &Name,
    (from, to): (State, State),
    tally: Tally,
    reason: Option<OpenReason>,
) {
    let (breaker, from_name, to_name) = (breaker.as_str(), from.as_str(), to.as_str());
    let calls = tally.calls;
    if to.rejects() {
        let reason = reason.map_or("", OpenReason::as_str);
        if reason == "drill" {
            tracing::warn!(
                breaker,
                from = from_name,
                to = to_name,
                reason,
                "circuit breaker held open for a drill"
            );
            return;
        }
        tracing::warn!(
            breaker,
            from = from_name,
            to = to_name,
            reason,
            failure_rate = tally.failure_rate(),
            slow_rate = tally.slow_rate(),
            calls,
            "circuit breaker opened"
        );
    } else {
        tracing::info!(
            breaker,
            from = from_name,
            to = to_name,
            failure_rate = tally.failure_rate(),
            slow_rate = tally.slow_rate(),
            calls,
            "circuit breaker {}",
            match to {
                State::HalfOpen => "half-opened",
                State::Disabled => "disabled",
                _ => "closed",
            }
        );
    }
}
