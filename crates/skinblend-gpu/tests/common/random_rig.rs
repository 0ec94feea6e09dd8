//! Random rigs from a small deterministic generator: positions, normals, tangents, influences
//! with unweighted vertices and zero slots, palettes with rigid, scaled, sheared and mirrored
//! joints, per-vertex centers of rotation (every fifth vertex without one) and per-vertex blend
//! values (0, 1, ½ and values between).

use glam::{Mat4, Quat, Vec3, Vec4};
use skinblend::{cor, BlendValues, Influences, SkinInput};

/// A random rigid motion from a small deterministic generator.
pub struct Rng(u64);

impl Rng {
    pub fn next(&mut self) -> f32 {
        // xorshift64*: deterministic, no dependency.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        bits as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.next()
    }

    pub fn unit(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            if let Some(u) = v.try_normalize() {
                if v.length() > 0.1 {
                    return u;
                }
            }
        }
    }

    pub fn rotation(&mut self) -> Quat {
        Quat::from_axis_angle(self.unit(), self.range(-3.1, 3.1))
    }
}

pub struct RandomRig {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub tangents: Vec<Vec4>,
    pub influences: Influences,
    pub palette: Vec<Mat4>,
    pub centers: Vec<Vec3>,
    /// Per-vertex centers of rotation: a point near the vertex, or none (NaN) for every fifth.
    pub rotation_centers: Vec<Vec3>,
    /// Per-vertex blend values of the blended method: 0 (LBS) for every sixth vertex, 1 (DQS)
    /// for the next, ½ (where the tangent's handedness switches to DQS's) for the next, random
    /// values in (0, 1) for the other three.
    pub blend_values: Vec<f32>,
}

impl RandomRig {
    /// The rig's input with normals and tangents as asked, its centers of rotation and its blend
    /// values.
    pub fn input(&self, normals: bool, tangents: bool) -> SkinInput<'_> {
        SkinInput::new(
            &self.positions,
            normals.then_some(&self.normals[..]),
            tangents.then_some(&self.tangents[..]),
            &self.influences,
        )
        .expect("input")
        .with_rotation_centers(&self.rotation_centers)
        .expect("rotation centers")
        .with_blend_values(BlendValues::PerVertex(&self.blend_values))
        .expect("blend values")
    }
}

/// `vertices` vertices with `k` influences over `joints` joints; some vertices unweighted, some
/// slots zero; the palette mixes rigid, scaled, sheared and mirrored joints when `non_rigid`.
pub fn random_rig(
    seed: u64,
    vertices: usize,
    k: usize,
    joints: usize,
    non_rigid: bool,
) -> RandomRig {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    // The centers draw from their own generator, so the rest of the rig is what it was before
    // CoR was tested here.
    let mut center_rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
    // The blend values too.
    let mut blend_rng = Rng(seed.wrapping_mul(0x94D0_49BB_1331_11EB) | 1);
    let mut joint_indices = Vec::with_capacity(vertices * k);
    let mut weights = Vec::with_capacity(vertices * k);
    let mut positions = Vec::with_capacity(vertices);
    let mut normals = Vec::with_capacity(vertices);
    let mut tangents = Vec::with_capacity(vertices);
    let mut rotation_centers = Vec::with_capacity(vertices);
    let blend_values = (0..vertices)
        .map(|v| match v % 6 {
            0 => 0.0,
            1 => 1.0,
            2 => 0.5,
            _ => blend_rng.range(0.001, 0.999),
        })
        .collect();
    for v in 0..vertices {
        let position = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(0.0, 2.0),
            rng.range(-1.0, 1.0),
        );
        positions.push(position);
        rotation_centers.push(if v % 5 == 2 {
            cor::NO_ROTATION_CENTER
        } else {
            position + center_rng.unit() * center_rng.range(0.0, 0.5)
        });
        let normal = rng.unit();
        normals.push(normal);
        let tangent = normal.any_orthonormal_vector();
        tangents.push(tangent.extend(if rng.next() < 0.5 { 1.0 } else { -1.0 }));
        let unweighted = v % 97 == 13;
        for slot in 0..k {
            joint_indices.push((rng.next() * joints as f32) as u16 % joints as u16);
            let zero = unweighted || (slot > 0 && rng.next() < 0.2);
            weights.push(if zero { 0.0 } else { rng.range(0.01, 1.0) });
        }
    }
    let influences = Influences::new(k, joint_indices, weights, joints).expect("influences");
    let mut palette = Vec::with_capacity(joints);
    let mut centers = Vec::with_capacity(joints);
    for j in 0..joints {
        let rigid = Mat4::from_rotation_translation(
            rng.rotation(),
            Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            ),
        );
        let residual = if non_rigid {
            match j % 4 {
                0 => Mat4::IDENTITY,
                1 => Mat4::from_scale(Vec3::new(1.5, 0.7, 1.2)),
                2 => Mat4::from_cols(Vec4::X, Vec4::new(0.3, 1.0, 0.0, 0.0), Vec4::Z, Vec4::W),
                _ => Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)),
            }
        } else {
            Mat4::IDENTITY
        };
        palette.push(rigid * residual);
        centers.push(Vec3::new(0.0, j as f32 * 0.1, 0.0));
    }
    RandomRig {
        positions,
        normals,
        tangents,
        influences,
        palette,
        centers,
        rotation_centers,
        blend_values,
    }
}
