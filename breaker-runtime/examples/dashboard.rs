//! A live table of every breaker in the process, once a second, while three guarded calls see
//! different weather. `--json` prints each refresh as JSON lines instead (feature `serde`).
//!
//! `cargo run --example dashboard --features serde -- [seconds] [--json]` (`--help` lists them)

use std::time::Duration;

use breaker_runtime::{circuit_breaker, registry};
use clap::Parser;
use tokio::time::Instant;

/// A live table of every breaker in the process, refreshed once a second, while three guarded
/// calls see different weather.
#[derive(Parser, Debug)]
#[command(name = "dashboard")]
struct Args {
    /// How long to run, in seconds.
    #[arg(default_value_t = 10)]
    seconds: u64,
    /// Print each refresh as one line of JSON (the registry's snapshot) instead of a table.
    #[arg(long)]
    json: bool,
}

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
    let Args { seconds, json } = Args::parse();

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

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;

    use super::*;

    #[test]
    fn an_unknown_flag_is_an_error_that_names_it() {
        let error = Args::try_parse_from(["dashboard", "--jsn"]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::UnknownArgument);
        let text = error.to_string();
        assert!(
            text.contains("unexpected argument '--jsn'") && text.contains("--json"),
            "{text}"
        );
    }

    #[test]
    fn a_bad_number_is_an_error_a_person_reads() {
        let error = Args::try_parse_from(["dashboard", "1O"]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ValueValidation);
        let text = error.to_string();
        assert!(
            text.contains("invalid value '1O' for '[SECONDS]': invalid digit found in string"),
            "{text}"
        );
    }

    #[test]
    fn help_documents_every_flag_and_default() {
        let error = Args::try_parse_from(["dashboard", "--help"]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::DisplayHelp);
        let help = error.to_string();
        for expected in [
            "[SECONDS]",
            "How long to run",
            "[default: 10]",
            "--json",
            "JSON",
        ] {
            assert!(help.contains(expected), "{expected:?} in {help}");
        }
    }

    #[test]
    fn the_defaults_and_either_order_still_work() {
        let defaults = Args::try_parse_from(["dashboard"]).unwrap();
        assert_eq!((defaults.seconds, defaults.json), (10, false));
        let flag_first = Args::try_parse_from(["dashboard", "--json", "5"]).unwrap();
        assert_eq!((flag_first.seconds, flag_first.json), (5, true));
        let flag_last = Args::try_parse_from(["dashboard", "5", "--json"]).unwrap();
        assert_eq!((flag_last.seconds, flag_last.json), (5, true));
    }
}
