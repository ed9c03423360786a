use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(slow_call = "10s")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
