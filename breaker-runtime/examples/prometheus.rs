//! Serves every breaker's metrics for Prometheus while a guarded lookup goes through a bad spell.
//!
//! `cargo run --example prometheus --features metrics -- [seconds] [port]`, then
//! `curl http://127.0.0.1:9000/metrics` (the defaults: 30 seconds, port 9000; `--help` lists
//! them).

use std::time::Duration;

use breaker_runtime::circuit_breaker;
use clap::Parser;
use metrics_exporter_prometheus::PrometheusBuilder;

/// Serves every breaker's metrics for Prometheus while a guarded lookup fails from 5 s to 10 s.
#[derive(Parser, Debug)]
#[command(name = "prometheus")]
struct Args {
    /// How long to run, in seconds.
    #[arg(default_value_t = 30)]
    seconds: u64,
    /// The port on 127.0.0.1 that serves /metrics.
    // Port 0 would bind a port the OS picks, and the URL printed would be wrong.
    #[arg(default_value_t = 9000, value_parser = clap::value_parser!(u16).range(1..))]
    port: u16,
}

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
    let Args { seconds, port } = Args::parse();
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

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;

    use super::*;

    #[test]
    fn an_unknown_flag_is_an_error_that_names_it() {
        let error = Args::try_parse_from(["prometheus", "--prot", "9100"]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::UnknownArgument);
        let text = error.to_string();
        assert!(text.contains("unexpected argument '--prot'"), "{text}");
    }

    #[test]
    fn a_bad_number_is_an_error_a_person_reads() {
        let seconds = Args::try_parse_from(["prometheus", "thirty"]).unwrap_err();
        assert_eq!(seconds.kind(), ErrorKind::ValueValidation);
        let text = seconds.to_string();
        assert!(
            text.contains("invalid value 'thirty' for '[SECONDS]': invalid digit found in string"),
            "{text}"
        );
        let port = Args::try_parse_from(["prometheus", "30", "70000"]).unwrap_err();
        assert_eq!(port.kind(), ErrorKind::ValueValidation);
        let text = port.to_string();
        assert!(
            text.contains("invalid value '70000' for '[PORT]': 70000 is not in 1..=65535"),
            "{text}"
        );
    }

    #[test]
    fn help_documents_every_argument_and_default() {
        let error = Args::try_parse_from(["prometheus", "--help"]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::DisplayHelp);
        let help = error.to_string();
        for expected in [
            "[SECONDS]",
            "[default: 30]",
            "[PORT]",
            "[default: 9000]",
            "/metrics",
        ] {
            assert!(help.contains(expected), "{expected:?} in {help}");
        }
    }

    #[test]
    fn the_defaults_are_kept() {
        let defaults = Args::try_parse_from(["prometheus"]).unwrap();
        assert_eq!((defaults.seconds, defaults.port), (30, 9000));
        let given = Args::try_parse_from(["prometheus", "5", "9100"]).unwrap();
        assert_eq!((given.seconds, given.port), (5, 9100));
    }
}
