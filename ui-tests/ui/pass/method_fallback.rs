#![deny(warnings)]

use std::sync::Arc;

use breaker_runtime::{BreakerError, circuit_breaker};

#[derive(Clone)]
struct Client {
    cache: Vec<u32>,
}

impl Client {
    #[circuit_breaker(fallback = cached)]
    async fn fetch(&self, id: usize) -> Result<u32, BreakerError> {
        Ok(self.cache[id])
    }

    async fn cached(&self, id: usize) -> Result<u32, BreakerError> {
        Ok(self.cache.get(id).copied().unwrap_or_default())
    }

    #[circuit_breaker(fallback = Self::cached)]
    async fn fetch_by_path(&self, id: usize) -> Result<u32, BreakerError> {
        Ok(self.cache[id])
    }

    #[circuit_breaker(fallback = remember_later)]
    async fn remember(&mut self, value: u32, tag: &str) -> Result<usize, BreakerError> {
        self.cache.push(value);
        Ok(self.cache.len() + tag.len())
    }

    async fn remember_later(&mut self, value: u32, tag: &str) -> Result<usize, BreakerError> {
        let _ = (value, tag);
        Ok(self.cache.len())
    }

    #[circuit_breaker(fallback = shared_cached)]
    async fn shared(self: Arc<Self>, id: usize) -> Result<u32, BreakerError> {
        Ok(self.cache[id])
    }

    async fn shared_cached(self: Arc<Self>, id: usize) -> Result<u32, BreakerError> {
        Ok(self.cache.get(id).copied().unwrap_or_default())
    }

    #[circuit_breaker(fallback = owned_cached)]
    async fn owned(self, id: usize) -> Result<u32, BreakerError> {
        Ok(self.cache[id])
    }

    async fn owned_cached(self, id: usize) -> Result<u32, BreakerError> {
        Ok(self.cache.get(id).copied().unwrap_or_default())
    }
}

fn main() {
    let mut client = Client { cache: vec![1] };
    let _ = client.fetch(0);
    let _ = client.fetch_by_path(0);
    let _ = client.remember(2, "x");
    let _ = Arc::new(client.clone()).shared(0);
    let _ = client.owned(0);
}
