use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(timeout = "2s", timeout_ms = 2000)]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
