//! The checkout service: its payment dependency, the guarded `charge`, and the outbox its
//! fallback writes to.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_runtime::{IsFailure, circuit_breaker};
use tokio::time::Instant;

/// When the payment API is slow, and how slow.
#[derive(Debug, Clone, Copy)]
pub struct Weather {
    pub slow_from: Duration,
    pub slow_until: Duration,
    pub healthy_latency: Duration,
    pub slow_latency: Duration,
}

impl Weather {
    pub fn is_slow(&self, at: Duration) -> bool {
        at >= self.slow_from && at < self.slow_until
    }
}

/// The payment API: answers in 80 ms, or in 8 s while it is sick. It counts the connections it
/// holds, and the calls that reach it while it is sick.
pub struct PaymentApi {
    weather: Weather,
    epoch: Instant,
    connections: AtomicUsize,
    peak_connections: AtomicUsize,
    calls_while_sick: AtomicUsize,
}

impl PaymentApi {
    pub fn new(weather: Weather, epoch: Instant) -> Self {
        PaymentApi {
            weather,
            epoch,
            connections: AtomicUsize::new(0),
            peak_connections: AtomicUsize::new(0),
            calls_while_sick: AtomicUsize::new(0),
        }
    }

    pub fn peak_connections(&self) -> usize {
        self.peak_connections.load(Ordering::Relaxed)
    }

    pub fn calls_while_sick(&self) -> usize {
        self.calls_while_sick.load(Ordering::Relaxed)
    }

    pub async fn charge(&self, order: &Order) -> Result<Receipt, PayError> {
        let sick = self.weather.is_slow(self.epoch.elapsed());
        if sick {
            self.calls_while_sick.fetch_add(1, Ordering::Relaxed);
        }
        let _connection = Connection::open(self);
        let latency = if sick {
            self.weather.slow_latency
        } else {
            self.weather.healthy_latency
        };
        tokio::time::sleep(latency.mul_f64(order.jitter)).await;
        if order.declined {
            Err(PayError::Declined)
        } else {
            Ok(Receipt {
                order: order.id,
                queued: false,
            })
        }
    }
}

/// A connection held for the length of one call; dropping the call's future releases it.
struct Connection<'a>(&'a PaymentApi);

impl<'a> Connection<'a> {
    fn open(api: &'a PaymentApi) -> Self {
        let now = api.connections.fetch_add(1, Ordering::Relaxed) + 1;
        api.peak_connections.fetch_max(now, Ordering::Relaxed);
        Connection(api)
    }
}

impl Drop for Connection<'_> {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Charges that could not be made now, to be made once the payment API is healthy again.
#[derive(Default)]
pub struct Outbox {
    pending: Mutex<Vec<Order>>,
    /// Queued orders charged later.
    pub reconciled: AtomicUsize,
    /// Queued orders whose card was declined when they were charged later.
    pub declined_later: AtomicUsize,
}

impl Outbox {
    pub fn push(&self, order: Order) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(order);
    }

    pub fn take(&self, at_most: usize) -> Vec<Order> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let keep = pending.len().saturating_sub(at_most);
        pending.split_off(keep)
    }

    pub fn len(&self) -> usize {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// One customer's order.
#[derive(Clone)]
pub struct Order {
    pub id: u64,
    /// This call's share of the API's latency, 0.9 to 1.1, drawn from the seed.
    pub jitter: f64,
    /// The card is declined: a business answer, not an outage.
    pub declined: bool,
    pub api: Arc<PaymentApi>,
    pub outbox: Arc<Outbox>,
}

#[derive(Debug, Clone, Copy)]
pub struct Receipt {
    #[allow(dead_code)]
    pub order: u64,
    /// Accepted into the outbox rather than charged now.
    pub queued: bool,
}

#[derive(Debug, IsFailure)]
pub enum PayError {
    /// The payment API is unwell.
    #[allow(dead_code)]
    Unavailable,
    /// The card was declined: the API is working fine.
    #[breaker(healthy)]
    Declined,
}

/// The call the demo is about, guarded exactly as the README shows.
/// `charge`'s options as its attribute writes them (but the fallback), for `--suggest` to
/// place them among the options it proposes; a test holds the two together.
pub const CHARGE_OPTIONS: &str = r#"threshold = "50%", window = "20", timeout_ms = 2000"#;

#[circuit_breaker(threshold = "50%", window = "20", timeout_ms = 2000, fallback = queue_charge)]
pub async fn charge(order: &Order) -> Result<Receipt, PayError> {
    order.api.charge(order).await
}

/// The fallback: accept the order now, charge it later.
async fn queue_charge(order: &Order) -> Result<Receipt, PayError> {
    order.outbox.push(order.clone());
    Ok(Receipt {
        order: order.id,
        queued: true,
    })
}

/// The same call with no breaker, for comparison.
pub async fn charge_unguarded(order: &Order) -> Result<Receipt, PayError> {
    order.api.charge(order).await
}
