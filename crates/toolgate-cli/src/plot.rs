//! `eval --plot FILE`: Recall@K curves, K = 1..10, one line per strategy, as an SVG chart.

use std::path::Path;

use anyhow::Context;
use plotters::prelude::*;
use toolgate_search::eval::Report;

/// The K of the curves.
pub(crate) const KS: std::ops::RangeInclusive<usize> = 1..=10;

/// Colours of the lines, in strategy order (distinct for colour-blind readers).
const COLOURS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(213, 94, 0),
    RGBColor(86, 180, 233),
];

/// Draws the Recall@K curve of every report into an SVG file at `path`.
pub(crate) fn recall_curves(path: &Path, title: &str, reports: &[Report]) -> anyhow::Result<()> {
    draw(path, title, reports)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("{}: cannot draw", path.display()))
}

fn draw(path: &Path, title: &str, reports: &[Report]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (720, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(1usize..10usize, 0f64..1f64)?;
    chart.configure_mesh().x_desc("K").y_desc("Recall@K").x_labels(10).y_labels(11).draw()?;
    for (i, r) in reports.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points: Vec<(usize, f64)> = KS.filter_map(|k| r.all.recall.get(&k).map(|&v| (k, v))).collect();
        chart
            .draw_series(LineSeries::new(points, colour.stroke_width(2)))?
            .label(r.label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    root.present()?;
    Ok(())
}
