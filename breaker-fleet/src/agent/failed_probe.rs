//! Holding a breaker open the moment a probe this member leads fails.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use breaker_runtime::{Breaker, Order};
use tokio::time::Instant;

/// What the transition listener does, on the spot, when a probe this member leads fails: the
/// breaker opens for its own break, and must stay open until the member has told the fleet,
/// however long that takes. Waiting for the member's task would let a short break end first,
/// and a second probe run without the lease.
#[derive(Default)]
pub(super) struct FailedProbe {
    /// The order generation reserved for it; 0 when this member leads no probe.
    pub(super) order: AtomicU64,
    /// How long to hold the breaker open, in nanoseconds.
    pub(super) hold: AtomicU64,
    /// The break the failed probe started, in nanoseconds, read before the hold replaced it:
    /// what the member tells the fleet.
    pub(super) broke_for: AtomicU64,
}

impl FailedProbe {
    /// Called in the transition listener, on the thread whose probe failed.
    pub(super) fn hold_open(&self, breaker: &Breaker) {
        // Relaxed: the two numbers are set by the member task before it half-opens the
        // breaker, and that half-opening (under the breaker's lock) is what this transition
        // ends, so they are visible here.
        let order = self.order.swap(0, Ordering::Relaxed);
        if order != 0 {
            let broke_for = breaker.snapshot().next_probe_at.map_or(0, |at| {
                let left = at.saturating_duration_since(Instant::now());
                u64::try_from(left.as_nanos()).unwrap_or(u64::MAX)
            });
            // Relaxed: read by the member task after this transition reaches it through the
            // channel, which orders it.
            self.broke_for.store(broke_for, Ordering::Relaxed);
            let hold = Duration::from_nanos(self.hold.load(Ordering::Relaxed));
            breaker.apply_order(order, Order::Open { remaining: hold });
        }
    }
}
