use breaker_runtime::{BreakerError, IsFailure, circuit_breaker};

// `std::io::Error` is not `Clone`, so neither is this error, nor the fn's return type.
#[derive(Debug, IsFailure)]
enum QuoteError {
    #[breaker(transparent)]
    Io(std::io::Error),
    #[breaker(transparent)]
    Breaker(BreakerError),
}

impl From<BreakerError> for QuoteError {
    fn from(e: BreakerError) -> Self {
        QuoteError::Breaker(e)
    }
}

#[circuit_breaker(stale_for = "10m")]
async fn quote(sku: u32) -> Result<u32, QuoteError> {
    if sku == 0 {
        return Err(QuoteError::Io(std::io::ErrorKind::NotFound.into()));
    }
    Ok(sku)
}

fn main() {
    let _ = quote(1);
}
