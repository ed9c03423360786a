use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(is_failure = |r: &Result<u32, BreakerError>| r.is_err())]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
