//! What each candidate did, in figures: the rows of the table and of the JSON.

use breaker_runtime::State;
use breaker_runtime::trace::{Entry, Outcome};
use serde::Serialize;

use crate::options::Candidate;
use crate::outage::{Outage, outages};
use crate::replay::{Change, Ending, Fate, Replay, ReplayError, replay_each};

/// The whole answer: the trace, its outages, and a row per candidate.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The trace replayed.
    pub trace: TraceSummary,
    /// Its outages, by the rule of [`outage`](crate::outage).
    pub outages: Vec<Outage>,
    /// One row per candidate, in the order given.
    pub rows: Vec<Row>,
}

/// The trace, in brief.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TraceSummary {
    /// Its calls.
    pub calls: u64,
    /// Those that failed (`failure` or `timeout`).
    pub failures: u64,
    /// Those recorded as `rejected`: their outcome is unknown.
    pub rejected: u64,
    /// From its start to its last call's end, in milliseconds.
    pub span_ms: u64,
}

/// What one candidate did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The candidate's `name`, or its options as written.
    pub label: String,
    /// Its options as written.
    pub options: String,
    /// Times the closed circuit opened.
    pub opened: u64,
    /// Times a failed probe opened the half-open circuit again.
    pub reopened: u64,
    /// Milliseconds spent open (calls turned away, waiting for the break to pass).
    pub open_ms: u64,
    /// Milliseconds spent not closed: open or half-open, from each opening to the closing that
    /// ends it, or to the trace's end.
    pub not_closed_ms: u64,
    /// Calls turned away.
    pub rejected: u64,
    /// Of those, calls the trace says failed: the protection.
    pub rejected_failing: u64,
    /// Of those, calls the trace says answered (success, healthy or slow): healthy calls lost.
    pub rejected_healthy: u64,
    /// Of those, calls the trace says were ignored.
    pub rejected_ignored: u64,
    /// Of those, calls the trace recorded as rejected: how they would have ended is unknown.
    pub rejected_unknown: u64,
    /// Calls admitted that the trace recorded as rejected: unknown, not run.
    pub admitted_unknown: u64,
    /// Admitted calls that failed or timed out, as the candidate judged them: failures that
    /// still reached the dependency.
    pub failures_through: u64,
    /// Outages the circuit opened in (or was already open at), out of the trace's.
    pub outages_caught: u64,
    /// Outages it never opened in.
    pub outages_missed: u64,
    /// The mean delay from an outage's first failure to the opening, over those caught.
    pub delay_mean_ms: Option<u64>,
    /// The longest such delay.
    pub delay_max_ms: Option<u64>,
    /// Each outage's delay, in the trace's order; `None` for one never caught.
    pub delays_ms: Vec<Option<u64>>,
    /// Every change of state.
    pub transitions: Vec<Transition>,
}

/// One change of state, as the JSON gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transition {
    /// When, in milliseconds since the trace's start.
    pub at_ms: u64,
    /// The state left: `closed`, `open`, `half_open`.
    pub from: &'static str,
    /// The state entered.
    pub to: &'static str,
}

/// Replays `trace` under every candidate and sums up what each did.
///
/// ```
/// use breaker_runtime::trace::parse;
///
/// let trace = parse("at_ms,duration_ms,outcome\n0,5,failure\n10,5,failure\n20,5,success\n")?;
/// let candidate = breaker_replay::parse_options(r#"window = "2""#)?;
/// let report = breaker_replay::report(&trace, &[candidate])?;
/// assert_eq!(report.rows[0].opened, 1);
/// assert_eq!(report.rows[0].rejected_healthy, 1, "the success at 20 ms was turned away");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn report(trace: &[Entry], candidates: &[Candidate]) -> Result<Report, ReplayError> {
    let outages = outages(trace);
    let rows = rows(trace, candidates, &outages)?;
    Ok(Report {
        trace: summary(trace),
        outages,
        rows,
    })
}

/// Each candidate's row, its replay summed up on the thread that ran it, against the trace's
/// `outages`.
pub(crate) fn rows(
    trace: &[Entry],
    candidates: &[Candidate],
    outages: &[Outage],
) -> Result<Vec<Row>, ReplayError> {
    let configs: Vec<_> = candidates.iter().map(|c| c.config.clone()).collect();
    replay_each(trace, &configs, |i, replayed| {
        row(&candidates[i], trace, &replayed, outages)
    })
}

/// The trace, in brief.
pub(crate) fn summary(trace: &[Entry]) -> TraceSummary {
    TraceSummary {
        calls: trace.len() as u64,
        failures: trace.iter().filter(|e| e.outcome.is_failure()).count() as u64,
        rejected: trace
            .iter()
            .filter(|e| e.outcome == Outcome::Rejected)
            .count() as u64,
        span_ms: trace
            .iter()
            .map(|e| e.at_ms.saturating_add(e.duration_ms))
            .max()
            .unwrap_or(0),
    }
}

/// The row for one candidate's replay.
pub fn row(candidate: &Candidate, trace: &[Entry], replayed: &Replay, outages: &[Outage]) -> Row {
    let mut row = Row {
        label: candidate.label().to_string(),
        options: candidate.written.clone(),
        opened: 0,
        reopened: 0,
        open_ms: time_in(replayed, |s| s == State::Open),
        not_closed_ms: time_in(replayed, |s| s != State::Closed),
        rejected: 0,
        rejected_failing: 0,
        rejected_healthy: 0,
        rejected_ignored: 0,
        rejected_unknown: 0,
        admitted_unknown: 0,
        failures_through: 0,
        outages_caught: 0,
        outages_missed: 0,
        delay_mean_ms: None,
        delay_max_ms: None,
        delays_ms: Vec::new(),
        transitions: replayed
            .changes
            .iter()
            .map(|c| Transition {
                at_ms: c.at_ms,
                from: c.from.as_str(),
                to: c.to.as_str(),
            })
            .collect(),
    };
    for change in &replayed.changes {
        match (change.from, change.to) {
            (State::Closed, State::Open) => row.opened += 1,
            (State::HalfOpen, State::Open) => row.reopened += 1,
            _ => {}
        }
    }
    for (entry, fate) in trace.iter().zip(&replayed.fates) {
        match fate {
            Fate::Rejected => {
                row.rejected += 1;
                match entry.outcome {
                    Outcome::Failure | Outcome::Timeout => row.rejected_failing += 1,
                    Outcome::Rejected => row.rejected_unknown += 1,
                    Outcome::Ignored => row.rejected_ignored += 1,
                    _ => row.rejected_healthy += 1,
                }
            }
            Fate::Unknown => row.admitted_unknown += 1,
            Fate::Ran(Ending::Failed | Ending::TimedOut) => row.failures_through += 1,
            Fate::Ran(_) => {}
        }
    }
    row.delays_ms = outages
        .iter()
        .map(|outage| delay(&replayed.changes, outage))
        .collect();
    let caught: Vec<u64> = row.delays_ms.iter().flatten().copied().collect();
    row.outages_caught = caught.len() as u64;
    row.outages_missed = (outages.len() - caught.len()) as u64;
    row.delay_max_ms = caught.iter().max().copied();
    row.delay_mean_ms =
        (!caught.is_empty()).then(|| caught.iter().sum::<u64>() / caught.len() as u64);
    row
}

/// From the outage's first failure to the circuit's opening within the outage: 0 if it was not
/// closed when the outage began, `None` if it never opened before the outage's end.
fn delay(changes: &[Change], outage: &Outage) -> Option<u64> {
    let state_before = changes
        .iter()
        .take_while(|c| c.at_ms <= outage.start_ms)
        .last()
        .map_or(State::Closed, |c| c.to);
    if state_before != State::Closed {
        return Some(0);
    }
    changes
        .iter()
        .find(|c| c.to == State::Open && (outage.start_ms..=outage.end_ms).contains(&c.at_ms))
        .map(|c| c.at_ms - outage.start_ms)
}

/// Milliseconds spent in states that `counts`, up to the trace's end (or the last change, if
/// later).
fn time_in(replayed: &Replay, counts: impl Fn(State) -> bool) -> u64 {
    let end = replayed
        .end_ms
        .max(replayed.changes.last().map_or(0, |c| c.at_ms));
    let mut total = 0;
    let mut since: Option<u64> = None;
    for change in &replayed.changes {
        match (since, counts(change.to)) {
            (Some(from), false) => {
                total += change.at_ms - from;
                since = None;
            }
            (None, true) => since = Some(change.at_ms),
            _ => {}
        }
    }
    if let Some(from) = since {
        total += end - from;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(at_ms: u64, from: State, to: State) -> Change {
        Change { at_ms, from, to }
    }

    fn replayed(changes: Vec<Change>, end_ms: u64) -> Replay {
        Replay {
            changes,
            fates: Vec::new(),
            end_ms,
        }
    }

    #[test]
    fn time_open_stops_at_half_open_and_time_not_closed_at_the_closing_or_the_end() {
        let r = replayed(
            vec![
                change(100, State::Closed, State::Open),
                change(1_100, State::Open, State::HalfOpen),
                change(1_150, State::HalfOpen, State::Closed),
                change(2_000, State::Closed, State::Open),
            ],
            2_500,
        );
        assert_eq!(time_in(&r, |s| s == State::Open), 1_000 + 500);
        assert_eq!(time_in(&r, |s| s != State::Closed), 1_050 + 500);
    }

    #[test]
    fn an_outage_is_caught_by_an_opening_inside_it_or_by_a_circuit_already_open() {
        let outage = Outage {
            start_ms: 1_000,
            end_ms: 5_000,
            failures: 10,
            calls: 10,
        };
        let opened_at = |at| vec![change(at, State::Closed, State::Open)];
        assert_eq!(delay(&opened_at(1_700), &outage), Some(700));
        assert_eq!(delay(&opened_at(5_001), &outage), None, "after its end");
        assert_eq!(delay(&[], &outage), None);
        assert_eq!(delay(&opened_at(400), &outage), Some(0), "already open");
        let closed_again = [
            change(400, State::Closed, State::Open),
            change(900, State::Open, State::HalfOpen),
            change(950, State::HalfOpen, State::Closed),
        ];
        assert_eq!(
            delay(&closed_again, &outage),
            None,
            "closed again before it began"
        );
    }
}
