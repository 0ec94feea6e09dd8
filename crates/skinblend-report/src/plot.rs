//! Line plots with plotters on its bitmap backend, text in the embedded font.

use plotters::prelude::*;

use crate::error::{ReportError, Result};
use crate::font::{self, FAMILY};
use crate::image::RgbImage;

/// How a series marks its points (besides its colour, so the plot reads without colour too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A filled circle.
    Circle,
    /// A triangle.
    Triangle,
    /// A cross.
    Cross,
    /// No marker (dense series).
    None,
}

/// One line of a plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Shown in the legend.
    pub name: String,
    /// sRGB colour.
    pub color: [u8; 3],
    /// Point marker.
    pub marker: Marker,
    /// `(x, y)` points in drawing order; non-finite points are left out.
    pub points: Vec<(f64, f64)>,
}

/// A line plot: title, axis labels, series, and an optional horizontal reference line.
#[derive(Debug, Clone, PartialEq)]
pub struct LinePlot {
    /// Drawn above the plot.
    pub title: String,
    /// The x axis's label, with unit.
    pub x_label: String,
    /// The y axis's label, with unit.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
    /// A thin grey horizontal line at this y (the ideal value), if any.
    pub reference_y: Option<f64>,
    /// The y range to show at least (the data's range is added to it).
    pub y_include: Option<(f64, f64)>,
    /// Put the legend in the lower left corner instead of the upper right (where the lines are
    /// not).
    pub legend_lower_left: bool,
}

/// Plot image width, pixels.
pub const PLOT_WIDTH: u32 = 720;
/// Plot image height, pixels.
pub const PLOT_HEIGHT: u32 = 440;

/// Draws `plot` into a [`PLOT_WIDTH`] × [`PLOT_HEIGHT`] image.
///
/// # Errors
/// [`ReportError::Request`] when no series has a finite point; [`ReportError::Draw`],
/// [`ReportError::Font`].
pub fn draw(plot: &LinePlot) -> Result<RgbImage> {
    font::register()?;
    let finite = |&&(x, y): &&(f64, f64)| x.is_finite() && y.is_finite();
    let points: Vec<(f64, f64)> = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter().filter(finite).copied())
        .collect();
    if points.is_empty() {
        return Err(ReportError::Request {
            what: format!("plot {:?} has no finite point", plot.title),
        });
    }
    let (mut x0, mut x1, mut y0, mut y1) = points.iter().fold(
        (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ),
        |(a, b, c, d), &(x, y)| (a.min(x), b.max(x), c.min(y), d.max(y)),
    );
    if let Some((low, high)) = plot.y_include {
        y0 = y0.min(low);
        y1 = y1.max(high);
    }
    if let Some(r) = plot.reference_y {
        y0 = y0.min(r);
        y1 = y1.max(r);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = ((y1 - y0) * 0.08).max(1e-9);
    y0 -= pad;
    y1 += pad;
    if x1 - x0 <= 0.0 {
        x0 -= 1.0;
    }
    let mut image = RgbImage::new(PLOT_WIDTH, PLOT_HEIGHT, [255, 255, 255])?;
    let draw_error = ReportError::draw(&plot.title);
    let result: std::result::Result<(), Box<dyn std::error::Error>> = (|| {
        let root = BitMapBackend::with_buffer(image.pixels_mut(), (PLOT_WIDTH, PLOT_HEIGHT))
            .into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(plot.title.as_str(), (FAMILY, 20))
            .margin(14)
            .margin_right(30)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc(plot.x_label.as_str())
            .y_desc(plot.y_label.as_str())
            .label_style((FAMILY, 14))
            .x_label_formatter(&|x| format_tick(*x))
            .y_label_formatter(&|y| format_tick(*y))
            .axis_desc_style((FAMILY, 15))
            .light_line_style(RGBColor(235, 235, 235))
            .bold_line_style(RGBColor(210, 210, 210))
            .draw()?;
        if let Some(r) = plot.reference_y {
            chart.draw_series(LineSeries::new(
                [(x0, r), (x1, r)],
                RGBColor(150, 150, 150).stroke_width(1),
            ))?;
        }
        for series in &plot.series {
            let [r, g, b] = series.color;
            let color = RGBColor(r, g, b);
            let points: Vec<(f64, f64)> = series.points.iter().filter(finite).copied().collect();
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(2),
                ))?
                .label(series.name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(2))
                });
            match series.marker {
                Marker::Circle => {
                    chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
                }
                Marker::Triangle => {
                    chart.draw_series(
                        points
                            .iter()
                            .map(|&p| TriangleMarker::new(p, 4, color.filled())),
                    )?;
                }
                Marker::Cross => {
                    chart.draw_series(
                        points
                            .iter()
                            .map(|&p| Cross::new(p, 4, color.stroke_width(2))),
                    )?;
                }
                Marker::None => {}
            }
        }
        chart
            .configure_series_labels()
            .label_font((FAMILY, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .position(if plot.legend_lower_left {
                SeriesLabelPosition::LowerLeft
            } else {
                SeriesLabelPosition::UpperRight
            })
            .draw()?;
        root.present()?;
        Ok(())
    })();
    result.map_err(draw_error)?;
    Ok(image)
}

/// A tick label with as few decimals as the value needs (up to three).
fn format_tick(value: f64) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}
