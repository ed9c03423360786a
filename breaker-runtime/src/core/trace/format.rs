//! A trace as text: JSON Lines out, and JSON Lines or CSV in, every error naming its line and
//! field.

use std::fmt::{self, Write};

use super::{Entry, Outcome, Recent, StateChange};
use crate::core::state::State;

const FIELDS: [&str; 3] = ["at_ms", "duration_ms", "outcome"];
/// A call's fields, then a transition's own.
const ALL_FIELDS: [&str; 5] = ["at_ms", "duration_ms", "outcome", "from", "to"];

/// The state a trace spells `text`.
fn state(text: &str) -> Option<State> {
    State::named(text)
}

/// The trace as JSON Lines: one object per call, in the order given, each line ended.
///
/// ```
/// use breaker_runtime::trace::{Entry, Outcome, to_json_lines};
///
/// let trace = [Entry { at_ms: 1234, duration_ms: 80, outcome: Outcome::Success }];
/// assert_eq!(
///     to_json_lines(&trace),
///     "{\"at_ms\": 1234, \"duration_ms\": 80, \"outcome\": \"success\"}\n",
/// );
/// ```
pub fn to_json_lines(entries: &[Entry]) -> String {
    let mut text = String::with_capacity(entries.iter().map(Entry::line_len).sum());
    for entry in entries {
        // Writing to a String cannot fail.
        let _ = writeln!(text, "{entry}");
    }
    text
}

/// Why a trace could not be read: the line (counting from 1), the field when one is at fault,
/// and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}{}: {message}", field.map(|f| format!(", field `{f}`")).unwrap_or_default())]
pub struct ParseError {
    /// The line at fault, counting from 1.
    pub line: usize,
    /// The field at fault, when one is.
    pub field: Option<&'static str>,
    /// What is wrong.
    pub message: String,
}

/// Reads a trace: JSON Lines (each line `{"at_ms": 0, "duration_ms": 80, "outcome":
/// "success"}`, exactly those fields, in any order) or CSV (the header `at_ms,duration_ms,outcome`,
/// then one call a line). Blank lines are skipped; which of the two it is, the first other line
/// says. Times must not go backwards. The transitions a flight recorder writes among the calls
/// (`{"at_ms": 5, "from": "closed", "to": "open"}`) are read and left out: [`parse_recent`]
/// keeps them.
///
/// ```
/// use breaker_runtime::trace::{Outcome, parse};
///
/// let csv = parse("at_ms,duration_ms,outcome\n0,80,success\n5,2000,timeout\n")?;
/// assert_eq!(csv[1].outcome, Outcome::Timeout);
///
/// let error = parse("{\"at_ms\": 9, \"duration_ms\": 1, \"outcome\": \"fine\"}").unwrap_err();
/// assert_eq!((error.line, error.field), (1, Some("outcome")));
/// # Ok::<(), breaker_runtime::trace::ParseError>(())
/// ```
pub fn parse(text: &str) -> Result<Vec<Entry>, ParseError> {
    parse_recent(text).map(|recent| recent.calls)
}

/// Reads a trace as [`parse`] does, keeping the transitions a flight recorder wrote among its
/// calls ([`Recent::to_json_lines`]).
///
/// ```
/// use breaker_runtime::State;
/// use breaker_runtime::trace::parse_recent;
///
/// let recent = parse_recent(
///     "{\"at_ms\": 0, \"duration_ms\": 5, \"outcome\": \"failure\"}\n\
///      {\"at_ms\": 5, \"from\": \"closed\", \"to\": \"open\"}\n",
/// )?;
/// assert_eq!((recent.calls.len(), recent.changes[0].to), (1, State::Open));
/// # Ok::<(), breaker_runtime::trace::ParseError>(())
/// ```
pub fn parse_recent(text: &str) -> Result<Recent, ParseError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty());
    let mut recent = Recent::default();
    let Some((first_number, first)) = lines.next() else {
        return Ok(recent);
    };
    let mut last = None;
    let mut push = |line: usize, read: Line| {
        let at_ms = match read {
            Line::Call(entry) => entry.at_ms,
            Line::Change(change) => change.at_ms,
        };
        if let Some(last) = last.filter(|last| at_ms < *last) {
            return Err(ParseError {
                line,
                field: Some("at_ms"),
                message: format!("{at_ms} goes back in time: the line before was at {last}"),
            });
        }
        last = Some(at_ms);
        match read {
            Line::Call(entry) => recent.calls.push(entry),
            Line::Change(change) => recent.changes.push(change),
        }
        Ok(())
    };
    if first.starts_with('{') {
        push(first_number, json_line(first_number, first)?)?;
        for (number, line) in lines {
            push(number, json_line(number, line)?)?;
        }
    } else {
        let order = csv_header(first_number, first)?;
        for (number, line) in lines {
            push(number, Line::Call(csv_line(number, line, &order)?))?;
        }
    }
    Ok(recent)
}

/// One line of a trace.
enum Line {
    Call(Entry),
    Change(StateChange),
}

fn error(line: usize, field: Option<&'static str>, message: impl fmt::Display) -> ParseError {
    ParseError {
        line,
        field,
        message: message.to_string(),
    }
}

/// The fields of a call or a transition, as they are read before they are checked.
#[derive(Default)]
struct Fields<'a> {
    values: [Option<&'a str>; 5],
}

impl<'a> Fields<'a> {
    fn set(&mut self, line: usize, key: &str, value: &'a str) -> Result<(), ParseError> {
        let Some(index) = ALL_FIELDS.iter().position(|f| *f == key) else {
            return Err(error(
                line,
                None,
                format_args!(
                    "unknown field `{key}`: a call has exactly at_ms, duration_ms and outcome (a transition at_ms, from and to)"
                ),
            ));
        };
        if self.values[index].replace(value).is_some() {
            return Err(error(line, Some(ALL_FIELDS[index]), "given twice"));
        }
        Ok(())
    }

    /// The call these fields make, or the transition when they name `from` or `to`.
    fn line(&self, line: usize) -> Result<Line, ParseError> {
        if self.values[3].is_none() && self.values[4].is_none() {
            return self.entry(line).map(Line::Call);
        }
        if let Some(index) = (1..3).find(|i| self.values[*i].is_some()) {
            return Err(error(
                line,
                Some(ALL_FIELDS[index]),
                "a line is a call (at_ms, duration_ms, outcome) or a transition (at_ms, from, to), not both",
            ));
        }
        let at_ms = self.millis(line, 0)?;
        let state = |index: usize| {
            let text = self.field(line, index)?;
            state(text).ok_or_else(|| {
                error(
                    line,
                    Some(ALL_FIELDS[index]),
                    format_args!(
                        "unknown state `{text}`: the states are closed, open, half_open, forced_open, disabled"
                    ),
                )
            })
        };
        Ok(Line::Change(StateChange {
            at_ms,
            from: state(3)?,
            to: state(4)?,
        }))
    }

    /// The field at `index` of [`ALL_FIELDS`], or the error that says it is missing.
    fn field(&self, line: usize, index: usize) -> Result<&'a str, ParseError> {
        self.values[index].ok_or_else(|| error(line, Some(ALL_FIELDS[index]), "missing"))
    }

    /// The field at `index` as whole milliseconds.
    fn millis(&self, line: usize, index: usize) -> Result<u64, ParseError> {
        let text = self.field(line, index)?;
        text.parse::<u64>().map_err(|_| {
            error(
                line,
                Some(ALL_FIELDS[index]),
                format_args!("`{text}` is not a whole number of milliseconds"),
            )
        })
    }

    fn entry(&self, line: usize) -> Result<Entry, ParseError> {
        // In the fields' order, so the first at fault is the one named.
        let at_ms = self.millis(line, 0)?;
        let duration_ms = self.millis(line, 1)?;
        let outcome = self
            .field(line, 2)?
            .parse::<Outcome>()
            .map_err(|unknown| error(line, Some("outcome"), unknown))?;
        Ok(Entry {
            at_ms,
            duration_ms,
            outcome,
        })
    }
}

/// One JSON object of scalar fields: strings without escapes, or numbers (the format has
/// nothing else, so nothing else is read).
fn json_line(line: usize, text: &str) -> Result<Line, ParseError> {
    let malformed = |what: &str| {
        error(
            line,
            None,
            format_args!(
                "not a trace line ({what}): expected {{\"at_ms\": 0, \"duration_ms\": 80, \"outcome\": \"success\"}}"
            ),
        )
    };
    let body = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| malformed("not one object"))?;
    let mut fields = Fields::default();
    let mut rest = body.trim_start();
    while !rest.is_empty() {
        let (key, after) = json_string(rest).ok_or_else(|| malformed("a key must be a string"))?;
        let after = after
            .trim_start()
            .strip_prefix(':')
            .ok_or_else(|| malformed("a `:` must follow the key"))?
            .trim_start();
        let (value, after) = if after.starts_with('"') {
            json_string(after).ok_or_else(|| malformed("a string is not closed"))?
        } else {
            let end = after.find([',', ' ', '\t']).unwrap_or(after.len());
            after.split_at(end)
        };
        if value.is_empty() {
            return Err(malformed("a value is missing"));
        }
        fields.set(line, key, value)?;
        rest = after.trim_start();
        if let Some(next) = rest.strip_prefix(',') {
            rest = next.trim_start();
            if rest.is_empty() {
                return Err(malformed("a `,` ends the object"));
            }
        } else if !rest.is_empty() {
            return Err(malformed("a `,` must separate the fields"));
        }
    }
    fields.line(line)
}

/// A string at the start of `text`, and what follows it; `None` when it is not closed or holds
/// an escape (no key or outcome needs one).
fn json_string(text: &str) -> Option<(&str, &str)> {
    let inner = text.strip_prefix('"')?;
    let end = inner.find(['"', '\\'])?;
    (inner.as_bytes()[end] == b'"').then(|| (&inner[..end], &inner[end + 1..]))
}

/// The columns' order, from the header.
fn csv_header(line: usize, text: &str) -> Result<[usize; 3], ParseError> {
    let names: Vec<&str> = text.split(',').map(str::trim).collect();
    let mut order = [usize::MAX; 3];
    for (column, name) in names.iter().enumerate() {
        match FIELDS.iter().position(|f| f == name) {
            Some(field) if order[field] == usize::MAX => order[field] = column,
            _ => {
                return Err(error(
                    line,
                    None,
                    format_args!(
                        "a trace is JSON Lines, or CSV whose first line is the header `at_ms,duration_ms,outcome`; found `{text}`"
                    ),
                ));
            }
        }
    }
    if names.len() != 3 {
        return Err(error(
            line,
            None,
            "the CSV header must name at_ms, duration_ms and outcome",
        ));
    }
    Ok(order)
}

fn csv_line(line: usize, text: &str, order: &[usize; 3]) -> Result<Entry, ParseError> {
    let cells: Vec<&str> = text.split(',').map(str::trim).collect();
    if cells.len() != 3 {
        return Err(error(
            line,
            None,
            format_args!("{} cells where the header has 3", cells.len()),
        ));
    }
    let mut fields = Fields::default();
    for (field, column) in order.iter().enumerate() {
        fields.set(line, FIELDS[field], cells[*column])?;
    }
    fields.entry(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at_ms: u64, duration_ms: u64, outcome: Outcome) -> Entry {
        Entry {
            at_ms,
            duration_ms,
            outcome,
        }
    }

    #[test]
    fn json_lines_are_read_back_as_written() {
        let trace: Vec<Entry> = Outcome::ALL
            .into_iter()
            .enumerate()
            .map(|(i, outcome)| entry(i as u64 * 10, i as u64, outcome))
            .collect();
        let text = to_json_lines(&trace);
        assert_eq!(text.len(), trace.iter().map(Entry::line_len).sum::<usize>());
        assert_eq!(parse(&text).unwrap(), trace);
    }

    #[test]
    fn json_fields_come_in_any_order_and_spacing() {
        let read = parse("\n{\"outcome\":\"slow\",\"duration_ms\":120 , \"at_ms\":7}\n\n").unwrap();
        assert_eq!(read, [entry(7, 120, Outcome::Slow)]);
    }

    #[test]
    fn csv_is_read_by_its_header() {
        let read = parse("outcome, at_ms, duration_ms\nrejected, 3, 0\nfailure,4,9\n").unwrap();
        assert_eq!(
            read,
            [
                entry(3, 0, Outcome::Rejected),
                entry(4, 9, Outcome::Failure)
            ]
        );
    }

    fn fault(text: &str) -> (usize, Option<&'static str>, String) {
        let e = parse(text).unwrap_err();
        (e.line, e.field, e.message)
    }

    #[test]
    fn each_error_names_its_line_and_field() {
        let good = r#"{"at_ms": 5, "duration_ms": 1, "outcome": "success"}"#;
        let cases: [(&str, usize, Option<&str>, &str); 9] = [
            (
                r#"{"at_ms": 4, "duration_ms": 1, "outcome": "success"}"#,
                2,
                Some("at_ms"),
                "back in time",
            ),
            (
                r#"{"at_ms": 6, "duration_ms": -1, "outcome": "success"}"#,
                2,
                Some("duration_ms"),
                "whole number",
            ),
            (
                r#"{"at_ms": 6, "duration_ms": 1, "outcome": "fine"}"#,
                2,
                Some("outcome"),
                "unknown outcome `fine`",
            ),
            (
                r#"{"at_ms": 6, "outcome": "success"}"#,
                2,
                Some("duration_ms"),
                "missing",
            ),
            (
                r#"{"at_ms": 6, "at_ms": 7, "duration_ms": 1, "outcome": "success"}"#,
                2,
                Some("at_ms"),
                "twice",
            ),
            (
                r#"{"at_ms": 6, "duration_ms": 1, "outcome": "success", "id": 3}"#,
                2,
                None,
                "unknown field `id`",
            ),
            (
                r#"{"at_ms": 6, "duration_ms": 1, "outcome": "success""#,
                2,
                None,
                "not one object",
            ),
            (r#"{"at_ms": 6 "duration_ms": 1}"#, 2, None, "separate"),
            ("at_ms,duration_ms,outcome", 2, None, "not one object"),
        ];
        for (second, line, field, says) in cases {
            let (l, f, message) = fault(&format!("{good}\n{second}\n"));
            assert_eq!((l, f), (line, field), "{second}: {message}");
            assert!(message.contains(says), "{second}: {message}");
        }
    }

    #[test]
    fn csv_errors_name_their_line_too() {
        assert_eq!(fault("at_ms,duration_ms\n").0, 1);
        assert!(fault("time,duration_ms,outcome\n").2.contains("header"));
        let (line, field, _) = fault("at_ms,duration_ms,outcome\n1,2,success\n\n3,x,failure\n");
        assert_eq!((line, field), (4, Some("duration_ms")));
        assert_eq!(fault("at_ms,duration_ms,outcome\n1,2\n").0, 2);
    }

    #[test]
    fn nothing_is_an_empty_trace() {
        assert_eq!(parse("\n  \n").unwrap(), []);
    }
}
