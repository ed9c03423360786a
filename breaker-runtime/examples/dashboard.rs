//! A live table of every breaker in the process, once a second, while three guarded calls see
//! different weather. `--json` prints each refresh as JSON lines instead (feature `serde`).
//!
//! `cargo run --example dashboard --features serde -- [seconds] [--json]`

use std::time::Duration;

use breaker_runtime::{circuit_breaker, registry};
use tokio::time::Instant;

#[circuit_breaker(name = "inventory", window = "20", break_duration = "3s")]
async fn inventory(n: u64) -> Result<u64, std::io::Error> {
    Ok(n)
}

#[circuit_breaker(name = "payments", window = "20", break_duration = "3s", probes = 2)]
async fn payments(n: u64) -> Result<u64, std::io::Error> {
    // Down for a spell, from about 2 s to 5 s.
    if (20..50).contains(&n) {
        Err(std::io::ErrorKind::ConnectionReset.into())
    } else {
        Ok(n)
    }
}

#[circuit_breaker(
    name = "search",
    window = "10s",
    slow_call = "50ms",
    slow_threshold = "50%"
)]
async fn search(n: u64) -> Result<u64, std::io::Error> {
    tokio::time::sleep(Duration::from_millis(if n % 3 == 0 { 80 } else { 5 })).await;
    Ok(n)
}

fn table() -> String {
    let mut out = format!(
        "{:<12} {:<12} {:>6} {:>9} {:>9} {:>16}\n",
        "breaker", "state", "calls", "failures", "slow", "last transition"
    );
    for s in registry().snapshot() {
        let ago = s.last_transition.map_or("never".to_string(), |at| {
            format!("{:.1} s ago", at.elapsed().as_secs_f64())
        });
        out += &format!(
            "{:<12} {:<12} {:>6} {:>8.1}% {:>8.1}% {:>16}\n",
            s.name().as_str(),
            s.state.as_str(),
            s.calls,
            s.failure_rate,
            s.slow_rate,
            ago
        );
    }
    out
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let seconds: u64 = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(10);

    let started = Instant::now();
    let mut tick = 0u64;
    let mut next_print = started;
    while started.elapsed() < Duration::from_secs(seconds) {
        let _ = tokio::join!(inventory(tick), payments(tick), search(tick));
        tick += 1;
        if Instant::now() >= next_print {
            if json {
                println!("{}", serde_json::to_string(&registry().snapshot())?);
            } else {
                println!("{}", table());
            }
            next_print += Duration::from_secs(1);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}
