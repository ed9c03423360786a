//! `breaker-replay`: what would these options have done on this trace?

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use breaker_replay::suggest::knobs::Knob;
use breaker_replay::suggest::{DEFAULT_BUDGET, HealthyLost, Request, suggest};
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
and its trace is its record); warm_up counts from the trace's first call; a fixed window
(window_kind = \"fixed\") counts its intervals from the trace's start, taken as an edge (a
fixed-window breaker's trace starts at one); probe_threshold
judges each half-open period's probes together.";

/// Replays a recorded trace through the real circuit breaker under candidate options, and says
/// what each would have done.
#[derive(Parser, Debug)]
#[command(
    name = "breaker-replay",
    after_long_help = RULES,
    after_help = "More with --help: how calls are replayed, the columns, and what an outage is.",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// The trace: JSON Lines ({"at_ms": 0, "duration_ms": 80, "outcome": "success"}) or CSV
    /// under the header at_ms,duration_ms,outcome.
    #[arg(long, value_name = "FILE", required = true)]
    trace: Option<PathBuf>,
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

#[derive(Subcommand, Debug)]
enum Command {
    /// Searches the breaker's options for those no other beats on this trace, and shows where
    /// the current options stand.
    #[command(after_long_help = SUGGEST_RULES)]
    Suggest(SuggestArgs),
}

const SUGGEST_RULES: &str = "\
Moves threshold, window (kind and size), min_calls, timeout, slow_call, slow_threshold,
break_duration, max_break_duration and probes, each over a ladder of values (timeouts and slow
calls drawn from how long the trace's calls took), starting from the current options. When the
whole space fits the budget every point is replayed; otherwise a grid (every other value of
threshold, window and timeout), then refinement: the neighbours of every point on the front,
one value away, then further while the budget lasts. The same trace and the same request give
the same front.

Figures, each the lower the better: failures let through, healthy calls turned away, the delay
to catch the worst outage (missed is worse than any delay), and time not closed. A row is on the
front when no other is as good on every figure and better on one; candidates with the same
figures make one row, shown with the one that moves the fewest options.";

/// `breaker-replay suggest`.
#[derive(clap::Args, Debug)]
struct SuggestArgs {
    /// The trace, as for a replay.
    #[arg(long, value_name = "FILE")]
    trace: PathBuf,
    /// The options in force, spelled as in the attribute; the library's defaults if not given.
    #[arg(long, value_name = "OPTIONS", default_value = "")]
    current: String,
    /// The longest delay to catch an outage a row may have ("5s"); a missed outage breaks it.
    #[arg(long, value_name = "DURATION")]
    max_delay: Option<String>,
    /// The most healthy calls a row may turn away: a count (20) or a share of the trace's
    /// healthy calls ("1%").
    #[arg(long, value_name = "CALLS_OR_SHARE")]
    max_healthy_lost: Option<String>,
    /// Options not to move, by name ("window", "timeout", ...); comma-separated or repeated.
    #[arg(long, value_name = "OPTIONS", value_delimiter = ',')]
    keep: Vec<String>,
    /// The most candidates to replay.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BUDGET)]
    budget: usize,
    /// Also draw the front as an SVG scatter, the current options marked, to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Print the answer as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let answer = match &args.command {
        Some(Command::Suggest(suggest_args)) => run_suggest(suggest_args),
        None => run(&args),
    };
    match answer {
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
    let Some(path) = &args.trace else {
        return Err(vec!["--trace FILE is needed: the trace to replay".into()]);
    };
    let trace = read_trace(path).map_err(|e| vec![e.to_string()])?;
    let report = report(&trace, &candidates).map_err(|e| vec![e.to_string()])?;
    answer(
        path,
        &report.trace,
        &report,
        args.svg.as_deref().map(|to| (to, svg(&report, &trace))),
        args.json,
        || table(&report, &file_name(path)),
    )
}

fn run_suggest(args: &SuggestArgs) -> Result<String, Vec<String>> {
    let mut refused = Vec::new();
    let current = parse_options(&args.current)
        .map_err(|e| {
            refused.extend(
                e.messages
                    .into_iter()
                    .map(|m| format!("--current `{}`: {m}", args.current.trim())),
            );
        })
        .ok();
    let max_delay = args.max_delay.as_deref().and_then(|text| {
        breaker_options::grammar::duration(text)
            .map_err(|m| refused.push(format!("--max-delay `{text}`: {m}")))
            .ok()
    });
    let max_healthy_lost = args.max_healthy_lost.as_deref().and_then(|text| {
        HealthyLost::parse(text)
            .map_err(|m| refused.push(format!("--max-healthy-lost {m}")))
            .ok()
    });
    let mut keep = Vec::new();
    for name in args.keep.iter().filter(|n| !n.trim().is_empty()) {
        match Knob::named(name) {
            Some(knob) => keep.push(knob),
            None => {
                let names: Vec<&str> = Knob::ALL.iter().map(|k| k.name()).collect();
                refused.push(format!(
                    "--keep `{}`: suggest moves none such; it moves {}",
                    name.trim(),
                    names.join(", ")
                ));
            }
        }
    }
    let Some(current) = current.filter(|_| refused.is_empty()) else {
        return Err(refused);
    };
    let trace = read_trace(&args.trace).map_err(|e| vec![e.to_string()])?;
    let request = Request {
        current,
        keep,
        max_delay,
        max_healthy_lost,
        budget: args.budget,
    };
    let suggestion = suggest(&trace, &request).map_err(|e| vec![e.to_string()])?;
    answer(
        &args.trace,
        &suggestion.trace,
        &suggestion,
        args.svg
            .as_deref()
            .map(|to| (to, breaker_replay::suggest::chart::svg(&suggestion))),
        args.json,
        || breaker_replay::suggest::table::table(&suggestion, &file_name(&args.trace)),
    )
}

/// What both commands end with: the warning for a trace with nothing to judge, the picture
/// written where asked, and the answer as JSON or as the table.
fn answer(
    path: &std::path::Path,
    summary: &breaker_replay::report::TraceSummary,
    answer: &impl serde::Serialize,
    picture: Option<(
        &std::path::Path,
        Result<String, breaker_replay::chart::ChartError>,
    )>,
    json: bool,
    table: impl FnOnce() -> String,
) -> Result<String, Vec<String>> {
    if summary.calls == summary.rejected {
        // Not an error: the answer is what it is, and a script reading it goes on.
        eprintln!("{}", nothing_to_judge(path, summary));
    }
    if let Some((to, drawn)) = picture {
        let drawn = drawn.map_err(|e| vec![e.to_string()])?;
        std::fs::write(to, drawn).map_err(|e| vec![format!("{}: {e}", to.display())])?;
    }
    if json {
        serde_json::to_string_pretty(answer)
            .map(|json| json + "\n")
            .map_err(|e| vec![e.to_string()])
    } else {
        Ok(table())
    }
}

fn file_name(path: &std::path::Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The warning for a trace with no call whose outcome is known: no candidate can be judged on
/// it, so every row reads the same.
fn nothing_to_judge(
    path: &std::path::Path,
    trace: &breaker_replay::report::TraceSummary,
) -> String {
    let path = path.display();
    if trace.calls == 0 {
        format!(
            "warning: {path} holds no call: there is nothing to judge, so every candidate reads the same. Record a trace first (`start_trace`, or `POST {{name}}/trace_start` on the endpoint)"
        )
    } else {
        format!(
            "warning: {path} holds only rejected calls ({}), whose outcomes are unknown: there is nothing to judge, so every candidate reads the same. Record while the breaker lets calls through (shadow mode), so each has an outcome",
            trace.rejected
        )
    }
}
