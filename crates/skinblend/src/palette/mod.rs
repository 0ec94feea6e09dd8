//! Per-frame palette preparation: validation, and for DQS and CoR the rigid/residual split
//! (`rigid_split`) and the pivot sign table the SIMD kernels read.
//!
//! What is built depends only on the [`PaletteSpec`] (method and rigid tolerance): LBS palettes
//! hold the 3x4 maps and no split; how a call runs ([`crate::RunOptions`]) is not stored here.

use glam::{Affine3A, Mat4, Vec3};

use crate::dual_quat::DualQuat;
use crate::error::SkinError;
use crate::rigid_split::{check_matrix, check_tolerance, non_rigid_count, split_each};
use crate::simd::layout::{LineAligned, SignedEntry, SignedLayout, PIVOT_SIGN_TABLE_MAX_JOINTS};
use crate::types::{Method, PaletteSpec};

/// A palette prepared once per frame for one [`PaletteSpec`]; [`crate::skin_into`] reads it.
///
/// For [`Method::Linear`] it holds each skin matrix as a 3x4 affine map and nothing else; for
/// [`Method::DualQuaternion`] each joint's [`crate::RigidSplit`] as a dual quaternion, a rigid flag and
/// the residual affine map; for [`Method::CenterOfRotation`] both (the 3x4 maps place each
/// vertex's center, the split turns the vertex about it). It holds no run-time choice (threads,
/// SIMD, renormalization: [`crate::RunOptions`]), so one palette serves every way of running.
/// [`PreparedPalette::update`] re-prepares it for a new frame without allocating when the joint
/// count is unchanged.
#[derive(Debug, Clone)]
pub struct PreparedPalette {
    spec: PaletteSpec,
    centers: Vec<Vec3>,
    /// Each joint's 3x4 on its own cache line ([`LineAligned`]); read as `&[Affine3A]` through
    /// [`PreparedPalette::linear_matrices`].
    linear: Vec<LineAligned>,
    pub(crate) dual_quats: Vec<DualQuat>,
    pub(crate) residuals: Vec<Affine3A>,
    pub(crate) rigid: Vec<bool>,
    /// The largest column length of any joint's 3x3 in `linear` (0 when empty): with
    /// non-negative weights summing to `Σw`, no column of a blended 3x3 is longer than
    /// `Σw` times this, which lets the SIMD LBS kernel clear its singular test for a whole block
    /// without computing each blend's column lengths.
    pub(crate) largest_column_length: f32,
    /// The shortest and the longest rotation part (`real`) of `dual_quats`
    /// ([`real_length_range`]), from which the SIMD DQS and CoR kernels decide once per call
    /// whether a blended rotation can be too short or too long to normalize.
    pub(crate) real_length_range: (f32, f32),
    /// The pivot sign table. DQS and CoR with at most [`PIVOT_SIGN_TABLE_MAX_JOINTS`] joints
    /// (else empty): a row of [`PIVOT_SIGN_TABLE_MAX_JOINTS`] entries ([`PIVOT_ROW_BYTES`]) per
    /// joint, whatever the joint count, so that a row's offset is `pivot << 8`, which
    /// `Influences::pivots` holds for each vertex (entries past the joint count are 0 and never
    /// read); entry `pivot · PIVOT_SIGN_TABLE_MAX_JOINTS + joint` is the byte offset in
    /// `signed_entries` of `joint`'s entry aligned in sign with `pivot`: `joint ·` the
    /// method's [`SignedLayout`] stride, plus its flip bytes (the negated entry) where `dual_quats[joint].real_dot(&dual_quats[pivot]) < 0` (the scalar kernel's sign
    /// test with `pivot` as the vertex's pivot joint). The SIMD kernels read each influence's
    /// entry through its pivot's row instead of dotting it with the pivot and negating it.
    pub(crate) signed_offsets: Vec<u16>,
    /// With the pivot sign table (else empty): what the method's SIMD kernel blends for each
    /// joint as prepared, then negated, laid out as [`PreparedPalette::signed_layout`] says.
    /// DQS and blended: one 64-byte line ([`SignedEntry`]) per joint, the dual quaternion then
    /// its negation. CoR: two lines per joint, the joint's 3x4 of `linear` with its rotation's
    /// quaternion (the real part of `dual_quats`) in the four padding lanes, `x`, `y`, `z` in
    /// the columns' and `w` in the translation's, the second line negating the quaternion
    /// only; the SIMD CoR kernel blends both of its blends from one line per influence.
    pub(crate) signed_entries: Vec<SignedEntry>,
    joint_count: usize,
    non_rigid_joints: usize,
}

/// Fills `offsets` with the pivot sign table of `dual_quats` (see
/// `PreparedPalette::signed_offsets`), or leaves it empty above
/// [`PIVOT_SIGN_TABLE_MAX_JOINTS`]. Each dot is `(x·x' + z·z') + (y·y' + w·w')`, the grouping
/// of glam's `Quat::dot` that [`DualQuat::real_dot`] (the scalar kernel's test) uses, so every
/// entry decides as the scalar kernel does (test `pivot_sign_table_matches_real_dot`).
/// Sixteen entries at a time with AVX2 (`simd::sign_table`), else [`pivot_sign_rows_scalar`].
/// A table of the same joint count is written over in place: its entries past the joint count
/// are already 0. Allocates only the first time (or when the joint count grows).
fn signed_offsets_into(dual_quats: &[DualQuat], layout: SignedLayout, offsets: &mut Vec<u16>) {
    let joints = dual_quats.len();
    if joints > PIVOT_SIGN_TABLE_MAX_JOINTS {
        offsets.clear();
        return;
    }
    if offsets.len() != joints * PIVOT_SIGN_TABLE_MAX_JOINTS {
        offsets.clear();
        offsets.resize(joints * PIVOT_SIGN_TABLE_MAX_JOINTS, 0);
    }
    let mut real = [[0.0f32; PIVOT_SIGN_TABLE_MAX_JOINTS]; 4];
    for (j, dq) in dual_quats.iter().enumerate() {
        for (c, value) in dq.real.to_array().into_iter().enumerate() {
            real[c][j] = value;
        }
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = crate::simd::cpu::Avx2Fma::detect() {
        // SAFETY: the token proves AVX2 (`Avx2Fma::detect`).
        unsafe { crate::simd::sign_table::pivot_sign_rows(avx2, &real, joints, layout, offsets) };
        return;
    }
    pivot_sign_rows_scalar(&real, joints, layout, offsets);
}

/// The pivot sign table's definition: entry `pivot · PIVOT_SIGN_TABLE_MAX_JOINTS + joint` of
/// `rows`, for `pivot` and `joint` below `joints`, is `joint · layout.stride_bytes`, plus
/// `layout.flip_bytes` where the dot of the two joints' rotation parts (`real`: `x`, `y`,
/// `z`, `w` of each joint) is below 0; other entries are left as they are.
fn pivot_sign_rows_scalar(
    real: &[[f32; PIVOT_SIGN_TABLE_MAX_JOINTS]; 4],
    joints: usize,
    layout: SignedLayout,
    rows: &mut [u16],
) {
    let [x, y, z, w] = real.each_ref().map(|c| &c[..joints]);
    for (pivot, row) in rows
        .chunks_exact_mut(PIVOT_SIGN_TABLE_MAX_JOINTS)
        .take(joints)
        .enumerate()
    {
        let [px, py, pz, pw] = [x[pivot], y[pivot], z[pivot], w[pivot]];
        for (j, offset) in row[..joints].iter_mut().enumerate() {
            let dot = (x[j] * px + z[j] * pz) + (y[j] * py + w[j] * pw);
            // Below 65,536 (asserted with the layouts): the cast keeps every bit.
            let line = (j * usize::from(layout.stride_bytes)) as u16;
            *offset = line | if dot < 0.0 { layout.flip_bytes } else { 0 };
        }
    }
}

/// The shortest and the longest length of the rotation parts of `dual_quats`: `(∞, 0)` for
/// none, `(NaN, NaN)` where one is not finite. Each length is `Quat::length`'s, the square root
/// of `(x·x + z·z) + (y·y + w·w)`; the square roots of the smallest and largest squares are
/// the smallest and largest lengths to the bit (a rounded square root never decreases as its
/// argument grows), so two square roots are taken instead of one per joint, and the squares are
/// folded eight joints side by side. A length is finite exactly where its square is.
pub(crate) fn real_length_range(dual_quats: &[DualQuat]) -> (f32, f32) {
    const LANES: usize = 8;
    let square = |dq: &DualQuat| {
        let [x, y, z, w] = dq.real.to_array();
        (x * x + z * z) + (y * y + w * w)
    };
    let mut low = [f32::INFINITY; LANES];
    let mut high = [0.0f32; LANES];
    // Each lane's sum of `s · 0`: 0 while every square is finite, NaN from the first that is not.
    let mut finite = [0.0f32; LANES];
    let mut fold = |lane: usize, s: f32| {
        // Selects, not `f32::min`/`max`, so that the compiler keeps eight lanes (a NaN square is
        // caught by `finite`).
        low[lane] = if s < low[lane] { s } else { low[lane] };
        high[lane] = if s > high[lane] { s } else { high[lane] };
        finite[lane] += s * 0.0;
    };
    let blocks = dual_quats.chunks_exact(LANES);
    let rest = blocks.remainder();
    for block in blocks {
        for (lane, dq) in block.iter().enumerate() {
            fold(lane, square(dq));
        }
    }
    for (lane, dq) in rest.iter().enumerate() {
        fold(lane, square(dq));
    }
    if finite.iter().any(|f| f.is_nan()) {
        return (f32::NAN, f32::NAN);
    }
    let low = low.into_iter().fold(f32::INFINITY, f32::min);
    let high = high.into_iter().fold(0.0, f32::max);
    (low.sqrt(), high.sqrt())
}

/// The largest column length of the 3x3 parts of `matrices` (0 for none).
fn largest_column_length(matrices: &[Affine3A]) -> f32 {
    matrices
        .iter()
        .map(|m| {
            let m = m.matrix3;
            m.x_axis
                .length_squared()
                .max(m.y_axis.length_squared())
                .max(m.z_axis.length_squared())
        })
        .fold(0.0, f32::max)
        .sqrt()
}

/// Validates `palette` (and `joint_centers`) and prepares it for `spec`: a [`PaletteSpec`], a
/// [`Method`] (with the default rigid tolerance) or a `&`[`crate::SkinOptions`].
///
/// `joint_centers[j]` is joint `j`'s origin in the bind pose (the translation of
/// `bind_from_joint`), about which the DQS residual acts; `None` means the origin for every
/// joint. Allocates the prepared arrays; reuse them with [`PreparedPalette::update`].
///
/// # Errors
/// [`SkinError::NonFiniteMatrix`], [`SkinError::NonAffineMatrix`] (naming the joint),
/// [`SkinError::CenterCount`], [`SkinError::NonFiniteCenter`], [`SkinError::InvalidTolerance`].
pub fn prepare(
    palette: &[Mat4],
    joint_centers: Option<&[Vec3]>,
    spec: impl Into<PaletteSpec>,
) -> Result<PreparedPalette, SkinError> {
    let spec = spec.into();
    check_tolerance(spec.rigid_tolerance)?;
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
    let method = spec.method;
    let capacity = |used: bool| if used { palette.len() } else { 0 };
    let mut prepared = PreparedPalette {
        spec,
        centers,
        linear: Vec::with_capacity(capacity(method.uses_skin_matrices())),
        dual_quats: Vec::with_capacity(capacity(method.uses_rigid_split())),
        residuals: Vec::with_capacity(capacity(method.uses_rigid_split())),
        rigid: Vec::with_capacity(capacity(method.uses_rigid_split())),
        largest_column_length: 0.0,
        real_length_range: real_length_range(&[]),
        signed_offsets: Vec::new(),
        signed_entries: Vec::new(),
        joint_count: 0,
        non_rigid_joints: 0,
    };
    prepared.update(palette)?;
    Ok(prepared)
}

impl PreparedPalette {
    /// Re-prepares for a new frame's `palette`, keeping the spec and centers.
    ///
    /// Allocates nothing when `palette` has no more joints than the palette prepared before.
    /// On error the previous contents are cleared (the palette is empty, so skinning with it
    /// reports [`SkinError::PaletteLength`] instead of using stale matrices). An LBS palette
    /// builds no split: it only stores the 3x4 maps and counts the non-rigid joints (the
    /// Gram–Schmidt test of the split, without its rotation, dual quaternion or residual).
    ///
    /// # Errors
    /// [`SkinError::NonFiniteMatrix`], [`SkinError::NonAffineMatrix`], and
    /// [`SkinError::CenterCount`] when centers were given for a different joint count.
    pub fn update(&mut self, palette: &[Mat4]) -> Result<(), SkinError> {
        self.linear.clear();
        self.dual_quats.clear();
        self.residuals.clear();
        self.rigid.clear();
        // Taken so that an error leaves the palette without a table, and put back, written
        // over in place, when the split succeeds.
        let mut signed_offsets = std::mem::take(&mut self.signed_offsets);
        self.signed_entries.clear();
        self.largest_column_length = 0.0;
        self.real_length_range = real_length_range(&[]);
        self.joint_count = 0;
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
        let method = self.spec.method;
        let tolerance = self.spec.rigid_tolerance;
        if method.uses_skin_matrices() {
            self.linear.extend(
                palette
                    .iter()
                    .map(|matrix| LineAligned::new(Affine3A::from_mat4(*matrix))),
            );
            self.largest_column_length = largest_column_length(self.linear_matrices());
        }
        if method.uses_rigid_split() {
            let centers = &self.centers;
            let center = |joint: usize| centers.get(joint).copied().unwrap_or(Vec3::ZERO);
            let (dual_quats, residuals, rigid) =
                (&mut self.dual_quats, &mut self.residuals, &mut self.rigid);
            // Rigid joints' residuals and flags as filled here; `split_each` visits every joint
            // in order and writes the others'. Pushed one by one, the three arrays took about
            // 0.2 µs more at 64 DQS joints (`examples/palette_update.rs`: 2.62–2.80 µs, this
            // 2.38–2.49, the AMD EPYC Zen 3 VM).
            residuals.resize(palette.len(), Affine3A::IDENTITY);
            rigid.resize(palette.len(), true);
            let mut joint = 0;
            split_each(palette, center, tolerance, |split| {
                dual_quats.push(split.dq);
                if split.residual.is_some() {
                    residuals[joint] = split.residual_affine();
                    rigid[joint] = false;
                }
                joint += 1;
            });
            self.non_rigid_joints = self.rigid.iter().filter(|&&rigid| !rigid).count();
            signed_offsets_into(&self.dual_quats, self.signed_layout(), &mut signed_offsets);
            self.signed_offsets = signed_offsets;
            self.real_length_range = real_length_range(&self.dual_quats);
        } else {
            self.non_rigid_joints = non_rigid_count(palette, tolerance);
        }
        self.fill_signed_entries();
        self.joint_count = palette.len();
        Ok(())
    }

    /// Prepares a palette given directly as rigid motions, for engines whose animation already
    /// produces dual quaternions, for `spec` (as [`prepare`]). Each is normalized; its sign is
    /// whatever the caller stored (the kernels align signs per vertex). Every joint is rigid.
    /// Allocates the arrays.
    ///
    /// # Errors
    /// [`SkinError::InvalidDualQuat`] (naming the joint), [`SkinError::InvalidTolerance`].
    pub fn from_dual_quats(
        dual_quats: &[DualQuat],
        spec: impl Into<PaletteSpec>,
    ) -> Result<Self, SkinError> {
        let spec = spec.into();
        check_tolerance(spec.rigid_tolerance)?;
        let mut prepared = Self {
            spec,
            centers: Vec::new(),
            linear: Vec::new(),
            dual_quats: Vec::new(),
            residuals: Vec::new(),
            rigid: Vec::new(),
            largest_column_length: 0.0,
            real_length_range: real_length_range(&[]),
            signed_offsets: Vec::new(),
            signed_entries: Vec::new(),
            joint_count: dual_quats.len(),
            non_rigid_joints: 0,
        };
        for (joint, dq) in dual_quats.iter().enumerate() {
            let finite = dq.real.is_finite() && dq.dual.is_finite();
            let Some(unit) = dq.normalized().filter(|_| finite) else {
                return Err(SkinError::InvalidDualQuat { joint });
            };
            if spec.method.uses_skin_matrices() {
                prepared
                    .linear
                    .push(LineAligned::new(Affine3A::from_rotation_translation(
                        unit.rotation(),
                        unit.translation(),
                    )));
            }
            if spec.method.uses_rigid_split() {
                prepared.dual_quats.push(unit);
                prepared.residuals.push(Affine3A::IDENTITY);
                prepared.rigid.push(true);
            }
        }
        prepared.largest_column_length = largest_column_length(prepared.linear_matrices());
        prepared.real_length_range = real_length_range(&prepared.dual_quats);
        let layout = prepared.signed_layout();
        signed_offsets_into(&prepared.dual_quats, layout, &mut prepared.signed_offsets);
        prepared.fill_signed_entries();
        Ok(prepared)
    }

    /// What this palette was prepared for (method and rigid tolerance).
    #[must_use]
    pub fn spec(&self) -> &PaletteSpec {
        &self.spec
    }

    /// The method this palette was prepared for.
    #[must_use]
    pub fn method(&self) -> Method {
        self.spec.method
    }

    /// Number of joints prepared.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// How `signed_entries` is laid out for this palette's method (what the pivot sign table's
    /// offsets point to; unused by LBS).
    pub(crate) fn signed_layout(&self) -> SignedLayout {
        match self.spec.method {
            Method::CenterOfRotation => SignedLayout::ROTATION_LANES,
            Method::Linear | Method::DualQuaternion | Method::Blended => SignedLayout::DUAL_QUAT,
        }
    }

    /// Fills `signed_entries` for a DQS or CoR palette with a pivot sign table (the SIMD
    /// kernels' path); leaves it empty otherwise.
    fn fill_signed_entries(&mut self) {
        if self.signed_offsets.is_empty() {
            return;
        }
        match self.spec.method {
            Method::Linear => {}
            // Blended's SIMD kernel blends dual quaternions as DQS's does.
            Method::DualQuaternion | Method::Blended => {
                self.signed_entries
                    .extend(self.dual_quats.iter().map(SignedEntry::dual_quat));
            }
            Method::CenterOfRotation => {
                for (matrix, dq) in self.linear.iter().zip(&self.dual_quats) {
                    for rotation in [dq.real, -dq.real] {
                        let entry = SignedEntry::rotation_lanes(&matrix.0, rotation);
                        self.signed_entries.push(entry);
                    }
                }
            }
        }
    }

    /// LBS and CoR: each joint's skin matrix as a 3x4 affine map (empty for DQS palettes).
    #[must_use]
    pub fn linear_matrices(&self) -> &[Affine3A] {
        // SAFETY: `LineAligned` is `repr(C)` around one `Affine3A` and has its size (asserted
        // above), so the elements of `self.linear` are `Affine3A`s at a stride of their size;
        // the slice borrows `self`.
        unsafe { std::slice::from_raw_parts(self.linear.as_ptr().cast(), self.linear.len()) }
    }

    /// The joints' 3x4s, for tests that poison their padding lanes.
    #[cfg(test)]
    pub(crate) fn linear_matrices_mut(&mut self) -> &mut [Affine3A] {
        // SAFETY: as in `linear_matrices`, borrowing `self` mutably.
        unsafe {
            std::slice::from_raw_parts_mut(self.linear.as_mut_ptr().cast(), self.linear.len())
        }
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
    /// reflection or degenerate). Counted for every method; only DQS and CoR need their
    /// residual.
    #[must_use]
    pub fn non_rigid_joints(&self) -> usize {
        self.non_rigid_joints
    }
}

#[cfg(test)]
mod tests;
