use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(stale_for = "10m", stale_entries = 0)]
async fn price(sku: u32) -> Result<u32, BreakerError> {
    Ok(sku)
}

fn main() {
    let _ = price(1);
}
