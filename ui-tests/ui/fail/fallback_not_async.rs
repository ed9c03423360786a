use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(fallback = cached_fetch)]
async fn fetch(id: u32) -> Result<u32, BreakerError> {
    Ok(id)
}

fn cached_fetch(id: u32) -> Result<u32, BreakerError> {
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
