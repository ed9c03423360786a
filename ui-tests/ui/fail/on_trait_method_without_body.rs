use breaker_runtime::{BreakerError, circuit_breaker};

trait Store {
    #[circuit_breaker]
    async fn get(&self) -> Result<u32, BreakerError>;
}

fn main() {}
