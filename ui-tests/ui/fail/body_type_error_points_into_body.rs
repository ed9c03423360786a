use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker]
async fn fetch() -> Result<u32, BreakerError> {
    Ok("one")
}

fn main() {
    let _ = fetch();
}
