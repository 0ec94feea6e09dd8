//! Side-by-side figures: renders in a row, a title over each, an optional colour legend below.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::color::ColorMap;
use crate::error::{ReportError, Result};
use crate::font::{self, FAMILY};
use crate::image::RgbImage;
use crate::plot::tick_label;
use crate::render::BACKGROUND;

/// One image of a row with its title.
#[derive(Debug, Clone)]
pub struct Panel {
    /// Drawn centred above the image.
    pub title: String,
    /// The image.
    pub image: RgbImage,
}

/// Height of the band above the panels for the heading and titles, pixels.
const TITLE_BAND: u32 = 64;
/// Height of the legend band, pixels.
const LEGEND_BAND: u32 = 70;
/// Gap between panels, pixels.
const GAP: u32 = 8;

/// Puts `panels` side by side under `heading`, each with its title, and below them a legend
/// for `legend` (a colour bar with the low, middle and high values and the label).
/// Panels may differ in size; the row is as tall as the tallest.
///
/// # Errors
/// [`ReportError::Request`] for no panels; [`ReportError::Draw`], [`ReportError::Font`],
/// [`ReportError::ImageSize`].
pub fn side_by_side(
    heading: &str,
    panels: &[Panel],
    legend: Option<&ColorMap>,
) -> Result<RgbImage> {
    if panels.is_empty() {
        return Err(ReportError::Request {
            what: format!("figure {heading:?} has no panels"),
        });
    }
    font::register()?;
    let width =
        panels.iter().map(|p| p.image.width()).sum::<u32>() + GAP * (panels.len() as u32 + 1);
    let row_height = panels.iter().map(|p| p.image.height()).max().unwrap_or(1);
    let height = TITLE_BAND + row_height + if legend.is_some() { LEGEND_BAND } else { GAP };
    let mut image = RgbImage::new(width.max(420), height, BACKGROUND)?;
    let mut x = GAP;
    let mut title_centers = Vec::with_capacity(panels.len());
    for panel in panels {
        image.blit(&panel.image, x, TITLE_BAND);
        title_centers.push((x + panel.image.width() / 2) as i32);
        x += panel.image.width() + GAP;
    }
    let (w, h) = (image.width(), image.height());
    let draw_error = ReportError::draw(heading);
    let result: std::result::Result<(), Box<dyn std::error::Error>> = (|| {
        let root = BitMapBackend::with_buffer(image.pixels_mut(), (w, h)).into_drawing_area();
        let heading_style = TextStyle::from((FAMILY, 20).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Top));
        root.draw(&Text::new(
            heading.to_owned(),
            (GAP as i32, 8),
            heading_style,
        ))?;
        let title_style = TextStyle::from((FAMILY, 18).into_font())
            .color(&RGBColor(40, 40, 40))
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (panel, &center) in panels.iter().zip(&title_centers) {
            root.draw(&Text::new(
                panel.title.clone(),
                (center, 38),
                title_style.clone(),
            ))?;
        }
        if let Some(map) = legend {
            draw_legend(&root, map, (TITLE_BAND + row_height) as i32, w as i32)?;
        }
        root.present()?;
        Ok(())
    })();
    result.map_err(draw_error)?;
    Ok(image)
}

fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    map: &ColorMap,
    top: i32,
    width: i32,
) -> std::result::Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let bar_width = (width - 2 * GAP as i32).min(360);
    let left = (width - bar_width) / 2;
    let (bar_top, bar_bottom) = (top + 8, top + 24);
    for i in 0..bar_width {
        let t = i as f32 / (bar_width - 1).max(1) as f32;
        let [r, g, b] = map.at(t);
        root.draw(&Rectangle::new(
            [(left + i, bar_top), (left + i + 1, bar_bottom)],
            RGBColor(r, g, b).filled(),
        ))?;
    }
    root.draw(&Rectangle::new(
        [(left, bar_top), (left + bar_width, bar_bottom)],
        BLACK.stroke_width(1),
    ))?;
    let [low, middle, high] = legend_labels(map);
    for (x, h_pos, text) in [
        (left, HPos::Left, low),
        (left + bar_width / 2, HPos::Center, middle),
        (left + bar_width, HPos::Right, high),
    ] {
        let style = TextStyle::from((FAMILY, 14).into_font())
            .color(&BLACK)
            .pos(Pos::new(h_pos, VPos::Top));
        root.draw(&Text::new(text, (x, bar_bottom + 3), style))?;
    }
    let style = TextStyle::from((FAMILY, 15).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    root.draw(&Text::new(
        map.label.clone(),
        (width / 2, bar_bottom + 22),
        style,
    ))?;
    Ok(())
}

/// The labels of a legend's three ticks (low end, middle, high end), in `map`'s tick unit, each
/// precise enough to tell the three apart; a diverging map's positive values read `+25`.
#[must_use]
pub fn legend_labels(map: &ColorMap) -> [String; 3] {
    // The ticks are half the bar apart; a quarter of the span tells them apart.
    let resolution = f64::from((map.high - map.low) * map.tick_factor) / 4.0;
    [map.low, (map.low + map.high) / 2.0, map.high].map(|value| {
        let value = f64::from(value * map.tick_factor);
        let text = tick_label(value, resolution);
        if map.low < 0.0 && value > 0.0 {
            format!("+{text}")
        } else {
            text
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legend_labels_show_small_ranges() {
        let tiny = ColorMap::sequential(1e-4, "distance, %", 100.0);
        assert_eq!(legend_labels(&tiny), ["0", "0.005", "0.01"]);
        let tinier = ColorMap::sequential(3e-9, "distance, %", 100.0);
        assert_eq!(legend_labels(&tinier), ["0", "1.5e-7", "3e-7"]);
        let signed = ColorMap::diverging(0.4, "area change, %", 100.0);
        assert_eq!(legend_labels(&signed), ["-40", "0", "+40"]);
    }
}
