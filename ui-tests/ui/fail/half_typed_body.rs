use breaker_runtime::{BreakerError, circuit_breaker};

// Only rustc's error about the body: no "goes on an `async fn`" on top of it.
#[circuit_breaker(window = "10")]
async fn fetch(id: u32) -> Result<u32, BreakerError> {
    let doubled = id * ;
    Ok(doubled)
}

fn main() {
    let _ = fetch(1);
}
