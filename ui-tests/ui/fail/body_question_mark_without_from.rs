use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker]
async fn parse(text: &str) -> Result<u32, BreakerError> {
    let n: u32 = text.parse()?;
    Ok(n)
}

fn main() {
    let _ = parse("1");
}
