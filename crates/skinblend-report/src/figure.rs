//! Side-by-side figures: renders in a row, a title over each, an optional colour legend below.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::color::ColorMap;
use crate::error::{ReportError, Result};
use crate::font::{self, FAMILY};
use crate::image::RgbImage;
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
    let tick = |value: f32| {
        let v = value * map.tick_factor;
        if v == 0.0 {
            "0".to_owned()
        } else if v.abs() >= 10.0 {
            format!("{v:+.0}")
        } else {
            format!("{v:+.1}")
        }
    };
    let ticks = [
        (left, HPos::Left, map.low),
        (
            left + bar_width / 2,
            HPos::Center,
            (map.low + map.high) / 2.0,
        ),
        (left + bar_width, HPos::Right, map.high),
    ];
    for (x, h_pos, value) in ticks {
        let text = if map.low >= 0.0 {
            tick(value).trim_start_matches('+').to_owned()
        } else {
            tick(value)
        };
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
