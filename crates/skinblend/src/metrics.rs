//! Artefact metrics: pure functions over positions and triangles.
//!
//! Each compares a posed mesh with its rest pose (or two results with each other) and documents
//! its unit, its best value and its worst. Sums are taken in f64. A metric over an empty set is
//! `Ok(None)`, never NaN; a vertex index past the end is an error.

use std::collections::HashSet;

use glam::{DVec3, Vec3};

use crate::error::SkinError;
use crate::influences::Influences;

/// Min, mean and max of a set of ratios, and how many there were.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioStats {
    /// Smallest ratio.
    pub min: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Largest ratio.
    pub max: f64,
    /// Number of ratios.
    pub count: usize,
}

impl RatioStats {
    fn from_ratios(ratios: impl IntoIterator<Item = f64>) -> Option<Self> {
        let mut stats = Self {
            min: f64::INFINITY,
            mean: 0.0,
            max: f64::NEG_INFINITY,
            count: 0,
        };
        let mut sum = 0.0;
        for r in ratios {
            stats.min = stats.min.min(r);
            stats.max = stats.max.max(r);
            sum += r;
            stats.count += 1;
        }
        (stats.count > 0).then(|| {
            stats.mean = sum / stats.count as f64;
            stats
        })
    }
}

/// Posed ÷ rest length of every triangle edge, three per triangle (an edge shared by two
/// triangles counts twice, as the seed counts its 288).
///
/// Unitless; best 1 (min = mean = max = 1 for a rigid motion), LBS shrinks it below 1 and DQS
/// bulges it above 1 under twist. Edges of zero rest length are skipped.
///
/// # Errors
/// [`SkinError::AttributeLength`] when `posed` and `rest` differ in length;
/// [`SkinError::VertexIndexOutOfRange`] for a triangle naming a missing vertex.
pub fn triangle_edge_ratios(
    rest: &[Vec3],
    posed: &[Vec3],
    triangles: &[[u32; 3]],
) -> Result<Option<RatioStats>, SkinError> {
    check_same_length(rest, posed)?;
    check_triangles(triangles, rest.len())?;
    let edges = triangles
        .iter()
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])]);
    Ok(RatioStats::from_ratios(
        edges.filter_map(|e| edge_ratio(rest, posed, e)),
    ))
}

/// Posed ÷ rest length of every unique edge of the triangles (each undirected edge once).
///
/// As [`triangle_edge_ratios`], but interior edges are not counted twice. Allocates a set of
/// edges.
///
/// # Errors
/// As [`triangle_edge_ratios`].
pub fn unique_edge_ratios(
    rest: &[Vec3],
    posed: &[Vec3],
    triangles: &[[u32; 3]],
) -> Result<Option<RatioStats>, SkinError> {
    check_same_length(rest, posed)?;
    check_triangles(triangles, rest.len())?;
    let mut seen = HashSet::new();
    let mut edges = Vec::new();
    for t in triangles {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            let key = (a.min(b), a.max(b));
            if seen.insert(key) {
                edges.push(key);
            }
        }
    }
    Ok(RatioStats::from_ratios(
        edges.into_iter().filter_map(|e| edge_ratio(rest, posed, e)),
    ))
}

/// Posed ÷ rest distance of every pair of `vertices` (n·(n−1)/2 pairs; 66 for a ring of 12).
///
/// Unitless; exactly 1 for vertices that share one rigid transform (DQS keeps the joint ring's
/// pairs at 1 to f32 round-off), below 1 where LBS collapses the ring. Coincident rest pairs are
/// skipped.
///
/// # Errors
/// [`SkinError::AttributeLength`], [`SkinError::VertexIndexOutOfRange`].
pub fn pair_distance_ratios(
    rest: &[Vec3],
    posed: &[Vec3],
    vertices: &[u32],
) -> Result<Option<RatioStats>, SkinError> {
    check_same_length(rest, posed)?;
    check_vertices(vertices, rest.len())?;
    let pairs = vertices
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| vertices[i + 1..].iter().map(move |&b| (a, b)));
    Ok(RatioStats::from_ratios(
        pairs.filter_map(|e| edge_ratio(rest, posed, e)),
    ))
}

/// The candy wrapper as a number, as the seed measures it: the smallest distance from the axis
/// (through `axis_point` along `axis_direction`) of any vertex whose position along the axis is
/// within `half_width` of `along`, in metres.
///
/// Compare with the rest radius: 100% means the cross-section kept its size, 0% that it
/// collapsed onto the axis. The minimum, not the mean, because the collapse is a flattening: one
/// axis of the ring shrinks while the other does not. `None` when no vertex is in the slab or
/// the direction is zero.
#[must_use]
pub fn candy_wrapper_radius(
    positions: &[Vec3],
    axis_point: Vec3,
    axis_direction: Vec3,
    along: f32,
    half_width: f32,
) -> Option<f64> {
    let direction = axis_direction.as_dvec3().try_normalize()?;
    let origin = axis_point.as_dvec3();
    positions
        .iter()
        .map(|p| p.as_dvec3() - origin)
        .filter(|d| (d.dot(direction) - f64::from(along)).abs() <= f64::from(half_width))
        .map(|d| (d - direction * d.dot(direction)).length())
        .reduce(f64::min)
}

/// The smallest distance from the axis of the listed ring vertices, in metres: the candy-wrapper
/// radius of one known ring, independent of any slab width.
///
/// # Errors
/// [`SkinError::VertexIndexOutOfRange`].
pub fn ring_radius(
    positions: &[Vec3],
    ring: &[u32],
    axis_point: Vec3,
    axis_direction: Vec3,
) -> Result<Option<f64>, SkinError> {
    check_vertices(ring, positions.len())?;
    let Some(direction) = axis_direction.as_dvec3().try_normalize() else {
        return Ok(None);
    };
    let origin = axis_point.as_dvec3();
    Ok(ring
        .iter()
        .map(|&v| positions[v as usize].as_dvec3() - origin)
        .map(|d| (d - direction * d.dot(direction)).length())
        .reduce(f64::min))
}

/// The vertices with more than one non-zero weight: where methods differ at all.
#[must_use]
pub fn blended_vertices(influences: &Influences) -> Vec<u32> {
    (0..influences.vertex_count())
        .filter(|&v| {
            influences
                .vertex(v)
                .is_some_and(|(_, w)| w.iter().filter(|&&w| w > 0.0).count() > 1)
        })
        .map(|v| v as u32)
        .collect()
}

/// Pinch and bulge: the distance of each listed vertex from the nearest posed bone segment,
/// divided by `rest_radius` (min = pinch, max = bulge).
///
/// Unitless; best 1 on a cylinder of that radius. LBS pinches in (min below 1), DQS bulges out at
/// a bend (max above 1). Use [`blended_vertices`] for the vertices where methods differ. `None`
/// when there are no vertices or segments, or the radius is not positive.
///
/// # Errors
/// [`SkinError::VertexIndexOutOfRange`].
pub fn bone_distance_ratios(
    positions: &[Vec3],
    vertices: &[u32],
    segments: &[[Vec3; 2]],
    rest_radius: f32,
) -> Result<Option<RatioStats>, SkinError> {
    check_vertices(vertices, positions.len())?;
    if segments.is_empty() || rest_radius.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return Ok(None);
    }
    let radius = f64::from(rest_radius);
    Ok(RatioStats::from_ratios(vertices.iter().map(|&v| {
        let p = positions[v as usize].as_dvec3();
        segments
            .iter()
            .map(|s| segment_distance(p, s[0].as_dvec3(), s[1].as_dvec3()))
            .fold(f64::INFINITY, f64::min)
            / radius
    })))
}

/// Signed volume enclosed by the triangles (divergence theorem), in cubic metres: positive for a
/// closed mesh wound counter-clockwise seen from outside. Meaningless for an open mesh.
///
/// # Errors
/// [`SkinError::VertexIndexOutOfRange`].
pub fn signed_volume(positions: &[Vec3], triangles: &[[u32; 3]]) -> Result<f64, SkinError> {
    check_triangles(triangles, positions.len())?;
    Ok(triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| positions[v as usize].as_dvec3());
            a.dot(b.cross(c))
        })
        .sum::<f64>()
        / 6.0)
}

/// Posed ÷ rest signed volume of a closed mesh. Unitless; best 1; LBS loses volume at twists and
/// bends (below 1), a mirror turns it negative. `None` when the rest volume is zero.
///
/// # Errors
/// [`SkinError::AttributeLength`], [`SkinError::VertexIndexOutOfRange`].
pub fn volume_ratio(
    rest: &[Vec3],
    posed: &[Vec3],
    triangles: &[[u32; 3]],
) -> Result<Option<f64>, SkinError> {
    check_same_length(rest, posed)?;
    let rest_volume = signed_volume(rest, triangles)?;
    let posed_volume = signed_volume(posed, triangles)?;
    Ok((rest_volume != 0.0).then(|| posed_volume / rest_volume))
}

/// How far two results of the same mesh are apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Displacement {
    /// Largest vertex distance ÷ the bounding-box diagonal of the reference (0 best).
    pub max_relative: f64,
    /// Root-mean-square vertex distance ÷ the same diagonal (0 best).
    pub rms_relative: f64,
}

/// Per-vertex distance between `reference` and `other`, relative to `reference`'s bounding-box
/// diagonal. `None` for an empty mesh or a zero diagonal.
///
/// # Errors
/// [`SkinError::AttributeLength`].
pub fn displacement(reference: &[Vec3], other: &[Vec3]) -> Result<Option<Displacement>, SkinError> {
    check_same_length(reference, other)?;
    let Some(first) = reference.first() else {
        return Ok(None);
    };
    let (mut low, mut high) = (first.as_dvec3(), first.as_dvec3());
    let (mut max, mut sum_squares) = (0f64, 0f64);
    for (a, b) in reference.iter().zip(other) {
        let (a, b) = (a.as_dvec3(), b.as_dvec3());
        low = low.min(a);
        high = high.max(a);
        let d = (a - b).length();
        max = max.max(d);
        sum_squares += d * d;
    }
    let diagonal = (high - low).length();
    Ok((diagonal > 0.0).then(|| Displacement {
        max_relative: max / diagonal,
        rms_relative: (sum_squares / reference.len() as f64).sqrt() / diagonal,
    }))
}

/// The largest angle between corresponding normals, in radians (0 best, π worst). Zero-length
/// normals are skipped; `None` when none remain.
///
/// # Errors
/// [`SkinError::AttributeLength`].
pub fn normal_angle_max_rad(reference: &[Vec3], other: &[Vec3]) -> Result<Option<f64>, SkinError> {
    check_same_length(reference, other)?;
    Ok(reference
        .iter()
        .zip(other)
        .filter_map(|(a, b)| {
            let (a, b) = (a.as_dvec3().try_normalize()?, b.as_dvec3().try_normalize()?);
            Some(a.cross(b).length().atan2(a.dot(b)))
        })
        .reduce(f64::max))
}

fn edge_ratio(rest: &[Vec3], posed: &[Vec3], (a, b): (u32, u32)) -> Option<f64> {
    let (a, b) = (a as usize, b as usize);
    let rest_length = (rest[a].as_dvec3() - rest[b].as_dvec3()).length();
    (rest_length > 0.0).then(|| (posed[a].as_dvec3() - posed[b].as_dvec3()).length() / rest_length)
}

fn segment_distance(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    let ab = b - a;
    let length_squared = ab.length_squared();
    let t = if length_squared > 0.0 {
        ((p - a).dot(ab) / length_squared).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p - (a + ab * t)).length()
}

fn check_same_length(rest: &[Vec3], posed: &[Vec3]) -> Result<(), SkinError> {
    if rest.len() != posed.len() {
        return Err(SkinError::AttributeLength {
            attribute: "posed positions",
            expected: rest.len(),
            found: posed.len(),
        });
    }
    Ok(())
}

fn check_triangles(triangles: &[[u32; 3]], vertex_count: usize) -> Result<(), SkinError> {
    for (index, triangle) in triangles.iter().enumerate() {
        if let Some(&vertex) = triangle.iter().find(|&&v| v as usize >= vertex_count) {
            return Err(SkinError::VertexIndexOutOfRange {
                element: "triangles",
                index,
                vertex,
                vertex_count,
            });
        }
    }
    Ok(())
}

fn check_vertices(vertices: &[u32], vertex_count: usize) -> Result<(), SkinError> {
    match vertices.iter().position(|&v| v as usize >= vertex_count) {
        Some(index) => Err(SkinError::VertexIndexOutOfRange {
            element: "vertices",
            index,
            vertex: vertices[index],
            vertex_count,
        }),
        None => Ok(()),
    }
}
