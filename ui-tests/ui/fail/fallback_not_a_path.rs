use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(fallback = cached_fetch())]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

async fn cached_fetch() -> Result<u32, BreakerError> {
    Ok(0)
}

fn main() {
    let _ = fetch();
    let _ = cached_fetch();
}
