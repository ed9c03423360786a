use breaker_runtime::{IsFailure, circuit_breaker};

#[derive(Debug, IsFailure)]
enum PayError {
    Unavailable,
}

#[circuit_breaker]
async fn charge() -> Result<u32, PayError> {
    Err(PayError::Unavailable)
}

fn main() {
    let _ = charge();
}
