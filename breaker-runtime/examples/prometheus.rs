//! Serves every breaker's metrics for Prometheus while a guarded lookup goes through a bad spell.
//!
//! `cargo run --example prometheus --features metrics -- [seconds] [port]`, then
//! `curl http://127.0.0.1:9000/metrics` (the defaults: 30 seconds, port 9000).

use std::time::Duration;

use breaker_runtime::circuit_breaker;
use metrics_exporter_prometheus::PrometheusBuilder;

#[circuit_breaker(window = "10", break_duration = "2s", timeout_ms = 200)]
async fn lookup(failing: bool) -> Result<u32, std::io::Error> {
    if failing {
        Err(std::io::ErrorKind::ConnectionRefused.into())
    } else {
        Ok(7)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(30);
    let port: u16 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(9000);
    PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], port))
        .install()?;
    breaker_runtime::metrics::install()?;
    println!(
        "metrics at http://127.0.0.1:{port}/metrics for {seconds} s; the lookup fails from 5 s to 10 s"
    );

    let started = tokio::time::Instant::now();
    while started.elapsed() < Duration::from_secs(seconds) {
        let failing = (5..10).contains(&started.elapsed().as_secs());
        for _ in 0..20 {
            let _ = lookup(failing).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}
