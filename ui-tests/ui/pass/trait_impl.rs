#![deny(warnings)]

use std::sync::Arc;

use breaker_runtime::{BreakerError, circuit_breaker};

trait Store {
    async fn get(&self, key: &str) -> Result<u32, BreakerError>;
    async fn put(&mut self, key: &str, value: u32) -> Result<(), BreakerError>;
    async fn shared(self: Arc<Self>) -> Result<u32, BreakerError>;
    async fn get_or_default(&self, key: &str) -> Result<u32, BreakerError>;
}

struct Remote {
    last: u32,
}

impl Remote {
    async fn local_default(&self, key: &str) -> Result<u32, BreakerError> {
        Ok(key.len() as u32)
    }
}

impl Store for Remote {
    #[circuit_breaker]
    async fn get(&self, key: &str) -> Result<u32, BreakerError> {
        Ok(self.last + key.len() as u32)
    }

    #[circuit_breaker(window = "5")]
    async fn put(&mut self, key: &str, value: u32) -> Result<(), BreakerError> {
        self.last = value + key.len() as u32;
        Ok(())
    }

    #[circuit_breaker]
    async fn shared(self: Arc<Self>) -> Result<u32, BreakerError> {
        Ok(self.last)
    }

    #[circuit_breaker(fallback = local_default)]
    async fn get_or_default(&self, key: &str) -> Result<u32, BreakerError> {
        Ok(self.last + key.len() as u32)
    }
}

fn main() {
    let mut remote = Remote { last: 0 };
    let _ = remote.get("a");
    let _ = remote.put("a", 1);
    let _ = remote.get_or_default("a");
    let _ = Arc::new(Remote { last: 0 }).shared();
    spawnable(&remote);
}

/// A trait whose futures must be `Send` (what `#[trait_variant::make]` writes): the impl may
/// still use `async fn`, guarded.
trait SendStore {
    fn fetch(&self, key: &str) -> impl Future<Output = Result<u32, BreakerError>> + Send;
}

impl SendStore for Remote {
    #[circuit_breaker(name = "send_store")]
    async fn fetch(&self, key: &str) -> Result<u32, BreakerError> {
        Ok(self.last + key.len() as u32)
    }
}

fn spawnable(remote: &Remote) {
    fn assert_send<T: Send>(_: T) {}
    assert_send(remote.fetch("k"));
}
