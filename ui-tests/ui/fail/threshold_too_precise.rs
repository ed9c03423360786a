use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(threshold = "33.333333%")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
