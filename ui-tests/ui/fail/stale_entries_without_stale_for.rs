use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(stale_entries = 100)]
async fn price(sku: u32) -> Result<u32, BreakerError> {
    Ok(sku)
}

fn main() {
    let _ = price(1);
}
