//! The options, proposed: `breaker-replay suggest` replays the trace under many candidates drawn
//! from the breaker's own options and answers the Pareto front over the replay's figures
//! ([`front`](crate::front)), each row spelled as the attribute takes it, with the current
//! options' row beside it.
//!
//! | module | its job |
//! |---|---|
//! | [`knobs`] | the options moved, each a ladder of values, and a point of the search |
//! | `constraints` | what a row must meet to be on the front |
//! | `search` | the walk: the whole space when it fits the budget, else a grid then refinement |
//! | `spelling` | a point written as the attribute takes it, and as the `PUT` that makes it |
//! | [`table`](mod@table), [`chart`] | the answer as text and as SVG |
//!
//! The front is over distinct figures: candidates with the same four figures make one row,
//! shown with the one that moves the fewest options from the current ones (then the shortest
//! spelling), the others listed beside it in the JSON. Constraints (`max_delay`,
//! `max_healthy_lost`) leave out the candidates that break them before the front is drawn.
//!
//! ```
//! use breaker_replay::suggest::{Request, suggest};
//!
//! let mut trace = String::from("at_ms,duration_ms,outcome\n");
//! for i in 0..600u64 {
//!     let failing = (200..300).contains(&i);
//!     trace += &format!("{},{},{}\n", i * 50, 20, if failing { "failure" } else { "success" });
//! }
//! let trace = breaker_runtime::trace::parse(&trace)?;
//! let request = Request::new(breaker_replay::parse_options(r#"window = "100""#)?);
//! let suggestion = suggest(&trace, &request)?;
//! assert!(!suggestion.front.is_empty());
//! // A window of 100 calls at 50% waits for 50 failures; smaller windows catch it sooner.
//! assert!(suggestion.current.dominated_by.is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod chart;
mod constraints;
pub mod knobs;
mod search;
mod spelling;
pub mod table;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use breaker_runtime::trace::Entry;
use serde::Serialize;

use crate::front::{Figures, front};
use crate::options::{Candidate, parse_options};
use crate::outage::{Outage, answered, outages};
use crate::replay::ReplayError;
use crate::report::{Row, TraceSummary, rows, summary};
use knobs::{Knob, Ladders, Point};
use search::Walk;

pub use constraints::{Constraints, HealthyLost};

/// The candidates a search replays unless told otherwise.
pub const DEFAULT_BUDGET: usize = 1_000;

/// What to search for.
#[derive(Debug, Clone)]
pub struct Request {
    /// The options in force: the search starts from them, and their row is shown beside the
    /// front.
    pub current: Candidate,
    /// Options not to move.
    pub keep: Vec<Knob>,
    /// The longest delay to catch the trace's outages a row may have; an outage never caught
    /// breaks it too.
    pub max_delay: Option<Duration>,
    /// The most healthy calls a row may turn away.
    pub max_healthy_lost: Option<HealthyLost>,
    /// The most candidates to replay.
    pub budget: usize,
}

impl Request {
    /// A search from `current`, moving every option, with no constraint, over at most
    /// [`DEFAULT_BUDGET`] candidates.
    pub fn new(current: Candidate) -> Request {
        Request {
            current,
            keep: Vec::new(),
            max_delay: None,
            max_healthy_lost: None,
            budget: DEFAULT_BUDGET,
        }
    }
}

/// The answer.
#[derive(Debug, Clone, Serialize)]
pub struct Suggestion {
    /// The trace, in brief.
    pub trace: TraceSummary,
    /// Its calls that answered (`success`, `healthy`, `slow`): what healthy calls lost is out of.
    pub healthy_calls: u64,
    /// Its outages.
    pub outages: Vec<Outage>,
    /// How the space was walked: `"every point"` or `"grid, then refinement"`.
    pub method: &'static str,
    /// Candidates replayed.
    pub searched: usize,
    /// The constraints, as applied.
    pub constraints: Constraints,
    /// The front, the fewest failures let through first.
    pub front: Vec<Suggested>,
    /// The current options' row, and where it stands.
    pub current: Current,
}

/// A row of the front.
#[derive(Debug, Clone, Serialize)]
pub struct Suggested {
    /// The options, spelled as the attribute takes them (empty: the defaults).
    pub options: String,
    /// Its figures.
    pub figures: Figures,
    /// Other options with the same figures.
    pub alike: Vec<String>,
    /// The body of `PUT {name}/config` that turns the current options into these: each
    /// option that differs, spelled as the attribute spells it. `None` when the row turns off
    /// `slow_call` or `max_break_duration`, which a change of live options cannot (see
    /// `put_note`).
    pub put: Option<serde_json::Map<String, serde_json::Value>>,
    /// Why `put` is `None`, when it is.
    pub put_note: Option<String>,
    /// Everything its replay did.
    pub row: Row,
}

/// The current options, beside the front.
#[derive(Debug, Clone, Serialize)]
pub struct Current {
    /// As written.
    pub options: String,
    /// Its figures.
    pub figures: Figures,
    /// Whether it meets the constraints.
    pub within_constraints: bool,
    /// The front's row (counting from 1) with the same figures, if it is on the front.
    pub on_front: Option<usize>,
    /// The front's row (counting from 1) that beats it, if one does.
    pub dominated_by: Option<usize>,
    /// Everything its replay did.
    pub row: Row,
}

/// Searches the options around `request.current` for those no other beats on `trace`.
pub fn suggest(trace: &[Entry], request: &Request) -> Result<Suggestion, ReplayError> {
    let current_settings = request.current.settings();
    let ladders = Ladders::new(trace, &current_settings);
    let outages = outages(trace);
    let healthy_calls = trace.iter().filter(|e| answered(e.outcome)).count() as u64;
    let constraints = Constraints {
        max_delay_ms: request
            .max_delay
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        max_healthy_lost: request.max_healthy_lost.map(|l| l.calls(healthy_calls)),
        keep: {
            let mut keep = request.keep.clone();
            keep.sort_unstable();
            keep.dedup();
            keep
        },
    };
    let replay_rows = |candidates: &[Candidate]| rows(trace, candidates, &outages);

    let current_row = replay_rows(std::slice::from_ref(&request.current))?
        .pop()
        .ok_or(ReplayError::Thread)?;
    let (tried, exhaustive) = search(
        &ladders,
        &current_settings,
        &constraints,
        request.budget,
        replay_rows,
    )?;
    let mut front: Vec<Suggested> = front_of(&tried, &constraints)
        .into_iter()
        .map(|group| suggested(&ladders, &tried, &group))
        .collect();
    front.sort_by(|a, b| (order(&a.figures), &a.options).cmp(&(order(&b.figures), &b.options)));
    let figures = Figures::of(&current_row);
    let on_front = front
        .iter()
        .position(|s| s.figures == figures)
        .map(|i| i + 1);
    let dominated_by = front
        .iter()
        .position(|s| s.figures.dominates(&figures))
        .map(|i| i + 1);
    Ok(Suggestion {
        trace: summary(trace),
        healthy_calls,
        outages,
        method: if exhaustive {
            "every point"
        } else {
            "grid, then refinement"
        },
        searched: tried.len(),
        constraints: constraints.clone(),
        front,
        current: Current {
            options: request.current.written.clone(),
            figures,
            within_constraints: constraints.allow(&figures),
            on_front,
            dominated_by,
            row: current_row,
        },
    })
}

/// Replays candidates as the walk hands them out until it ends or the budget is spent: every
/// candidate tried, and whether the walk took the whole space.
fn search(
    ladders: &Ladders,
    current: &breaker_options::Settings,
    constraints: &Constraints,
    budget: usize,
    replay_rows: impl Fn(&[Candidate]) -> Result<Vec<Row>, ReplayError>,
) -> Result<(Vec<Tried>, bool), ReplayError> {
    let (mut walk, mut batch) = Walk::start(ladders, search::free(&constraints.keep), budget);
    let mut tried: Vec<Tried> = Vec::new();
    let mut spellings = HashSet::new();
    let mut front_points: Vec<Point> = Vec::new();
    while !batch.is_empty() && tried.len() < budget {
        let mut candidates = Vec::new();
        let mut points = Vec::new();
        for point in batch {
            if tried.len() + candidates.len() >= budget {
                break;
            }
            let spelled = ladders.spell(point, current);
            if !spellings.insert(spelled.clone()) {
                continue;
            }
            // A point that breaks a rule between options (`min_calls` over a count window's
            // size) is no candidate.
            if let Ok(candidate) = parse_options(&spelled) {
                candidates.push(candidate);
                points.push(point);
            }
        }
        let rows = replay_rows(&candidates)?;
        tried.extend(points.into_iter().zip(candidates).zip(rows).map(
            |((point, candidate), row)| Tried {
                point,
                moved: moved_from(point, ladders.current()),
                options: candidate.written,
                figures: Figures::of(&row),
                row,
            },
        ));
        // Until a candidate meets the constraints, the walk goes on around the front
        // without them.
        let mut on_front = front_of(&tried, constraints);
        if on_front.is_empty() {
            on_front = front_of(&tried, &Constraints::NONE);
        }
        let points_now: Vec<Point> = on_front
            .iter()
            .flat_map(|group| group.iter().map(|&i| tried[i].point))
            .collect();
        if points_now.iter().any(|p| !front_points.contains(p)) {
            walk.front_moved();
        }
        front_points = points_now;
        batch = walk.next(ladders, &front_points);
    }
    Ok((tried, walk.exhaustive))
}

/// The row of the front for a group of candidates with the same figures.
fn suggested(ladders: &Ladders, tried: &[Tried], group: &[usize]) -> Suggested {
    let first = &tried[group[0]];
    let change = ladders.change(first.point);
    Suggested {
        put: change.as_ref().ok().cloned(),
        put_note: change.err().map(|knob| {
            format!(
                "a change of live options cannot turn `{}` off: apply `reset_config` and build the breaker with these options, or change the attribute",
                knob.name()
            )
        }),
        options: first.options.clone(),
        figures: first.figures,
        alike: group[1..]
            .iter()
            .map(|&i| tried[i].options.clone())
            .collect(),
        row: first.row.clone(),
    }
}

/// A candidate replayed.
struct Tried {
    point: Point,
    /// How many options it moves from the current ones.
    moved: usize,
    options: String,
    figures: Figures,
    row: Row,
}

/// The front among the candidates the constraints allow: a group per distinct figures, each
/// the candidates with those figures, the one that moves the fewest options first (then the
/// shortest spelling, then the first tried).
fn front_of(tried: &[Tried], constraints: &Constraints) -> Vec<Vec<usize>> {
    let mut groups: HashMap<Figures, Vec<usize>> = HashMap::new();
    let mut distinct = Vec::new();
    for (i, candidate) in tried.iter().enumerate() {
        if !constraints.allow(&candidate.figures) {
            continue;
        }
        groups
            .entry(candidate.figures)
            .or_insert_with(|| {
                distinct.push(candidate.figures);
                Vec::new()
            })
            .push(i);
    }
    front(&distinct)
        .into_iter()
        .filter_map(|i| groups.remove(&distinct[i]))
        .map(|mut group| {
            group.sort_by_key(|&i| (tried[i].moved, tried[i].options.len(), i));
            group
        })
        .collect()
}

/// How many knobs `point` sets apart from `current`.
fn moved_from(point: Point, current: Point) -> usize {
    point
        .0
        .iter()
        .zip(current.0)
        .filter(|(a, b)| **a != *b)
        .count()
}

/// The order the front is shown in: the fewest failures let through first.
fn order(figures: &Figures) -> (u64, u64, u64, u64) {
    (
        figures.failures_through,
        figures.healthy_lost,
        figures.delay_ms.unwrap_or(u64::MAX),
        figures.not_closed_ms,
    )
}
