//! The scalar reference: the definition of each method, one vertex at a time.
//!
//! This is what every other path is checked against: the SIMD kernels (`simd/`) follow it step
//! for step and are tested against it within f32 rounding, and they hand it every vertex they
//! cannot take whole, so each unusual case has one definition. It is also the fallback where
//! the CPU has no SIMD kernels or a call asks for none ([`crate::RunOptions::simd`]). One vertex
//! range at a time, no allocation, no branches on options inside the per-influence loops.

use glam::{Affine3A, Mat3A, Vec3, Vec3A};

use crate::dual_quat::DualQuat;
use crate::influence_tables::{pivot_slot, MIN_WEIGHT_SUM};
use crate::input::SkinInput;
use crate::palette::PreparedPalette;
use crate::types::{Diagnostics, Method, SkinOutputs};

/// A 3x3 whose determinant is at most this fraction of (largest column length)³ is singular for
/// the normal transform: its inverse transpose is noise. f32 determinants of order-one matrices
/// carry about 1e-7 relative error, so this sits a decade above round-off.
pub(crate) const SINGULAR_RELATIVE: f32 = 1e-6;

/// Skins vertices `first_vertex .. first_vertex + out.positions.len()` of `input` into `out`,
/// dividing each vertex's weights by their sum where `renormalize` says so.
///
/// Lengths were checked by the caller. Returns the per-vertex counts (not `non_rigid_joints`,
/// which belongs to the palette).
pub(crate) fn skin_range(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    renormalize: bool,
    first_vertex: usize,
    out: SkinOutputs<'_>,
) -> Diagnostics {
    match palette.method() {
        Method::Linear => run::<Linear>(input, palette, renormalize, first_vertex, out),
        Method::DualQuaternion => {
            run::<DualQuaternion>(input, palette, renormalize, first_vertex, out)
        }
        Method::CenterOfRotation => {
            run::<CenterOfRotation>(input, palette, renormalize, first_vertex, out)
        }
        Method::Blended => run::<Blended>(input, palette, renormalize, first_vertex, out),
    }
}

/// What a vertex carries besides its influences, for the methods that read it.
#[derive(Debug, Clone, Copy)]
struct VertexExtras {
    /// Its center of rotation where the input has one (CoR).
    rotation_center: Option<Vec3>,
    /// Its blend value (blended; 0 where the input has none).
    blend_value: f32,
}

/// One vertex's blended transform, however the method builds it.
trait Blend {
    /// Blends the influences of one vertex; `None` when the weights sum to zero.
    fn blend(
        palette: &PreparedPalette,
        joints: &[u16],
        weights: &[f32],
        renormalize: bool,
        extras: VertexExtras,
        diagnostics: &mut Diagnostics,
    ) -> Option<Self>
    where
        Self: Sized;
    fn point(&self, p: Vec3) -> Vec3;
    /// The normal direction, unnormalized; counts a singular normal matrix.
    fn normal(&self, n: Vec3, diagnostics: &mut Diagnostics) -> Vec3;
    /// The tangent direction (unnormalized) and whether handedness flips.
    fn tangent(&self, t: Vec3) -> (Vec3, bool);
}

fn run<B: Blend>(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    renormalize: bool,
    first_vertex: usize,
    out: SkinOutputs<'_>,
) -> Diagnostics {
    let mut diagnostics = Diagnostics::default();
    let influences = input.influences();
    let k = influences.influences_per_vertex();
    let count = out.positions.len();
    let range = first_vertex..first_vertex + count;
    let joints = &influences.joints()[range.start * k..range.end * k];
    let weights = &influences.weights()[range.start * k..range.end * k];
    let positions = &input.positions()[range.clone()];
    let normals_in = input.normals().map(|n| &n[range.clone()]);
    let tangents_in = input.tangents().map(|t| &t[range.clone()]);
    let centers = input.rotation_centers().map(|c| &c[range.clone()]);
    let blend_values = input.blend_values();
    let SkinOutputs {
        positions: positions_out,
        mut normals,
        mut tangents,
    } = out;

    for i in 0..count {
        let (vj, vw) = (&joints[i * k..(i + 1) * k], &weights[i * k..(i + 1) * k]);
        let extras = VertexExtras {
            rotation_center: centers.map(|c| c[i]),
            blend_value: blend_values.map_or(0.0, |b| b.value(first_vertex + i)),
        };
        let Some(blend) = B::blend(palette, vj, vw, renormalize, extras, &mut diagnostics) else {
            diagnostics.unweighted_vertices += 1;
            positions_out[i] = positions[i];
            if let (Some(out), Some(src)) = (normals.as_deref_mut(), normals_in) {
                out[i] = src[i];
            }
            if let (Some(out), Some(src)) = (tangents.as_deref_mut(), tangents_in) {
                out[i] = src[i];
            }
            continue;
        };
        positions_out[i] = blend.point(positions[i]);
        if let (Some(out), Some(src)) = (normals.as_deref_mut(), normals_in) {
            let n = blend.normal(src[i], &mut diagnostics);
            out[i] = n.try_normalize().unwrap_or(src[i]);
        }
        if let (Some(out), Some(src)) = (tangents.as_deref_mut(), tangents_in) {
            let t = src[i];
            let (direction, flips) = blend.tangent(t.truncate());
            let direction = direction.try_normalize().unwrap_or(t.truncate());
            let w = if flips { -t.w } else { t.w };
            out[i] = direction.extend(w);
        }
    }
    diagnostics
}

/// The sum of the weights, and the factor that normalizes them (1 when not renormalizing), or
/// `None` when the sum is below [`MIN_WEIGHT_SUM`].
#[inline]
fn weight_scale(weights: &[f32], renormalize: bool) -> Option<f32> {
    let sum: f32 = weights.iter().sum();
    if sum < MIN_WEIGHT_SUM {
        return None;
    }
    Some(if renormalize { 1.0 / sum } else { 1.0 })
}

/// Inverse transpose of `a` up to a positive factor: the cofactor matrix times the sign of the
/// determinant. Counts `a` as singular when its determinant is noise.
#[inline]
fn normal_matrix(a: &Mat3A, diagnostics: &mut Diagnostics) -> Mat3A {
    let (c0, c1, c2) = (a.x_axis, a.y_axis, a.z_axis);
    let cofactor = Mat3A::from_cols(c1.cross(c2), c2.cross(c0), c0.cross(c1));
    let det = c0.dot(cofactor.x_axis);
    let largest = c0.length().max(c1.length()).max(c2.length());
    if det.abs() <= SINGULAR_RELATIVE * largest * largest * largest {
        diagnostics.singular_normal_matrices += 1;
        // The cofactor is the limit direction of det · A⁻ᵀ; its sign is unknowable here.
        return cofactor;
    }
    if det < 0.0 {
        -cofactor
    } else {
        cofactor
    }
}

/// Linear blend of `Affine3A` maps: `Σ wᵢ Mᵢ`. Shared by the LBS kernel and the residual blend.
#[inline]
fn add_scaled_affine(sum: &mut Affine3A, map: &Affine3A, weight: f32) {
    sum.matrix3 = Mat3A::from_cols(
        sum.matrix3.x_axis + map.matrix3.x_axis * weight,
        sum.matrix3.y_axis + map.matrix3.y_axis * weight,
        sum.matrix3.z_axis + map.matrix3.z_axis * weight,
    );
    sum.translation += map.translation * weight;
}

/// The all-zero affine map, the start of a blend.
const ZERO_AFFINE: Affine3A = Affine3A {
    matrix3: Mat3A::ZERO,
    translation: Vec3A::ZERO,
};

/// `Σ (wᵢ · scale) maps[jᵢ]` over the positively weighted influences of one vertex, in slot
/// order: LBS's 3x4 blend, DQS's residual blend and CoR's center blend.
#[inline]
fn weighted_affine_sum(maps: &[Affine3A], joints: &[u16], weights: &[f32], scale: f32) -> Affine3A {
    let mut sum = ZERO_AFFINE;
    for (&joint, &weight) in joints.iter().zip(weights) {
        if weight > 0.0 {
            add_scaled_affine(&mut sum, &maps[usize::from(joint)], weight * scale);
        }
    }
    sum
}

/// LBS: the weighted sum of the joints' 3x4 matrices.
struct Linear(Affine3A);

impl Blend for Linear {
    #[inline]
    fn blend(
        palette: &PreparedPalette,
        joints: &[u16],
        weights: &[f32],
        renormalize: bool,
        _extras: VertexExtras,
        _diagnostics: &mut Diagnostics,
    ) -> Option<Self> {
        let scale = weight_scale(weights, renormalize)?;
        let maps = palette.linear_matrices();
        Some(Self(weighted_affine_sum(maps, joints, weights, scale)))
    }

    #[inline]
    fn point(&self, p: Vec3) -> Vec3 {
        self.0.transform_point3(p)
    }

    #[inline]
    fn normal(&self, n: Vec3, diagnostics: &mut Diagnostics) -> Vec3 {
        let matrix = normal_matrix(&self.0.matrix3, diagnostics);
        let n = matrix * Vec3A::from(n);
        Vec3::from(n)
    }

    #[inline]
    fn tangent(&self, t: Vec3) -> (Vec3, bool) {
        let a = &self.0.matrix3;
        (Vec3::from(*a * Vec3A::from(t)), a.determinant() < 0.0)
    }
}

/// DQS: the sign-aligned, normalized blend of dual quaternions, after the blended residual.
struct DualQuaternion {
    motion: DualQuat,
    residual: Option<Affine3A>,
}

impl Blend for DualQuaternion {
    #[inline]
    fn blend(
        palette: &PreparedPalette,
        joints: &[u16],
        weights: &[f32],
        renormalize: bool,
        _extras: VertexExtras,
        diagnostics: &mut Diagnostics,
    ) -> Option<Self> {
        let scale = weight_scale(weights, renormalize)?;
        let pivot = pivot_slot(weights);
        let pivot_dq = palette.dual_quats[usize::from(joints[pivot])];
        let mut sum = DualQuat {
            real: glam::Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            dual: glam::Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        };
        let mut any_residual = false;
        for (slot, (&joint, &weight)) in joints.iter().zip(weights).enumerate() {
            if weight > 0.0 {
                let dq = palette.dual_quats[usize::from(joint)];
                let signed = if dq.real_dot(&pivot_dq) < 0.0 {
                    diagnostics.sign_flips += usize::from(slot != pivot);
                    -weight
                } else {
                    weight
                };
                sum.real += dq.real * signed;
                sum.dual += dq.dual * signed;
                any_residual |= !palette.rigid[usize::from(joint)];
            }
        }
        // The pivot's own weight is positive and every other term has a non-negative dot with
        // it, so the real part cannot vanish; fall back to the pivot if rounding says otherwise.
        let motion = sum.normalized().unwrap_or(pivot_dq);
        let residual =
            any_residual.then(|| weighted_affine_sum(&palette.residuals, joints, weights, scale));
        Some(Self { motion, residual })
    }

    #[inline]
    fn point(&self, p: Vec3) -> Vec3 {
        let p = match &self.residual {
            Some(residual) => residual.transform_point3(p),
            None => p,
        };
        self.motion.transform_point(p)
    }

    #[inline]
    fn normal(&self, n: Vec3, diagnostics: &mut Diagnostics) -> Vec3 {
        let n = match &self.residual {
            Some(residual) => {
                Vec3::from(normal_matrix(&residual.matrix3, diagnostics) * Vec3A::from(n))
            }
            None => n,
        };
        self.motion.transform_vector(n)
    }

    #[inline]
    fn tangent(&self, t: Vec3) -> (Vec3, bool) {
        let (t, flips) = match &self.residual {
            Some(residual) => (
                Vec3::from(residual.matrix3 * Vec3A::from(t)),
                residual.matrix3.determinant() < 0.0,
            ),
            None => (t, false),
        };
        (self.motion.transform_vector(t), flips)
    }
}

/// CoR: the DQS blend's rotation `R` (the normalized, sign-aligned blend of the joints'
/// quaternions, the same pivot rule and sign-flip count) and blended residual `S`, with the
/// translation replaced so that the vertex's center `p*` goes where LBS sends it:
/// `v' = R·S(v) + t`, `t = LBS(p*) − R·S(p*)`, where LBS blends the full skin matrices (scale
/// and shear included). For rigid joints `S` is the identity and this is the paper's
/// `t = LBS(p*) − R p*`; with one influence it is that joint's matrix exactly, residual or not.
/// Normals and tangents are DQS's (`R S⁻ᵀ n`, `R S t`). A vertex without a center (NaN, or none
/// given) is skinned by DQS.
struct CenterOfRotation(DualQuaternion);

impl Blend for CenterOfRotation {
    #[inline]
    fn blend(
        palette: &PreparedPalette,
        joints: &[u16],
        weights: &[f32],
        renormalize: bool,
        extras: VertexExtras,
        diagnostics: &mut Diagnostics,
    ) -> Option<Self> {
        let dq = DualQuaternion::blend(palette, joints, weights, renormalize, extras, diagnostics)?;
        let Some(center) = extras.rotation_center.filter(|c| c.is_finite()) else {
            return Some(Self(dq));
        };
        let scale = weight_scale(weights, renormalize)?;
        let linear = weighted_affine_sum(palette.linear_matrices(), joints, weights, scale);
        let rotation = dq.motion.real;
        let residual_center = match &dq.residual {
            Some(residual) => residual.transform_point3(center),
            None => center,
        };
        let translation = linear.transform_point3(center) - rotation * residual_center;
        Some(Self(DualQuaternion {
            motion: DualQuat::from_rotation_translation(rotation, translation),
            residual: dq.residual,
        }))
    }

    #[inline]
    fn point(&self, p: Vec3) -> Vec3 {
        self.0.point(p)
    }

    #[inline]
    fn normal(&self, n: Vec3, diagnostics: &mut Diagnostics) -> Vec3 {
        self.0.normal(n, diagnostics)
    }

    #[inline]
    fn tangent(&self, t: Vec3) -> (Vec3, bool) {
        self.0.tangent(t)
    }
}

/// Blended: LBS's and DQS's results of the vertex, interpolated by its blend value `b`
/// (`v' = (1 − b)·LBS(v) + b·DQS(v)`). At `b = 0` only LBS is blended and at `b = 1` only DQS,
/// so those vertices are that method's to the bit, counts included; between, both are, and
/// normals and tangent directions interpolate the two unit results (the caller renormalizes),
/// the handedness LBS's below one half and DQS's from it.
struct Blended {
    linear: Option<Linear>,
    dual_quaternion: Option<DualQuaternion>,
    blend_value: f32,
}

impl Blend for Blended {
    #[inline]
    fn blend(
        palette: &PreparedPalette,
        joints: &[u16],
        weights: &[f32],
        renormalize: bool,
        extras: VertexExtras,
        diagnostics: &mut Diagnostics,
    ) -> Option<Self> {
        let b = extras.blend_value;
        let linear = if b < 1.0 {
            Some(Linear::blend(
                palette,
                joints,
                weights,
                renormalize,
                extras,
                diagnostics,
            )?)
        } else {
            None
        };
        let dual_quaternion = if b > 0.0 {
            Some(DualQuaternion::blend(
                palette,
                joints,
                weights,
                renormalize,
                extras,
                diagnostics,
            )?)
        } else {
            None
        };
        Some(Self {
            linear,
            dual_quaternion,
            blend_value: b,
        })
    }

    #[inline]
    fn point(&self, p: Vec3) -> Vec3 {
        match (&self.linear, &self.dual_quaternion) {
            (Some(l), Some(d)) => l.point(p).lerp(d.point(p), self.blend_value),
            (Some(l), None) => l.point(p),
            (None, Some(d)) => d.point(p),
            (None, None) => p,
        }
    }

    #[inline]
    fn normal(&self, n: Vec3, diagnostics: &mut Diagnostics) -> Vec3 {
        match (&self.linear, &self.dual_quaternion) {
            (Some(l), Some(d)) => {
                let from_linear = l.normal(n, diagnostics).try_normalize().unwrap_or(n);
                let from_dq = d.normal(n, diagnostics).try_normalize().unwrap_or(n);
                from_linear.lerp(from_dq, self.blend_value)
            }
            (Some(l), None) => l.normal(n, diagnostics),
            (None, Some(d)) => d.normal(n, diagnostics),
            (None, None) => n,
        }
    }

    #[inline]
    fn tangent(&self, t: Vec3) -> (Vec3, bool) {
        match (&self.linear, &self.dual_quaternion) {
            (Some(l), Some(d)) => {
                let (from_linear, linear_flips) = l.tangent(t);
                let (from_dq, dq_flips) = d.tangent(t);
                let from_linear = from_linear.try_normalize().unwrap_or(t);
                let from_dq = from_dq.try_normalize().unwrap_or(t);
                let flips = if self.blend_value < 0.5 {
                    linear_flips
                } else {
                    dq_flips
                };
                (from_linear.lerp(from_dq, self.blend_value), flips)
            }
            (Some(l), None) => l.tangent(t),
            (None, Some(d)) => d.tangent(t),
            (None, None) => (t, false),
        }
    }
}
