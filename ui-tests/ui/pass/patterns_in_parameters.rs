#![deny(warnings)]

use breaker_runtime::{BreakerError, circuit_breaker};

struct Point {
    x: u32,
    y: u32,
}

#[circuit_breaker]
async fn add((a, b): (u32, u32)) -> Result<u32, BreakerError> {
    Ok(a + b)
}

#[circuit_breaker(fallback = add_later)]
async fn add_or_later((a, b): (u32, u32), mut c: u32) -> Result<u32, BreakerError> {
    c += 1;
    Ok(a + b + c)
}

async fn add_later(pair: (u32, u32), c: u32) -> Result<u32, BreakerError> {
    Ok(pair.0 + c)
}

#[circuit_breaker(fallback = norm_later)]
async fn norm(&Point { x, y }: &Point) -> Result<u32, BreakerError> {
    Ok(x * x + y * y)
}

async fn norm_later(point: &Point) -> Result<u32, BreakerError> {
    Ok(point.x)
}

#[circuit_breaker(fallback = sum_later)]
async fn sum([first, .., last]: [u32; 3], Wrapper(inner): Wrapper) -> Result<u32, BreakerError> {
    Ok(first + last + inner)
}

#[derive(Clone)]
struct Wrapper(u32);

async fn sum_later(items: [u32; 3], wrapper: Wrapper) -> Result<u32, BreakerError> {
    Ok(items[1] + wrapper.0)
}

fn main() {
    let _ = add((1, 2));
    let _ = add_or_later((1, 2), 3);
    let _ = norm(&Point { x: 1, y: 2 });
    let _ = sum([1, 2, 3], Wrapper(4));
}
