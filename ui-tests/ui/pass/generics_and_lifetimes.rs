#![deny(warnings)]

use std::fmt::Display;

use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker]
async fn render<T: Display>(item: T) -> Result<String, BreakerError> {
    Ok(item.to_string())
}

#[circuit_breaker(fallback = render_later::<T>)]
async fn render_or_later<T>(item: T) -> Result<String, BreakerError>
where
    T: Display + Clone,
{
    Ok(item.to_string())
}

async fn render_later<T: Display>(item: T) -> Result<String, BreakerError> {
    Ok(format!("later: {item}"))
}

#[circuit_breaker]
async fn first<'a>(items: &'a [u32]) -> Result<&'a u32, BreakerError> {
    items.first().ok_or_else(|| unreachable!())
}

#[circuit_breaker(fallback = longest_cached)]
async fn longest<'a, 'b: 'a>(a: &'a str, b: &'b str) -> Result<&'a str, BreakerError> {
    Ok(if a.len() >= b.len() { a } else { b })
}

async fn longest_cached<'a, 'b: 'a>(a: &'a str, _b: &'b str) -> Result<&'a str, BreakerError> {
    Ok(a)
}

#[circuit_breaker]
async fn elided(text: &str) -> Result<&str, BreakerError> {
    Ok(text.trim())
}

#[circuit_breaker]
async fn with_const<const N: usize>(bytes: [u8; N]) -> Result<usize, BreakerError> {
    Ok(bytes.len() + N)
}

fn main() {
    let _ = render(1);
    let _ = render_or_later("x");
    let _ = first(&[1, 2]);
    let _ = longest("a", "bb");
    let _ = elided(" x ");
    let _ = with_const([1, 2, 3]);
}
