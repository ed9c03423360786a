use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(fallback = cached_fetch)]
async fn fetch(_: u32) -> Result<u32, BreakerError> {
    Ok(1)
}

async fn cached_fetch(id: u32) -> Result<u32, BreakerError> {
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
