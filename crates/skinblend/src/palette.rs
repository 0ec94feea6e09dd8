//! Per-frame palette preparation: validation, and for DQS the rigid/residual split.

use glam::{Affine3A, Mat3, Mat3A, Mat4, Quat, Vec3, Vec3A, Vec4};

use crate::skin::{Method, SkinOptions};
use crate::{DualQuat, SkinError};

/// Default tolerance below which a residual counts as the identity and its joint as rigid.
///
/// Matches the seed's `RIGID_TOLERANCE`: well above f32 round-off of a rotation matrix built from
/// a quaternion (about 1e-7 per entry), well below any scale or shear an artist means.
pub const DEFAULT_RIGID_TOLERANCE: f32 = 1e-4;

/// A column whose Gram–Schmidt remainder is at most this fraction of the largest column is
/// treated as zero: the matrix has no usable rotation basis. Well above f32 round-off (1.2e-7 per
/// operation) so a column parallel to another is caught, well below real scales.
const DEGENERATE_RELATIVE: f32 = 1e-6;

/// A skin matrix `M = [A | t]` split into the rigid motion a dual quaternion carries exactly and
/// the residual it cannot.
///
/// `A = R · S` by Gram–Schmidt on the columns of `A`: `R` is a rotation (in `dq`), `S` is
/// upper-triangular and holds scale, shear and reflection (a reflection is a −1 on the third
/// axis of `S`, never part of `R`). The residual acts about the joint's center `c`:
/// `p ↦ c + S (p − c)`, and `dq` translates by `A c + t − R c`, so `dq ∘ residual = M` exactly.
/// A degenerate `A` (a column that is zero or dependent on the others) keeps its translation,
/// takes `R = I`, and puts all of `A` in `S`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigidSplit {
    /// The rigid part: rotation `R` and translation `A c + t − R c`.
    pub dq: DualQuat,
    /// `S`, or `None` when `S` is the identity within the rigid tolerance (the joint is rigid
    /// and the residual is skipped entirely).
    pub residual: Option<Mat3>,
    /// The center `c` the residual acts about (joint space origin in the bind pose).
    pub center: Vec3,
}

impl RigidSplit {
    /// The residual as an affine map `p ↦ S p + (c − S c)`; the identity for a rigid joint.
    #[must_use]
    pub fn residual_affine(&self) -> Affine3A {
        match self.residual {
            None => Affine3A::IDENTITY,
            Some(s) => Affine3A::from_mat3_translation(s, self.center - s * self.center),
        }
    }
}

/// Splits one skin matrix about `center` (see [`RigidSplit`]).
///
/// Use `Vec3::ZERO` as the center for the seed's form. Allocates nothing.
///
/// # Errors
/// [`SkinError::NonFiniteMatrix`], [`SkinError::NonAffineMatrix`], [`SkinError::NonFiniteCenter`]
/// or [`SkinError::InvalidTolerance`]; a lone matrix is reported as joint 0.
pub fn split(matrix: Mat4, center: Vec3, rigid_tolerance: f32) -> Result<RigidSplit, SkinError> {
    check_tolerance(rigid_tolerance)?;
    check_matrix(0, &matrix)?;
    if !center.is_finite() {
        return Err(SkinError::NonFiniteCenter { joint: 0 });
    }
    Ok(split_checked(&matrix, center, rigid_tolerance))
}

/// The split of a matrix already known to be finite and affine.
fn split_checked(matrix: &Mat4, center: Vec3, rigid_tolerance: f32) -> RigidSplit {
    let a = Mat3::from_mat4(*matrix);
    let t = matrix.w_axis.truncate();
    let (a0, a1, a2) = (a.x_axis, a.y_axis, a.z_axis);
    let largest = a0.length().max(a1.length()).max(a2.length());
    let floor = largest * DEGENERATE_RELATIVE;
    let degenerate = || RigidSplit {
        dq: DualQuat::from_rotation_translation(Quat::IDENTITY, a * center + t - center),
        residual: Some(a),
        center,
    };
    if largest <= 0.0 {
        return degenerate();
    }

    let sx = a0.length();
    if sx <= floor {
        return degenerate();
    }
    let e0 = a0 / sx;
    let d01 = e0.dot(a1);
    let b1 = a1 - e0 * d01;
    let sy = b1.length();
    if sy <= floor {
        return degenerate();
    }
    let e1 = b1 / sy;
    let d02 = e0.dot(a2);
    let d12 = e1.dot(a2);
    let c1 = a2 - e0 * d02 - e1 * d12;
    let mut sz = c1.length();
    if sz <= floor {
        return degenerate();
    }
    let mut e2 = c1 / sz;
    // A reflection cannot live in a rotation: fold it into S as −1 on the third axis.
    let mirrored = e0.cross(e1).dot(e2) < 0.0;
    if mirrored {
        e2 = -e2;
        sz = -sz;
    }
    let rotation_matrix = Mat3::from_cols(e0, e1, e2);
    let rotation = Quat::from_mat3(&rotation_matrix).normalize();
    let translation = a * center + t - rotation_matrix * center;
    let dq = DualQuat::from_rotation_translation(rotation, translation);

    let tol = rigid_tolerance;
    let rigid = !mirrored
        && (sx - 1.0).abs() <= tol
        && (sy - 1.0).abs() <= tol
        && (sz - 1.0).abs() <= tol
        && d01.abs() <= tol
        && d02.abs() <= tol
        && d12.abs() <= tol;
    // Column-major: S = Rᵀ A = [[sx, d01, d02], [0, sy, d12], [0, 0, sz]].
    let residual = (!rigid).then(|| {
        Mat3::from_cols(
            Vec3::new(sx, 0.0, 0.0),
            Vec3::new(d01, sy, 0.0),
            Vec3::new(d02, d12, sz),
        )
    });
    RigidSplit {
        dq,
        residual,
        center,
    }
}

/// A palette prepared once per frame for one method; [`crate::skin_into`] reads it.
///
/// For [`Method::Linear`] it holds each skin matrix as a 3x4 affine map; for
/// [`Method::DualQuaternion`] each joint's [`RigidSplit`] as a dual quaternion, a rigid flag and
/// the residual affine map; for [`Method::CenterOfRotation`] both (the 3x4 maps place each
/// vertex's center, the split turns the vertex about it). [`PreparedPalette::update`] re-prepares it for a new frame without
/// allocating when the joint count is unchanged.
#[derive(Debug, Clone)]
pub struct PreparedPalette {
    options: SkinOptions,
    centers: Vec<Vec3>,
    pub(crate) linear: Vec<Affine3A>,
    pub(crate) dual_quats: Vec<DualQuat>,
    pub(crate) residuals: Vec<Affine3A>,
    pub(crate) rigid: Vec<bool>,
    non_rigid_joints: usize,
}

/// Validates `palette` (and `joint_centers`) and prepares it for `options.method`.
///
/// `joint_centers[j]` is joint `j`'s origin in the bind pose (the translation of
/// `bind_from_joint`), about which the DQS residual acts; `None` means the origin for every
/// joint, as in the seed. Allocates the prepared arrays; reuse them with
/// [`PreparedPalette::update`].
///
/// # Errors
/// [`SkinError::NonFiniteMatrix`], [`SkinError::NonAffineMatrix`] (naming the joint),
/// [`SkinError::CenterCount`], [`SkinError::NonFiniteCenter`], [`SkinError::InvalidTolerance`].
pub fn prepare(
    palette: &[Mat4],
    joint_centers: Option<&[Vec3]>,
    options: &SkinOptions,
) -> Result<PreparedPalette, SkinError> {
    check_tolerance(options.rigid_tolerance)?;
    let centers = match joint_centers {
        None => Vec::new(),
        Some(centers) => {
            if centers.len() != palette.len() {
                return Err(SkinError::CenterCount {
                    expected: palette.len(),
                    found: centers.len(),
                });
            }
            if let Some(joint) = centers.iter().position(|c| !c.is_finite()) {
                return Err(SkinError::NonFiniteCenter { joint });
            }
            centers.to_vec()
        }
    };
    let mut prepared = PreparedPalette {
        options: *options,
        centers,
        linear: Vec::with_capacity(palette.len()),
        dual_quats: Vec::with_capacity(palette.len()),
        residuals: Vec::with_capacity(palette.len()),
        rigid: Vec::with_capacity(palette.len()),
        non_rigid_joints: 0,
    };
    prepared.update(palette)?;
    Ok(prepared)
}

impl PreparedPalette {
    /// Re-prepares for a new frame's `palette`, keeping the method, options and centers.
    ///
    /// Allocates nothing when `palette` has no more joints than the palette prepared before.
    /// On error the previous contents are cleared (the palette is empty, so skinning with it
    /// reports [`SkinError::PaletteLength`] instead of using stale matrices).
    ///
    /// # Errors
    /// [`SkinError::NonFiniteMatrix`], [`SkinError::NonAffineMatrix`], and
    /// [`SkinError::CenterCount`] when centers were given for a different joint count.
    pub fn update(&mut self, palette: &[Mat4]) -> Result<(), SkinError> {
        self.linear.clear();
        self.dual_quats.clear();
        self.residuals.clear();
        self.rigid.clear();
        self.non_rigid_joints = 0;
        if !self.centers.is_empty() && self.centers.len() != palette.len() {
            return Err(SkinError::CenterCount {
                expected: palette.len(),
                found: self.centers.len(),
            });
        }
        for (joint, matrix) in palette.iter().enumerate() {
            check_matrix(joint, matrix)?;
        }
        for (joint, matrix) in palette.iter().enumerate() {
            let center = self.centers.get(joint).copied().unwrap_or(Vec3::ZERO);
            let split = split_checked(matrix, center, self.options.rigid_tolerance);
            self.non_rigid_joints += usize::from(split.residual.is_some());
            let method = self.options.method;
            if matches!(method, Method::Linear | Method::CenterOfRotation) {
                self.linear.push(Affine3A::from_mat4(*matrix));
            }
            if matches!(method, Method::DualQuaternion | Method::CenterOfRotation) {
                self.dual_quats.push(split.dq);
                self.residuals.push(split.residual_affine());
                self.rigid.push(split.residual.is_none());
            }
        }
        Ok(())
    }

    /// Prepares a palette given directly as rigid motions, for engines whose animation already
    /// produces dual quaternions. Each is normalized; its sign is whatever the caller stored
    /// (the kernels align signs per vertex). Every joint is rigid. Allocates the arrays.
    ///
    /// # Errors
    /// [`SkinError::InvalidDualQuat`] (naming the joint), [`SkinError::InvalidTolerance`].
    pub fn from_dual_quats(
        dual_quats: &[DualQuat],
        options: &SkinOptions,
    ) -> Result<Self, SkinError> {
        check_tolerance(options.rigid_tolerance)?;
        let mut prepared = Self {
            options: *options,
            centers: Vec::new(),
            linear: Vec::new(),
            dual_quats: Vec::new(),
            residuals: Vec::new(),
            rigid: Vec::new(),
            non_rigid_joints: 0,
        };
        for (joint, dq) in dual_quats.iter().enumerate() {
            let finite = dq.real.is_finite() && dq.dual.is_finite();
            let Some(unit) = dq.normalized().filter(|_| finite) else {
                return Err(SkinError::InvalidDualQuat { joint });
            };
            if matches!(options.method, Method::Linear | Method::CenterOfRotation) {
                prepared.linear.push(Affine3A::from_rotation_translation(
                    unit.rotation(),
                    unit.translation(),
                ));
            }
            if matches!(
                options.method,
                Method::DualQuaternion | Method::CenterOfRotation
            ) {
                prepared.dual_quats.push(unit);
                prepared.residuals.push(Affine3A::IDENTITY);
                prepared.rigid.push(true);
            }
        }
        Ok(prepared)
    }

    /// The options this palette was prepared with (method, renormalize, rigid tolerance).
    #[must_use]
    pub fn options(&self) -> &SkinOptions {
        &self.options
    }

    /// Chooses the SIMD kernels (`true`, where the CPU has them) or the scalar reference for
    /// skinning with this palette; the rest of its options stay as prepared.
    pub fn set_simd(&mut self, simd: bool) {
        self.options.simd = simd;
    }

    /// Chooses whether skinning with this palette may use the rayon pool (see
    /// [`SkinOptions::parallel`]).
    pub fn set_parallel(&mut self, parallel: bool) {
        self.options.parallel = parallel;
    }

    /// Number of joints prepared.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        match self.options.method {
            Method::Linear => self.linear.len(),
            Method::DualQuaternion | Method::CenterOfRotation => self.dual_quats.len(),
        }
    }

    /// LBS and CoR: each joint's skin matrix as a 3x4 affine map (empty for DQS palettes).
    #[must_use]
    pub fn linear_matrices(&self) -> &[Affine3A] {
        &self.linear
    }

    /// DQS and CoR: each joint's rigid part, a unit dual quaternion (empty for LBS palettes).
    #[must_use]
    pub fn dual_quats(&self) -> &[DualQuat] {
        &self.dual_quats
    }

    /// DQS and CoR: each joint's residual as the affine map `p ↦ S p + (c − S c)`; the
    /// identity for a rigid joint (empty for LBS palettes).
    #[must_use]
    pub fn residuals(&self) -> &[Affine3A] {
        &self.residuals
    }

    /// DQS and CoR: whether each joint is rigid (its residual is exactly skipped).
    #[must_use]
    pub fn rigid_flags(&self) -> &[bool] {
        &self.rigid
    }

    /// Joints whose matrix is not a rigid motion within the rigid tolerance (scale, shear,
    /// reflection or degenerate). Counted for both methods; only DQS needs their residual.
    #[must_use]
    pub fn non_rigid_joints(&self) -> usize {
        self.non_rigid_joints
    }
}

/// Checks that a palette matrix is finite and affine.
fn check_matrix(joint: usize, matrix: &Mat4) -> Result<(), SkinError> {
    if !matrix.is_finite() {
        return Err(SkinError::NonFiniteMatrix { joint });
    }
    let row = matrix.row(3);
    if row != Vec4::W {
        return Err(SkinError::NonAffineMatrix {
            joint,
            row: row.to_array(),
        });
    }
    Ok(())
}

fn check_tolerance(tolerance: f32) -> Result<(), SkinError> {
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(SkinError::InvalidTolerance { tolerance });
    }
    Ok(())
}

/// Linear blend of `Affine3A` maps: `Σ wᵢ Mᵢ`. Shared by the LBS kernel and the residual blend.
#[inline]
pub(crate) fn add_scaled_affine(sum: &mut Affine3A, map: &Affine3A, weight: f32) {
    sum.matrix3 = Mat3A::from_cols(
        sum.matrix3.x_axis + map.matrix3.x_axis * weight,
        sum.matrix3.y_axis + map.matrix3.y_axis * weight,
        sum.matrix3.z_axis + map.matrix3.z_axis * weight,
    );
    sum.translation += map.translation * weight;
}

/// The all-zero affine map, the start of a blend.
pub(crate) const ZERO_AFFINE: Affine3A = Affine3A {
    matrix3: Mat3A::ZERO,
    translation: Vec3A::ZERO,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// f32 round-off over a Gram–Schmidt and a quaternion conversion on entries of order 1-3.
    const SPLIT_TOLERANCE: f32 = 1e-5;

    fn recompose(split: &RigidSplit) -> Mat4 {
        let rigid = Mat4::from_rotation_translation(split.dq.rotation(), split.dq.translation());
        rigid * Mat4::from(split.residual_affine())
    }

    fn assert_close(a: Mat4, b: Mat4) {
        let diff = (a - b)
            .to_cols_array()
            .iter()
            .fold(0f32, |m, x| m.max(x.abs()));
        assert!(diff <= SPLIT_TOLERANCE, "{a} vs {b}: max difference {diff}");
    }

    #[test]
    fn recomposes_rotation_scale_shear_and_mirror_about_a_center() {
        let rotation = Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0);
        let shear = Mat4::from_cols(
            Vec4::new(1.0, 0.0, 0.0, 0.0),
            Vec4::new(0.4, 1.0, 0.0, 0.0),
            Vec4::new(0.0, -0.3, 1.0, 0.0),
            Vec4::W,
        );
        let center = Vec3::new(0.5, 1.0, -0.25);
        for scale in [
            Vec3::ONE,
            Vec3::splat(2.0),
            Vec3::new(1.0, 2.0, 3.0),
            Vec3::new(-1.0, 1.0, 1.0),
        ] {
            let m =
                Mat4::from_scale_rotation_translation(scale, rotation, Vec3::new(1.0, 2.0, 3.0))
                    * shear;
            let split = split(m, center, DEFAULT_RIGID_TOLERANCE).unwrap();
            assert_close(recompose(&split), m);
            let r = Mat3::from_quat(split.dq.rotation());
            assert!(
                (r.determinant() - 1.0).abs() < SPLIT_TOLERANCE,
                "R must be a rotation"
            );
            assert!(split.residual.is_some());
        }
    }

    #[test]
    fn rigid_matrix_has_no_residual() {
        let m =
            Mat4::from_rotation_translation(Quat::from_rotation_z(2.5), Vec3::new(1.0, 0.0, 2.0));
        let split = split(m, Vec3::new(0.0, 1.0, 0.0), DEFAULT_RIGID_TOLERANCE).unwrap();
        assert!(split.residual.is_none());
        assert_close(recompose(&split), m);
    }

    #[test]
    fn degenerate_matrix_keeps_translation_and_puts_all_in_residual() {
        let mut m = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
        m.y_axis = Vec4::ZERO;
        let split = split(m, Vec3::new(0.0, 1.0, 0.0), DEFAULT_RIGID_TOLERANCE).unwrap();
        assert_eq!(split.dq.rotation(), Quat::IDENTITY);
        assert_eq!(split.residual, Some(Mat3::from_mat4(m)));
        assert_close(recompose(&split), m);
    }
}
