use breaker_runtime::{BreakerError, circuit_breaker};

struct Client;

#[circuit_breaker]
impl Client {
    #[circuit_breaker = "fetch"]
    async fn fetch(&self) -> Result<u32, BreakerError> {
        Ok(1)
    }

    #[circuit_breaker(window = "ten")]
    async fn other(&self) -> Result<u32, BreakerError> {
        Ok(1)
    }
}

fn main() {
    let _ = Client.fetch();
}
