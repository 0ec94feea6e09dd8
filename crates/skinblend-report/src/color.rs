//! Colour maps and the per-vertex scalars they show: edge-length strain, area change and
//! displacement between two results.

use glam::Vec3;

/// How values become colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Blue below the middle of the range, near-white at it, red above (for signed changes:
    /// shrinking is blue, growing red).
    Diverging,
    /// Dark purple at the low end through teal to yellow at the high end (viridis-like, for
    /// magnitudes such as a distance).
    Sequential,
}

/// A colour map over `[low, high]`; values outside are clamped to the end colours.
#[derive(Debug, Clone, PartialEq)]
pub struct ColorMap {
    /// The scale.
    pub scale: Scale,
    /// The value of the first colour.
    pub low: f32,
    /// The value of the last colour.
    pub high: f32,
    /// What the values are, with unit, for the legend ("edge length change, %").
    pub label: String,
    /// Legend ticks are `value × tick_factor`, so values can be fractions and ticks percent.
    pub tick_factor: f32,
}

/// Cool-warm diverging stops (after Moreland's map).
const DIVERGING: [[u8; 3]; 5] = [
    [59, 76, 192],
    [141, 176, 254],
    [232, 232, 232],
    [244, 154, 123],
    [180, 4, 38],
];
/// Viridis-like sequential stops.
const SEQUENTIAL: [[u8; 3]; 5] = [
    [68, 1, 84],
    [59, 82, 139],
    [33, 145, 140],
    [94, 201, 98],
    [253, 231, 37],
];

impl ColorMap {
    /// A diverging map symmetric about 0 over `[−half_range, half_range]`.
    #[must_use]
    pub fn diverging(half_range: f32, label: &str, tick_factor: f32) -> Self {
        Self {
            scale: Scale::Diverging,
            low: -half_range,
            high: half_range,
            label: label.to_owned(),
            tick_factor,
        }
    }

    /// A sequential map over `[0, high]`.
    #[must_use]
    pub fn sequential(high: f32, label: &str, tick_factor: f32) -> Self {
        Self {
            scale: Scale::Sequential,
            low: 0.0,
            high,
            label: label.to_owned(),
            tick_factor,
        }
    }

    /// The colour of `value` (NaN gets the middle colour).
    #[must_use]
    pub fn color(&self, value: f32) -> [u8; 3] {
        let span = self.high - self.low;
        let t = if span > 0.0 && value.is_finite() {
            ((value - self.low) / span).clamp(0.0, 1.0)
        } else if value.is_finite() && span <= 0.0 {
            if value >= self.high {
                1.0
            } else {
                0.0
            }
        } else {
            0.5
        };
        self.at(t)
    }

    /// The colour a share `t` in `[0, 1]` along the map.
    #[must_use]
    pub fn at(&self, t: f32) -> [u8; 3] {
        let stops = match self.scale {
            Scale::Diverging => &DIVERGING,
            Scale::Sequential => &SEQUENTIAL,
        };
        let x = t.clamp(0.0, 1.0) * (stops.len() - 1) as f32;
        let i = (x.floor() as usize).min(stops.len() - 2);
        let f = x - i as f32;
        let (a, b) = (stops[i], stops[i + 1]);
        [0, 1, 2].map(|c| (f32::from(a[c]) + f * (f32::from(b[c]) - f32::from(a[c]))).round() as u8)
    }
}

/// Per vertex: the mean of `posed ÷ rest − 1` over the edges of the triangles around it
/// (unitless; 0 unchanged, −0.1 edges 10% shorter). Vertices on no triangle, and edges of zero
/// rest length, contribute 0. Triangles naming a missing vertex are skipped (validate first).
#[must_use]
pub fn edge_strain(rest: &[Vec3], posed: &[Vec3], triangles: &[[u32; 3]]) -> Vec<f32> {
    let n = rest.len().min(posed.len());
    let mut sum = vec![0f64; n];
    let mut count = vec![0u32; n];
    for t in triangles {
        if t.iter().any(|&v| v as usize >= n) {
            continue;
        }
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            let (a, b) = (a as usize, b as usize);
            let rest_length = f64::from(rest[a].distance(rest[b]));
            if rest_length <= 0.0 {
                continue;
            }
            let change = f64::from(posed[a].distance(posed[b])) / rest_length - 1.0;
            for v in [a, b] {
                sum[v] += change;
                count[v] += 1;
            }
        }
    }
    sum.iter()
        .zip(&count)
        .map(|(&s, &c)| {
            if c > 0 {
                (s / f64::from(c)) as f32
            } else {
                0.0
            }
        })
        .collect()
}

/// Per vertex: the posed area of the triangles around it ÷ their rest area, minus 1
/// (unitless; 0 unchanged, −0.2 the surface there shrank by 20%, +0.2 it bulged out by 20%).
/// Vertices on no triangle of non-zero rest area get 0.
#[must_use]
pub fn area_change(rest: &[Vec3], posed: &[Vec3], triangles: &[[u32; 3]]) -> Vec<f32> {
    let n = rest.len().min(posed.len());
    let mut rest_area = vec![0f64; n];
    let mut posed_area = vec![0f64; n];
    let area = |p: &[Vec3], t: &[u32; 3]| {
        let [a, b, c] = t.map(|v| p[v as usize].as_dvec3());
        (b - a).cross(c - a).length() / 2.0
    };
    for t in triangles {
        if t.iter().any(|&v| v as usize >= n) {
            continue;
        }
        let (r, p) = (area(rest, t), area(posed, t));
        for &v in t {
            rest_area[v as usize] += r;
            posed_area[v as usize] += p;
        }
    }
    rest_area
        .iter()
        .zip(&posed_area)
        .map(|(&r, &p)| if r > 0.0 { (p / r - 1.0) as f32 } else { 0.0 })
        .collect()
}

/// Per vertex: `|a − b| ÷ scale` (give `scale` as the bounding-box diagonal to get a share of
/// the model's size). Unitless; 0 where the two results agree. A non-positive scale gives the
/// distances in metres.
#[must_use]
pub fn displacement(a: &[Vec3], b: &[Vec3], scale: f32) -> Vec<f32> {
    let scale = if scale > 0.0 { scale } else { 1.0 };
    a.iter()
        .zip(b)
        .map(|(p, q)| p.distance(*q) / scale)
        .collect()
}
