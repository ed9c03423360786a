// Compiles today, but should not: an empty breaker name is a mistake (it names nothing in the
// registry, logs or `BreakerError`'s message). Move to `ui/fail/` once the attribute refuses it.
use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(name = "")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
