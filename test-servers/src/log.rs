//! A server's own output, kept in a file so that a failure to start can show it.

use std::fs::File;
use std::path::Path;

/// A file for a child's output (stdout and stderr both), created anew.
pub(crate) fn create(path: &Path) -> (File, File) {
    let file = File::create(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let again = file.try_clone().expect("a second handle on the log");
    (file, again)
}

/// The end of a log (its last 3 000 bytes), for a failure's message.
pub(crate) fn tail(path: &Path) -> String {
    let log = std::fs::read_to_string(path).unwrap_or_default();
    let start = log.len().saturating_sub(3_000);
    let start = (start..log.len())
        .find(|&i| log.is_char_boundary(i))
        .unwrap_or(log.len());
    log[start..].to_string()
}

/// A log from its first line holding `marker` on (at most 4 000 bytes), or nothing: the head of
/// the first error report says why, where a long report's tail holds only its last details.
pub(crate) fn first(path: &Path, marker: &str) -> String {
    let log = std::fs::read_to_string(path).unwrap_or_default();
    let Some(at) = log.find(marker) else {
        return String::new();
    };
    let start = log[..at].rfind('\n').map_or(0, |newline| newline + 1);
    let end = (start + 4_000).min(log.len());
    let end = (end..=log.len())
        .find(|&i| log.is_char_boundary(i))
        .unwrap_or(log.len());
    log[start..end].to_string()
}
