use breaker_runtime::circuit_breaker;

#[derive(Debug)]
struct PayError;

#[circuit_breaker(fallback = queue_charge)]
async fn charge() -> Result<u32, PayError> {
    Err(PayError)
}

async fn queue_charge() -> Result<u32, PayError> {
    Ok(0)
}

fn main() {
    let _ = charge();
}
