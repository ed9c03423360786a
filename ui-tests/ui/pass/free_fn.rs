#![deny(warnings)]

use breaker_runtime::{BreakerError, circuit_breaker};

#[circuit_breaker]
async fn bare() -> Result<u32, BreakerError> {
    Ok(1)
}

#[circuit_breaker()]
async fn empty_parens() -> Result<(), BreakerError> {
    Ok(())
}

#[circuit_breaker(
    threshold = "12.5%",
    window = "30s",
    min_calls = 5,
    timeout = "2s",
    break_duration = "10s",
    max_break_duration = "5m",
    probes = 3,
    slow_call = "500ms",
    slow_threshold = "80%",
    name = "every_option"
)]
async fn every_option(id: u32) -> Result<u32, BreakerError> {
    Ok(id)
}

#[circuit_breaker(window = 20, timeout = "off", threshold = "100%")]
async fn integer_window_and_no_timeout() -> Result<u32, BreakerError> {
    Ok(1)
}

#[circuit_breaker(timeout_ms = 2000, window = "1h", min_calls = 100)]
async fn time_window_allows_many_min_calls() -> Result<u32, BreakerError> {
    Ok(1)
}

#[circuit_breaker(max_break_duration = "1m")]
async fn max_break_above_default_break() -> Result<u32, BreakerError> {
    Ok(1)
}

fn main() {
    let _ = bare();
    let _ = empty_parens();
    let _ = every_option(1);
    let _ = integer_window_and_no_timeout();
    let _ = time_window_allows_many_min_calls();
    let _ = max_break_above_default_break();
}
