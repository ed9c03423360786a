//! What a member did, for health checks and tests; the same goes to the `metrics` facade when
//! that feature is on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use crate::connection::Connection;

/// A member's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Whether the member reaches the fleet now: [`connection`](Self::connection) is
    /// [`Connected`](Connection::Connected). False too while the member is still connecting,
    /// just after it joined: `connection` tells that from a loss.
    pub connected: bool,
    /// Where the member stands with the fleet's meeting place now.
    pub connection: Connection,
    /// Decisions this member announced.
    pub sent: u64,
    /// Announcements heard (this member's own included).
    pub received: u64,
    /// News dropped as older than what was already applied.
    pub stale: u64,
    /// Times this member found the fleet over a threshold and opened it for everyone.
    pub fleet_opens: u64,
    /// Times a breaker opened on this process's evidence alone (not told to the fleet).
    pub local_opens: u64,
    /// Probe leases this member took.
    pub leases: u64,
    /// Times the member lost the fleet and fell back to local behaviour.
    pub disconnects: u64,
    /// The longest a decision of this member took to come back to it through the fleet.
    pub echo_max: Duration,
}

/// The live counters behind [`Stats`]. Relaxed: each is read on its own.
#[derive(Default)]
pub(crate) struct Counters {
    /// Where the member stands, for [`Stats`] and for every receiver of
    /// [`Fleet::connection`](crate::Fleet::connection).
    pub(crate) connection: watch::Sender<Connection>,
    pub(crate) sent: AtomicU64,
    pub(crate) received: AtomicU64,
    pub(crate) stale: AtomicU64,
    pub(crate) fleet_opens: AtomicU64,
    pub(crate) local_opens: AtomicU64,
    pub(crate) leases: AtomicU64,
    pub(crate) disconnects: AtomicU64,
    pub(crate) echo_max_nanos: AtomicU64,
}

impl Counters {
    pub(crate) fn read(&self) -> Stats {
        let connection = *self.connection.borrow();
        Stats {
            connected: connection.is_connected(),
            connection,
            sent: self.sent.load(Ordering::Relaxed),
            received: self.received.load(Ordering::Relaxed),
            stale: self.stale.load(Ordering::Relaxed),
            fleet_opens: self.fleet_opens.load(Ordering::Relaxed),
            local_opens: self.local_opens.load(Ordering::Relaxed),
            leases: self.leases.load(Ordering::Relaxed),
            disconnects: self.disconnects.load(Ordering::Relaxed),
            echo_max: Duration::from_nanos(self.echo_max_nanos.load(Ordering::Relaxed)),
        }
    }

    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The member's connection is now `connection`: told to every receiver.
    pub(crate) fn set_connection(&self, connection: Connection) {
        self.connection.send_replace(connection);
        #[cfg(feature = "metrics")]
        metrics::gauge!("breaker_fleet_connected").set(if connection.is_connected() {
            1.0
        } else {
            0.0
        });
    }

    pub(crate) fn sent(&self) {
        Self::bump(&self.sent);
        #[cfg(feature = "metrics")]
        metrics::counter!("breaker_fleet_messages_sent_total").increment(1);
    }

    pub(crate) fn received(&self) {
        Self::bump(&self.received);
        #[cfg(feature = "metrics")]
        metrics::counter!("breaker_fleet_messages_received_total").increment(1);
    }

    pub(crate) fn local_open(&self, breaker: &str) {
        Self::bump(&self.local_opens);
        #[cfg(feature = "metrics")]
        metrics::counter!("breaker_fleet_local_opens_total", "breaker" => breaker.to_owned())
            .increment(1);
        #[cfg(not(feature = "metrics"))]
        let _ = breaker;
    }

    /// One decision came back through the fleet after `delay`.
    pub(crate) fn echo(&self, delay: Duration) {
        let nanos = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
        self.echo_max_nanos.fetch_max(nanos, Ordering::Relaxed);
        #[cfg(feature = "metrics")]
        metrics::histogram!("breaker_fleet_propagation_seconds").record(delay.as_secs_f64());
    }
}
