//! A breaker's traffic, call by call, kept so that candidate options can be tried on it: when
//! each call was admitted, how long it took, and how it ended.
//!
//! A breaker records a trace once asked to ([`Breaker::start_trace`]), keeps at most
//! [`Limits`] of it (the oldest calls dropped first), and hands it out as [`Entry`] values
//! ([`Breaker::trace`]) or JSON Lines ([`to_json_lines`]). The same format is what
//! `breaker-replay` reads, and what a trace written by hand or from logs must follow:
//!
//! ```text
//! {"at_ms": 0, "duration_ms": 80, "outcome": "success"}
//! {"at_ms": 12, "duration_ms": 2000, "outcome": "timeout"}
//! {"at_ms": 15, "duration_ms": 0, "outcome": "rejected"}
//! ```
//!
//! one object per line with exactly these three fields, or the same as CSV under the header
//! `at_ms,duration_ms,outcome` ([`parse`] reads both). `at_ms` counts milliseconds from the
//! trace's start and never goes backwards; `duration_ms` is how long the call ran; `outcome` is
//! one of the [`Outcome`]s.
//!
//! **Record in shadow mode.** A breaker that enforces turns calls away while it is open, and a
//! call turned away has no outcome (`rejected`): a replay can only guess what it would have
//! done. In [shadow mode](crate::Mode::Shadow) every call runs, so its trace has every outcome,
//! and every candidate can be judged on all of them: that is the trace to tune from.
//!
//! [`Breaker::start_trace`]: crate::Breaker::start_trace
//! [`Breaker::trace`]: crate::Breaker::trace

pub(crate) mod flight;
mod format;
pub(crate) mod recording;

use breaker_options::{Window, WindowKind};
use std::fmt;
use std::str::FromStr;
use tokio::time::Instant;

use crate::base::clock::{self, Nanos};
use crate::core::state::State;
use crate::core::window::TimeWindow;

pub use crate::core::config::default_record::{default_record, set_default_record};
pub use format::{ParseError, parse, parse_recent, to_json_lines};

/// One call of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Entry {
    /// When the call was admitted (or turned away), in milliseconds since the trace began
    /// (rounded down).
    pub at_ms: u64,
    /// How long it ran, in milliseconds, rounded up, so that a call slower than a whole number
    /// of milliseconds still reads as slower than it. 0 for a call turned away.
    pub duration_ms: u64,
    /// How it ended.
    pub outcome: Outcome,
}

impl fmt::Display for Entry {
    /// The entry's JSON line, without the line's end.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            r#"{{"at_ms": {}, "duration_ms": {}, "outcome": "{}"}}"#,
            self.at_ms, self.duration_ms, self.outcome
        )
    }
}

impl Entry {
    /// The length of the entry's JSON line with its line's end: what it adds to a trace's
    /// bytes ([`Limits::max_bytes`]).
    pub(crate) fn line_len(&self) -> usize {
        // `{"at_ms": , "duration_ms": , "outcome": ""}` and the newline.
        44 + digits(self.at_ms) + digits(self.duration_ms) + self.outcome.as_str().len()
    }
}

fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// How a call of a trace ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// The dependency answered.
    Success,
    /// The dependency is unwell (a counted failure, or a panic).
    Failure,
    /// The dependency answered, slower than the breaker's `slow_call`.
    Slow,
    /// The call outlived the breaker's timeout.
    Timeout,
    /// Neither success nor failure: the breaker recorded nothing.
    Ignored,
    /// A business answer ("not found", "declined"): the dependency working, so a success to
    /// the breaker. A recorded trace says so of a value whose
    /// [`IsFailure::is_business_answer`](crate::IsFailure::is_business_answer) is true (an
    /// `Err` that is neither a failure nor ignored) when the call classified it through
    /// `IsFailure`: the attribute without `is_failure = ...`, or [`Breaker::call`](crate::Breaker::call).
    /// A custom classifier (`call_with`, `is_failure = path`, a permit's `record`) only says
    /// "success". A replay counts it as a success.
    Healthy,
    /// The breaker turned the call away: how it would have ended is unknown.
    Rejected,
}

impl Outcome {
    /// Every outcome, in the order of the docs.
    pub const ALL: [Outcome; 7] = [
        Outcome::Success,
        Outcome::Failure,
        Outcome::Slow,
        Outcome::Timeout,
        Outcome::Ignored,
        Outcome::Healthy,
        Outcome::Rejected,
    ];

    /// The outcome as a trace spells it.
    ///
    /// ```
    /// assert_eq!(breaker_runtime::trace::Outcome::Timeout.as_str(), "timeout");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Slow => "slow",
            Outcome::Timeout => "timeout",
            Outcome::Ignored => "ignored",
            Outcome::Healthy => "healthy",
            Outcome::Rejected => "rejected",
        }
    }

    /// Whether the dependency failed the call: a failure or a timeout. (A slow call is a
    /// failure only to a breaker whose `slow_threshold` says so.)
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Failure | Outcome::Timeout)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An outcome a trace does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown outcome `{0}`: the outcomes are success, failure, slow, timeout, ignored, healthy, rejected"
)]
pub struct UnknownOutcome(pub String);

impl FromStr for Outcome {
    type Err = UnknownOutcome;

    fn from_str(text: &str) -> Result<Outcome, UnknownOutcome> {
        Outcome::ALL
            .into_iter()
            .find(|outcome| outcome.as_str() == text)
            .ok_or_else(|| UnknownOutcome(text.to_string()))
    }
}

/// Where a trace of a breaker judging by `window` counts from when started at `now`: the
/// start of the time window's bucket (a tenth of the window) that `now` falls in, or `now`
/// itself for a count window. A breaker's trace begins there
/// ([`Breaker::start_trace`](crate::Breaker::start_trace)), so its first call may be a little
/// after 0; a replay that starts its clock at such an instant puts each call in the bucket the
/// breaker put it in. (The buckets' edges are fixed on the process's clock, not on the breaker's
/// start.)
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::Window;
/// use breaker_runtime::trace::bucket_start;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let now = tokio::time::Instant::now();
/// assert_eq!(bucket_start(Window::Count(20), now), now);
/// let start = bucket_start(Window::Time(Duration::from_secs(30)), now);
/// assert!(start <= now && now - start < Duration::from_secs(3));
/// # }
/// ```
pub fn bucket_start(window: Window, now: Instant) -> Instant {
    bucket_start_of(window, WindowKind::Sliding, now)
}

/// [`bucket_start`] for a window of either kind: a fixed window's one bucket is its whole span,
/// so a trace of a breaker judging by a fixed window of 60 s counts from the edge of the minute
/// `now` falls in (on the process's clock), and a replay that starts at such an edge counts
/// each call in the interval the breaker counted it in.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Window, WindowKind};
/// use breaker_runtime::trace::bucket_start_of;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let now = tokio::time::Instant::now();
/// let window = Window::Time(Duration::from_secs(60));
/// let edge = bucket_start_of(window, WindowKind::Fixed, now);
/// assert!(edge <= now && now - edge < Duration::from_secs(60));
/// assert_eq!(bucket_start_of(window, WindowKind::Fixed, edge + Duration::from_secs(59)), edge);
/// // The next interval begins a minute later (and a few hundred nanoseconds: see the docs).
/// let next = bucket_start_of(window, WindowKind::Fixed, edge + Duration::from_secs(61));
/// assert!(next - edge >= Duration::from_secs(60));
/// assert!(next - edge < Duration::from_secs(60) + Duration::from_micros(1));
/// # }
/// ```
pub fn bucket_start_of(window: Window, kind: WindowKind, now: Instant) -> Instant {
    match window {
        Window::Time(_) => clock::to_instant(began(window, kind, clock::to_nanos(now))),
        Window::Count(_) => now,
    }
}

/// [`bucket_start_of`] on the breaker's clock.
pub(crate) fn began(window: Window, kind: WindowKind, now: Nanos) -> Nanos {
    match window {
        Window::Time(span) => TimeWindow::bucket_start(span, kind, now),
        Window::Count(_) => now,
    }
}

/// How much of its trace a breaker keeps: past either bound, the oldest calls are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most calls kept.
    pub max_entries: usize,
    /// The most bytes kept, counted as the trace's JSON Lines (about 60 a call).
    pub max_bytes: usize,
}

impl Limits {
    /// 100 000 calls and 8 MiB: minutes of a busy dependency's traffic, or hours of a quiet
    /// one, in at most about 3 MiB of memory (24 bytes a call, in a ring that grows by
    /// doubling).
    pub const DEFAULT: Limits = Limits {
        max_entries: 100_000,
        max_bytes: 8 * 1024 * 1024,
    };
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

/// What a breaker's flight recorder kept ([`Breaker::recent`](crate::Breaker::recent)): its
/// recent calls, and its own transitions over the same span, on one time line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recent {
    /// The calls, in the order they were admitted.
    pub calls: Vec<Entry>,
    /// The breaker's transitions, in order.
    pub changes: Vec<StateChange>,
}

impl Recent {
    /// The calls and transitions as JSON Lines, in time order (a transition after the calls
    /// admitted in its millisecond): what `GET {name}/trace?last=` answers, and what
    /// [`parse`] reads back (its calls) and [`parse_recent`] (both).
    ///
    /// ```
    /// use breaker_runtime::State;
    /// use breaker_runtime::trace::{Entry, Outcome, Recent, StateChange};
    ///
    /// let recent = Recent {
    ///     calls: vec![Entry { at_ms: 0, duration_ms: 5, outcome: Outcome::Failure }],
    ///     changes: vec![StateChange { at_ms: 5, from: State::Closed, to: State::Open }],
    /// };
    /// assert_eq!(
    ///     recent.to_json_lines(),
    ///     "{\"at_ms\": 0, \"duration_ms\": 5, \"outcome\": \"failure\"}\n\
    ///      {\"at_ms\": 5, \"from\": \"closed\", \"to\": \"open\"}\n",
    /// );
    /// ```
    pub fn to_json_lines(&self) -> String {
        let mut text = String::new();
        for line in self.lines() {
            text.push_str(&line);
            text.push('\n');
        }
        text
    }

    /// Each line of [`to_json_lines`](Self::to_json_lines), without its end, made as it is
    /// asked for.
    pub fn lines(&self) -> impl Iterator<Item = String> + '_ {
        in_time_order(self.calls.iter().copied(), self.changes.iter().copied())
    }

    /// [`lines`](Self::lines), owning what it reads: for an answer streamed after the reading.
    #[cfg(feature = "http-endpoint")]
    pub(crate) fn into_lines(self) -> impl Iterator<Item = String> + Send + 'static {
        in_time_order(self.calls.into_iter(), self.changes.into_iter())
    }
}

/// The lines of calls and transitions, each list in time order, merged in time order: a
/// transition after the calls admitted in its millisecond.
fn in_time_order(
    calls: impl Iterator<Item = Entry>,
    changes: impl Iterator<Item = StateChange>,
) -> impl Iterator<Item = String> {
    let mut calls = calls.peekable();
    let mut changes = changes.peekable();
    std::iter::from_fn(move || {
        let call_first = match (calls.peek(), changes.peek()) {
            (Some(call), Some(change)) => call.at_ms <= change.at_ms,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if call_first {
            calls.next().map(|call| call.to_string())
        } else {
            changes.next().map(|change| change.to_string())
        }
    })
}

/// One transition of a breaker, as its flight recorder kept it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateChange {
    /// When, in milliseconds on the trace's time line.
    pub at_ms: u64,
    /// The state it left.
    pub from: State,
    /// The state it entered.
    pub to: State,
}

impl fmt::Display for StateChange {
    /// The transition's JSON line, without the line's end.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            r#"{{"at_ms": {}, "from": "{}", "to": "{}"}}"#,
            self.at_ms, self.from, self.to
        )
    }
}
