use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(backoff = "100ms..10s", retry_budget = "10%")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
