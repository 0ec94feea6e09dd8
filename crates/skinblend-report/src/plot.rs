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
    /// A filled square.
    Square,
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

/// Two series coincide when they have the same x values and their y values differ by at most
/// this share of the y axis's drawn span everywhere: 0.4% is under 2 pixels of the plot area's
/// ~360, less than the 2-pixel line width, so the later line would hide the earlier one.
pub const COINCIDENT_SHARE: f64 = 0.004;

/// Dash and gap lengths, pixels, of a series drawn over one it coincides with: the gaps show
/// the line underneath.
const DASH_PX: u32 = 9;
/// See [`DASH_PX`].
const GAP_PX: u32 = 7;

/// How [`draw`] shows a series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesStyle {
    /// The legend text: the series' name, and for a coinciding series which one it coincides
    /// with, e.g. `CoR (dashed: coincides with DQS)`.
    pub label: String,
    /// The index of the earlier series this one coincides with ([`COINCIDENT_SHARE`]): the
    /// line is then drawn dashed over it, so both show.
    pub coincides_with: Option<usize>,
}

impl SeriesStyle {
    /// Whether the line is dashed (it coincides with an earlier series).
    #[must_use]
    pub fn dashed(&self) -> bool {
        self.coincides_with.is_some()
    }
}

/// The finite points of a series.
fn finite_points(series: &Series) -> Vec<(f64, f64)> {
    series
        .points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .copied()
        .collect()
}

/// The axes' ranges as drawn: `(x0, x1, y0, y1)`; `None` when no series has a finite point.
fn axes(plot: &LinePlot) -> Option<(f64, f64, f64, f64)> {
    let points: Vec<(f64, f64)> = plot.series.iter().flat_map(finite_points).collect();
    if points.is_empty() {
        return None;
    }
    let (x0, x1, y0, y1) = points.iter().fold(
        (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ),
        |(a, b, c, d), &(x, y)| (a.min(x), b.max(x), c.min(y), d.max(y)),
    );
    let (mut y0, mut y1) = (y0, y1);
    if let Some((low, high)) = plot.y_include {
        y0 = y0.min(low);
        y1 = y1.max(high);
    }
    if let Some(r) = plot.reference_y {
        y0 = y0.min(r);
        y1 = y1.max(r);
    }
    let (x0, x1) = axis_range(x0, x1);
    let (y0, y1) = axis_range(y0, y1);
    let pad = (y1 - y0) * 0.08;
    Some((x0, x1, y0 - pad, y1 + pad))
}

/// Each series' legend text and whether it is drawn dashed: a series that coincides with an
/// earlier one (same x values, y within [`COINCIDENT_SHARE`] of the y axis's span) would hide
/// it, so it is dashed and its legend says which it coincides with.
#[must_use]
pub fn series_styles(plot: &LinePlot) -> Vec<SeriesStyle> {
    let points: Vec<Vec<(f64, f64)>> = plot.series.iter().map(finite_points).collect();
    let tolerance = axes(plot).map_or(0.0, |(_, _, y0, y1)| (y1 - y0) * COINCIDENT_SHARE);
    let same = |a: &[(f64, f64)], b: &[(f64, f64)]| {
        !a.is_empty()
            && a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| p.0 == q.0 && (p.1 - q.1).abs() <= tolerance)
    };
    plot.series
        .iter()
        .enumerate()
        .map(|(j, series)| {
            let coincides_with = (0..j).find(|&i| same(&points[i], &points[j]));
            let label = match coincides_with {
                Some(i) => format!(
                    "{} (dashed: coincides with {})",
                    series.name, plot.series[i].name
                ),
                None => series.name.clone(),
            };
            SeriesStyle {
                label,
                coincides_with,
            }
        })
        .collect()
}

/// Draws `plot` into a [`PLOT_WIDTH`] × [`PLOT_HEIGHT`] image. A series that coincides with an
/// earlier one is drawn dashed over it and says so in the legend ([`series_styles`]).
///
/// # Errors
/// [`ReportError::Request`] when no series has a finite point; [`ReportError::Draw`],
/// [`ReportError::Font`].
pub fn draw(plot: &LinePlot) -> Result<RgbImage> {
    font::register()?;
    let Some((x0, x1, y0, y1)) = axes(plot) else {
        return Err(ReportError::Request {
            what: format!("plot {:?} has no finite point", plot.title),
        });
    };
    let styles = series_styles(plot);
    // Plotters puts at most about ten labels on an axis: a twentieth of the span tells any two
    // of them apart.
    let (x_resolution, y_resolution) = ((x1 - x0) / 20.0, (y1 - y0) / 20.0);
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
            .x_label_formatter(&|x| tick_label(*x, x_resolution))
            .y_label_formatter(&|y| tick_label(*y, y_resolution))
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
        for (series, style) in plot.series.iter().zip(&styles) {
            let [r, g, b] = series.color;
            let color = RGBColor(r, g, b);
            let points = finite_points(series);
            let drawn = if style.dashed() {
                chart
                    .draw_series(DashedLineSeries::new(
                        points.iter().copied(),
                        DASH_PX,
                        GAP_PX,
                        color.stroke_width(2),
                    ))?
                    .label(style.label.as_str())
            } else {
                chart
                    .draw_series(LineSeries::new(
                        points.iter().copied(),
                        color.stroke_width(2),
                    ))?
                    .label(style.label.as_str())
            };
            if style.dashed() {
                drawn.legend(move |(x, y)| {
                    plotters::element::DashedPathElement::new(
                        vec![(x, y), (x + 22, y)],
                        DASH_PX / 2,
                        GAP_PX / 2,
                        color.stroke_width(2),
                    )
                });
            } else {
                drawn.legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(2))
                });
            }
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
                Marker::Square => {
                    chart.draw_series(points.iter().map(|&p| {
                        EmptyElement::at(p) + Rectangle::new([(-3, -3), (3, 3)], color.filled())
                    }))?;
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

/// Relative span under which an axis range counts as a single value (a few `f64` ulps).
const SINGLE_VALUE_SPAN: f64 = 1e-12;

/// The range an axis shows for data from `low` to `high`: the data's own range, or, when it is
/// a single value (all points equal, span below `SINGLE_VALUE_SPAN` (1e-12) of its magnitude), a
/// range around it that labels can describe: `0..1` for zero, ±10% of the value otherwise.
#[must_use]
pub fn axis_range(low: f64, high: f64) -> (f64, f64) {
    let magnitude = low.abs().max(high.abs());
    if high - low > SINGLE_VALUE_SPAN * magnitude {
        return (low, high);
    }
    let middle = (low + high) / 2.0;
    if middle == 0.0 {
        (0.0, 1.0)
    } else {
        let half = middle.abs() * 0.1;
        (middle - half, middle + half)
    }
}

/// A tick label for `value` precise enough that values `resolution` apart read differently
/// (one digit more than the resolution needs, trailing zeros dropped), in plain decimals while
/// that takes at most five, in scientific notation (`2.5e-7`) for tinier resolutions or values
/// of a million or more. Zero is `0`; a `resolution` that is not positive and finite is taken
/// as the value's own magnitude.
#[must_use]
pub fn tick_label(value: f64, resolution: f64) -> String {
    if value == 0.0 {
        return "0".to_owned();
    }
    if !value.is_finite() {
        return value.to_string();
    }
    let resolution = if resolution.is_finite() && resolution > 0.0 {
        resolution
    } else {
        value.abs()
    };
    let decimals = (-resolution.log10()).ceil().max(0.0) as usize + 1;
    let text = if decimals <= 5 && value.abs() < 1e6 {
        trim_fraction(&format!("{value:.decimals$}")).to_owned()
    } else {
        let digits = ((value.abs() / resolution).log10().ceil().max(0.0) as usize + 1).min(16);
        let text = format!("{value:.digits$e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) => format!("{}e{exponent}", trim_fraction(mantissa)),
            None => text,
        }
    };
    if text == "-0" {
        "0".to_owned()
    } else {
        text
    }
}

/// `text` without trailing zeros after a decimal point (and without the point if nothing is
/// left after it).
fn trim_fraction(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` evenly spaced ticks over `low..=high`, labelled as [`draw`] labels them.
    fn labels(low: f64, high: f64, count: usize) -> Vec<String> {
        let (low, high) = axis_range(low, high);
        let resolution = (high - low) / 20.0;
        (0..count)
            .map(|i| {
                tick_label(
                    low + (high - low) * i as f64 / (count - 1) as f64,
                    resolution,
                )
            })
            .collect()
    }

    fn assert_distinct_and_faithful(low: f64, high: f64) {
        let (shown_low, shown_high) = axis_range(low, high);
        let step = (shown_high - shown_low) / 10.0;
        let labels = labels(low, high, 11);
        for (i, label) in labels.iter().enumerate() {
            let value = shown_low + step * i as f64;
            let read: f64 = label
                .parse()
                .unwrap_or_else(|_| panic!("{label:?} is a number"));
            // A label may round, but by far less than the distance to the next tick.
            assert!(
                (read - value).abs() <= step * 0.05,
                "{low}..{high}: tick {value} reads {label}"
            );
        }
        let mut unique = labels.clone();
        unique.dedup();
        assert_eq!(unique.len(), labels.len(), "{low}..{high}: {labels:?}");
    }

    #[test]
    fn ticks_read_differently_on_any_range() {
        assert_distinct_and_faithful(1e-7, 3e-7);
        assert_distinct_and_faithful(0.0, 2e-9);
        assert_distinct_and_faithful(0.0, 0.0);
        assert_distinct_and_faithful(5.0, 5.0);
        assert_distinct_and_faithful(-0.25, 0.25);
        assert_distinct_and_faithful(0.0, 180.0);
        assert_distinct_and_faithful(1.0, 1.000_001);
        assert_distinct_and_faithful(2e7, 3e7);
    }

    #[test]
    fn tiny_and_round_ticks_read_as_people_write_them() {
        assert_eq!(tick_label(2e-7, 1e-8), "2e-7");
        assert_eq!(tick_label(2.5e-7, 1e-8), "2.5e-7");
        assert_eq!(tick_label(0.25, 0.05), "0.25");
        assert_eq!(tick_label(90.0, 9.0), "90");
        assert_eq!(tick_label(-0.0, 1.0), "0");
        assert_eq!(tick_label(0.3, 0.0), "0.3");
        assert_eq!(axis_range(0.0, 0.0), (0.0, 1.0));
        assert_eq!(axis_range(-1.0, 2.0), (-1.0, 2.0));
    }

    #[test]
    fn a_flat_series_plots() {
        let plot = LinePlot {
            title: "flat".to_owned(),
            x_label: "x".to_owned(),
            y_label: "y".to_owned(),
            series: vec![Series {
                name: "zero".to_owned(),
                color: [0, 0, 0],
                marker: Marker::Circle,
                points: vec![(0.0, 0.0), (1.0, 0.0)],
            }],
            reference_y: None,
            y_include: Some((0.0, 0.0)),
            legend_lower_left: false,
        };
        draw(&plot).expect("a flat series draws");
    }
}
