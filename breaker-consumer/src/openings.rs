//! What an opening of the circuit sets off: the deliveries in flight see their token fire, and
//! a consumer waiting for admission looks again, to pause its source.

use std::mem;
use std::sync::{Mutex, PoisonError};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
pub(crate) struct Openings {
    /// One token for every delivery handed out since the circuit last opened.
    current: Mutex<CancellationToken>,
    /// Stores one wake-up if nobody waits, so an opening between a look at the state and the
    /// wait is not missed.
    opened: Notify,
}

impl Openings {
    /// The token for deliveries handed out from now until the circuit next opens.
    pub(crate) fn token(&self) -> CancellationToken {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The circuit opened: cancel every delivery in flight, start a fresh token for the ones
    /// handed out after, and wake the consumer.
    pub(crate) fn fire(&self) {
        let fired = mem::take(&mut *self.current.lock().unwrap_or_else(PoisonError::into_inner));
        fired.cancel();
        self.opened.notify_one();
    }

    /// Resolves at the next opening (or at once, for one nobody waited for yet).
    pub(crate) async fn next(&self) {
        self.opened.notified().await;
    }
}
