use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(stale_for = "10m")]
async fn price<K: Clone + std::hash::Hash + Eq + Send>(sku: K) -> Result<u32, BreakerError> {
    let _ = sku;
    Ok(1)
}

fn main() {
    let _ = price(1u32);
}
