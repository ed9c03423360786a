use breaker_runtime::{BreakerError, circuit_breaker};

#[derive(Clone, PartialEq)]
struct Order {
    total: f64,
}

#[circuit_breaker(stale_for = "10m")]
async fn quote(order: &Order) -> Result<f64, BreakerError> {
    Ok(order.total)
}

fn main() {
    let _ = quote(&Order { total: 1.0 });
}
