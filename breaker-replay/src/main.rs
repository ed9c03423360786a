//! `breaker-replay`: what would these options have done on this trace?

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use breaker_replay::{parse_options, read_trace, report, svg, table};

const RULES: &str = "\
Each call of the trace is admitted at its recorded time and runs for its recorded duration
through the real breaker, on a simulated clock. success, healthy and slow answer (the candidate's
slow_call judges slowness); failure fails; timeout ran at least its duration without an answer:
a candidate timeout within it times the call out there, a longer one (or none) fails it at its
duration; ignored records nothing. A call recorded as rejected that the candidate admits is
unknown: not run, counted apart.

Columns: opened (closed -> open), reopened (failed probe), open (time open), not closed (time
open or half-open), rejected, and of those failing / healthy / ignored / unknown by the trace,
failures through (admitted calls that failed or timed out), outages caught, and the delay from
an outage's first failure to the opening (mean and max over those caught; 0 when already open).

Outage: cut the trace into whole seconds. A second is failing when at least half of its calls
with a known outcome failed (failure or timeout). An outage is a run of failing seconds (seconds
with no known outcome neither break nor extend it) holding at least 5 failures, from its first
failure to the end of its last failing second.

Options as in the attribute. retries, backoff, retry_budget, deadline, max_concurrent, max_wait,
fallback, is_failure, crate, stale_for, stale_entries and break_jitter are refused with the
reason; name labels the row; mode and record change nothing (a replay always enforces,
and its trace is its record).";

/// Replays a recorded trace through the real circuit breaker under candidate options, and says
/// what each would have done.
#[derive(Parser, Debug)]
#[command(name = "breaker-replay", after_long_help = RULES, after_help = "More with --help: how calls are replayed, the columns, and what an outage is.")]
struct Args {
    /// The trace: JSON Lines ({"at_ms": 0, "duration_ms": 80, "outcome": "success"}) or CSV
    /// under the header at_ms,duration_ms,outcome.
    #[arg(long, value_name = "FILE")]
    trace: PathBuf,
    /// Candidate options, spelled as in the attribute: 'threshold = "40%", window = "30s"'.
    /// Give it once per candidate.
    #[arg(long = "config", value_name = "OPTIONS", required = true)]
    configs: Vec<String>,
    /// Also draw each candidate's state over the trace's failure rate, as SVG, to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(output) => {
            print!("{output}");
            ExitCode::SUCCESS
        }
        Err(messages) => {
            for message in messages {
                eprintln!("error: {message}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<String, Vec<String>> {
    let mut candidates = Vec::new();
    let mut refused = Vec::new();
    for (i, written) in args.configs.iter().enumerate() {
        match parse_options(written) {
            Ok(candidate) => candidates.push(candidate),
            Err(error) => refused.extend(
                error
                    .messages
                    .into_iter()
                    .map(|m| format!("--config #{} `{}`: {m}", i + 1, written.trim())),
            ),
        }
    }
    if !refused.is_empty() {
        return Err(refused);
    }
    let trace = read_trace(&args.trace).map_err(|e| vec![e.to_string()])?;
    let report = report(&trace, &candidates).map_err(|e| vec![e.to_string()])?;
    if report.trace.calls == report.trace.rejected {
        // Not an error: the report is what it is, and a script reading it goes on.
        eprintln!("{}", nothing_to_judge(&args.trace, &report));
    }
    if let Some(path) = &args.svg {
        let drawn = svg(&report, &trace).map_err(|e| vec![e.to_string()])?;
        std::fs::write(path, drawn).map_err(|e| vec![format!("{}: {e}", path.display())])?;
    }
    if args.json {
        serde_json::to_string_pretty(&report)
            .map(|json| json + "\n")
            .map_err(|e| vec![e.to_string()])
    } else {
        let name = args.trace.file_name().map_or_else(
            || args.trace.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Ok(table(&report, &name))
    }
}

/// The warning for a trace with no call whose outcome is known: no candidate can be judged on
/// it, so every row reads the same.
fn nothing_to_judge(path: &std::path::Path, report: &breaker_replay::Report) -> String {
    let path = path.display();
    if report.trace.calls == 0 {
        format!(
            "warning: {path} holds no call: there is nothing to judge, so every candidate reads the same. Record a trace first (`start_trace`, or `POST {{name}}/trace_start` on the endpoint)"
        )
    } else {
        format!(
            "warning: {path} holds only rejected calls ({}), whose outcomes are unknown: there is nothing to judge, so every candidate reads the same. Record while the breaker lets calls through (shadow mode), so each has an outcome",
            report.trace.rejected
        )
    }
}
