//! The front as a text table, for people: a numbered row each, its options spelled to paste,
//! and the current options' row under it, marked.

use std::fmt::Write;

use super::Suggestion;
use crate::front::Figures;
use crate::table::{aligned, duration, header};

/// The suggestion as a table, under the lines about the trace.
pub fn table(suggestion: &Suggestion, trace_name: &str) -> String {
    let s = suggestion;
    let mut text = header(&s.trace, &s.outages, trace_name);
    let _ = writeln!(
        text,
        "searched {} candidates ({}); {} on the front",
        s.searched,
        s.method,
        s.front.len()
    );
    let mut limits = Vec::new();
    if let Some(ms) = s.constraints.max_delay_ms {
        limits.push(format!("delay at most {}", duration(ms)));
    }
    if let Some(calls) = s.constraints.max_healthy_lost {
        limits.push(format!(
            "at most {calls} of {} healthy calls lost",
            s.healthy_calls
        ));
    }
    if !s.constraints.keep.is_empty() {
        let kept: Vec<&str> = s.constraints.keep.iter().map(|k| k.name()).collect();
        limits.push(format!("kept: {}", kept.join(", ")));
    }
    if !limits.is_empty() {
        let _ = writeln!(text, "constraints: {}", limits.join("; "));
    }
    text.push('\n');

    let mut lines = vec![
        ["", "failures", "healthy", "delay", "not", ""]
            .map(String::from)
            .to_vec(),
        ["row", "through", "lost", "(max)", "closed", "options"]
            .map(String::from)
            .to_vec(),
    ];
    for (i, row) in s.front.iter().enumerate() {
        lines.push(line((i + 1).to_string(), &row.figures, &row.options));
    }
    lines.push(line(
        "current".into(),
        &s.current.figures,
        &s.current.options,
    ));
    // The figures right-aligned, the options after them read from the left.
    let figures: Vec<Vec<String>> = lines.iter().map(|l| l[..l.len() - 1].to_vec()).collect();
    // Right-aligned, every line of the figures is as wide as the widest.
    for (head, cells) in aligned(&figures).lines().zip(&lines) {
        let options = cells.last().map_or("", String::as_str);
        let _ = writeln!(text, "{}", format!("{head}  {options}").trim_end());
    }
    text.push('\n');
    let _ = writeln!(text, "current: {}", verdict(s));
    text
}

fn line(label: String, figures: &Figures, options: &str) -> Vec<String> {
    vec![
        label,
        figures.failures_through.to_string(),
        figures.healthy_lost.to_string(),
        figures
            .delay_ms
            .map_or_else(|| "missed".to_string(), duration),
        duration(figures.not_closed_ms),
        if options.is_empty() {
            "(the defaults)".to_string()
        } else {
            options.to_string()
        },
    ]
}

/// Where the current options stand, in words.
pub fn verdict(s: &Suggestion) -> String {
    let c = &s.current;
    let mut said = match (c.on_front, c.dominated_by) {
        (Some(row), _) => {
            format!("on the front (row {row}): no candidate beats it on every figure")
        }
        (None, Some(row)) => format!(
            "dominated by row {row}, which is no worse on any figure and better on at least one"
        ),
        (None, None) => "not beaten by any row of the front".to_string(),
    };
    if !c.within_constraints {
        said.push_str(", but outside the constraints");
    }
    said
}
