#![deny(warnings)]

//! With the attribute on the `impl` block, every way of naming a fallback that is not a bare
//! name of another method still compiles: a method of the block, a free fn by path, a method
//! of another block by `Self::`, and a bare name in an associated fn (a free fn).

use breaker_runtime::{BreakerError, circuit_breaker};

struct Catalog;

async fn price_list(sku: u32) -> Result<u32, BreakerError> {
    Ok(sku)
}

impl Catalog {
    async fn remembered(&self, sku: u32) -> Result<u32, BreakerError> {
        Ok(sku + 1)
    }
}

trait Source {
    async fn item(&self, sku: u32) -> Result<u32, BreakerError>;
}

#[circuit_breaker]
impl Catalog {
    #[circuit_breaker(fallback = cached)]
    async fn get(&self, sku: u32) -> Result<u32, BreakerError> {
        Ok(sku * 10)
    }

    #[circuit_breaker(fallback = self::price_list)]
    async fn price(&self, sku: u32) -> Result<u32, BreakerError> {
        Ok(sku * 100)
    }

    #[circuit_breaker(fallback = Self::remembered)]
    async fn recall(&self, sku: u32) -> Result<u32, BreakerError> {
        Ok(sku * 1000)
    }

    #[circuit_breaker(fallback = price_list)]
    async fn listed(sku: u32) -> Result<u32, BreakerError> {
        Ok(sku)
    }

    async fn cached(&self, sku: u32) -> Result<u32, BreakerError> {
        Ok(sku)
    }
}

#[circuit_breaker]
impl Source for Catalog {
    #[circuit_breaker(fallback = Self::remembered)]
    async fn item(&self, sku: u32) -> Result<u32, BreakerError> {
        Ok(sku)
    }
}

fn main() {
    let _ = Catalog.get(1);
    let _ = Catalog.price(1);
    let _ = Catalog.recall(1);
    let _ = Catalog::listed(1);
    let _ = Source::item(&Catalog, 1);
}
