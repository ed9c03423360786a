// `crate` takes a string too, as the derive's `crate` and serde's do.
use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(crate = "breaker_runtime")]
async fn fetch() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
