use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(window = "60s", window_kind = "tumbling")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
