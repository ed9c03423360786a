use breaker_runtime::circuit_breaker;

// Retries need to tell a failure from a success: a plain `u32` says neither.
#[circuit_breaker(retries = 3, fallback = zero)]
async fn count() -> u32 {
    1
}

async fn zero() -> u32 {
    0
}

fn main() {
    let _ = count();
}
