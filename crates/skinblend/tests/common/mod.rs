//! Shared by the integration tests: named tolerances, a deterministic random source, and an
//! f64 reference skinning kernel written independently of the library (its own split, its own
//! dual quaternion algebra by quaternion products, matrix inverses for normals).
#![allow(dead_code)]

pub mod cor;
pub mod simd;

use glam::{DMat3, DMat4, DQuat, DVec3, Mat4, Vec3, Vec4};
use skinblend::Influences;

/// Same transform, different f32 operation order (a 4x4 product against a quaternion rotation
/// plus translation): agreement to a few ulps of values of order one. The seed's figure.
pub const REL_F32: f64 = 1e-6;
/// f32 library against the f64 reference: a blend over up to 8 influences, a Gram–Schmidt, a
/// quaternion conversion and a normalization, each a few ulps (1.2e-7) of order-one values.
pub const REF_F64_VS_F32: f64 = 2e-5;
/// Non-rigid single influences: the residual path composes a 3x3 and a dual quaternion where
/// LBS applies one 3x4, with scales up to 3, so a decade above `REL_F32`.
pub const NON_RIGID_REL: f64 = 1e-5;

/// Largest distance between corresponding points, relative to the largest finite magnitude (at
/// least 1). A pair that differs by a non-finite distance (NaN or infinity on one side only, or
/// different ones) is infinitely far apart: `f64::max` would otherwise drop a NaN silently.
pub fn max_relative_difference(a: &[Vec3], b: &[Vec3]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = a
        .iter()
        .chain(b)
        .map(|p| f64::from(p.length()))
        .filter(|length| length.is_finite())
        .fold(1.0, f64::max);
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            if x.to_array().map(f32::to_bits) == y.to_array().map(f32::to_bits) {
                return 0.0;
            }
            let distance = f64::from((*x - *y).length());
            if distance.is_finite() {
                distance
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0, f64::max)
        / scale
}

/// Asserts two point sets agree within `tolerance` (relative), printing the worst vertex.
#[track_caller]
pub fn assert_points_close(what: &str, expected: &[Vec3], actual: &[Vec3], tolerance: f64) {
    assert_eq!(expected.len(), actual.len(), "{what}: lengths differ");
    let difference = max_relative_difference(expected, actual);
    if difference > tolerance {
        let worst = (0..expected.len())
            .max_by(|&i, &j| {
                (expected[i] - actual[i])
                    .length()
                    .total_cmp(&(expected[j] - actual[j]).length())
            })
            .unwrap();
        panic!(
            "{what}: relative difference {difference:e} > {tolerance:e}; worst vertex {worst}: \
             expected {}, actual {}",
            expected[worst], actual[worst]
        );
    }
}

/// A small deterministic xorshift generator, so random rigs are the same on every run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.unit()
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn vec3(&mut self, half_extent: f32) -> Vec3 {
        Vec3::new(
            self.range(-half_extent, half_extent),
            self.range(-half_extent, half_extent),
            self.range(-half_extent, half_extent),
        )
    }
    pub fn rotation(&mut self) -> glam::Quat {
        let axis = self.vec3(1.0).try_normalize().unwrap_or(Vec3::Y);
        glam::Quat::from_axis_angle(axis, self.range(-3.0, 3.0))
    }
}

/// A random rig: `vertices` points with unit normals and tangents, `k` influences each over
/// `joints` joints with weights summing to one, and a palette of rigid motions (or, with
/// `non_rigid`, motions with scale, shear and sometimes a mirror).
pub struct RandomRig {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub tangents: Vec<Vec4>,
    pub influences: Influences,
    pub palette: Vec<Mat4>,
    pub centers: Vec<Vec3>,
}

pub fn random_rig(
    rng: &mut Rng,
    vertices: usize,
    k: usize,
    joints: usize,
    non_rigid: bool,
) -> RandomRig {
    let positions: Vec<Vec3> = (0..vertices).map(|_| rng.vec3(2.0)).collect();
    let normals: Vec<Vec3> = (0..vertices)
        .map(|_| rng.vec3(1.0).try_normalize().unwrap_or(Vec3::X))
        .collect();
    let tangents: Vec<Vec4> = normals
        .iter()
        .map(|n| {
            let t = n.any_orthonormal_vector();
            t.extend(if rng.unit() < 0.5 { 1.0 } else { -1.0 })
        })
        .collect();
    let mut joint_indices = Vec::with_capacity(vertices * k);
    let mut weights = Vec::with_capacity(vertices * k);
    for _ in 0..vertices {
        let raw: Vec<f32> = (0..k).map(|_| rng.range(0.05, 1.0)).collect();
        let sum: f32 = raw.iter().sum();
        for w in raw {
            joint_indices.push(rng.below(joints) as u16);
            weights.push(w / sum);
        }
    }
    let influences = Influences::new(k, joint_indices, weights, joints).unwrap();
    let centers: Vec<Vec3> = (0..joints).map(|_| rng.vec3(1.0)).collect();
    let palette = (0..joints)
        .map(|_| {
            let rigid = Mat4::from_rotation_translation(rng.rotation(), rng.vec3(1.0));
            if non_rigid && rng.unit() < 0.7 {
                let mut scale = Vec3::new(
                    rng.range(0.5, 2.0),
                    rng.range(0.5, 2.0),
                    rng.range(0.5, 2.0),
                );
                if rng.unit() < 0.3 {
                    scale.x = -scale.x;
                }
                let mut shear = Mat4::IDENTITY;
                shear.y_axis.x = rng.range(-0.5, 0.5);
                rigid * shear * Mat4::from_scale(scale)
            } else {
                rigid
            }
        })
        .collect();
    RandomRig {
        positions,
        normals,
        tangents,
        influences,
        palette,
        centers,
    }
}

/// What the reference returns for one vertex.
pub struct ReferenceVertex {
    pub position: DVec3,
    pub normal: DVec3,
    pub tangent: DVec3,
    pub handedness: f64,
}

/// Options of the reference DQS, to show that the library's checks can fail.
#[derive(Clone, Copy)]
pub struct ReferenceDqs {
    /// Align signs to the heaviest influence (the library always does).
    pub pivot_flip: bool,
    /// Carry scale, shear and mirror through a residual (the library always does).
    pub residual: bool,
}

pub const FULL_DQS: ReferenceDqs = ReferenceDqs {
    pivot_flip: true,
    residual: true,
};

/// One joint's motion split in f64: rotation q, translation, residual 3x3 about center.
struct ReferenceSplit {
    rotation: DQuat,
    translation: DVec3,
    residual: DMat3,
    center: DVec3,
    rigid: bool,
}

fn reference_split(m: &DMat4, center: DVec3) -> ReferenceSplit {
    let a = DMat3::from_mat4(*m);
    let t = m.w_axis.truncate();
    // QR by Gram–Schmidt on the columns, written out in f64.
    let q0 = a.x_axis.normalize();
    let r01 = q0.dot(a.y_axis);
    let q1 = (a.y_axis - r01 * q0).normalize();
    let r02 = q0.dot(a.z_axis);
    let r12 = q1.dot(a.z_axis);
    let mut q2 = (a.z_axis - r02 * q0 - r12 * q1).normalize();
    let mut sign = 1.0;
    if q0.cross(q1).dot(q2) < 0.0 {
        q2 = -q2;
        sign = -1.0;
    }
    let r = DMat3::from_cols(q0, q1, q2);
    let s = r.transpose() * a; // upper triangular; −1 · |r22| on the mirrored axis
    debug_assert!(sign * s.z_axis.z > 0.0 || sign < 0.0);
    let rigid = (s - DMat3::IDENTITY)
        .to_cols_array()
        .iter()
        .all(|x| x.abs() <= f64::from(skinblend::DEFAULT_RIGID_TOLERANCE));
    ReferenceSplit {
        rotation: DQuat::from_mat3(&r).normalize(),
        translation: a * center + t - r * center,
        residual: s,
        center,
        rigid,
    }
}

/// The rig the reference skins with: `dq` selects DQS (with those options) over LBS.
struct Setup<'a> {
    palette: &'a [Mat4],
    centers: Option<&'a [Vec3]>,
    dq: Option<ReferenceDqs>,
}

/// Skins one vertex in f64.
fn reference_vertex(
    (position, normal, tangent): (Vec3, Vec3, Vec4),
    joints: &[u16],
    weights: &[f32],
    setup: &Setup<'_>,
) -> ReferenceVertex {
    let Setup {
        palette,
        centers,
        dq,
    } = *setup;
    let p = position.as_dvec3();
    let n = normal.as_dvec3();
    let t = tangent.truncate().as_dvec3();
    let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
    if sum == 0.0 {
        return ReferenceVertex {
            position: p,
            normal: n,
            tangent: t,
            handedness: f64::from(tangent.w),
        };
    }
    let influences: Vec<(usize, f64)> = joints
        .iter()
        .zip(weights)
        .filter(|(_, &w)| w > 0.0)
        .map(|(&j, &w)| (usize::from(j), f64::from(w) / sum))
        .collect();
    match dq {
        None => {
            let mut m = DMat4::ZERO;
            for &(j, w) in &influences {
                m += palette[j].as_dmat4() * w;
            }
            let a = DMat3::from_mat4(m);
            let det = a.determinant();
            ReferenceVertex {
                position: m.transform_point3(p),
                normal: (a.inverse().transpose() * n).normalize(),
                tangent: (a * t).normalize(),
                handedness: f64::from(tangent.w) * det.signum(),
            }
        }
        Some(options) => {
            let splits: Vec<ReferenceSplit> = influences
                .iter()
                .map(|&(j, _)| {
                    let center = centers.map_or(DVec3::ZERO, |c| c[j].as_dvec3());
                    reference_split(&palette[j].as_dmat4(), center)
                })
                .collect();
            // Pivot: heaviest; ties to the first listed.
            let mut pivot = 0;
            for (i, &(_, w)) in influences.iter().enumerate() {
                if w > influences[pivot].1 {
                    pivot = i;
                }
            }
            let mut real = DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0);
            let mut dual = DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0);
            let mut residual = DMat3::ZERO;
            let mut offset = DVec3::ZERO;
            let any_non_rigid = splits.iter().any(|s| !s.rigid);
            for (split, &(_, w)) in splits.iter().zip(&influences) {
                let q = split.rotation;
                let tq = DQuat::from_xyzw(
                    split.translation.x,
                    split.translation.y,
                    split.translation.z,
                    0.0,
                );
                let d = (tq * q) * 0.5;
                let sign = if options.pivot_flip && q.dot(splits[pivot].rotation) < 0.0 {
                    -1.0
                } else {
                    1.0
                };
                real += q * (w * sign);
                dual += d * (w * sign);
                let s = if split.rigid {
                    DMat3::IDENTITY
                } else {
                    split.residual
                };
                residual += s * w;
                offset += (split.center - s * split.center) * w;
            }
            let length = real.length();
            let (real, dual) = (real * (1.0 / length), dual * (1.0 / length));
            let translation_q = (dual * real.conjugate()) * 2.0;
            let translation = DVec3::new(translation_q.x, translation_q.y, translation_q.z);
            let use_residual = options.residual && any_non_rigid;
            let (ps, ns, ts, det) = if use_residual {
                (
                    residual * p + offset,
                    residual.inverse().transpose() * n,
                    residual * t,
                    residual.determinant(),
                )
            } else {
                (p, n, t, 1.0)
            };
            ReferenceVertex {
                position: real * ps + translation,
                normal: (real * ns).normalize(),
                tangent: (real * ts).normalize(),
                handedness: f64::from(tangent.w) * det.signum(),
            }
        }
    }
}

/// Skins a whole mesh with the reference.
pub fn reference_mesh(
    positions: &[Vec3],
    normals: &[Vec3],
    tangents: &[Vec4],
    influences: &Influences,
    palette: &[Mat4],
    centers: Option<&[Vec3]>,
    dq: Option<ReferenceDqs>,
) -> Vec<ReferenceVertex> {
    let setup = Setup {
        palette,
        centers,
        dq,
    };
    (0..positions.len())
        .map(|v| {
            let (joints, weights) = influences.vertex(v).unwrap();
            reference_vertex(
                (positions[v], normals[v], tangents[v]),
                joints,
                weights,
                &setup,
            )
        })
        .collect()
}

pub fn positions_of(reference: &[ReferenceVertex]) -> Vec<Vec3> {
    reference.iter().map(|r| r.position.as_vec3()).collect()
}

/// Blend values for [`skinblend::Method::Blended`] that reach every path of its kernels: blocks
/// of eight vertices all 0 (LBS's kernel), all 1 (DQS's), all strictly between (both blends),
/// and mixed (the scalar kernel), in turn, and a ragged tail.
pub fn mixed_blend_values(count: usize) -> Vec<f32> {
    (0..count)
        .map(|i| match (i / 8) % 4 {
            0 => 0.0,
            1 => 1.0,
            2 => 0.05 + 0.9 * ((i % 8) as f32 / 7.0),
            _ => [0.0, 1.0, 0.5, 0.25][i % 4],
        })
        .collect()
}
