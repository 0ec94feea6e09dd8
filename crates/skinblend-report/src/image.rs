//! RGB images, PNG encoding and atomic file writes.

use std::path::Path;

use crate::error::{ReportError, Result};

/// The largest width or height of an image, pixels (bounds memory: 8192² RGB is 192 MiB).
pub const MAX_IMAGE_SIDE: u32 = 8192;

/// An 8-bit sRGB image, three bytes per pixel, rows top to bottom, no padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RgbImage {
    width: u32,
    height: u32,
    pixels: Vec<u8>,
}

impl RgbImage {
    /// A `width` × `height` image filled with `background`. Allocates `3 · width · height` bytes.
    ///
    /// # Errors
    /// [`ReportError::ImageSize`] when a side is zero or above [`MAX_IMAGE_SIDE`].
    pub fn new(width: u32, height: u32, background: [u8; 3]) -> Result<Self> {
        if !(1..=MAX_IMAGE_SIDE).contains(&width) || !(1..=MAX_IMAGE_SIDE).contains(&height) {
            return Err(ReportError::ImageSize {
                width,
                height,
                max: MAX_IMAGE_SIDE,
            });
        }
        let count = width as usize * height as usize;
        let mut pixels = Vec::with_capacity(count * 3);
        for _ in 0..count {
            pixels.extend_from_slice(&background);
        }
        Ok(Self {
            width,
            height,
            pixels,
        })
    }

    /// Width in pixels.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The RGB bytes, rows top to bottom.
    #[must_use]
    pub fn pixels(&self) -> &[u8] {
        &self.pixels
    }

    /// The RGB bytes, mutable (for drawing backends that take a buffer).
    pub fn pixels_mut(&mut self) -> &mut [u8] {
        &mut self.pixels
    }

    /// The pixel at column `x`, row `y` (0 at the top); `None` outside the image.
    #[must_use]
    pub fn get(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        (x < self.width && y < self.height).then(|| {
            let i = 3 * (y as usize * self.width as usize + x as usize);
            [self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]]
        })
    }

    /// Sets the pixel at `(x, y)`; does nothing outside the image.
    pub fn put(&mut self, x: u32, y: u32, color: [u8; 3]) {
        if x < self.width && y < self.height {
            let i = 3 * (y as usize * self.width as usize + x as usize);
            self.pixels[i..i + 3].copy_from_slice(&color);
        }
    }

    /// Copies `other` with its top-left corner at `(x, y)`, clipped to this image.
    pub fn blit(&mut self, other: &RgbImage, x: u32, y: u32) {
        for row in 0..other.height {
            let target_y = y.saturating_add(row);
            if target_y >= self.height || x >= self.width {
                break;
            }
            let columns = other.width.min(self.width - x) as usize;
            let source = 3 * (row as usize * other.width as usize);
            let target = 3 * (target_y as usize * self.width as usize + x as usize);
            self.pixels[target..target + 3 * columns]
                .copy_from_slice(&other.pixels[source..source + 3 * columns]);
        }
    }

    /// How many pixels differ from `color`.
    #[must_use]
    pub fn count_not(&self, color: [u8; 3]) -> usize {
        self.pixels.chunks_exact(3).filter(|p| *p != color).count()
    }

    /// How many pixels differ between two images of the same size; `None` when sizes differ.
    #[must_use]
    pub fn count_differing(&self, other: &RgbImage) -> Option<usize> {
        (self.width == other.width && self.height == other.height).then(|| {
            self.pixels
                .chunks_exact(3)
                .zip(other.pixels.chunks_exact(3))
                .filter(|(a, b)| a != b)
                .count()
        })
    }

    /// The image as PNG file bytes (8-bit RGB, default compression).
    ///
    /// # Errors
    /// [`ReportError::Png`] if the encoder fails (it should not for a valid image).
    pub fn encode_png(&self) -> Result<Vec<u8>> {
        let error = |e: png::EncodingError| ReportError::Png {
            what: format!("a {}x{} image", self.width, self.height),
            message: e.to_string(),
        };
        let mut bytes = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut bytes, self.width, self.height);
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            let mut writer = encoder.write_header().map_err(error)?;
            writer.write_image_data(&self.pixels).map_err(error)?;
            writer.finish().map_err(error)?;
        }
        Ok(bytes)
    }

    /// Encodes the image as PNG and writes it to `path` atomically ([`write_atomically`]).
    ///
    /// # Errors
    /// [`ReportError::Png`], [`ReportError::Io`].
    pub fn write_png(&self, path: &Path) -> Result<()> {
        write_atomically(path, &self.encode_png()?)
    }
}

/// [`skinblend_gltf::export::write_atomically`] (temporary file, flush, rename), so that a
/// failure never leaves a half-written file in place of a good one.
///
/// # Errors
/// [`ReportError::Io`] naming the file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    skinblend_gltf::export::write_atomically(path, bytes).map_err(|error| match error {
        skinblend_gltf::GltfError::Io { path, source } => ReportError::io(&path, source),
        other => ReportError::Gltf {
            what: format!("writing {}", path.display()),
            source: other,
        },
    })
}
