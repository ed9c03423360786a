use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(stale_for = "10m")]
async fn price((sku, region): (u32, u8)) -> Result<u32, BreakerError> {
    Ok(sku + u32::from(region))
}

fn main() {
    let _ = price((1, 2));
}
