//! A small CPU rasterizer: flat-shaded triangles with a depth buffer, seen by a fixed
//! three-quarter orthographic camera, optionally coloured per vertex by a scalar through a
//! [`ColorMap`].
//!
//! Conventions: glam types, right-handed, +Y up (glTF's). Image rows run top to bottom.
//! Lighting is two-sided (a triangle seen from behind is lit like its front), so a mesh turned
//! inside out by a method still shows its shape.

use glam::{Vec2, Vec3};

use crate::color::ColorMap;
use crate::error::{ReportError, Result};
use crate::image::RgbImage;

/// The background of every render: white.
pub const BACKGROUND: [u8; 3] = [255, 255, 255];
/// The surface colour when no colour map is given: a light steel blue.
pub const SURFACE: [u8; 3] = [170, 186, 212];

/// An axis-aligned box, metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Smallest x, y, z.
    pub min: Vec3,
    /// Largest x, y, z.
    pub max: Vec3,
}

impl Bounds {
    /// The box around `points`; `None` when there are none or one is not finite.
    #[must_use]
    pub fn of(points: &[Vec3]) -> Option<Self> {
        let first = *points.first()?;
        let mut bounds = Self {
            min: first,
            max: first,
        };
        for &p in points {
            if !p.is_finite() {
                return None;
            }
            bounds.min = bounds.min.min(p);
            bounds.max = bounds.max.max(p);
        }
        Some(bounds)
    }

    /// The smallest box holding both.
    #[must_use]
    pub fn union(self, other: Bounds) -> Bounds {
        Bounds {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The eight corners.
    #[must_use]
    pub fn corners(&self) -> [Vec3; 8] {
        let (a, b) = (self.min, self.max);
        [
            Vec3::new(a.x, a.y, a.z),
            Vec3::new(b.x, a.y, a.z),
            Vec3::new(a.x, b.y, a.z),
            Vec3::new(b.x, b.y, a.z),
            Vec3::new(a.x, a.y, b.z),
            Vec3::new(b.x, a.y, b.z),
            Vec3::new(a.x, b.y, b.z),
            Vec3::new(b.x, b.y, b.z),
        ]
    }

    /// Length of the diagonal, metres.
    #[must_use]
    pub fn diagonal(&self) -> f32 {
        (self.max - self.min).length()
    }
}

/// An orthographic camera and the image it draws into.
///
/// A point `p` lands at pixel `(x, y) = offset + scale · ((p − target)·right, −(p − target)·up)`
/// (y grows downwards) with depth `(p − target)·forward` (smaller is nearer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Unit vector from the eye into the scene.
    pub forward: Vec3,
    /// Unit vector to the image's right.
    pub right: Vec3,
    /// Unit vector to the image's top.
    pub up: Vec3,
    /// The point that lands at `offset`.
    pub target: Vec3,
    /// Pixels per metre.
    pub scale: f32,
    /// Pixel position of `target`.
    pub offset: Vec2,
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
}

/// Azimuth of the three-quarter view about +Y from +Z towards +X, degrees.
pub const THREE_QUARTER_AZIMUTH_DEG: f32 = 60.0;
/// Elevation of the three-quarter view above the horizon, degrees.
pub const THREE_QUARTER_ELEVATION_DEG: f32 = 20.0;
/// Share of each image side left empty around the framed box.
pub const FRAME_MARGIN: f32 = 0.06;

impl Camera {
    /// The fixed three-quarter view (eye in front, to the right and above: azimuth
    /// [`THREE_QUARTER_AZIMUTH_DEG`], elevation [`THREE_QUARTER_ELEVATION_DEG`]) that fits
    /// `bounds` into a `width` × `height` image with a margin of [`FRAME_MARGIN`].
    ///
    /// Frame every image of a comparison with the same bounds (the union over the methods) so
    /// that the same pixel means the same place.
    #[must_use]
    pub fn three_quarter(bounds: &Bounds, width: u32, height: u32) -> Camera {
        Camera::view(
            bounds,
            width,
            height,
            THREE_QUARTER_AZIMUTH_DEG,
            THREE_QUARTER_ELEVATION_DEG,
        )
    }

    /// The view from `azimuth_deg` about +Y (0: from +Z, 90: from +X) and `elevation_deg`
    /// above the horizon that fits `bounds` into a `width` × `height` image with a margin of
    /// [`FRAME_MARGIN`]. [`Camera::three_quarter`] is this view at fixed angles.
    #[must_use]
    pub fn view(
        bounds: &Bounds,
        width: u32,
        height: u32,
        azimuth_deg: f32,
        elevation_deg: f32,
    ) -> Camera {
        let azimuth = azimuth_deg.to_radians();
        let elevation = elevation_deg.to_radians();
        let eye_direction = Vec3::new(
            elevation.cos() * azimuth.sin(),
            elevation.sin(),
            elevation.cos() * azimuth.cos(),
        );
        let forward = -eye_direction;
        let right = forward.cross(Vec3::Y).normalize();
        let up = right.cross(forward);
        let target = (bounds.min + bounds.max) / 2.0;
        let (mut low, mut high) = (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY));
        for corner in bounds.corners() {
            let d = corner - target;
            let q = Vec2::new(d.dot(right), -d.dot(up));
            low = low.min(q);
            high = high.max(q);
        }
        let extent = (high - low).max(Vec2::splat(1e-6));
        let usable = Vec2::new(width as f32, height as f32) * (1.0 - 2.0 * FRAME_MARGIN);
        let scale = (usable.x / extent.x).min(usable.y / extent.y);
        let image_center = Vec2::new(width as f32, height as f32) / 2.0;
        let offset = image_center - scale * (low + high) / 2.0;
        Camera {
            forward,
            right,
            up,
            target,
            scale,
            offset,
            width,
            height,
        }
    }

    /// Width ÷ height of `bounds` as the three-quarter view sees it (choose an image of this
    /// aspect to fill it). 1 for a degenerate box.
    #[must_use]
    pub fn three_quarter_aspect(bounds: &Bounds) -> f32 {
        let camera = Camera::three_quarter(bounds, 1000, 1000);
        let (mut low, mut high) = (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY));
        for corner in bounds.corners() {
            let q = camera.project(corner).truncate();
            low = low.min(q);
            high = high.max(q);
        }
        let extent = high - low;
        if extent.x > 0.0 && extent.y > 0.0 {
            extent.x / extent.y
        } else {
            1.0
        }
    }

    /// Pixel coordinates (x right, y down) and depth of `p`.
    #[must_use]
    pub fn project(&self, p: Vec3) -> Vec3 {
        let d = p - self.target;
        let xy = self.offset + self.scale * Vec2::new(d.dot(self.right), -d.dot(self.up));
        xy.extend(d.dot(self.forward))
    }
}

/// A triangle mesh to draw: positions and triangles, and optionally one scalar per vertex with
/// the map that colours it.
#[derive(Debug, Clone, Copy)]
pub struct MeshView<'a> {
    /// A name for error messages.
    pub name: &'a str,
    /// Positions, metres.
    pub positions: &'a [Vec3],
    /// Triangles (any winding: lighting is two-sided).
    pub triangles: &'a [[u32; 3]],
    /// One scalar per vertex and its colour map, interpolated across each triangle.
    pub colors: Option<(&'a [f32], &'a ColorMap)>,
}

/// Supersampling factor per side: each output pixel averages this² samples (edges smooth).
pub const SUPERSAMPLE: u32 = 2;

/// Draws `mesh` as `camera` sees it: flat-shaded (Lambert, two-sided, a light over the
/// viewer's left shoulder) with a depth buffer, antialiased by [`SUPERSAMPLE`]² samples per
/// pixel, on [`BACKGROUND`]. Allocates the image and a depth buffer. Deterministic.
///
/// # Errors
/// [`ReportError::VertexIndexOutOfRange`], [`ReportError::NonFinite`],
/// [`ReportError::AttributeLength`] (scalars not one per vertex), [`ReportError::ImageSize`].
pub fn render(mesh: &MeshView<'_>, camera: &Camera) -> Result<RgbImage> {
    validate(mesh)?;
    let image = RgbImage::new(camera.width, camera.height, BACKGROUND)?;
    let s = SUPERSAMPLE;
    let (width, height) = (camera.width * s, camera.height * s);
    let (w, h) = (width as usize, height as usize);
    let mut depth = vec![f32::INFINITY; w * h];
    let mut color = vec![BACKGROUND.map(f32::from); w * h];
    let light = (-camera.forward * 0.8 + camera.up * 0.5 - camera.right * 0.35).normalize();
    let projected: Vec<Vec3> = mesh
        .positions
        .iter()
        .map(|&p| {
            let q = camera.project(p);
            Vec3::new(q.x * s as f32, q.y * s as f32, q.z)
        })
        .collect();
    for triangle in mesh.triangles {
        let [ia, ib, ic] = triangle.map(|v| v as usize);
        let (pa, pb, pc) = (mesh.positions[ia], mesh.positions[ib], mesh.positions[ic]);
        let Some(normal) = (pb - pa).cross(pc - pa).try_normalize() else {
            continue;
        };
        let shade = 0.3 + 0.7 * normal.dot(light).abs();
        let (a, b, c) = (projected[ia], projected[ib], projected[ic]);
        let area = edge(a, b, c);
        if area.abs() < 1e-12 {
            continue;
        }
        let vertex_colors = mesh
            .colors
            .map(|(values, map)| (values[ia], values[ib], values[ic], map));
        let x0 = a.x.min(b.x).min(c.x).floor().max(0.0) as usize;
        let x1 = (a.x.max(b.x).max(c.x).ceil() as isize).clamp(0, w as isize) as usize;
        let y0 = a.y.min(b.y).min(c.y).floor().max(0.0) as usize;
        let y1 = (a.y.max(b.y).max(c.y).ceil() as isize).clamp(0, h as isize) as usize;
        for y in y0..y1 {
            for x in x0..x1 {
                let p = Vec3::new(x as f32 + 0.5, y as f32 + 0.5, 0.0);
                // Barycentric weights, positive inside whichever the winding.
                let (wa, wb, wc) = (
                    edge(b, c, p) / area,
                    edge(c, a, p) / area,
                    edge(a, b, p) / area,
                );
                if wa < 0.0 || wb < 0.0 || wc < 0.0 {
                    continue;
                }
                let z = wa * a.z + wb * b.z + wc * c.z;
                let i = y * w + x;
                if z >= depth[i] {
                    continue;
                }
                depth[i] = z;
                let base = match vertex_colors {
                    Some((va, vb, vc, map)) => map.color(wa * va + wb * vb + wc * vc),
                    None => SURFACE,
                };
                color[i] = base.map(|channel| f32::from(channel) * shade);
            }
        }
    }
    Ok(downsample(image, &color, s))
}

/// Twice the signed area of (a, b, p) in the image plane.
fn edge(a: Vec3, b: Vec3, p: Vec3) -> f32 {
    (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
}

fn downsample(mut image: RgbImage, samples: &[[f32; 3]], s: u32) -> RgbImage {
    let w = (image.width() * s) as usize;
    let count = (s * s) as f32;
    for y in 0..image.height() {
        for x in 0..image.width() {
            let mut sum = [0f32; 3];
            for sy in 0..s {
                for sx in 0..s {
                    let i = (y * s + sy) as usize * w + (x * s + sx) as usize;
                    for (total, value) in sum.iter_mut().zip(samples[i]) {
                        *total += value;
                    }
                }
            }
            image.put(
                x,
                y,
                sum.map(|v| (v / count).round().clamp(0.0, 255.0) as u8),
            );
        }
    }
    image
}

fn validate(mesh: &MeshView<'_>) -> Result<()> {
    let vertex_count = mesh.positions.len();
    if let Some((vertex, p)) = mesh
        .positions
        .iter()
        .enumerate()
        .find(|(_, p)| !p.is_finite())
    {
        return Err(ReportError::NonFinite {
            mesh: mesh.name.to_owned(),
            vertex,
            value: format!("{p}"),
        });
    }
    for (triangle, t) in mesh.triangles.iter().enumerate() {
        if let Some(&vertex) = t.iter().find(|&&v| v as usize >= vertex_count) {
            return Err(ReportError::VertexIndexOutOfRange {
                mesh: mesh.name.to_owned(),
                triangle,
                vertex,
                vertex_count,
            });
        }
    }
    if let Some((values, _)) = mesh.colors {
        if values.len() != vertex_count {
            return Err(ReportError::AttributeLength {
                mesh: mesh.name.to_owned(),
                attribute: "colour values",
                expected: vertex_count,
                found: values.len(),
            });
        }
    }
    Ok(())
}
