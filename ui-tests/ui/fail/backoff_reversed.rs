use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(retries = 3, backoff = "10s..100ms")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
