use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(window = "60s", min_calls = 4294967295)]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
