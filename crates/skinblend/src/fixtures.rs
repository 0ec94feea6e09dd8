//! Procedural rigged meshes with known answers: the seed's twisting cylinder and its relatives.
//!
//! Every fixture is a cylinder of radius [`REST_RADIUS`] and length 2 along +Y, with positions,
//! normals, tangents, triangles (counter-clockwise seen from outside), influences, inverse bind
//! matrices and a pose for an angle. Joint 0 sits at the origin and never moves; the joint ring is
//! the ring of vertices at the joint that the pose turns about.

use std::f32::consts::TAU;

use glam::{Mat4, Quat, Vec3, Vec4};

use crate::influences::Influences;

/// Radius of every fixture cylinder, metres.
pub const REST_RADIUS: f32 = 0.25;
/// Length of every fixture cylinder along +Y, metres.
pub const LENGTH: f32 = 2.0;

/// How a fixture's pose moves its joints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Motion {
    /// Joint 1 (at y = 1) turns by the angle about +Y, the bone axis: the candy-wrapper test.
    Twist,
    /// Joint 1 (at y = 1) turns by the angle about +X: a bending elbow.
    Bend,
    /// Five joints with uniform scale, non-uniform scale, shear and a mirror; the angle bends
    /// joint 2 about +X by half the angle and twists joint 4 about +Y by the angle.
    ShearCap,
}

/// A procedural rigged mesh (see the module docs).
#[derive(Debug, Clone)]
pub struct Fixture {
    /// `twist_coarse`, `bend_coarse`, `twist_fine`, `bend_fine` or `shear_cap`.
    pub name: &'static str,
    /// How the pose moves the joints.
    pub motion: Motion,
    /// Bind-pose positions.
    pub positions: Vec<Vec3>,
    /// Bind-pose unit normals (radial on the side, ±Y at cap centers).
    pub normals: Vec<Vec3>,
    /// Bind-pose tangents around the ring, `w = 1`.
    pub tangents: Vec<Vec4>,
    /// Triangles, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
    /// Joint influences.
    pub influences: Influences,
    /// Inverse bind matrices, one per joint.
    pub joint_from_bind: Vec<Mat4>,
    /// Each joint's origin in the bind pose (the DQS residual centers).
    pub joint_centers: Vec<Vec3>,
    /// The vertices of the 0.5/0.5 ring where the moving joint meets its parent, in order
    /// around it.
    pub joint_ring: Vec<u32>,
    /// The moving joint whose ring [`Fixture::joint_ring`] is.
    pub ring_joint: usize,
    /// Whether the surface is closed (capped), so that its volume is defined.
    pub closed: bool,
}

/// The seed's fixture: 5 rings of 12, weights (1,0) (1,0) (.5,.5) (0,1) (0,1), open ends;
/// joint 1 twists about +Y through the middle ring. 96 triangles, 288 triangle edges.
#[must_use]
pub fn twist_coarse() -> Fixture {
    coarse("twist_coarse", Motion::Twist)
}

/// [`twist_coarse`]'s mesh with joint 1 bending about +X through the middle ring.
#[must_use]
pub fn bend_coarse() -> Fixture {
    coarse("bend_coarse", Motion::Bend)
}

/// The fine twist: 33 rings of 32, joint 1's weight `smoothstep((y − 0.75) / 0.5)`, capped.
#[must_use]
pub fn twist_fine() -> Fixture {
    fine("twist_fine", Motion::Twist)
}

/// [`twist_fine`]'s mesh bending about +X.
#[must_use]
pub fn bend_fine() -> Fixture {
    fine("bend_fine", Motion::Bend)
}

/// A capped cylinder of 33 rings of 32 whose five joints (y = 0, 0.375, 0.75, 1.125, 1.5) carry
/// identity, uniform scale 1.5, non-uniform scale (1.4, 1, 0.6), a shear, and a mirror in x,
/// each about its own center. Weights are hat functions 0.375 wide around each joint, so
/// neighbours blend; the joint ring is the 0.5/0.5 ring between the sheared joint 3 and the
/// mirrored, twisting joint 4 (y = 1.3125). Built to be nasty.
#[must_use]
pub fn shear_cap() -> Fixture {
    let heights = ring_heights(33);
    let mut mesh = cylinder(&heights, 32, true, shear_cap_weights);
    let joint_count = SHEAR_CAP_JOINTS.len();
    let (influences, _) = Influences::from_lists(mesh.weights.drain(..), 2, joint_count)
        .expect("fixture weights are valid by construction");
    let joint_centers: Vec<Vec3> = SHEAR_CAP_JOINTS.iter().map(|&y| Vec3::Y * y).collect();
    Fixture {
        name: "shear_cap",
        motion: Motion::ShearCap,
        positions: mesh.positions,
        normals: mesh.normals,
        tangents: mesh.tangents,
        triangles: mesh.triangles,
        influences,
        joint_from_bind: joint_centers
            .iter()
            .map(|&c| Mat4::from_translation(-c))
            .collect(),
        joint_centers,
        joint_ring: mesh.rings[21].clone(),
        ring_joint: 4,
        closed: true,
    }
}

/// All five fixtures, in the order the evidence table lists them.
#[must_use]
pub fn all() -> Vec<Fixture> {
    vec![
        twist_coarse(),
        bend_coarse(),
        twist_fine(),
        bend_fine(),
        shear_cap(),
    ]
}

impl Fixture {
    /// The blend values [`crate::Method::Blended`] skins this fixture with: DQS on the moving
    /// joint ([`Fixture::ring_joint`]) and LBS elsewhere, by the joint rule
    /// ([`crate::blend_values_from_joints`]): as an artist paints DQS where a joint twists.
    /// The ring where the joints meet, weighted half and half, takes half of each.
    #[must_use]
    pub fn dq_blend_values(&self) -> Vec<f32> {
        let mut dq_joints = vec![false; self.influences.joint_count()];
        if let Some(flag) = dq_joints.get_mut(self.ring_joint) {
            *flag = true;
        }
        crate::blend_values::blend_values_from_joints(&self.influences, &dq_joints)
    }

    /// Each joint's world transform (`world_from_joint`) in the pose for `angle_deg`.
    ///
    /// Rotations are built from the angle in degrees in f64 (see [`rotation_about`]), so 180° is
    /// the quaternion `(0, 1, 0, +6e-17)` of a turn by +180°, not the `w = −4e-8` that f32's
    /// rounding of π would give, which DQS would blend the other way round.
    #[must_use]
    pub fn world_from_joint(&self, angle_deg: f32) -> Vec<Mat4> {
        match self.motion {
            Motion::Twist | Motion::Bend => {
                let rotation = self.rotation(angle_deg);
                vec![
                    Mat4::IDENTITY,
                    Mat4::from_rotation_translation(rotation, Vec3::Y),
                ]
            }
            Motion::ShearCap => SHEAR_CAP_JOINTS
                .iter()
                .enumerate()
                .map(|(joint, &y)| {
                    let rotation = match joint {
                        2 => rotation_about(Vec3::X, angle_deg / 2.0),
                        4 => rotation_about(Vec3::Y, angle_deg),
                        _ => Quat::IDENTITY,
                    };
                    Mat4::from_rotation_translation(rotation, Vec3::Y * y)
                        * shear_cap_deformation(joint)
                })
                .collect(),
        }
    }

    /// The palette for `angle_deg`: `world_from_joint · joint_from_bind` per joint.
    #[must_use]
    pub fn palette(&self, angle_deg: f32) -> Vec<Mat4> {
        self.world_from_joint(angle_deg)
            .iter()
            .zip(&self.joint_from_bind)
            .map(|(world_from_joint, joint_from_bind)| *world_from_joint * *joint_from_bind)
            .collect()
    }

    /// The axis the joint ring is measured about in the pose for `angle_deg`: a point on it and
    /// a unit direction. Twist: the bone axis through the joint. Bend: the bisector of the two
    /// bones through the joint, the axis the ring's plane stays perpendicular to. Shear-cap: the
    /// line through the posed centers of the two joints the ring blends.
    #[must_use]
    pub fn ring_axis(&self, angle_deg: f32) -> (Vec3, Vec3) {
        let palette = self.palette(angle_deg);
        let posed_center =
            |joint: usize| palette[joint].transform_point3(self.joint_centers[joint]);
        match self.motion {
            Motion::Twist => (posed_center(self.ring_joint), Vec3::Y),
            Motion::Bend => (
                posed_center(self.ring_joint),
                rotation_about(Vec3::X, angle_deg / 2.0) * Vec3::Y,
            ),
            Motion::ShearCap => {
                let (low, high) = (
                    posed_center(self.ring_joint - 1),
                    posed_center(self.ring_joint),
                );
                ((low + high) / 2.0, (high - low).normalize_or(Vec3::Y))
            }
        }
    }

    /// The posed bones in the pose for `angle_deg` as segments: from each joint to the next, the last to the cylinder's end.
    #[must_use]
    pub fn bone_segments(&self, angle_deg: f32) -> Vec<[Vec3; 2]> {
        let palette = self.palette(angle_deg);
        let mut ends: Vec<Vec3> = self
            .joint_centers
            .iter()
            .zip(&palette)
            .map(|(&c, m)| m.transform_point3(c))
            .collect();
        let last = palette.len() - 1;
        ends.push(palette[last].transform_point3(Vec3::Y * LENGTH));
        ends.windows(2).map(|w| [w[0], w[1]]).collect()
    }

    fn rotation(&self, angle_deg: f32) -> Quat {
        match self.motion {
            Motion::Twist => rotation_about(Vec3::Y, angle_deg),
            Motion::Bend => rotation_about(Vec3::X, angle_deg),
            Motion::ShearCap => Quat::IDENTITY,
        }
    }
}

/// The right-handed rotation by `angle_deg` about the unit `axis`: `(axis · sin(a/2), cos(a/2))`
/// computed in f64 from degrees, so that the sign of a `w` near zero is that of the exact value.
#[must_use]
pub fn rotation_about(axis: Vec3, angle_deg: f32) -> Quat {
    let half_rad = f64::from(angle_deg).to_radians() / 2.0;
    let (sin, cos) = half_rad.sin_cos();
    let v = axis.as_dvec3() * sin;
    Quat::from_xyzw(v.x as f32, v.y as f32, v.z as f32, cos as f32)
}

/// Joint heights of [`shear_cap`].
const SHEAR_CAP_JOINTS: [f32; 5] = [0.0, 0.375, 0.75, 1.125, 1.5];

/// The non-rigid part of each [`shear_cap`] joint, in joint space.
fn shear_cap_deformation(joint: usize) -> Mat4 {
    match joint {
        1 => Mat4::from_scale(Vec3::splat(1.5)),
        2 => Mat4::from_scale(Vec3::new(1.4, 1.0, 0.6)),
        // x gains 0.5 per unit of y, z loses 0.3 per unit of x.
        3 => Mat4::from_cols(
            Vec4::new(1.0, 0.0, -0.3, 0.0),
            Vec4::new(0.5, 1.0, 0.0, 0.0),
            Vec4::Z,
            Vec4::W,
        ),
        4 => Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)),
        _ => Mat4::IDENTITY,
    }
}

/// Hat-function weights of [`shear_cap`] at height `y`.
fn shear_cap_weights(y: f32) -> Vec<(u16, f32)> {
    const HALF_WIDTH: f32 = 0.375;
    let last = SHEAR_CAP_JOINTS.len() - 1;
    if y >= SHEAR_CAP_JOINTS[last] {
        return vec![(last as u16, 1.0)];
    }
    SHEAR_CAP_JOINTS
        .iter()
        .enumerate()
        .map(|(joint, &at)| (joint as u16, (1.0 - (y - at).abs() / HALF_WIDTH).max(0.0)))
        .filter(|&(_, w)| w > 0.0)
        .collect()
}

/// Joint 1's weight on the twist and bend fixtures: `smoothstep((y − 0.75) / 0.5)`, which gives
/// the coarse rings at y = 0, 0.5, 1, 1.5, 2 exactly the seed's 0, 0, 0.5, 1, 1.
fn twist_weight(y: f32) -> f32 {
    let s = ((y - 0.75) / 0.5).clamp(0.0, 1.0);
    s * s * (3.0 - 2.0 * s)
}

fn coarse(name: &'static str, motion: Motion) -> Fixture {
    two_joint(name, motion, 5, 12, false)
}

fn fine(name: &'static str, motion: Motion) -> Fixture {
    two_joint(name, motion, 33, 32, true)
}

fn two_joint(
    name: &'static str,
    motion: Motion,
    rings: usize,
    segments: usize,
    capped: bool,
) -> Fixture {
    let heights = ring_heights(rings);
    let two = |y: f32| {
        let w = twist_weight(y);
        vec![(0u16, 1.0 - w), (1u16, w)]
    };
    let mesh = cylinder(&heights, segments, capped, two);
    let joints: Vec<u16> = mesh.weights.iter().flat_map(|_| [0, 1]).collect();
    let weights: Vec<f32> = mesh.weights.iter().flat_map(|w| [w[0].1, w[1].1]).collect();
    let influences =
        Influences::new(2, joints, weights, 2).expect("fixture weights are valid by construction");
    Fixture {
        name,
        motion,
        positions: mesh.positions,
        normals: mesh.normals,
        tangents: mesh.tangents,
        triangles: mesh.triangles,
        influences,
        joint_from_bind: vec![Mat4::IDENTITY, Mat4::from_translation(-Vec3::Y)],
        joint_centers: vec![Vec3::ZERO, Vec3::Y],
        joint_ring: mesh.rings[rings / 2].clone(),
        ring_joint: 1,
        closed: capped,
    }
}

/// `rings` heights evenly spaced over the cylinder's length.
fn ring_heights(rings: usize) -> Vec<f32> {
    (0..rings)
        .map(|i| LENGTH * i as f32 / (rings - 1) as f32)
        .collect()
}

struct CylinderMesh {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
    triangles: Vec<[u32; 3]>,
    weights: Vec<Vec<(u16, f32)>>,
    rings: Vec<Vec<u32>>,
}

/// A cylinder: vertex `k` of ring `i` at `(r cos(2πk/n), y_i, r sin(2πk/n))`, each quad split
/// along the diagonal from `(i, k)` to `(i + 1, k + 1)`; optional caps with a center vertex each.
/// Every vertex takes the weights for its height.
fn cylinder(
    heights: &[f32],
    segments: usize,
    capped: bool,
    weights_at_height: impl Fn(f32) -> Vec<(u16, f32)>,
) -> CylinderMesh {
    let mut mesh = CylinderMesh {
        positions: Vec::new(),
        normals: Vec::new(),
        tangents: Vec::new(),
        triangles: Vec::new(),
        weights: Vec::new(),
        rings: Vec::new(),
    };
    for &y in heights {
        let mut indices = Vec::with_capacity(segments);
        for k in 0..segments {
            let theta = TAU * k as f32 / segments as f32;
            let (sin, cos) = theta.sin_cos();
            indices.push(mesh.positions.len() as u32);
            mesh.positions
                .push(Vec3::new(REST_RADIUS * cos, y, REST_RADIUS * sin));
            mesh.normals.push(Vec3::new(cos, 0.0, sin));
            mesh.tangents.push(Vec4::new(-sin, 0.0, cos, 1.0));
            mesh.weights.push(weights_at_height(y));
        }
        mesh.rings.push(indices);
    }
    let at = |ring: usize, k: usize| (ring * segments + k % segments) as u32;
    for ring in 0..heights.len() - 1 {
        for k in 0..segments {
            let (a, b, c, d) = (
                at(ring, k),
                at(ring, k + 1),
                at(ring + 1, k),
                at(ring + 1, k + 1),
            );
            mesh.triangles.push([a, c, d]);
            mesh.triangles.push([a, d, b]);
        }
    }
    if capped {
        let last = heights.len() - 1;
        for (ring, y, normal) in [(0, heights[0], -Vec3::Y), (last, heights[last], Vec3::Y)] {
            let center = mesh.positions.len() as u32;
            mesh.positions.push(Vec3::new(0.0, y, 0.0));
            mesh.normals.push(normal);
            mesh.tangents.push(Vec4::new(1.0, 0.0, 0.0, 1.0));
            mesh.weights.push(weights_at_height(y));
            for k in 0..segments {
                let (a, b) = (at(ring, k), at(ring, k + 1));
                mesh.triangles.push(if ring == 0 {
                    [center, a, b]
                } else {
                    [center, b, a]
                });
            }
        }
    }
    mesh
}

/// A synthetic rig for benchmarks: random positions in a 2 m cube with unit normals and
/// tangents, `influences_per_vertex` distinct joints per vertex out of `joint_count` with random
/// weights summing to one, and a palette of random rigid motions. Deterministic in `seed`.
#[derive(Debug, Clone)]
pub struct BenchmarkMesh {
    /// Bind-pose positions.
    pub positions: Vec<Vec3>,
    /// Unit normals.
    pub normals: Vec<Vec3>,
    /// Unit tangents, `w = ±1`.
    pub tangents: Vec<Vec4>,
    /// Influences.
    pub influences: Influences,
    /// Skin matrices of rigid motions, one per joint.
    pub palette: Vec<Mat4>,
}

/// Builds a [`BenchmarkMesh`]. `influences_per_vertex` must not exceed `joint_count`
/// (otherwise it is clamped to it); `joint_count` is clamped to at least 1.
#[must_use]
pub fn benchmark_mesh(
    vertex_count: usize,
    influences_per_vertex: usize,
    joint_count: usize,
    seed: u64,
) -> BenchmarkMesh {
    let joint_count = joint_count.clamp(1, usize::from(u16::MAX) + 1);
    let k = influences_per_vertex.clamp(1, joint_count);
    // xorshift64*: small, fast, deterministic; quality is irrelevant here.
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut unit = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut positions = Vec::with_capacity(vertex_count);
    let mut normals = Vec::with_capacity(vertex_count);
    let mut tangents = Vec::with_capacity(vertex_count);
    let mut joints = Vec::with_capacity(vertex_count * k);
    let mut weights = Vec::with_capacity(vertex_count * k);
    for _ in 0..vertex_count {
        positions.push(Vec3::new(
            unit() * 2.0 - 1.0,
            unit() * 2.0,
            unit() * 2.0 - 1.0,
        ));
        let normal = Vec3::new(unit() - 0.5, unit() - 0.5, unit() - 0.5).normalize_or(Vec3::Y);
        normals.push(normal);
        let w = if unit() < 0.5 { 1.0 } else { -1.0 };
        tangents.push(normal.any_orthonormal_vector().extend(w));
        let first = (unit() * joint_count as f32) as usize % joint_count;
        let raw: Vec<f32> = (0..k).map(|_| unit() + 0.05).collect();
        let sum: f32 = raw.iter().sum();
        for (slot, w) in raw.iter().enumerate() {
            joints.push(((first + slot) % joint_count) as u16);
            weights.push(w / sum);
        }
    }
    let influences = Influences::new(k, joints, weights, joint_count)
        .expect("benchmark weights are valid by construction");
    let palette = (0..joint_count)
        .map(|_| {
            let axis = Vec3::new(unit() - 0.5, unit() - 0.5, unit() - 0.5).normalize_or(Vec3::Y);
            let rotation = Quat::from_axis_angle(axis, (unit() - 0.5) * TAU);
            let translation = Vec3::new(unit() - 0.5, unit() - 0.5, unit() - 0.5);
            Mat4::from_rotation_translation(rotation, translation)
        })
        .collect();
    BenchmarkMesh {
        positions,
        normals,
        tangents,
        influences,
        palette,
    }
}
