#![deny(warnings)]

use std::sync::Arc;

use breaker_runtime::{BreakerError, circuit_breaker};

struct Client {
    calls: u32,
}

impl Client {
    #[circuit_breaker]
    async fn by_ref(&self, id: u32) -> Result<u32, BreakerError> {
        Ok(self.calls + id)
    }

    #[circuit_breaker]
    async fn by_mut(&mut self) -> Result<u32, BreakerError> {
        self.calls += 1;
        Ok(self.calls)
    }

    #[circuit_breaker]
    async fn by_arc(self: Arc<Self>) -> Result<u32, BreakerError> {
        Ok(self.calls)
    }

    #[circuit_breaker]
    async fn associated(id: u32) -> Result<u32, BreakerError> {
        Ok(id)
    }
}

fn main() {
    let mut client = Client { calls: 0 };
    let _ = client.by_ref(1);
    let _ = client.by_mut();
    let _ = Arc::new(Client { calls: 0 }).by_arc();
    let _ = Client::associated(1);
}
