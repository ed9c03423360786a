//! A trace read from a file, every error naming the file, the line and the field.

use std::path::Path;

use breaker_runtime::trace::{Entry, ParseError, parse};

/// A trace that could not be read: the file, and what is wrong in it.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{file}: {error}")]
    Unreadable {
        /// The file, as named.
        file: String,
        /// Why.
        error: std::io::Error,
    },
    /// A line of it is wrong: its `Display` reads `FILE: line N, field `F`: message`.
    #[error("{file}: {error}")]
    Malformed {
        /// The file, as named.
        file: String,
        /// The line, the field and what is wrong, as the runtime's [`parse`] says.
        error: ParseError,
    },
}

/// Reads the trace in `text`, its errors naming `file`.
///
/// ```
/// let error = breaker_replay::parse_trace("traces/bad.jsonl", "{\"at_ms\": 1, \"duration_ms\": 2, \"outcome\": \"fine\"}")
///     .unwrap_err();
/// assert!(error.to_string().starts_with("traces/bad.jsonl: line 1, field `outcome`: unknown outcome `fine`"));
/// ```
pub fn parse_trace(file: &str, text: &str) -> Result<Vec<Entry>, TraceError> {
    parse(text).map_err(|error| TraceError::Malformed {
        file: file.to_string(),
        error,
    })
}

/// Reads the trace in the file at `path` (JSON Lines or CSV, as [`parse`] reads them).
pub fn read_trace(path: &Path) -> Result<Vec<Entry>, TraceError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| TraceError::Unreadable {
        file: file.clone(),
        error,
    })?;
    parse_trace(&file, &text)
}
