use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(slow_call = "5s", timeout_ms = 100)]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
