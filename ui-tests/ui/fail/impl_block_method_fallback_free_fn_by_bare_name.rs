use breaker_runtime::{BreakerError, circuit_breaker};

struct Catalog;

async fn price_list(sku: u32) -> Result<u32, BreakerError> {
    Ok(sku)
}

// In a method a bare name is a method on `self`, and this block has no `price_list`: the block's
// attribute can tell, and says how to name the free fn.
#[circuit_breaker]
impl Catalog {
    #[circuit_breaker(fallback = price_list)]
    async fn price(&self, sku: u32) -> Result<u32, BreakerError> {
        Ok(sku * 100)
    }
}

fn main() {
    let _ = Catalog.price(1);
}
