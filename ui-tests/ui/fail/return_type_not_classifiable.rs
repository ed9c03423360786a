use breaker_runtime::{BreakerError, circuit_breaker};

#[derive(Debug)]
enum PayError {
    Unavailable,
    Breaker(BreakerError),
}

impl From<BreakerError> for PayError {
    fn from(error: BreakerError) -> Self {
        PayError::Breaker(error)
    }
}

#[circuit_breaker]
async fn charge() -> Result<u32, PayError> {
    Err(PayError::Unavailable)
}

fn main() {
    let _ = charge();
}
