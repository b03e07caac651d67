//! `--plot F.svg`: per ladder, the share of bootstraps that ended in `lsn mismatch` at each level,
//! one line per variant with its Wilson 95 % interval; dashed, the share whose target was ahead
//! of flush when read (the same for every variant); and, as crosses, the share OLake #1084
//! measured with its fixed code.
//!
//! plotters' SVG backend without its `ttf` feature measures text with a fixed estimate instead of
//! loading system fonts: the file builds on a machine with no fonts and is the same bytes on
//! every machine; the viewer's `sans-serif` draws the text.

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use walcheck_model::olake::Variant;

use crate::run::Report;

const PANEL_WIDTH: u32 = 960;
const PANEL_HEIGHT: u32 = 440;

fn colour(variant: Variant) -> RGBColor {
    match variant {
        Variant::Master => RGBColor(200, 30, 30),
        Variant::Pr854 => RGBColor(230, 140, 0),
        Variant::Pr1084 => RGBColor(20, 90, 200),
    }
}

/// The SVG document, or a one-line error.
pub fn svg(report: &Report) -> Result<String, String> {
    let mut text = String::new();
    draw(report, &mut text).map_err(|e| format!("cannot draw the plot: {e}"))?;
    Ok(text)
}

fn draw(report: &Report, text: &mut String) -> Result<(), Box<dyn std::error::Error>> {
    let panels = report.ladders.len().max(1);
    let root = SVGBackend::with_string(text, (PANEL_WIDTH, PANEL_HEIGHT * panels as u32))
        .into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((panels, 1));
    let o = &report.options;
    for (area, ladder) in areas.iter().zip(&report.ladders) {
        let labels: Vec<String> = ladder
            .levels
            .iter()
            .map(|l| l.level.label.clone())
            .collect();
        let n = labels.len();
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "ladder {}: {} (seed {}, {} attempts per level)",
                    ladder.kind,
                    ladder.kind.describe(),
                    o.seed,
                    o.attempts
                ),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(64)
            // An integer range is inclusive in plotters: n levels are 0..n - 1.
            .build_cartesian_2d((0..n.saturating_sub(1)).into_segmented(), 0f64..100f64)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    labels.get(*i).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .y_label_formatter(&|y| format!("{y:.0}"))
            .y_desc("bootstraps, %")
            .x_desc(match ladder.kind {
                crate::LadderKind::Sync => "rows per statement (about 1.15 kB of WAL each)",
                crate::LadderKind::Async => "target statements per second (100 rows each)",
            })
            .draw()?;
        let x = |i: usize| SegmentValue::CenterOf(i);
        if let Some(first) = o.variants.first().map(|_| 0) {
            let ahead: Vec<(SegmentValue<usize>, f64)> = ladder
                .levels
                .iter()
                .enumerate()
                .map(|(i, l)| (x(i), l.tallies[first].write_ahead_probability() * 100.0))
                .collect();
            chart
                .draw_series(DashedLineSeries::new(
                    ahead,
                    6,
                    4,
                    ShapeStyle::from(&RGBColor(110, 110, 110)).stroke_width(2),
                ))?
                .label("simulated: target ahead of flush when read (every variant)")
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], RGBColor(110, 110, 110))
                });
        }
        if ladder.levels.len() == 7 {
            let measured = crate::ladder::measured_write_ahead(ladder.kind);
            chart
                .draw_series(measured.iter().enumerate().map(|(i, &(hits, n))| {
                    Cross::new(
                        (x(i), hits as f64 * 100.0 / n as f64),
                        6,
                        ShapeStyle::from(&BLACK).stroke_width(2),
                    )
                }))?
                .label("OLake #1084 measured: target ahead of flush (fixed code)")
                .legend(|(x, y)| {
                    Cross::new((x + 10, y), 5, ShapeStyle::from(&BLACK).stroke_width(2))
                });
        }
        for (v, &variant) in o.variants.iter().enumerate() {
            let c = colour(variant);
            let points: Vec<(SegmentValue<usize>, f64)> = ladder
                .levels
                .iter()
                .enumerate()
                .map(|(i, l)| (x(i), l.tallies[v].hit_probability() * 100.0))
                .collect();
            chart
                .draw_series(LineSeries::new(
                    points.clone(),
                    ShapeStyle::from(&c).stroke_width(2),
                ))?
                .label(format!(
                    "simulated {variant}: lsn mismatch (95% Wilson interval)"
                ))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart.draw_series(
                points
                    .iter()
                    .map(|(px, py)| Circle::new((px.clone(), *py), 3, c.filled())),
            )?;
            chart.draw_series(ladder.levels.iter().enumerate().map(|(i, l)| {
                let (low, high) = l.tallies[v].hit_ci95();
                ErrorBar::new_vertical(
                    x(i),
                    low * 100.0,
                    l.tallies[v].hit_probability() * 100.0,
                    high * 100.0,
                    c,
                    8,
                )
            }))?;
        }
        chart
            .configure_series_labels()
            // Where the lines are not: above the quiet low levels of the sync ladder; in the
            // async one, below the curves right of 10 statements/s (pixels in the plot area).
            .position(match ladder.kind {
                crate::LadderKind::Sync => SeriesLabelPosition::UpperLeft,
                crate::LadderKind::Async => SeriesLabelPosition::Coordinate(330, 200),
            })
            .border_style(BLACK)
            .background_style(WHITE.mix(0.85))
            .label_font(("sans-serif", 13))
            .draw()?;
    }
    root.present()?;
    Ok(())
}
