use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(break_duration = "1m", max_break_duration = "30s")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
