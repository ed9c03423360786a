use breaker_runtime::{BreakerError, circuit_breaker};

struct Order(u32);

#[circuit_breaker(retries = 2)]
async fn place(order: Order) -> Result<u32, BreakerError> {
    Ok(order.0)
}

fn main() {
    let _ = place(Order(1));
}
