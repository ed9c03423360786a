use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(probes = 10, probe_threshold = 50)]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
