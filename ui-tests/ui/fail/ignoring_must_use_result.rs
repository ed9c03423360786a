#![deny(unused_must_use)]

use breaker_runtime::{BreakerError, circuit_breaker};

/// `#[must_use]` is kept on the guarded fn, so dropping its answer is still caught.
#[must_use]
#[circuit_breaker]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

async fn caller() {
    fetch().await;
}

fn main() {
    let _ = caller();
}
