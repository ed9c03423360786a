#![deny(warnings)]

use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker(name = "inventory", window = "10")]
async fn reserve(sku: &str) -> Result<u32, BreakerError> {
    Ok(sku.len() as u32)
}

#[circuit_breaker(name = "inventory", window = "10")]
async fn release(sku: &str) -> Result<u32, BreakerError> {
    Ok(sku.len() as u32)
}

mod a {
    use super::*;

    #[circuit_breaker]
    pub async fn fetch() -> Result<(), BreakerError> {
        Ok(())
    }
}

mod b {
    use super::*;

    #[circuit_breaker]
    pub async fn fetch() -> Result<(), BreakerError> {
        Ok(())
    }
}

struct One;
struct Two;

impl One {
    #[circuit_breaker]
    async fn fetch(&self) -> Result<(), BreakerError> {
        Ok(())
    }
}

impl Two {
    #[circuit_breaker]
    async fn fetch(&self) -> Result<(), BreakerError> {
        Ok(())
    }
}

fn main() {
    let _ = reserve("a");
    let _ = release("a");
    let _ = a::fetch();
    let _ = b::fetch();
    let _ = One.fetch();
    let _ = Two.fetch();

    let registry = breaker_runtime::registry();
    assert!(
        registry.get("inventory").is_some(),
        "declared before any call"
    );
    assert_eq!(registry.declared_at("inventory").len(), 2);
    assert!(registry.conflicts().is_empty());
    // One shared breaker, and four of their own: the two `fetch` fns in two modules and the
    // two `fetch` methods in one module get names that do not collide.
    assert_eq!(registry.breakers().len(), 5, "{:#?}", registry.snapshot());
}
