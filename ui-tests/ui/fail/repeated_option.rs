use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(window = "10", probes = 2, window = "20")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
