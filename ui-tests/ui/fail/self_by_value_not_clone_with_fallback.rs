use breaker_runtime::{BreakerError, circuit_breaker};

struct Client;

impl Client {
    #[circuit_breaker(fallback = cached)]
    async fn fetch(self) -> Result<u32, BreakerError> {
        Ok(1)
    }

    async fn cached(self) -> Result<u32, BreakerError> {
        Ok(0)
    }
}

fn main() {
    let _ = Client.fetch();
}
