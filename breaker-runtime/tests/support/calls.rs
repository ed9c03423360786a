//! Calls for the trace and flight-recorder tests: one that answers after so long, and the
//! entry a trace records for it.

use std::time::Duration;

use breaker_runtime::Breaker;
use breaker_runtime::trace::{Entry, Outcome};
use tokio::time::sleep;

pub const MS: Duration = Duration::from_millis(1);

pub fn entry(at_ms: u64, duration_ms: u64, outcome: Outcome) -> Entry {
    Entry {
        at_ms,
        duration_ms,
        outcome,
    }
}

/// A call through `breaker` that answers after `ms` milliseconds, a success if `ok`.
pub async fn answer(breaker: &Breaker, ms: u64, ok: bool) {
    let _ = breaker
        .call(async move {
            sleep(MS * ms as u32).await;
            if ok {
                Ok(())
            } else {
                Err(std::io::Error::other("down"))
            }
        })
        .await;
}
