use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(threshold = "0%", window = "10x", probes = 0, retries = 3, probes = 2)]
fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
