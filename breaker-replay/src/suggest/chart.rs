//! The front as a picture: each row a point, failures let through across, healthy calls lost
//! up, numbered as in the table; the current options marked apart.

use plotters::prelude::*;

use super::Suggestion;
use crate::chart::ChartError;

const FRONT: RGBColor = RGBColor(40, 90, 170);
const CURRENT: RGBColor = RGBColor(200, 40, 40);

/// The front as an SVG scatter, the current options marked.
pub fn svg(suggestion: &Suggestion) -> Result<String, ChartError> {
    let mut svg = String::new();
    draw(&mut svg, suggestion).map_err(|e| ChartError::new(e.to_string()))?;
    Ok(svg)
}

fn draw(svg: &mut String, s: &Suggestion) -> Result<(), Box<dyn std::error::Error>> {
    let points: Vec<(f64, f64)> = s
        .front
        .iter()
        .map(|row| {
            (
                row.figures.failures_through as f64,
                row.figures.healthy_lost as f64,
            )
        })
        .collect();
    let current = (
        s.current.figures.failures_through as f64,
        s.current.figures.healthy_lost as f64,
    );
    // Room around the points, and an axis even when every point is at 0.
    let most = |pick: fn(&(f64, f64)) -> f64| {
        points
            .iter()
            .chain(std::iter::once(&current))
            .map(pick)
            .fold(1.0, f64::max)
            * 1.1
    };
    let root = SVGBackend::with_string(svg, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "The front: no row is beaten on every figure (blue, numbered as in the table; red: the current options)",
            ("sans-serif", 15),
        )
        .margin(20)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..most(|p| p.0), 0f64..most(|p| p.1))?;
    chart
        .configure_mesh()
        .x_desc("failures let through")
        .y_desc("healthy calls turned away")
        .draw()?;
    chart.draw_series(points.iter().enumerate().map(|(i, &at)| {
        EmptyElement::at(at)
            + Circle::new((0, 0), 5, FRONT.filled())
            + Text::new(format!("{}", i + 1), (7, -14), ("sans-serif", 12))
    }))?;
    chart.draw_series(std::iter::once(
        EmptyElement::at(current)
            + Cross::new((0, 0), 7, CURRENT.stroke_width(3))
            + Text::new(
                "current",
                (9, 4),
                ("sans-serif", 13).into_font().color(&CURRENT),
            ),
    ))?;
    root.present()?;
    Ok(())
}
