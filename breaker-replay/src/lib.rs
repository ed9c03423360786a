//! What would other options have done? `breaker-replay` drives a recorded trace of calls
//! ([`breaker_runtime::trace`]) through the real [`Breaker`](breaker_runtime::Breaker) under
//! candidate options, each call at its recorded time with its recorded duration and outcome,
//! on a simulated clock that moves only from one call's start or end to the next (so a replay
//! goes as fast as the machine: about 14 million calls a second on one core), and sums up what
//! the breaker did: how often it opened, for how long, which calls it turned away (failing
//! ones, healthy ones, unknown ones), which failures still reached the dependency, and how soon
//! it caught each outage.
//!
//! ```
//! use breaker_runtime::trace::parse;
//!
//! let trace = parse(
//!     "at_ms,duration_ms,outcome\n0,20,success\n100,20,failure\n200,20,failure\n300,20,success\n",
//! )?;
//! let candidates = [
//!     breaker_replay::parse_options(r#"window = "2""#)?,
//!     breaker_replay::parse_options(r#"window = "4""#)?,
//! ];
//! let report = breaker_replay::report(&trace, &candidates)?;
//! assert_eq!(report.rows[0].opened, 1, "two failures fill a window of 2");
//! assert_eq!(report.rows[1].opened, 1, "two of four is the default 50%");
//! assert_eq!(report.rows[0].rejected_healthy, 1, "the success at 300 ms was turned away");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! | module | its job |
//! |---|---|
//! | [`options`] | candidate options, spelled and refused as the attribute does |
//! | [`replay`](mod@replay) | the trace through a real breaker on a simulated clock |
//! | [`outage`] | the outages in a trace, by one simple rule |
//! | [`report`](mod@report) | each candidate's figures |
//! | [`table`](mod@table), [`chart`] | the figures as text and as SVG |
//! | [`front`](mod@front) | the candidates no other beats on the replay's figures |
//! | [`suggest`](mod@suggest) | the options, proposed: a search for the front around the current options |
//! | [`trace_file`] | a trace read from a file, errors naming it |

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod chart;
pub mod front;
pub mod options;
pub mod outage;
pub mod replay;
pub mod report;
pub mod suggest;
pub mod table;
pub mod trace_file;

pub use chart::svg;
pub use options::{Candidate, OptionsError, parse_options};
pub use outage::{Outage, outages};
pub use replay::{Change, Ending, Fate, Replay, ReplayError, replay, replay_all, replay_each};
pub use report::{Report, Row, report};
pub use table::table;
pub use trace_file::{TraceError, parse_trace, read_trace};
