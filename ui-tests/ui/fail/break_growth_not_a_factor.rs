use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(max_break_duration = "5m", break_growth = "fast")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
