// An empty breaker name is refused: it would name nothing in logs, errors or the registry.
use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(name = "")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
