use breaker_runtime::{BreakerError, circuit_breaker};

struct Client;

#[circuit_breaker(window = "10")]
impl Client {
    #[circuit_breaker]
    async fn fetch(&self) -> Result<u32, BreakerError> {
        Ok(1)
    }
}

fn main() {
    let _ = Client.fetch();
}
