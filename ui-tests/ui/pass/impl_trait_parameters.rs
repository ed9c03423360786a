#![deny(warnings)]

use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker]
async fn send(body: impl AsRef<str>) -> Result<usize, BreakerError> {
    Ok(body.as_ref().len())
}

#[circuit_breaker(fallback = queue)]
async fn send_or_queue(body: impl AsRef<str> + Clone) -> Result<usize, BreakerError> {
    Ok(body.as_ref().len())
}

async fn queue(body: impl AsRef<str>) -> Result<usize, BreakerError> {
    Ok(body.as_ref().len() + 1)
}

#[circuit_breaker(fallback = each_later)]
async fn each(items: &mut (impl Iterator<Item = u32> + ?Sized)) -> Result<u32, BreakerError> {
    Ok(items.sum())
}

async fn each_later(
    _items: &mut (impl Iterator<Item = u32> + ?Sized),
) -> Result<u32, BreakerError> {
    Ok(0)
}

fn main() {
    let _ = send("a");
    let _ = send_or_queue(String::from("b"));
    let mut items = [1, 2].into_iter();
    let _ = each(&mut items);
}
