//! The report as a text table, for people: one numbered row per candidate, their options
//! listed under it.

use std::fmt::Write;

use crate::outage::Outage;
use crate::report::{Report, Row, TraceSummary};

/// The columns, as the table heads them; the README says what each holds.
pub const COLUMNS: [&str; 14] = [
    "#",
    "opened",
    "reopened",
    "open",
    "not closed",
    "rejected",
    "failing",
    "healthy",
    "ignored",
    "unknown",
    "failures through",
    "outages caught",
    "delay mean",
    "delay max",
];

/// The report as a table, under a line about the trace and its outages.
///
/// ```
/// use breaker_runtime::trace::parse;
///
/// let trace = parse("at_ms,duration_ms,outcome\n0,5,failure\n10,5,failure\n20,5,success\n")?;
/// let candidate = breaker_replay::parse_options(r#"window = "2""#)?;
/// let table = breaker_replay::table(&breaker_replay::report(&trace, &[candidate])?, "t.csv");
/// assert!(table.contains(r#"#1: window = "2""#));
/// assert!(table.starts_with("trace t.csv: 3 calls over 25ms, 2 failed, 0 recorded as rejected"), "{table}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn table(report: &Report, trace_name: &str) -> String {
    let mut text = header(&report.trace, &report.outages, trace_name);
    text.push('\n');
    let mut lines: Vec<Vec<String>> = vec![COLUMNS.iter().map(|c| c.to_string()).collect()];
    for (i, row) in report.rows.iter().enumerate() {
        lines.push(cells(i + 1, row, report.outages.len()));
    }
    text.push_str(&aligned(&lines));
    text.push('\n');
    for (i, row) in report.rows.iter().enumerate() {
        if row.label == row.options || row.options.is_empty() {
            let _ = writeln!(text, "#{}: {}", i + 1, row.label);
        } else {
            let _ = writeln!(text, "#{}: {} ({})", i + 1, row.label, row.options);
        }
    }
    text
}

/// The lines about the trace and its outages that head every table.
pub(crate) fn header(trace: &TraceSummary, outages: &[Outage], trace_name: &str) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "trace {trace_name}: {} calls over {}, {} failed, {} recorded as rejected",
        trace.calls,
        duration(trace.span_ms),
        trace.failures,
        trace.rejected
    );
    match outages {
        [] => text.push_str("outages: none\n"),
        outages => {
            let _ = writeln!(text, "outages: {}", outages.len());
            for (i, o) in outages.iter().enumerate() {
                let _ = writeln!(
                    text,
                    "  {}. {} to {}: {} failures of {} calls",
                    i + 1,
                    duration(o.start_ms),
                    duration(o.end_ms),
                    o.failures,
                    o.calls
                );
            }
        }
    }
    text
}

/// Cells in columns, each right-aligned to its widest, a line each.
pub(crate) fn aligned(lines: &[Vec<String>]) -> String {
    let columns = lines.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            lines
                .iter()
                .filter_map(|l| l.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for line in lines {
        let padded: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:>width$}"))
            .collect();
        let _ = writeln!(text, "{}", padded.join("  ").trim_end());
    }
    text
}

fn cells(number: usize, row: &Row, outages: usize) -> Vec<String> {
    let or_dash = |ms: Option<u64>| ms.map_or_else(|| "-".to_string(), duration);
    vec![
        number.to_string(),
        row.opened.to_string(),
        row.reopened.to_string(),
        duration(row.open_ms),
        duration(row.not_closed_ms),
        row.rejected.to_string(),
        row.rejected_failing.to_string(),
        row.rejected_healthy.to_string(),
        row.rejected_ignored.to_string(),
        if row.admitted_unknown > 0 {
            format!(
                "{} (+{} admitted)",
                row.rejected_unknown, row.admitted_unknown
            )
        } else {
            row.rejected_unknown.to_string()
        },
        row.failures_through.to_string(),
        format!("{}/{outages}", row.outages_caught),
        or_dash(row.delay_mean_ms),
        or_dash(row.delay_max_ms),
    ]
}

/// Milliseconds as a person reads them: `850ms`, `12.3s`, `2m05.0s`, `1h02m`.
pub fn duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{:.1}s", ms as f64 / 1_000.0),
        60_000..3_600_000 => format!("{}m{:04.1}s", ms / 60_000, (ms % 60_000) as f64 / 1_000.0),
        _ => format!("{}h{:02}m", ms / 3_600_000, (ms % 3_600_000) / 60_000),
    }
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(12_340), "12.3s");
        assert_eq!(duration(125_000), "2m05.0s");
        assert_eq!(duration(3_720_000), "1h02m");
    }
}
