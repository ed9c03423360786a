//! The report as a picture: each candidate's state over time (open and half-open bands), above
//! the trace's failure rate per second, on one time axis. Colours follow the checkout demo's.

use breaker_runtime::trace::Entry;
use plotters::prelude::*;

use crate::outage::{SECOND_MS, seconds};
use crate::report::Report;

const OPEN: RGBColor = RGBColor(150, 150, 150);
const HALF_OPEN: RGBColor = RGBColor(255, 215, 120);
const CLOSED: RGBColor = RGBColor(205, 230, 205);
const FAILURE_RATE: RGBColor = RGBColor(200, 40, 40);
const OUTAGE: RGBColor = BLACK;

const WIDTH: u32 = 1100;
const BAND_HEIGHT: u32 = 90;
const RATE_HEIGHT: u32 = 300;

/// Why the chart could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart: {0}")]
pub struct ChartError(String);

impl ChartError {
    pub(crate) fn new(why: String) -> ChartError {
        ChartError(why)
    }
}

/// The chart as an SVG document.
///
/// ```
/// use breaker_runtime::trace::parse;
///
/// let trace = parse("at_ms,duration_ms,outcome\n0,5,failure\n10,5,failure\n20,5,success\n")?;
/// let candidate = breaker_replay::parse_options(r#"window = "2""#)?;
/// let report = breaker_replay::report(&trace, &[candidate])?;
/// let svg = breaker_replay::svg(&report, &trace)?;
/// assert!(svg.starts_with("<svg"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn svg(report: &Report, trace: &[Entry]) -> Result<String, ChartError> {
    let mut svg = String::new();
    draw(&mut svg, report, trace).map_err(|e| ChartError(e.to_string()))?;
    Ok(svg)
}

fn draw(
    svg: &mut String,
    report: &Report,
    trace: &[Entry],
) -> Result<(), Box<dyn std::error::Error>> {
    // Seconds on the axis; at least one, so that an empty trace still has an axis to draw.
    let end = (report.trace.span_ms as f64 / 1_000.0).max(1.0);
    let rows = report.rows.len() as u32;
    let height = 50 + rows * BAND_HEIGHT + RATE_HEIGHT;
    let root = SVGBackend::with_string(svg, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "Replay: each candidate's state (grey: open, yellow: half-open) above the trace's failure rate",
        ("sans-serif", 18),
    )?;
    let (bands, rate) = root.split_vertically(rows * BAND_HEIGHT);
    let panels = if rows == 0 {
        Vec::new()
    } else {
        bands.split_evenly((rows as usize, 1))
    };
    for (i, (panel, row)) in panels.iter().zip(&report.rows).enumerate() {
        let mut chart = ChartBuilder::on(panel)
            .caption(format!("#{}: {}", i + 1, row.label), ("sans-serif", 14))
            .margin_left(16)
            .margin_right(16)
            .x_label_area_size(0)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..end, 0f64..1f64)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .disable_y_axis()
            .x_labels(0)
            .draw()?;
        let mut since = (0f64, "closed");
        let mut spans = Vec::new();
        for t in &row.transitions {
            let at = t.at_ms as f64 / 1_000.0;
            spans.push((since.0, at, since.1));
            since = (at, t.to);
        }
        spans.push((since.0, end, since.1));
        chart.draw_series(
            spans
                .into_iter()
                .filter(|s| s.1 > s.0)
                .map(|(from, to, state)| {
                    let color = match state {
                        "open" | "forced_open" => OPEN,
                        "half_open" => HALF_OPEN,
                        _ => CLOSED,
                    };
                    Rectangle::new([(from, 0.1), (to, 0.9)], color.filled())
                }),
        )?;
    }

    let mut chart = ChartBuilder::on(&rate)
        .caption(
            "failure rate per second (black strip: outages)",
            ("sans-serif", 14),
        )
        .margin(16)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..end, -6f64..100f64)?;
    chart
        .configure_mesh()
        .x_desc("time since the trace's start (s)")
        .y_desc("failures (%)")
        .y_label_formatter(&|y| {
            if *y < 0.0 {
                String::new()
            } else {
                format!("{y:.0}")
            }
        })
        .draw()?;
    chart.draw_series(report.outages.iter().map(|o| {
        Rectangle::new(
            [
                (o.start_ms as f64 / 1_000.0, -5.0),
                (o.end_ms as f64 / 1_000.0, -2.0),
            ],
            OUTAGE.filled(),
        )
    }))?;
    let points: Vec<(f64, f64)> = seconds(trace)
        .iter()
        .map(|s| {
            (
                (s.index * SECOND_MS) as f64 / 1_000.0 + 0.5,
                s.failure_rate(),
            )
        })
        .collect();
    chart.draw_series(LineSeries::new(points, FAILURE_RATE.stroke_width(2)))?;
    root.present()?;
    Ok(())
}
