use breaker_runtime::{BreakerError, circuit_breaker};

struct Client;

impl Client {
    #[circuit_breaker(fallback = cached)]
    async fn fetch(&self, id: u32) -> Result<u32, BreakerError> {
        Ok(id)
    }
}

async fn cached(id: u32) -> Result<u32, BreakerError> {
    Ok(id)
}

fn main() {
    let _ = Client.fetch(1);
}
