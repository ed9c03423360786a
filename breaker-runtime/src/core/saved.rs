//! A breaker's state as one process leaves it, for the next process to start from (opossum's
//! `toJSON` and `state` option, Resilience4j's `initialState`): a deploy during an outage must
//! not start every new process closed with an empty window, sending its first calls into the
//! sick dependency.
//!
//! Times that must outlive the process are wall-clock times ([`SystemTime`]): a process's own
//! clock means nothing to the next one. The rule for a clock that moved between the two: a
//! break whose end is past is over (the circuit is half-open at its next call, never closed
//! without a probe), and a break whose end lies further ahead than the break's own length is
//! clamped to that length.

use std::fmt;
use std::time::{Duration, SystemTime};

use crate::core::config::Settings;
use crate::core::state::State;

/// The version of the saved-state format this library writes and reads. A file of another
/// version is refused whole.
pub const SAVED_STATE_VERSION: u32 = 1;

/// Every registered breaker's state at one moment, as
/// [`Registry::saved_states`](crate::Registry::saved_states) takes it and
/// [`Registry::restore`](crate::Registry::restore) puts it back.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SavedStates {
    /// The format's version, [`SAVED_STATE_VERSION`] when written by this library.
    pub version: u32,
    /// When the states were taken.
    pub saved_at: SystemTime,
    /// Each breaker's, by name.
    pub breakers: Vec<SavedState>,
}

impl SavedStates {
    /// States taken now, in this library's format.
    pub fn new(breakers: Vec<SavedState>) -> SavedStates {
        SavedStates {
            version: SAVED_STATE_VERSION,
            saved_at: SystemTime::now(),
            breakers,
        }
    }
}

/// One breaker's state, as [`Breaker::saved_state`](crate::Breaker::saved_state) takes it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SavedState {
    /// The breaker's name.
    pub name: String,
    /// The state it was in. A drill is not carried: a breaker held open for a drill is saved
    /// in the state under it.
    pub state: State,
    /// When its break ends, while open.
    pub open_until: Option<SystemTime>,
    /// How long the break it was in lasts, while open: the most a restored break may have
    /// left, whatever the two processes' clocks say.
    pub break_length: Option<Duration>,
    /// Failed probes in a row since it last closed: how far its break has grown.
    pub failed_probes: u32,
    /// What its window held (in a closed circuit; an open circuit's next closed period starts
    /// empty, so its window is only the evidence it opened on).
    pub window: SavedWindow,
    /// The options it ran with.
    pub config: Settings,
}

/// What a window held.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SavedWindow {
    /// A count window's outcomes, oldest first.
    Count(Vec<SavedOutcome>),
    /// A time window's buckets (a fixed window's interval), each with when it began.
    Time(Vec<SavedBucket>),
}

impl SavedWindow {
    /// The outcomes it holds.
    pub fn calls(&self) -> u64 {
        match self {
            SavedWindow::Count(outcomes) => outcomes.len() as u64,
            SavedWindow::Time(buckets) => buckets.iter().map(|b| u64::from(b.calls)).sum(),
        }
    }
}

/// How a recorded call ended, as the window kept it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavedOutcome {
    /// A success.
    Success,
    /// A success slower than `slow_call`.
    Slow,
    /// A failure.
    Failure,
}

impl SavedOutcome {
    /// The outcome's letter in the saved JSON: `S` (success), `L` (slow), `F` (failure).
    pub fn letter(self) -> char {
        match self {
            SavedOutcome::Success => 'S',
            SavedOutcome::Slow => 'L',
            SavedOutcome::Failure => 'F',
        }
    }

    /// The outcome a letter stands for.
    pub fn from_letter(letter: char) -> Option<SavedOutcome> {
        match letter {
            'S' => Some(SavedOutcome::Success),
            'L' => Some(SavedOutcome::Slow),
            'F' => Some(SavedOutcome::Failure),
            _ => None,
        }
    }
}

/// A time window's bucket: when it began, and what it counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavedBucket {
    /// When the bucket began.
    pub began: SystemTime,
    /// Outcomes counted.
    pub calls: u32,
    /// Of them, failures.
    pub failures: u32,
    /// Of them, slow successes.
    pub slow: u32,
}

/// What a restore put back, and what it could not.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Restored {
    /// The breaker's name.
    pub name: String,
    /// The state it is in now.
    pub state: State,
    /// Each thing the restore left out or changed, as a sentence naming its option (`window:
    /// ...`, `open_until: ...`); empty when everything was put back as saved.
    pub dropped: Vec<String>,
}

impl fmt::Display for Restored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` restored {}", self.name, self.state.as_str())?;
        if !self.dropped.is_empty() {
            write!(f, " ({})", self.dropped.join("; "))?;
        }
        Ok(())
    }
}

/// Why saved states were refused. Nothing is restored when any is refused: every breaker
/// starts as if there were no saved state.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RestoreError {
    /// A format this library does not read.
    #[error(
        "the saved states are of format version {found}, and this library reads version {expected}: start without them"
    )]
    Version {
        /// The version found.
        found: u32,
        /// The version this library reads.
        expected: u32,
    },
    /// A value that is missing, of the wrong kind, or out of range.
    #[error("{}`{field}` {message}", breaker.as_ref().map(|b| format!("breaker `{b}`: ")).unwrap_or_default())]
    Invalid {
        /// The breaker whose state holds it, if it is not the file's own field.
        breaker: Option<String>,
        /// The field.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A breaker this process has not registered.
    #[error("the saved states name breaker `{name}`, which this process has not registered{}", nearest_text(.nearest))]
    UnknownBreaker {
        /// The name saved.
        name: String,
        /// The registered names nearest to it.
        nearest: Vec<String>,
    },
    /// A breaker saved twice.
    #[error("the saved states hold breaker `{name}` twice")]
    Duplicate {
        /// The name.
        name: String,
    },
}

fn nearest_text(nearest: &[String]) -> String {
    match nearest {
        [] => String::new(),
        names => format!(
            " (did you mean {}?)",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    }
}

impl RestoreError {
    pub(crate) fn invalid(
        breaker: Option<&str>,
        field: &str,
        message: impl Into<String>,
    ) -> RestoreError {
        RestoreError::Invalid {
            breaker: breaker.map(str::to_owned),
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// Checks what a saved state says of itself, before anything is applied.
pub(crate) fn check(saved: &SavedState) -> Result<(), RestoreError> {
    let name = Some(saved.name.as_str());
    if saved.state == State::Open && (saved.open_until.is_none() || saved.break_length.is_none()) {
        return Err(RestoreError::invalid(
            name,
            "open_until",
            "is missing: an open circuit's state says when its break ends, and how long it is",
        ));
    }
    if saved.failed_probes > 255 {
        return Err(RestoreError::invalid(
            name,
            "failed_probes",
            format!("is {}, above the 255 a breaker counts", saved.failed_probes),
        ));
    }
    if let SavedWindow::Time(buckets) = &saved.window {
        if let Some(bucket) = buckets
            .iter()
            .find(|b| b.failures.saturating_add(b.slow) > b.calls)
        {
            return Err(RestoreError::invalid(
                name,
                "window",
                format!(
                    "holds a bucket of {} calls with {} failures and {} slow, more than its calls",
                    bucket.calls, bucket.failures, bucket.slow
                ),
            ));
        }
    }
    if let SavedWindow::Count(outcomes) = &saved.window {
        if outcomes.len() > crate::core::config::MAX_COUNT_WINDOW as usize {
            return Err(RestoreError::invalid(
                name,
                "window",
                format!(
                    "holds {} outcomes, more than a count window's {}",
                    outcomes.len(),
                    crate::core::config::MAX_COUNT_WINDOW
                ),
            ));
        }
    }
    saved
        .config
        .check()
        .map_err(|e| RestoreError::invalid(name, &format!("config.{}", e.field()), e.to_string()))
}
