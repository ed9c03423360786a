//! The checkout demo: a payment API that answers in 80 ms slows to 8 s for a minute, then
//! recovers. The same seeded traffic runs twice on tokio's paused clock, without and with the
//! breaker, and the figures come from the real breaker.
//!
//! `cargo run --release -p breaker-demo --example checkout -- --help`

mod pods;
mod report;
mod retries;
mod shop;
mod sim;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

use crate::shop::Weather;
use crate::sim::{Guard, Scenario};

/// Shows a circuit breaker keeping a slow payment API from taking a checkout service down.
#[derive(Parser, Debug)]
#[command(name = "checkout")]
struct Args {
    /// When the payment API turns slow, in seconds from the start.
    #[arg(long, default_value_t = 40.0, value_parser = seconds)]
    slow_start: f64,
    /// How long it stays slow, in seconds.
    #[arg(long, default_value_t = 60.0, value_parser = seconds)]
    slow_for: f64,
    /// How long it takes to answer while slow, in seconds.
    #[arg(long, default_value_t = 8.0, value_parser = seconds)]
    slow_latency: f64,
    /// Orders per second, above 0 and up to 100000.
    #[arg(long, default_value_t = 200.0, value_parser = rate)]
    rate: f64,
    /// How long orders arrive, in seconds. Rate times duration may be at most 1000000 orders.
    #[arg(long, default_value_t = 180.0, value_parser = seconds)]
    duration: f64,
    /// The traffic's seed: the same seed, the same orders.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Where to write the chart, a path ending in .svg (the only format written).
    #[arg(long, default_value = "target/checkout.svg", value_parser = svg_path)]
    output: PathBuf,
    /// Do not write the chart.
    #[arg(long)]
    no_chart: bool,
    /// Also spread the traffic over this many pods, each with its own breaker, and compare
    /// them on their own with one fleet sharing the circuit (0: skip).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=64))]
    pods: u16,
    /// Also run the traffic with `retries = 3` behind the breaker, with naive retries and with
    /// the retry budget, and compare the calls that reached the sick API.
    #[arg(long)]
    retries: bool,
    /// Also run the traffic with the breaker in shadow mode (every call runs) and write its
    /// trace to this file as JSON Lines, for `cargo run -p breaker-replay -- --trace FILE`.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Also run the traffic with the breaker in shadow mode, read what its flight recorder held
    /// ten seconds after the outage (no trace started beforehand), and print the options
    /// `breaker-replay suggest` proposes for it, with where the demo's own options stand.
    #[arg(long)]
    suggest: bool,
}

fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.0..=86_400.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "`{text}` is not a number of seconds between 0 and 86400"
        )),
    }
}

fn rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(r) if r > 0.0 && r <= 100_000.0 => Ok(r),
        Ok(_) => Err("the rate must be above 0 and at most 100000 orders per second".to_string()),
        Err(_) => Err(format!("`{text}` is not a number of orders per second")),
    }
}

/// The chart is drawn with plotters' SVG backend only: a `.png` path would get SVG bytes a
/// viewer cannot open, so any other extension is refused rather than silently mislabelled.
fn svg_path(text: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(text);
    match path.extension() {
        Some(ext) if ext.eq_ignore_ascii_case("svg") => Ok(path),
        _ => Err("only .svg is supported for the chart: give a path ending in .svg".to_string()),
    }
}

/// The most orders one run may simulate (rate times duration). Every order in flight is a task
/// the slow API holds for seconds, and every order leaves its latency for the report: at this cap
/// a run takes a few seconds and about 70 MB, under 1 GB even if a slow spell keeps every order
/// in flight, where `--rate 100000 --duration 86400` was killed for want of memory.
const MAX_ORDERS: f64 = 1_000_000.0;

impl Args {
    /// Parses the command line, then checks what no single flag can: that the run fits in memory.
    fn try_parse_checked<I, T>(argv: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let args = Self::try_parse_from(argv)?;
        let orders = args.rate * args.duration;
        if orders > MAX_ORDERS {
            return Err(Self::command().error(
                ErrorKind::ValueValidation,
                format!(
                    "--rate {} for --duration {} s is {orders:.0} orders, more than the \
                     {MAX_ORDERS} a run can hold in memory: lower --rate or --duration",
                    args.rate, args.duration
                ),
            ));
        }
        Ok(args)
    }

    fn scenario(&self) -> Scenario {
        Scenario {
            rate: self.rate,
            duration: Duration::from_secs_f64(self.duration),
            weather: Weather {
                slow_from: Duration::from_secs_f64(self.slow_start),
                slow_until: Duration::from_secs_f64(self.slow_start + self.slow_for),
                healthy_latency: Duration::from_millis(80),
                slow_latency: Duration::from_secs_f64(self.slow_latency),
            },
            patience: Duration::from_secs(5),
            seed: self.seed,
        }
    }
}

fn main() -> ExitCode {
    let args = Args::try_parse_checked(std::env::args_os()).unwrap_or_else(|e| e.exit());
    let scenario = args.scenario();
    let wall = std::time::Instant::now();
    let unguarded = sim::run(&scenario, Guard::Unguarded);
    let guarded = sim::run(&scenario, Guard::Breaker);

    println!(
        "{} orders/s for {:.0} s; the payment API answers in 80 ms, but in {:.1} s from {:.0} s to {:.0} s.",
        scenario.rate,
        scenario.duration.as_secs_f64(),
        scenario.weather.slow_latency.as_secs_f64(),
        scenario.weather.slow_from.as_secs_f64(),
        scenario.weather.slow_until.as_secs_f64(),
    );
    println!(
        "Customers give up after {} s. Simulated on tokio's paused clock in {:.1} s.\n",
        scenario.patience.as_secs(),
        wall.elapsed().as_secs_f64()
    );
    print!("{}", report::table(&scenario, &unguarded, &guarded));
    println!("\nbreaker transitions (simulated time):");
    print!("{}", report::transitions(&guarded));
    println!("\np99 latency per 5 s, 10 ms to 10 s:");
    println!(
        "  without breaker  {}",
        report::sparkline(&unguarded, &scenario, 5.0)
    );
    println!(
        "  with breaker     {}",
        report::sparkline(&guarded, &scenario, 5.0)
    );
    if args.pods > 0 {
        let pods = usize::from(args.pods);
        let alone = pods::run(&scenario, pods, false);
        let fleet = pods::run(&scenario, pods, true);
        println!();
        print!("{}", pods::table(pods, &alone, &fleet));
    }
    if args.retries {
        let with_breaker = [false, true].map(|budgeted| retries::run(&scenario, budgeted, true));
        let never_opens = [false, true].map(|budgeted| retries::run(&scenario, budgeted, false));
        println!();
        print!("{}", retries::table(with_breaker, never_opens));
    }
    if let Some(path) = &args.trace {
        let shadow = sim::run(&scenario, Guard::Shadow);
        let written = std::fs::write(path, breaker_runtime::trace::to_json_lines(&shadow.trace));
        match written {
            Ok(()) => println!(
                "\ntrace: {} ({} calls, recorded in shadow mode)",
                path.display(),
                shadow.trace.len()
            ),
            Err(e) => {
                eprintln!("could not write the trace to {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if args.suggest {
        let shadow = sim::run(&scenario, Guard::Shadow);
        match suggested(&shadow) {
            Ok(table) => print!("\n{table}"),
            Err(e) => {
                eprintln!("could not suggest options: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if !args.no_chart {
        if let Some(dir) = args.output.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        match report::chart(&args.output, &scenario, &unguarded, &guarded) {
            Ok(()) => println!("\nchart: {}", args.output.display()),
            Err(e) => {
                eprintln!(
                    "could not write the chart to {}: {e}",
                    args.output.display()
                );
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// The options `suggest` proposes from the shadow run's flight record, under a line saying what
/// the record held.
fn suggested(shadow: &sim::Run) -> Result<String, Box<dyn std::error::Error>> {
    let flight = shadow
        .flight
        .as_ref()
        .ok_or("the shadow run read no flight record")?;
    let current = breaker_replay::parse_options(shop::CHARGE_OPTIONS)?;
    let suggestion = breaker_replay::suggest::suggest(
        &flight.calls,
        &breaker_replay::suggest::Request::new(current),
    )?;
    Ok(format!(
        "what charge's flight recorder held {} s after the outage ({} calls, recorded in shadow \
         mode, no trace started), and the options breaker-replay suggest proposes for it:\n{}",
        sim::LOOKED_INTO_AFTER.as_secs(),
        flight.calls.len(),
        breaker_replay::suggest::table::table(&suggestion, "charge's flight record")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::quantile;

    /// A short scenario: what the demo claims must hold for it.
    #[test]
    fn with_the_breaker_the_service_stays_up_and_recovers() {
        let scenario = Scenario {
            rate: 50.0,
            duration: Duration::from_secs(90),
            weather: Weather {
                slow_from: Duration::from_secs(10),
                slow_until: Duration::from_secs(40),
                healthy_latency: Duration::from_millis(80),
                slow_latency: Duration::from_secs(8),
            },
            patience: Duration::from_secs(5),
            seed: 11,
        };
        let unguarded = sim::run(&scenario, Guard::Unguarded);
        let guarded = sim::run(&scenario, Guard::Breaker);

        let sick_p99 = quantile(&guarded.sick_latencies(&scenario), 0.99);
        assert!(
            sick_p99 <= 2.0 + 0.001,
            "p99 while sick is bounded by the 2 s timeout: {sick_p99}"
        );
        assert!(
            quantile(&unguarded.sick_latencies(&scenario), 0.99) >= 7.0,
            "without it, callers wait for the sick API"
        );
        assert!(
            guarded.peak_connections * 3 <= unguarded.peak_connections,
            "peak in-flight calls far below: {} vs {}",
            guarded.peak_connections,
            unguarded.peak_connections
        );
        assert!(guarded.calls_while_sick * 5 <= unguarded.calls_while_sick);
        assert_eq!(guarded.lost, 0, "no order lost with the breaker");
        assert!(unguarded.lost > 0);
        assert!(guarded.queued > 0);
        assert_eq!(
            guarded.still_queued, 0,
            "the outbox was drained after recovery"
        );
        assert_eq!(
            guarded.reconciled + guarded.declined_later,
            guarded.queued,
            "every queued order was charged or declined later"
        );
        let closed = guarded
            .closed_after_recovery(&scenario)
            .expect("the circuit closes after recovery");
        assert!(
            closed <= 32.0,
            "closed {closed} s after recovery: within a break and a probe"
        );
        assert_eq!(
            guarded.charged + guarded.queued + guarded.failed + guarded.lost,
            guarded.latencies.len()
        );
    }
}

/// A short scenario for the tests: the API is slow from 0:20 to 1:20.
#[cfg(test)]
fn sick_from_20_to_80_s(rate: f64, seconds: u64) -> Scenario {
    Scenario {
        rate,
        duration: Duration::from_secs(seconds),
        weather: Weather {
            slow_from: Duration::from_secs(20),
            slow_until: Duration::from_secs(80),
            healthy_latency: Duration::from_millis(80),
            slow_latency: Duration::from_secs(8),
        },
        patience: Duration::from_secs(5),
        seed: 7,
    }
}

#[cfg(test)]
mod pods_as_a_fleet {
    use super::*;

    /// Four pods with thin traffic each: the fleet sends one probe per break where the pods
    /// send one each, and its window opens them sooner.
    #[test]
    fn a_fleet_of_pods_probes_once_per_break_and_spares_the_sick_api() {
        let scenario = sick_from_20_to_80_s(20.0, 150);
        let alone = pods::run(&scenario, 4, false);
        let fleet = pods::run(&scenario, 4, true);
        assert_eq!(
            alone.probes, 8,
            "each of 4 pods probes in each of 2 breaks: {alone:?}"
        );
        assert_eq!(
            fleet.probes, 2,
            "one probe per break for the fleet: {fleet:?}"
        );
        assert!(
            fleet.calls_while_sick < alone.calls_while_sick,
            "{fleet:?} against {alone:?}"
        );
    }
}

#[cfg(test)]
mod retries_with_a_budget {
    use super::*;

    /// With nothing to open, naive retries send each sick order about four times; the budget
    /// holds them to about one and a fifth (above its floor). Behind the breaker, retries barely matter.
    #[test]
    fn the_budget_spares_the_sick_api_the_retry_storm() {
        let scenario = sick_from_20_to_80_s(100.0, 100);
        let naive = retries::run(&scenario, false, false);
        let budgeted = retries::run(&scenario, true, false);
        // About 6 000 orders arrive while the API is sick; 20% of 100 calls a second is above
        // the budget's floor of 10 retries a second.
        let sick = 6_000.0;
        assert!(naive as f64 > 3.5 * sick, "naive retries: {naive}");
        assert!(
            (budgeted as f64) < 1.3 * sick,
            "budgeted retries: {budgeted}"
        );
        let behind_breaker = retries::run(&scenario, false, true);
        assert!(
            behind_breaker < budgeted,
            "{behind_breaker} behind the breaker"
        );
    }
}

#[cfg(test)]
mod command_line {
    use super::*;

    fn refused(args: &[&str]) -> String {
        match Args::try_parse_from(std::iter::once("checkout").chain(args.iter().copied())) {
            Ok(parsed) => panic!("{args:?} was accepted: {parsed:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_chart_path_not_ending_in_svg_is_refused() {
        let error = refused(&["--output", "x.png"]);
        assert!(error.contains("only .svg"), "{error}");
        assert!(Args::try_parse_from(["checkout", "--output", "x.svg"]).is_ok());
    }

    #[test]
    fn a_run_too_big_to_hold_is_refused_naming_the_limit() {
        let error =
            Args::try_parse_checked(["checkout", "--rate", "100000", "--duration", "86400"])
                .expect_err("8.64 billion orders")
                .to_string();
        assert!(
            error.contains("8640000000 orders") && error.contains("1000000 a run can hold"),
            "{error}"
        );
        let at_the_cap = ["checkout", "--rate", "100000", "--duration", "10"];
        assert!(Args::try_parse_checked(at_the_cap).is_ok());
        assert!(
            Args::try_parse_checked(["checkout"]).is_ok(),
            "the defaults fit"
        );
    }

    #[test]
    fn a_rate_of_zero_is_refused_with_the_range_it_must_be_in() {
        let error = refused(&["--rate", "0"]);
        assert!(
            error.contains("above 0 and at most 100000 orders per second"),
            "{error}"
        );
    }
}

#[cfg(test)]
mod shadow_trace {
    use breaker_runtime::State;
    use breaker_runtime::trace::{Outcome, parse, to_json_lines};

    use super::*;

    /// The trace `docs/traces.md` replays: recorded in shadow mode, it holds every order's real
    /// outcome, timeouts while the API is slow, and no call turned away, though the circuit
    /// would have opened.
    #[test]
    fn the_shadow_run_traces_every_call_with_its_real_outcome() {
        let scenario = sick_from_20_to_80_s(20.0, 100);
        let shadow = sim::run(&scenario, Guard::Shadow);
        // Every order, and the reconciler's charges of what the fallback queued after a
        // timeout.
        assert!(
            shadow.trace.len() >= shadow.latencies.len(),
            "every order: {} calls traced, {} orders",
            shadow.trace.len(),
            shadow.latencies.len()
        );
        assert!(
            shadow
                .transitions
                .iter()
                .any(|(_, _, to)| *to == State::Open),
            "it would have opened"
        );
        let count = |outcome: Outcome| shadow.trace.iter().filter(|e| e.outcome == outcome).count();
        assert_eq!(
            count(Outcome::Rejected),
            0,
            "in shadow mode every call runs"
        );
        assert!(count(Outcome::Timeout) > 500, "the slow minute times out");
        let in_sick_spell = |at_ms: u64| (20_000..80_000).contains(&at_ms);
        assert!(
            shadow
                .trace
                .iter()
                .filter(|e| e.outcome == Outcome::Timeout)
                .all(|e| in_sick_spell(e.at_ms) && e.duration_ms == 2_000),
            "timeouts only while sick, each cut at the 2 s timeout"
        );
        assert_eq!(parse(&to_json_lines(&shadow.trace)).unwrap(), shadow.trace);
        assert_eq!(
            sim::charge_breaker().mode(),
            breaker_runtime::Mode::Enforce,
            "the breaker enforces again after the shadow run"
        );
    }
}

#[cfg(test)]
mod fallbacks {
    use super::*;

    /// The demo's last word on its fallbacks: every guarded fn it ships has served one. (The
    /// outage makes `charge` queue orders; a fallback no scenario reaches fails here, named.)
    #[test]
    fn every_guarded_fn_of_the_demo_has_served_its_fallback() {
        let _ = sim::run(&sick_from_20_to_80_s(20.0, 100), Guard::Breaker);
        let report = breaker_runtime::testing::fallback_report();
        assert!(
            report
                .iter()
                .any(|r| r.function == "checkout::shop::charge"),
            "{report:?}"
        );
        breaker_runtime::testing::assert_every_fallback_ran("checkout::");
    }
}

#[cfg(test)]
mod suggest_from_the_flight_record {
    use breaker_runtime::trace::Outcome;

    use super::*;

    /// `--suggest`: the flight recorder, never asked, held the outage when it was looked into,
    /// and `suggest` places the demo's own options among those it proposes.
    #[test]
    fn the_recorder_held_the_outage_and_suggest_places_the_demos_options() {
        let scenario = sick_from_20_to_80_s(20.0, 100);
        let shadow = sim::run(&scenario, Guard::Shadow);
        let flight = shadow.flight.as_ref().expect("read after the outage");
        let timeouts = flight
            .calls
            .iter()
            .filter(|e| e.outcome == Outcome::Timeout)
            .count();
        assert!(timeouts > 500, "the slow minute, recorded: {timeouts}");
        assert!(
            flight.calls.iter().all(|e| e.outcome != Outcome::Rejected),
            "in shadow mode every call runs"
        );
        let table = suggested(&shadow).unwrap();
        assert!(table.contains("outages: 1\n"), "{table}");
        let current = table
            .lines()
            .find(|l| l.trim_start().starts_with("current "))
            .expect("the current row");
        assert!(current.ends_with(shop::CHARGE_OPTIONS), "{current}");
        assert!(
            table.contains("\ncurrent: dominated by row ")
                || table.contains("\ncurrent: on the front"),
            "{table}"
        );
    }

    /// The options `--suggest` places are `charge`'s own (but its mode, which a shadow run in
    /// a test beside this one may have set for a while).
    #[test]
    fn the_options_placed_are_the_attributes() {
        let written = breaker_replay::parse_options(shop::CHARGE_OPTIONS).unwrap();
        let attribute = breaker_runtime::Settings {
            mode: breaker_runtime::Mode::Enforce,
            ..sim::charge_breaker().config().settings()
        };
        assert_eq!(written.settings(), attribute);
    }
}
