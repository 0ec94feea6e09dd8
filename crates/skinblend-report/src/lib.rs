//! Pictures, plots and a self-contained HTML report for `skinblend`.
//!
//! - [`render`]: a CPU rasterizer (flat-shaded triangles, depth buffer, a fixed three-quarter
//!   orthographic camera framing a bounding box) with optional per-vertex colour maps
//!   ([`color`]: edge-length strain, area change, displacement between methods).
//! - [`figure`]: renders side by side with titles and a colour legend.
//! - [`plot`]: line plots with plotters' bitmap backend; text in the embedded DejaVu Sans
//!   ([`font`]), never a system font.
//! - [`html`]: `index.html`, self-contained, images by relative path, a caption under each; it
//!   checks itself once loaded (every image decoded, no script error).
//! - [`evidence`]: the report of the core's fixtures (`skinblend evidence --out DIR`).
//! - [`compare`]: the report of a glTF animation (`skinblend compare FILE --out DIR`).
//!
//! # Conventions
//! glam types; right-handed, +Y up, metres (glTF's). Images are 8-bit sRGB, rows top to bottom.
//! Every file is written to a temporary name and renamed ([`image::write_atomically`]), so a
//! failure never leaves a half-written file; `index.html` is written last. A whole report is
//! built in a partial folder beside its destination and moved into place when complete
//! ([`folder::write_folder_atomically`]), so a failure never leaves a half-written report where
//! a good one was.
//!
//! # Panics
//! No public function panics on data: bad input is a [`ReportError`] naming the place.
#![warn(missing_docs)]

pub mod color;
pub mod compare;
mod error;
pub mod evidence;
pub mod figure;
pub mod folder;
pub mod font;
pub mod html;
pub mod image;
pub mod plot;
pub mod render;

pub use error::{ReportError, Result};
pub use image::{RgbImage, MAX_IMAGE_SIDE};
