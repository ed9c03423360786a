//! What the reader sees: the side-by-side table, a sparkline per run, and the SVG chart.

use std::path::Path;

use breaker_runtime::State;
use plotters::prelude::*;

use crate::sim::{Run, Scenario, quantile};

fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else {
        format!("{s:.2} s")
    }
}

fn clock(s: f64) -> String {
    format!("{}:{:04.1}", (s / 60.0).floor() as u64, s % 60.0)
}

pub fn table(scenario: &Scenario, unguarded: &Run, guarded: &Run) -> String {
    let lat = |run: &Run| run.latencies.iter().map(|(_, l)| *l).collect::<Vec<_>>();
    let (a, b) = (lat(unguarded), lat(guarded));
    let (sick_a, sick_b) = (
        unguarded.sick_latencies(scenario),
        guarded.sick_latencies(scenario),
    );
    let rows: Vec<(&str, String, String)> = vec![
        (
            "caller latency p50",
            seconds(quantile(&a, 0.50)),
            seconds(quantile(&b, 0.50)),
        ),
        (
            "caller latency p95",
            seconds(quantile(&a, 0.95)),
            seconds(quantile(&b, 0.95)),
        ),
        (
            "caller latency p99",
            seconds(quantile(&a, 0.99)),
            seconds(quantile(&b, 0.99)),
        ),
        (
            "caller latency max",
            seconds(quantile(&a, 1.0)),
            seconds(quantile(&b, 1.0)),
        ),
        (
            "p99 while the API is sick",
            seconds(quantile(&sick_a, 0.99)),
            seconds(quantile(&sick_b, 0.99)),
        ),
        (
            "peak in-flight calls (connections)",
            unguarded.peak_connections.to_string(),
            guarded.peak_connections.to_string(),
        ),
        (
            "calls that reached the sick API",
            unguarded.calls_while_sick.to_string(),
            guarded.calls_while_sick.to_string(),
        ),
        (
            "orders charged",
            unguarded.charged.to_string(),
            guarded.charged.to_string(),
        ),
        (
            "orders queued (outbox)",
            unguarded.queued.to_string(),
            guarded.queued.to_string(),
        ),
        (
            "  charged later from the outbox",
            unguarded.reconciled.to_string(),
            guarded.reconciled.to_string(),
        ),
        (
            "  declined later",
            unguarded.declined_later.to_string(),
            guarded.declined_later.to_string(),
        ),
        (
            "  still in the outbox at the end",
            unguarded.still_queued.to_string(),
            guarded.still_queued.to_string(),
        ),
        (
            "orders failed (declined cards)",
            unguarded.failed.to_string(),
            guarded.failed.to_string(),
        ),
        (
            "orders lost (customer gave up)",
            unguarded.lost.to_string(),
            guarded.lost.to_string(),
        ),
        (
            "recovery -> circuit closed",
            "-".to_string(),
            guarded
                .closed_after_recovery(scenario)
                .map_or("never".to_string(), seconds),
        ),
    ];
    let mut out = format!(
        "{:<36} {:>16} {:>16}\n",
        "", "without breaker", "with breaker"
    );
    for (label, x, y) in rows {
        out += &format!("{label:<36} {x:>16} {y:>16}\n");
    }
    out
}

pub fn transitions(run: &Run) -> String {
    run.transitions
        .iter()
        .map(|(at, from, to)| format!("  {}  {from} -> {to}\n", clock(*at)))
        .collect()
}

/// The p99 caller latency of each `bucket` seconds of arrivals, as one line of block characters
/// on a log scale from 10 ms to 10 s.
pub fn sparkline(run: &Run, scenario: &Scenario, bucket: f64) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let buckets = (scenario.duration.as_secs_f64() / bucket).ceil() as usize;
    (0..buckets)
        .map(|i| {
            let (from, to) = (i as f64 * bucket, (i + 1) as f64 * bucket);
            let slice: Vec<f64> = run
                .latencies
                .iter()
                .filter(|(at, _)| *at >= from && *at < to)
                .map(|(_, l)| *l)
                .collect();
            if slice.is_empty() {
                return ' ';
            }
            let level = ((quantile(&slice, 0.99).max(0.01).log10() + 2.0) / 3.0 * 7.0)
                .round()
                .clamp(0.0, 7.0);
            BARS[level as usize]
        })
        .collect()
}

/// Caller latency over time for both runs (p99 per second), the breaker's open and half-open
/// periods drawn as bands.
pub fn chart(
    path: &Path,
    scenario: &Scenario,
    unguarded: &Run,
    guarded: &Run,
) -> Result<(), Box<dyn std::error::Error>> {
    let end = scenario.duration.as_secs_f64();
    let per_second = |run: &Run| -> Vec<(f64, f64)> {
        (0..end as usize)
            .filter_map(|s| {
                let slice: Vec<f64> = run
                    .latencies
                    .iter()
                    .filter(|(at, _)| *at >= s as f64 && *at < s as f64 + 1.0)
                    .map(|(_, l)| *l)
                    .collect();
                (!slice.is_empty()).then(|| (s as f64, quantile(&slice, 0.99).max(0.01)))
            })
            .collect()
    };
    let top = unguarded
        .latencies
        .iter()
        .chain(&guarded.latencies)
        .map(|(_, l)| *l)
        .fold(1.0, f64::max)
        * 1.5;

    let root = SVGBackend::new(path, (1100, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Checkout: caller latency (p99 per second)",
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..end, (0.01f64..top).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("simulated time (s)")
        .y_desc("latency (s)")
        .y_label_formatter(&|v| format!("{v}"))
        .draw()?;

    let mut bands = Vec::new();
    let mut since: Option<(f64, State)> = None;
    for (at, _, to) in &guarded.transitions {
        if let Some((from, state)) = since.take() {
            bands.push((from, *at, state));
        }
        if *to != State::Closed {
            since = Some((*at, *to));
        }
    }
    if let Some((from, state)) = since {
        bands.push((from, end, state));
    }
    for (from, to, state) in bands {
        let color = if state == State::HalfOpen {
            RGBColor(255, 215, 120)
        } else {
            RGBColor(250, 170, 170)
        };
        chart.draw_series(std::iter::once(Rectangle::new(
            [(from, 0.01), (to, top)],
            color.mix(0.35).filled(),
        )))?;
    }
    let sick = (
        scenario.weather.slow_from.as_secs_f64(),
        scenario.weather.slow_until.as_secs_f64(),
    );
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(sick.0, 0.01), (sick.1, 0.012)],
            BLACK.filled(),
        )))?
        .label("payment API slow")
        .legend(|(x, y)| Rectangle::new([(x, y - 3), (x + 20, y + 3)], BLACK.filled()));

    chart
        .draw_series(LineSeries::new(
            per_second(unguarded),
            RGBColor(200, 40, 40).stroke_width(2),
        ))?
        .label("without breaker")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RGBColor(200, 40, 40)));
    chart
        .draw_series(LineSeries::new(
            per_second(guarded),
            RGBColor(30, 90, 200).stroke_width(2),
        ))?
        .label("with breaker (red band: open, yellow: half-open)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RGBColor(30, 90, 200)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
