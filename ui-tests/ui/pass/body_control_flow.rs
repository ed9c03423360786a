#![deny(warnings)]

use breaker_runtime::{BreakerError, IsFailure, circuit_breaker};

#[derive(Debug, IsFailure)]
enum AppError {
    #[breaker(healthy)]
    Parse(std::num::ParseIntError),
    Breaker(BreakerError),
}

impl From<BreakerError> for AppError {
    fn from(error: BreakerError) -> Self {
        AppError::Breaker(error)
    }
}

impl From<std::num::ParseIntError> for AppError {
    fn from(error: std::num::ParseIntError) -> Self {
        AppError::Parse(error)
    }
}

#[circuit_breaker]
async fn parse(text: &str) -> Result<u32, AppError> {
    if text.is_empty() {
        return Ok(0);
    }
    let n: u32 = text.trim().parse()?;
    let scale = move |x: u32| x * n;
    let owned = String::from(text);
    let len = move || owned.len() as u32;
    Ok(scale(2) + len())
}

#[circuit_breaker(fallback = parse_later)]
async fn parse_or_later(text: &str) -> Result<u32, AppError> {
    if text.is_empty() {
        return Ok(0);
    }
    let n: u32 = text.parse()?;
    let add = async move |x: u32| x + n;
    Ok(add(1).await)
}

async fn parse_later(_text: &str) -> Result<u32, AppError> {
    Ok(0)
}

#[circuit_breaker]
async fn loops(limit: u32) -> Result<u32, BreakerError> {
    let mut total = 0;
    for i in 0.. {
        if i > limit {
            break;
        }
        total += i;
    }
    Ok(total)
}

#[circuit_breaker]
async fn never_returns_normally() -> Result<u32, BreakerError> {
    loop {
        return Ok(1);
    }
}

fn main() {
    let _ = parse("1");
    let _ = parse_or_later("1");
    let _ = loops(3);
    let _ = never_returns_normally();
}
