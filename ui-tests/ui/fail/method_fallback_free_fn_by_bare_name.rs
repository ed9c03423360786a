use breaker_runtime::{BreakerError, circuit_breaker};

struct Client;

async fn queue_charge(id: u32) -> Result<u32, BreakerError> {
    Ok(id)
}

impl Client {
    // In a method a bare name is a method on `self`: a free fn is written `self::queue_charge`.
    #[circuit_breaker(fallback = queue_charge)]
    async fn charge(&self, id: u32) -> Result<u32, BreakerError> {
        Ok(id)
    }
}

fn main() {
    let _ = Client.charge(1);
}
