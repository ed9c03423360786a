//! The trace reader: JSON Lines and CSV, calls and transitions.

use breaker_runtime::trace::parse_recent;

/// Reads the input as a trace; **a trace it accepts, written back as JSON Lines, reads back
/// equal**.
pub fn trace(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(read) = parse_recent(text) else {
        return;
    };
    let written = read.to_json_lines();
    let again = parse_recent(&written)
        .unwrap_or_else(|e| panic!("{text:?} read, but its JSON Lines {written:?} did not: {e}"));
    assert_eq!(again, read, "{text:?} written as {written:?}");
}
