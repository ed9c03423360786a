use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(retries = 2, retry_budget = "20")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
