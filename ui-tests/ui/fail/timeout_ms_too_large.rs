use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(timeout_ms = 99999999999999999999999)]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
