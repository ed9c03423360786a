use breaker_runtime::{BreakerError, circuit_breaker};

#[derive(Clone)]
struct Client;

impl Client {
    #[circuit_breaker(retries = 2)]
    async fn fetch(self) -> Result<u32, BreakerError> {
        Ok(1)
    }
}

fn main() {
    let _ = Client.fetch();
}
