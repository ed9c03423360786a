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
            recovery(scenario, guarded),
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
    if run.transitions.is_empty() {
        return "  none: the circuit stayed closed\n".to_string();
    }
    run.transitions
        .iter()
        .map(|(at, from, to)| format!("  {}  {from} -> {to}\n", clock(*at)))
        .collect()
}

/// How long after the API recovered the circuit closed, or why it did not. A bare "never" would
/// read as stuck open when the circuit may never have opened at all.
fn recovery(scenario: &Scenario, run: &Run) -> String {
    if let Some(after) = run.closed_after_recovery(scenario) {
        return seconds(after);
    }
    match run.transitions.last() {
        None => "never opened".to_string(),
        Some((_, _, State::Closed)) => "before recovery".to_string(),
        Some((_, _, state)) => format!("still {state}"),
    }
}

/// The p99 caller latency of each `width` seconds of arrivals up to `end`, `None` where no order
/// arrived. One pass over the orders, so a long run costs its length, not its length squared.
fn p99_per(run: &Run, width: f64, end: f64) -> Vec<Option<f64>> {
    let mut buckets = vec![Vec::new(); (end / width).ceil() as usize];
    for &(at, latency) in &run.latencies {
        if let Some(bucket) = buckets.get_mut((at / width) as usize) {
            bucket.push(latency);
        }
    }
    buckets
        .iter()
        .map(|b| (!b.is_empty()).then(|| quantile(b, 0.99)))
        .collect()
}

/// The p99 caller latency of each `bucket` seconds of arrivals, as one line of block characters
/// on a log scale from 10 ms to 10 s.
pub fn sparkline(run: &Run, scenario: &Scenario, bucket: f64) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    p99_per(run, bucket, scenario.duration.as_secs_f64())
        .into_iter()
        .map(|p99| match p99 {
            None => ' ',
            Some(p99) => {
                let level = ((p99.max(0.01).log10() + 2.0) / 3.0 * 7.0)
                    .round()
                    .clamp(0.0, 7.0);
                BARS[level as usize]
            }
        })
        .collect()
}

const WITHOUT_BREAKER: RGBColor = RGBColor(200, 40, 40);
const WITH_BREAKER: RGBColor = RGBColor(30, 90, 200);
/// Grey, not a pale red: a red band behind the red "without breaker" line read as one thing.
const OPEN: RGBColor = RGBColor(150, 150, 150);
const HALF_OPEN: RGBColor = RGBColor(255, 215, 120);
const API_SLOW: RGBColor = BLACK;

/// Latencies under 10 ms (the fallback answers at once) are drawn at 10 ms: a log axis has no 0.
const FLOOR: f64 = 0.01;
/// The axis starts below the floor, so that the floor gets a labelled tick (plotters labels
/// powers of ten inside the range only) and the strip marking the API's slow spell fits under
/// the lines instead of on top of the lowest of them.
const AXIS_BOTTOM: f64 = 0.007;
const API_SLOW_TOP: f64 = 0.0085;

fn latency_label(s: &f64) -> String {
    if *s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else {
        format!("{s:.0} s")
    }
}

/// Caller latency over time for both runs (p99 per second), the breaker's open and half-open
/// periods drawn as bands, written to `path` as SVG.
pub fn chart(
    path: &Path,
    scenario: &Scenario,
    unguarded: &Run,
    guarded: &Run,
) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::write(path, render(scenario, unguarded, guarded)?)?;
    Ok(())
}

/// The chart as an SVG document.
pub fn render(
    scenario: &Scenario,
    unguarded: &Run,
    guarded: &Run,
) -> Result<String, Box<dyn std::error::Error>> {
    let end = scenario.duration.as_secs_f64();
    let per_second = |run: &Run| -> Vec<(f64, f64)> {
        p99_per(run, 1.0, end)
            .into_iter()
            .enumerate()
            .filter_map(|(s, p99)| p99.map(|p99| (s as f64, p99.max(FLOOR))))
            .collect()
    };
    let top = unguarded
        .latencies
        .iter()
        .chain(&guarded.latencies)
        .map(|(_, l)| *l)
        .fold(1.0, f64::max)
        * 1.5;

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, 520)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Checkout: caller latency (p99 per second)",
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..end, (AXIS_BOTTOM..top).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("simulated time (s)")
            .y_desc("latency")
            .y_label_formatter(&latency_label)
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
        // Bands first, lines last: what is drawn later covers what was drawn before.
        for (from, to, state) in bands {
            let color = if state == State::HalfOpen {
                HALF_OPEN
            } else {
                OPEN
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(from, AXIS_BOTTOM), (to, top)],
                color.mix(0.35).filled(),
            )))?;
        }
        let sick = (
            scenario.weather.slow_from.as_secs_f64(),
            scenario.weather.slow_until.as_secs_f64(),
        );
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(sick.0, AXIS_BOTTOM), (sick.1, API_SLOW_TOP)],
                API_SLOW.filled(),
            )))?
            .label("payment API slow")
            .legend(|(x, y)| Rectangle::new([(x, y - 3), (x + 20, y + 3)], API_SLOW.filled()));

        chart
            .draw_series(LineSeries::new(
                per_second(unguarded),
                WITHOUT_BREAKER.stroke_width(2),
            ))?
            .label("without breaker")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], WITHOUT_BREAKER));
        chart
            .draw_series(LineSeries::new(
                per_second(guarded),
                WITH_BREAKER.stroke_width(2),
            ))?
            .label("with breaker (grey band: open, yellow: half-open)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], WITH_BREAKER));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::shop::Weather;

    fn scenario() -> Scenario {
        Scenario {
            rate: 10.0,
            duration: Duration::from_secs(60),
            weather: Weather {
                slow_from: Duration::from_secs(10),
                slow_until: Duration::from_secs(30),
                healthy_latency: Duration::from_millis(80),
                slow_latency: Duration::from_secs(8),
            },
            patience: Duration::from_secs(5),
            seed: 1,
        }
    }

    fn run(transitions: Vec<(f64, State, State)>) -> Run {
        Run {
            latencies: (0..60).map(|s| (s as f64, 0.08)).collect(),
            peak_connections: 1,
            charged: 60,
            transitions,
            ..Run::default()
        }
    }

    #[test]
    fn a_circuit_that_never_opened_is_not_said_to_have_never_closed() {
        let table = table(&scenario(), &run(vec![]), &run(vec![]));
        assert!(table.contains("never opened"), "{table}");
        assert!(
            !table
                .lines()
                .any(|line| line.trim_end().ends_with(" never")),
            "{table}"
        );
    }

    #[test]
    fn a_circuit_still_open_or_closed_before_recovery_says_so() {
        let scenario = scenario();
        let still_open = run(vec![(12.0, State::Closed, State::Open)]);
        let table_open = table(&scenario, &run(vec![]), &still_open);
        assert!(table_open.contains("still open"), "{table_open}");
        let closed_early = run(vec![
            (12.0, State::Closed, State::Open),
            (20.0, State::Open, State::HalfOpen),
            (20.5, State::HalfOpen, State::Closed),
        ]);
        let table_early = table(&scenario, &run(vec![]), &closed_early);
        assert!(table_early.contains("before recovery"), "{table_early}");
        let closed_after = run(vec![
            (12.0, State::Closed, State::Open),
            (32.0, State::Open, State::HalfOpen),
            (32.5, State::HalfOpen, State::Closed),
        ]);
        let table_after = table(&scenario, &run(vec![]), &closed_after);
        assert!(table_after.contains("2.50 s"), "{table_after}");
    }

    #[test]
    fn no_transitions_are_listed_as_none() {
        assert_eq!(
            transitions(&run(vec![])),
            "  none: the circuit stayed closed\n"
        );
    }

    #[test]
    fn p99_buckets_hold_the_orders_that_arrived_in_them() {
        let mut r = run(vec![]);
        r.latencies = vec![(0.2, 1.0), (0.9, 3.0), (2.5, 2.0)];
        assert_eq!(p99_per(&r, 1.0, 3.0), vec![Some(3.0), None, Some(2.0)]);
        assert_eq!(p99_per(&r, 5.0, 3.0), vec![Some(3.0)]);
    }

    /// A guarded run whose fallback answers at once while the circuit is open: its line sits on
    /// the chart's floor, where the API's slow strip is.
    fn guarded() -> Run {
        let mut r = run(vec![
            (12.0, State::Closed, State::Open),
            (27.0, State::Open, State::HalfOpen),
            (27.5, State::HalfOpen, State::Open),
            (32.0, State::Open, State::HalfOpen),
            (32.5, State::HalfOpen, State::Closed),
        ]);
        for (at, latency) in &mut r.latencies {
            if (12.0..32.0).contains(at) {
                *latency = 0.0;
            }
        }
        r
    }

    /// Every `<tag ...>` of `svg`, with where it starts.
    fn elements<'a>(svg: &'a str, tag: &str) -> Vec<(usize, &'a str)> {
        let open = format!("<{tag} ");
        svg.match_indices(&open)
            .map(|(at, _)| (at, &svg[at..at + svg[at..].find('>').unwrap()]))
            .collect()
    }

    fn attr<'a>(element: &'a str, name: &str) -> &'a str {
        let key = format!(" {name}=\"");
        let from = element.find(&key).unwrap() + key.len();
        &element[from..from + element[from..].find('"').unwrap()]
    }

    fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    #[test]
    fn the_lines_are_drawn_after_and_above_the_api_slow_strip() {
        let svg = render(&scenario(), &run(vec![]), &guarded()).unwrap();
        let (strip_at, strip) = elements(&svg, "rect")
            .into_iter()
            .find(|(_, r)| attr(r, "fill") == hex(API_SLOW))
            .expect("the slow strip");
        let strip_top: f64 = attr(strip, "y").parse().unwrap();
        let lines: Vec<_> = elements(&svg, "polyline")
            .into_iter()
            .filter(|(_, l)| attr(l, "stroke-width") == "2")
            .collect();
        assert_eq!(lines.len(), 2, "{svg}");
        for (line_at, line) in lines {
            assert!(line_at > strip_at, "the line is drawn over the strip");
            let lowest = attr(line, "points")
                .split_whitespace()
                .map(|p| p.split(',').nth(1).unwrap().parse::<f64>().unwrap())
                .fold(f64::MIN, f64::max);
            // Screen y grows downwards; the stroke is 2 px wide, 1 px either side of the point.
            assert!(
                lowest + 1.0 < strip_top,
                "a line reaches y = {lowest}, into the strip at y = {strip_top}"
            );
        }
    }

    /// Far apart on the colour wheel, or a grey that has no hue to share.
    fn distinct(band: RGBColor, line: RGBColor) -> bool {
        let hsv = |c: RGBColor| {
            let [r, g, b] = [c.0, c.1, c.2].map(|v| f64::from(v) / 255.0);
            let (max, min) = (r.max(g).max(b), r.min(g).min(b));
            let hue = if max == min {
                0.0
            } else if max == r {
                60.0 * ((g - b) / (max - min)).rem_euclid(6.0)
            } else if max == g {
                60.0 * ((b - r) / (max - min) + 2.0)
            } else {
                60.0 * ((r - g) / (max - min) + 4.0)
            };
            let saturation = if max == 0.0 { 0.0 } else { (max - min) / max };
            (hue, saturation)
        };
        let ((band_hue, band_saturation), (line_hue, _)) = (hsv(band), hsv(line));
        let apart = (band_hue - line_hue).abs();
        band_saturation < 0.15 || apart.min(360.0 - apart) >= 60.0
    }

    #[test]
    fn the_open_band_is_not_coloured_like_any_line() {
        for line in [WITHOUT_BREAKER, WITH_BREAKER] {
            assert!(distinct(OPEN, line), "open band {OPEN:?} vs line {line:?}");
        }
        let svg = render(&scenario(), &run(vec![]), &guarded()).unwrap();
        assert!(
            elements(&svg, "rect")
                .iter()
                .any(|(_, r)| attr(r, "fill") == hex(OPEN)),
            "the open band is drawn"
        );
        for (_, line) in elements(&svg, "polyline") {
            assert_ne!(attr(line, "stroke"), hex(OPEN));
        }
    }

    #[test]
    fn the_lowest_y_tick_is_labelled() {
        let path = std::env::temp_dir().join(format!("checkout-{}.svg", std::process::id()));
        chart(&path, &scenario(), &run(vec![]), &run(vec![])).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(svg.contains("\n10 ms\n"), "{svg}");
    }
}
