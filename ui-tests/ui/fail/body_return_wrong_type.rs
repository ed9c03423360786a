use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker]
async fn fetch(id: u32) -> Result<u32, BreakerError> {
    if id == 0 {
        return Ok("zero");
    }
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
