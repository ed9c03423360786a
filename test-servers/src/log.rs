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
