use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(break_duration = "9223372036855ms")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
