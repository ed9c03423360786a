//! The cancellation token of the deliveries in flight, fired when the circuit opens.

use std::mem;
use std::sync::{Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

/// One token for every delivery handed out since the circuit last opened.
#[derive(Debug, Default)]
pub(crate) struct Cancels {
    current: Mutex<CancellationToken>,
}

impl Cancels {
    /// The token for deliveries handed out from now until the circuit next opens.
    pub(crate) fn token(&self) -> CancellationToken {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The circuit opened: cancel every delivery in flight, and start a fresh token for the
    /// ones handed out after.
    pub(crate) fn fire(&self) {
        let fired = mem::take(&mut *self.current.lock().unwrap_or_else(PoisonError::into_inner));
        fired.cancel();
    }
}
