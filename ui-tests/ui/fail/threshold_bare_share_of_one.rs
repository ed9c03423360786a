use breaker_runtime::{BreakerError, circuit_breaker};

// Half of the calls, or half a percent of them? Both are written; neither is guessed.
#[circuit_breaker(threshold = "0.5")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
