use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(warm_up = "721h")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
