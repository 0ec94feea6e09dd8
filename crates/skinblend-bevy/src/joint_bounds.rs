//! A skinned mesh's bounds from its joints alone, without posing a vertex: boxes of the bind
//! pose made once per mesh, moved by each frame's skin matrices (O(joints) per frame), grown by
//! how far the method can carry a vertex away from where those boxes go.
//!
//! - LBS: a posed vertex `Σ wᵢ Mᵢ v` (weights ≥ 0, summing to 1) lies in the convex hull of
//!   its joints' images `Mᵢ v`, and `Mᵢ v` in joint i's moved box (the box of the bind-pose
//!   vertices joint i influences), so in the union of the moved boxes (as Bevy's own
//!   `DynamicSkinnedMeshBounds`).
//! - DQS, rigid joints: with p the vertex's pivot joint (heaviest, as the kernels pick it),
//!   `|DQS(v) − Mₚ v| ≤ Σᵢ wᵢ |Mᵢ v − Mₚ v| / Σᵢ wᵢ cos(θᵢ/2)`, θᵢ the angle between joint
//!   i's and the pivot's rotation (dual quaternion blending is coordinate invariant: in the
//!   pivot's frame with v at the origin the blend only translates v, by at most the weighted
//!   translations over the real part's length). Per pivot group (the vertices sharing a
//!   pivot): the group's box moved by `Mₚ`, grown by that radius with `|Mᵢ v − Mₚ v|` taken at
//!   the box's corners (an affine map's length is largest at a corner) and the group's
//!   smallest pivot weight.
//! - CoR, rigid joints: `CoR(v) − LBS(v) = (R − Σ wᵢ Aᵢ)(v − c)`, at most `2 |v − c|`: the LBS
//!   bounds grown by twice the largest distance of a vertex from its center, joined with the
//!   DQS bounds (vertices without a center are skinned by DQS).
//! - Blended: `(1 − b)·LBS(v) + b·DQS(v)` with b in `[0, 1]` lies on the segment between the
//!   two, and a box (convex) holding both ends holds it: the union of the LBS and DQS bounds.
//!
//! A joint that is not rigid this frame (scale or shear in its skin matrix) has a residual the
//! argument does not cover: DQS, CoR and blended then have no bounds from joints
//! ([`JointBounds::bounds`] says `None`) and the caller poses the mesh on the CPU for them.

use bevy::camera::primitives::Aabb;
use bevy::math::Vec3;
use skinblend::glam::{Mat3 as CoreMat3, Mat4 as CoreMat4, Vec3 as CoreVec3};
use skinblend::SkinMesh;

use crate::SkinningMethod;

/// How far from orthonormal (largest entry of `AᵀA − I`) a skin matrix's 3×3 part may be and
/// still count as rigid: Bevy composes `GlobalTransform`s in f32 along chains of tens of
/// joints (each product a few ulps, 1e-7 relative), far below 1e-4; a scaled joint (a scale of
/// 1.01 is 2e-2 off) is far above.
pub(crate) const RIGID_TOLERANCE: f32 = 1e-4;

/// How much the bounds from joints are padded, relative to their largest coordinate: the
/// kernels and these boxes round differently (a few f32 ulps, 1e-7 each), and a joint within
/// [`RIGID_TOLERANCE`] of rigid has a residual that moves a vertex by up to that fraction of
/// its distance from the joint: 2e-4 covers both.
pub(crate) const JOINT_BOUNDS_PADDING_RELATIVE: f32 = 2e-4;

/// How much is taken off `cos(θ/2)` before it divides: it is computed from matrices rounded in
/// f32 (and up to [`RIGID_TOLERANCE`] from rigid), so it is made smaller, which only grows the
/// bounds.
const COS_HALF_ANGLE_MARGIN: f32 = 1e-3;

/// An axis-aligned box, min and max corners.
type Box3 = (CoreVec3, CoreVec3);

/// The vertices whose pivot (heaviest influence) is one joint.
#[derive(Debug, Clone)]
struct PivotGroup {
    pivot: usize,
    /// Bind-pose box of the group's vertices.
    bind_box: Box3,
    /// The smallest pivot weight in the group (weights renormalized to sum to 1).
    min_pivot_weight: f32,
    /// The other joints that influence a vertex of the group.
    others: Vec<usize>,
}

/// A mesh's bind-space boxes for bounds from joints, made once per mesh (O(vertices ×
/// influences)) and shared by every entity that draws it.
#[derive(Debug, Clone, Default)]
pub(crate) struct JointBounds {
    /// Per joint: the box of the bind-pose vertices it influences (`None`: no vertex).
    joint_boxes: Vec<Option<Box3>>,
    groups: Vec<PivotGroup>,
    /// The box of the vertices without weight (the kernels leave them where they are).
    unweighted_box: Option<Box3>,
    /// The largest distance of a vertex from its center of rotation (0 without centers).
    center_reach: f32,
}

fn grow(target: &mut Option<Box3>, min: CoreVec3, max: CoreVec3) {
    *target = Some(match *target {
        None => (min, max),
        Some((lo, hi)) => (lo.min(min), hi.max(max)),
    });
}

/// The box `(min, max)` moved by `m` (James Arvo's method: center moved, half extents through
/// the absolute 3×3).
fn moved_box(m: &CoreMat4, (min, max): Box3) -> Box3 {
    let center = (min + max) * 0.5;
    let half = (max - min) * 0.5;
    let a = CoreMat3::from_mat4(*m);
    let abs = CoreMat3::from_cols(a.x_axis.abs(), a.y_axis.abs(), a.z_axis.abs());
    let moved_center = m.transform_point3(center);
    let moved_half = abs * half;
    (moved_center - moved_half, moved_center + moved_half)
}

fn corners((min, max): Box3) -> impl Iterator<Item = CoreVec3> {
    (0..8).map(move |i| {
        CoreVec3::new(
            if i & 1 == 0 { min.x } else { max.x },
            if i & 2 == 0 { min.y } else { max.y },
            if i & 4 == 0 { min.z } else { max.z },
        )
    })
}

/// Whether `m`'s 3×3 part is a rotation within [`RIGID_TOLERANCE`].
fn is_rigid(m: &CoreMat4) -> bool {
    let a = CoreMat3::from_mat4(*m);
    let gram = a.transpose() * a - CoreMat3::IDENTITY;
    let off = gram
        .to_cols_array()
        .iter()
        .fold(0f32, |worst, x| worst.max(x.abs()));
    off <= RIGID_TOLERANCE && a.determinant() > 0.0
}

/// `cos(θ/2)` of the rotation from `a`'s to `b`'s 3×3 part (both rigid), made smaller by
/// [`COS_HALF_ANGLE_MARGIN`], at least 0.
fn cos_half_angle(a: &CoreMat4, b: &CoreMat4) -> f32 {
    let (a, b) = (CoreMat3::from_mat4(*a), CoreMat3::from_mat4(*b));
    let trace = a.x_axis.dot(b.x_axis) + a.y_axis.dot(b.y_axis) + a.z_axis.dot(b.z_axis);
    ((trace + 1.0) * 0.25 - COS_HALF_ANGLE_MARGIN)
        .max(0.0)
        .sqrt()
}

impl JointBounds {
    /// The boxes of `mesh` (its bind pose, influences and centers of rotation when it has
    /// them). O(vertices × influences); allocates per joint.
    #[must_use]
    pub(crate) fn new(mesh: &SkinMesh<'_>) -> Self {
        let influences = mesh.influences();
        let k = influences.influences_per_vertex();
        let joint_count = influences.joint_count();
        let mut joint_boxes: Vec<Option<Box3>> = vec![None; joint_count];
        let mut group_boxes: Vec<Option<Box3>> = vec![None; joint_count];
        let mut min_pivot_weight = vec![1f32; joint_count];
        let mut others: Vec<Vec<usize>> = vec![Vec::new(); joint_count];
        let (joints, weights) = (influences.joints(), influences.weights());
        let mut unweighted_box = None;
        for (v, &position) in mesh.positions().iter().enumerate() {
            let (joints, weights) = (&joints[v * k..v * k + k], &weights[v * k..v * k + k]);
            // The kernels' pivot: the heaviest slot, the first of equals.
            let mut pivot_slot = 0;
            for slot in 1..k {
                if weights[slot] > weights[pivot_slot] {
                    pivot_slot = slot;
                }
            }
            let sum: f32 = weights.iter().filter(|w| **w > 0.0).sum();
            if sum <= 0.0 {
                grow(&mut unweighted_box, position, position);
                continue;
            }
            let pivot = usize::from(joints[pivot_slot]);
            grow(&mut group_boxes[pivot], position, position);
            min_pivot_weight[pivot] = min_pivot_weight[pivot].min(weights[pivot_slot] / sum);
            for (&joint, &weight) in joints.iter().zip(weights) {
                if weight > 0.0 {
                    let joint = usize::from(joint);
                    grow(&mut joint_boxes[joint], position, position);
                    if joint != pivot && !others[pivot].contains(&joint) {
                        others[pivot].push(joint);
                    }
                }
            }
        }
        let groups = group_boxes
            .into_iter()
            .enumerate()
            .filter_map(|(pivot, bind_box)| {
                Some(PivotGroup {
                    pivot,
                    bind_box: bind_box?,
                    min_pivot_weight: min_pivot_weight[pivot],
                    others: std::mem::take(&mut others[pivot]),
                })
            })
            .collect();
        let center_reach = mesh.rotation_centers().map_or(0.0, |centers| {
            mesh.positions()
                .iter()
                .zip(centers)
                .filter(|(_, c)| c.is_finite())
                .fold(0f32, |reach, (p, c)| reach.max(p.distance(*c)))
        });
        Self {
            joint_boxes,
            groups,
            unweighted_box,
            center_reach,
        }
    }

    /// The mesh-local bounds of the mesh posed by `method` under `mesh_from_bind` (one skin
    /// matrix per joint), padded by [`JOINT_BOUNDS_PADDING_RELATIVE`]. O(joints × influences);
    /// no allocation. `None` when a matrix is missing, for DQS, CoR and blended when a joint
    /// they use is not rigid this frame (see the module docs), and for a mesh without weighted
    /// vertices.
    #[must_use]
    pub(crate) fn bounds(
        &self,
        mesh_from_bind: &[CoreMat4],
        method: SkinningMethod,
    ) -> Option<Aabb> {
        let (mut min, mut max) = match method {
            SkinningMethod::Linear => self.linear(mesh_from_bind)?,
            SkinningMethod::DualQuaternion => self.dual_quat(mesh_from_bind)?,
            SkinningMethod::CenterOfRotation => {
                let (dq_min, dq_max) = self.dual_quat(mesh_from_bind)?;
                if self.center_reach > 0.0 {
                    let reach = CoreVec3::splat(2.0 * self.center_reach);
                    let (lo, hi) = self.linear(mesh_from_bind)?;
                    (dq_min.min(lo - reach), dq_max.max(hi + reach))
                } else {
                    (dq_min, dq_max)
                }
            }
            SkinningMethod::Blended => {
                // Each vertex lies on the segment from its LBS to its DQS image, and a box
                // holding both holds the segment (boxes are convex).
                let (dq_min, dq_max) = self.dual_quat(mesh_from_bind)?;
                let (lo, hi) = self.linear(mesh_from_bind)?;
                (dq_min.min(lo), dq_max.max(hi))
            }
        };
        if let Some((lo, hi)) = self.unweighted_box {
            (min, max) = (min.min(lo), max.max(hi));
        }
        let largest = min.abs().max(max.abs()).max_element();
        let pad = CoreVec3::splat(largest * JOINT_BOUNDS_PADDING_RELATIVE + f32::MIN_POSITIVE);
        Some(Aabb::from_min_max(
            Vec3::from_array((min - pad).to_array()),
            Vec3::from_array((max + pad).to_array()),
        ))
    }

    fn linear(&self, mesh_from_bind: &[CoreMat4]) -> Option<Box3> {
        let mut union = None;
        for (joint, bind_box) in self.joint_boxes.iter().enumerate() {
            if let Some(bind_box) = bind_box {
                let (min, max) = moved_box(mesh_from_bind.get(joint)?, *bind_box);
                grow(&mut union, min, max);
            }
        }
        union
    }

    fn dual_quat(&self, mesh_from_bind: &[CoreMat4]) -> Option<Box3> {
        let mut union = None;
        for group in &self.groups {
            let pivot = mesh_from_bind.get(group.pivot)?;
            if !is_rigid(pivot) {
                return None;
            }
            let mut spread = 0f32;
            let mut cos_min = 1f32;
            for &other in &group.others {
                let other = mesh_from_bind.get(other)?;
                if !is_rigid(other) {
                    return None;
                }
                for corner in corners(group.bind_box) {
                    let apart = other.transform_point3(corner) - pivot.transform_point3(corner);
                    spread = spread.max(apart.length());
                }
                cos_min = cos_min.min(cos_half_angle(pivot, other));
            }
            let w = group.min_pivot_weight;
            let radius = (1.0 - w).max(0.0) * spread / (w + (1.0 - w).max(0.0) * cos_min);
            let (min, max) = moved_box(pivot, group.bind_box);
            let radius = CoreVec3::splat(radius);
            grow(&mut union, min - radius, max + radius);
        }
        union
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skinblend::cor::{rotation_centers, CorOptions};
    use skinblend::{fixtures, prepare, RunOptions};

    /// Angles each fixture is posed at, degrees: rest to the 180° the candy wrapper needs.
    const ANGLES_DEG: [f32; 7] = [0.0, 30.0, 60.0, 90.0, 120.0, 150.0, 180.0];

    fn inside(bounds: &Aabb, p: CoreVec3) -> bool {
        let p = bevy::math::Vec3A::from_array(p.to_array());
        p.cmpge(bounds.min()).all() && p.cmple(bounds.max()).all()
    }

    /// skinblend's built-in rigs (twist, bend, shear cap) posed by the core's kernels with each
    /// method from rest to 180° (blended with the rig's own blend values): the bounds from
    /// joints contain every vertex (where they hold: the shear cap's sheared joint has none for
    /// DQS, CoR and blended), and for DQS the LBS union alone would not (the reach term is
    /// needed: DQS keeps the volume LBS loses).
    #[test]
    fn bounds_contain_the_kernels_pose_on_the_built_in_rigs() {
        let mut lbs_union_missed_dqs = false;
        for fixture in fixtures::all() {
            let plain = SkinMesh::new(fixture.positions.clone(), fixture.influences.clone())
                .expect("fixture mesh");
            let centers = rotation_centers(
                &fixture.positions,
                &fixture.triangles,
                &fixture.influences,
                &CorOptions::default(),
            )
            .expect("centers")
            .centers;
            let with_centers = plain
                .clone()
                .with_rotation_centers(centers)
                .expect("centers fit");
            // The rig's own values (DQS on the moving joint, half and half on the ring).
            let with_blend = plain
                .clone()
                .with_blend_values(fixture.dq_blend_values())
                .expect("blend values fit");
            for method in SkinningMethod::ALL {
                let mesh = match method {
                    SkinningMethod::CenterOfRotation => &with_centers,
                    SkinningMethod::Blended => &with_blend,
                    SkinningMethod::Linear | SkinningMethod::DualQuaternion => &plain,
                };
                let joint_bounds = JointBounds::new(mesh);
                for angle_deg in ANGLES_DEG {
                    let palette = fixture.palette(angle_deg);
                    let prepared = prepare(&palette, Some(&fixture.joint_centers), method.core())
                        .expect("prepare");
                    let posed = mesh.skin(&prepared, RunOptions::default()).expect("skin");
                    let label = format!("{} {method:?} at {angle_deg}°", fixture.name);
                    let Some(bounds) = joint_bounds.bounds(&palette, method) else {
                        assert!(
                            method != SkinningMethod::Linear,
                            "{label}: LBS always has bounds from joints"
                        );
                        continue;
                    };
                    for (v, &p) in posed.positions.iter().enumerate() {
                        assert!(
                            inside(&bounds, p),
                            "{label}: vertex {v} at {p} outside {bounds:?}"
                        );
                    }
                    if method == SkinningMethod::DualQuaternion {
                        if let Some(lbs) = joint_bounds.bounds(&palette, SkinningMethod::Linear) {
                            lbs_union_missed_dqs |=
                                posed.positions.iter().any(|&p| !inside(&lbs, p));
                        }
                    }
                }
            }
        }
        assert!(
            lbs_union_missed_dqs,
            "the LBS union held every DQS pose: the test does not show the reach term is needed"
        );
    }
}
