//! The embedded font: DejaVu Sans 2.37 (Bitstream Vera licence, `assets/LICENSE-DejaVu.txt`),
//! registered with plotters' ab_glyph text backend so no system font is ever looked up.

use std::sync::OnceLock;

use plotters::style::FontStyle;

use crate::error::{ReportError, Result};

/// The font family name every figure of this crate uses.
pub const FAMILY: &str = "sans-serif";

/// The font file's bytes, compiled into the library.
pub static DEJAVU_SANS: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Registers [`DEJAVU_SANS`] as [`FAMILY`] (normal and bold; bold falls back to normal) once per
/// process. Every drawing function calls it first.
///
/// # Errors
/// [`ReportError::Font`] if the embedded file could not be parsed (a broken build).
pub fn register() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(ReportError::Font)
    }
}
