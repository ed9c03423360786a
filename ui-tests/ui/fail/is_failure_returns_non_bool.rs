use breaker_runtime::{BreakerError, circuit_breaker};

fn is_outage(result: &Result<u32, BreakerError>) -> Option<bool> {
    Some(result.is_err())
}

#[circuit_breaker(is_failure = is_outage)]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
