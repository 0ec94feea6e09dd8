//! Per-frame palette preparation: validation, and for DQS and CoR the rigid/residual split.
//!
//! What is built depends only on the [`PaletteSpec`] (method and rigid tolerance): LBS palettes
//! hold the 3x4 maps and no split; how a call runs ([`crate::RunOptions`]) is not stored here.

use glam::{Affine3A, Mat3, Mat4, Quat, Vec3, Vec4};

use crate::types::{Method, PaletteSpec};
use crate::{DualQuat, SkinError};

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
/// `Vec3::ZERO` as the center makes the residual act about the origin. Allocates nothing.
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

/// The Gram–Schmidt factors of a skin matrix's 3x3 part `A = R · S`, the one computation both
/// the split and the rigidity count are made of.
struct Factors {
    /// `R`'s columns (the third negated already where `A` mirrors).
    basis: [Vec3; 3],
    /// `S`'s diagonal (`sz` negative where `A` mirrors).
    scale: Vec3,
    /// `S`'s upper triangle: `d01`, `d02`, `d12`.
    shear: Vec3,
    mirrored: bool,
}

impl Factors {
    /// The factors of `a`, or `None` when `a` is degenerate (a column zero or dependent on the
    /// others, relative to the largest).
    fn of(a: &Mat3) -> Option<Self> {
        let (a0, a1, a2) = (a.x_axis, a.y_axis, a.z_axis);
        let largest = a0.length().max(a1.length()).max(a2.length());
        let floor = largest * DEGENERATE_RELATIVE;
        if largest <= 0.0 {
            return None;
        }
        let sx = a0.length();
        if sx <= floor {
            return None;
        }
        let e0 = a0 / sx;
        let d01 = e0.dot(a1);
        let b1 = a1 - e0 * d01;
        let sy = b1.length();
        if sy <= floor {
            return None;
        }
        let e1 = b1 / sy;
        let d02 = e0.dot(a2);
        let d12 = e1.dot(a2);
        let c1 = a2 - e0 * d02 - e1 * d12;
        let mut sz = c1.length();
        if sz <= floor {
            return None;
        }
        let mut e2 = c1 / sz;
        // A reflection cannot live in a rotation: fold it into S as −1 on the third axis.
        let mirrored = e0.cross(e1).dot(e2) < 0.0;
        if mirrored {
            e2 = -e2;
            sz = -sz;
        }
        Some(Self {
            basis: [e0, e1, e2],
            scale: Vec3::new(sx, sy, sz),
            shear: Vec3::new(d01, d02, d12),
            mirrored,
        })
    }

    /// Whether `S` is the identity within `tolerance` per entry (and `A` does not mirror).
    fn is_rigid(&self, tolerance: f32) -> bool {
        // Each entry compared on its own, so that a NaN (from an overflowed length) is never
        // within tolerance.
        !self.mirrored
            && (self.scale.x - 1.0).abs() <= tolerance
            && (self.scale.y - 1.0).abs() <= tolerance
            && (self.scale.z - 1.0).abs() <= tolerance
            && self.shear.x.abs() <= tolerance
            && self.shear.y.abs() <= tolerance
            && self.shear.z.abs() <= tolerance
    }
}

/// Whether a finite, affine skin matrix is a rigid motion within `rigid_tolerance`: exactly the
/// decision [`split_checked`] makes, without building the split.
fn is_rigid_checked(matrix: &Mat4, rigid_tolerance: f32) -> bool {
    Factors::of(&Mat3::from_mat4(*matrix)).is_some_and(|f| f.is_rigid(rigid_tolerance))
}

/// The split of a matrix already known to be finite and affine.
fn split_checked(matrix: &Mat4, center: Vec3, rigid_tolerance: f32) -> RigidSplit {
    #[cfg(test)]
    tests::SPLITS.with(|count| count.set(count.get() + 1));
    let a = Mat3::from_mat4(*matrix);
    let t = matrix.w_axis.truncate();
    let Some(factors) = Factors::of(&a) else {
        return RigidSplit {
            dq: DualQuat::from_rotation_translation(Quat::IDENTITY, a * center + t - center),
            residual: Some(a),
            center,
        };
    };
    let [e0, e1, e2] = factors.basis;
    let rotation_matrix = Mat3::from_cols(e0, e1, e2);
    let rotation = Quat::from_mat3(&rotation_matrix).normalize();
    let translation = a * center + t - rotation_matrix * center;
    let dq = DualQuat::from_rotation_translation(rotation, translation);

    let Vec3 {
        x: sx,
        y: sy,
        z: sz,
    } = factors.scale;
    let Vec3 {
        x: d01,
        y: d02,
        z: d12,
    } = factors.shear;
    // Column-major: S = Rᵀ A = [[sx, d01, d02], [0, sy, d12], [0, 0, sz]].
    let residual = (!factors.is_rigid(rigid_tolerance)).then(|| {
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

/// A palette prepared once per frame for one [`PaletteSpec`]; [`crate::skin_into`] reads it.
///
/// For [`Method::Linear`] it holds each skin matrix as a 3x4 affine map and nothing else; for
/// [`Method::DualQuaternion`] each joint's [`RigidSplit`] as a dual quaternion, a rigid flag and
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
    /// `signed_entries` of `joint`'s entry aligned in sign with `pivot`: `joint ·`
    /// [`SIGNED_ENTRY_STRIDE_BYTES`], plus [`SIGNED_ENTRY_FLIP_BYTES`] (the negated entry)
    /// where `dual_quats[joint].real_dot(&dual_quats[pivot]) < 0` (the scalar kernel's sign
    /// test with `pivot` as the vertex's pivot joint). The SIMD kernels read each influence's
    /// entry through its pivot's row instead of dotting it with the pivot and negating it.
    pub(crate) signed_offsets: Vec<u16>,
    /// With the pivot sign table (else empty): per joint two 64-byte lines ([`SignedEntry`]),
    /// what the method's SIMD kernel blends for it as prepared, then negated. DQS: the dual
    /// quaternion (eight f32s; the rest zero). CoR: the joint's 3x4 of `linear` with its
    /// rotation's quaternion (the real part of `dual_quats`) in the four padding lanes, `x`,
    /// `y`, `z` in the columns' and `w` in the translation's, the negated line negating the
    /// quaternion only; the SIMD CoR kernel blends both of its blends from one line per
    /// influence.
    pub(crate) signed_entries: Vec<SignedEntry>,
    joint_count: usize,
    non_rigid_joints: usize,
}

/// One joint's 3x4, aligned to a 64-byte cache line: the SIMD kernels load a matrix as two
/// 32-byte halves, and in a 16-byte-aligned array every second half crossed a line (loads half
/// of which cross a line run at 1.7 per cycle instead of 2.8, `tools/ozz-compare/port_probe.c`). Aligned, LBS with positions only measured 1.08–1.11× and with
/// normals 1.03–1.04× at 10k vertices (`tools/ozz-compare/ab.py`, bests of 13–15 interleaved
/// rounds; docs/bench.md).
///
/// The translation's fourth lane (padding to glam, which never reads it) holds 1: the SIMD LBS
/// blend multiplies the whole 16 floats by each weight, so that lane of the blend is `Σw`, summed
/// in slot order as the scalar kernel sums it, with no instruction of its own
/// ([`TRANSLATION_PADDING_LANE`]).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct LineAligned(Affine3A);

/// Index of the translation's padding lane among the 16 f32s of a prepared `Affine3A` (layout
/// asserted in `simd::lanes`); it holds 1 ([`LineAligned`]).
pub(crate) const TRANSLATION_PADDING_LANE: usize = 15;

impl LineAligned {
    /// `matrix`, its translation's padding lane set to 1.
    fn new(matrix: Affine3A) -> Self {
        let mut aligned = Self(matrix);
        // SAFETY: an `Affine3A` is 16 f32s (three column `Vec3A`s and the translation, 16
        // bytes each; asserted in `simd::lanes`), so lane 15 is an f32 inside `aligned`.
        unsafe {
            std::ptr::from_mut(&mut aligned.0)
                .cast::<f32>()
                .add(TRANSLATION_PADDING_LANE)
                .write(1.0);
        }
        aligned
    }
}

/// One line of `PreparedPalette::signed_entries`, on its own cache line: for DQS a dual
/// quaternion in f32s 0..8 (real then dual; the rest zero); for CoR the `Affine3A`'s 16 f32s
/// (columns x, y, z, translation, four lanes each) with lanes 3, 7, 11 and 15 holding the
/// quaternion's x, y, z and w.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct SignedEntry(pub(crate) [f32; 16]);

/// Bytes from one joint's lines in `PreparedPalette::signed_entries` to the next joint's: two
/// [`SignedEntry`]s, as prepared and negated.
pub(crate) const SIGNED_ENTRY_STRIDE_BYTES: usize = 128;
/// What an offset of the pivot sign table adds to select a joint's negated line: its one bit
/// that says "sign flip".
pub(crate) const SIGNED_ENTRY_FLIP_BYTES: u16 = 64;
// Every offset of the table fits its u16, and the flip is a bit of its own.
const _: () = assert!(
    PIVOT_SIGN_TABLE_MAX_JOINTS * SIGNED_ENTRY_STRIDE_BYTES <= u16::MAX as usize + 1
        && SIGNED_ENTRY_STRIDE_BYTES == 2 * SIGNED_ENTRY_FLIP_BYTES as usize
        && SIGNED_ENTRY_FLIP_BYTES.is_power_of_two()
);

impl SignedEntry {
    /// The padding lanes of a CoR line that hold the quaternion's x, y, z and w.
    pub(crate) const QUATERNION_LANES: [usize; 4] = [3, 7, 11, TRANSLATION_PADDING_LANE];

    /// A DQS line: `dq`'s eight f32s, then zeros.
    fn dual_quat(dq: &DualQuat) -> Self {
        let mut lanes = [0.0; 16];
        lanes[..4].copy_from_slice(&dq.real.to_array());
        lanes[4..8].copy_from_slice(&dq.dual.to_array());
        Self(lanes)
    }

    /// A CoR line: `matrix` with `rotation` in its padding lanes.
    fn rotation_lanes(matrix: &Affine3A, rotation: Quat) -> Self {
        let mut lanes = [0.0; 16];
        for (column, axis) in [
            matrix.matrix3.x_axis,
            matrix.matrix3.y_axis,
            matrix.matrix3.z_axis,
            matrix.translation,
        ]
        .iter()
        .enumerate()
        {
            lanes[4 * column..4 * column + 3].copy_from_slice(&axis.to_array());
        }
        for (lane, value) in Self::QUATERNION_LANES.into_iter().zip(rotation.to_array()) {
            lanes[lane] = value;
        }
        Self(lanes)
    }
}

// No padding: a slice of `LineAligned` is a slice of `Affine3A` with the same stride.
const _: () = assert!(std::mem::size_of::<LineAligned>() == std::mem::size_of::<Affine3A>());
const _: () = assert!(std::mem::align_of::<LineAligned>() >= std::mem::align_of::<Affine3A>());

/// The most joints for which a prepared DQS or CoR palette holds its pivot sign table
/// (`PreparedPalette::signed_offsets`): 128² entries of 2 bytes, 32 KiB (each joint's row is
/// this long: 16 KiB for 64 joints). Built with every
/// `update` (64 joints: about 32,500 instructions for the table and 7,300 (DQS) or 9,300 (CoR)
/// for `signed_entries`, what the SIMD DQS kernel spends on about 700 vertices; callgrind of
/// `kernel_instructions dq pn 4 8 1` (and `cor ..`) collecting `signed_offsets_into` and
/// `fill_signed_entries`). Larger palettes skip the table, and their SIMD kernels dot each
/// influence with the pivot.
pub(crate) const PIVOT_SIGN_TABLE_MAX_JOINTS: usize = 128;

/// Bytes of one row of the pivot sign table: [`PIVOT_SIGN_TABLE_MAX_JOINTS`] offsets.
pub(crate) const PIVOT_ROW_BYTES: usize = PIVOT_SIGN_TABLE_MAX_JOINTS * size_of::<u16>();

/// Fills `offsets` with the pivot sign table of `dual_quats` (see
/// `PreparedPalette::signed_offsets`), or leaves it empty above
/// [`PIVOT_SIGN_TABLE_MAX_JOINTS`]. Each dot is `(x·x' + z·z') + (y·y' + w·w')`, the grouping
/// of glam's `Quat::dot` that [`DualQuat::real_dot`] (the scalar kernel's test) uses, so every
/// entry decides as the scalar kernel does (test `pivot_sign_table_matches_real_dot`); written
/// over the components copied apart so that the compiler vectorizes it. Allocates only the
/// first time (or when the joint count grows).
fn signed_offsets_into(dual_quats: &[DualQuat], offsets: &mut Vec<u16>) {
    offsets.clear();
    let joints = dual_quats.len();
    if joints > PIVOT_SIGN_TABLE_MAX_JOINTS {
        return;
    }
    let mut components = [[0.0f32; PIVOT_SIGN_TABLE_MAX_JOINTS]; 4];
    for (j, dq) in dual_quats.iter().enumerate() {
        for (c, value) in dq.real.to_array().into_iter().enumerate() {
            components[c][j] = value;
        }
    }
    let [x, y, z, w] = components.each_ref().map(|c| &c[..joints]);
    offsets.reserve(joints * PIVOT_SIGN_TABLE_MAX_JOINTS);
    // Entries past the joint count stay 0 (line 0: a valid offset, never read).
    let mut row = [0u16; PIVOT_SIGN_TABLE_MAX_JOINTS];
    for pivot in dual_quats {
        let [px, py, pz, pw] = pivot.real.to_array();
        for (j, offset) in row[..joints].iter_mut().enumerate() {
            let dot = (x[j] * px + z[j] * pz) + (y[j] * py + w[j] * pw);
            // Below 128 · 128 (asserted with the constants): the cast keeps every bit.
            let line = (j * SIGNED_ENTRY_STRIDE_BYTES) as u16;
            *offset = line
                | if dot < 0.0 {
                    SIGNED_ENTRY_FLIP_BYTES
                } else {
                    0
                };
        }
        offsets.extend_from_slice(&row);
    }
}

/// The shortest and the longest length of the rotation parts of `dual_quats`: `(∞, 0)` for
/// none, `(NaN, NaN)` where one is not finite.
pub(crate) fn real_length_range(dual_quats: &[DualQuat]) -> (f32, f32) {
    let mut range = (f32::INFINITY, 0.0f32);
    for dq in dual_quats {
        let length = dq.real.length();
        if !length.is_finite() {
            return (f32::NAN, f32::NAN);
        }
        range = (range.0.min(length), range.1.max(length));
    }
    range
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
        self.signed_offsets.clear();
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
            for (joint, matrix) in palette.iter().enumerate() {
                let center = self.centers.get(joint).copied().unwrap_or(Vec3::ZERO);
                let split = split_checked(matrix, center, tolerance);
                self.non_rigid_joints += usize::from(split.residual.is_some());
                self.dual_quats.push(split.dq);
                self.residuals.push(split.residual_affine());
                self.rigid.push(split.residual.is_none());
            }
            signed_offsets_into(&self.dual_quats, &mut self.signed_offsets);
            self.real_length_range = real_length_range(&self.dual_quats);
        } else {
            self.non_rigid_joints = palette
                .iter()
                .filter(|matrix| !is_rigid_checked(matrix, tolerance))
                .count();
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
        signed_offsets_into(&prepared.dual_quats, &mut prepared.signed_offsets);
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

    /// Fills `signed_entries` for a DQS or CoR palette with a pivot sign table (the SIMD
    /// kernels' path); leaves it empty otherwise.
    fn fill_signed_entries(&mut self) {
        if self.signed_offsets.is_empty() {
            return;
        }
        match self.spec.method {
            Method::Linear => {}
            Method::DualQuaternion => {
                for dq in &self.dual_quats {
                    self.signed_entries.push(SignedEntry::dual_quat(dq));
                    self.signed_entries
                        .push(SignedEntry::dual_quat(&dq.negated()));
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DEFAULT_RIGID_TOLERANCE;

    thread_local! {
        /// Splits built on this thread ([`split_checked`] calls), to check which palettes
        /// build none.
        pub(super) static SPLITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Splits that `prepare` and one `update` build for `method` on `palette`.
    fn splits_built(method: Method, palette: &[Mat4]) -> (PreparedPalette, usize) {
        let before = SPLITS.with(std::cell::Cell::get);
        let mut prepared = prepare(palette, None, method).unwrap();
        prepared.update(palette).unwrap();
        (prepared, SPLITS.with(std::cell::Cell::get) - before)
    }

    /// The rotation parts' length range the SIMD kernels decide from follows every
    /// preparation: about 1 for the unit dual quaternions of a DQS or CoR palette (prepared or
    /// given as dual quaternions), none for LBS, and none after a failed `update`; a part that
    /// is not finite gives NaN. (A range left from an earlier palette would let the kernels skip
    /// a test the new palette needs.)
    #[test]
    fn real_length_range_follows_each_preparation() {
        let near_one =
            |(low, high): (f32, f32)| (low - 1.0).abs() < 1e-6 && (high - 1.0).abs() < 1e-6;
        let palette: Vec<Mat4> = (0..5)
            .map(|j| Mat4::from_rotation_y(0.4 * j as f32) * Mat4::from_translation(Vec3::X))
            .collect();
        let mut dqs = prepare(&palette, None, Method::DualQuaternion).unwrap();
        assert!(
            near_one(dqs.real_length_range),
            "{:?}",
            dqs.real_length_range
        );
        let lbs = prepare(&palette, None, Method::Linear).unwrap();
        assert_eq!(lbs.real_length_range, (f32::INFINITY, 0.0));
        let mut broken = palette.clone();
        broken[2].x_axis.x = f32::NAN;
        assert!(dqs.update(&broken).is_err());
        assert_eq!(dqs.real_length_range, (f32::INFINITY, 0.0));
        let given = [DualQuat::from_rotation_translation(Quat::IDENTITY, Vec3::Y); 3];
        let given = PreparedPalette::from_dual_quats(&given, Method::CenterOfRotation).unwrap();
        assert!(
            near_one(given.real_length_range),
            "{:?}",
            given.real_length_range
        );
        let nan = DualQuat {
            real: Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
            dual: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        };
        assert!(real_length_range(&[given.dual_quats[0], nan]).0.is_nan());
    }

    /// Every entry of the pivot sign table is the scalar kernel's test, `real_dot < 0`, with
    /// the row's joint as the pivot: on rotations about many axes and on pairs whose dot is
    /// within a few ulps of zero (where a different summation order changes the sign); and
    /// no table above `PIVOT_SIGN_TABLE_MAX_JOINTS` joints. (Seen failing with the dot summed
    /// left to right, `((x·x' + y·y') + z·z') + w·w'`.)
    #[test]
    fn pivot_sign_table_matches_real_dot() {
        let mut dual_quats: Vec<DualQuat> = (0..40)
            .map(|j| {
                let axis = Vec3::new(1.0, 0.3 * j as f32, -0.7 + 0.11 * j as f32).normalize();
                let rotation = Quat::from_axis_angle(axis, 0.37 * j as f32);
                let dq = DualQuat::from_rotation_translation(rotation, Vec3::X * j as f32);
                if j % 3 == 0 {
                    dq.negated()
                } else {
                    dq
                }
            })
            .collect();
        // Orthogonal pairs whose dot is 0 in one grouping and about ±1e-8 in the other
        // (found by a search over random f32 quaternions): a different order flips them.
        for [a, b] in [
            [
                [0.05118375, 0.6755597, -0.5033515, 0.5363176],
                [-0.12600248, 0.28035495, 0.8399571, 0.44720975],
            ],
            [
                [0.45018375, -0.41795734, -0.7886218, -0.026868649],
                [-0.2579075, 0.74248934, -0.529884, -0.31845912],
            ],
            [
                [0.28209904, 0.8220028, -0.38024837, -0.31645322],
                [0.5572617, 0.0058134506, -0.23641984, 0.7959468],
            ],
        ] {
            for real in [a, b] {
                dual_quats.push(DualQuat {
                    real: Quat::from_array(real),
                    dual: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
                });
            }
        }
        // Straight from the quaternions (a prepared palette would normalize them first).
        let mut offsets = Vec::new();
        signed_offsets_into(&dual_quats, &mut offsets);
        let joints = dual_quats.len();
        assert_eq!(offsets.len(), joints * PIVOT_SIGN_TABLE_MAX_JOINTS);
        let mut flips = 0;
        for (pivot, pivot_dq) in dual_quats.iter().enumerate() {
            for (joint, dq) in dual_quats.iter().enumerate() {
                let flip = dq.real_dot(pivot_dq) < 0.0;
                flips += usize::from(flip);
                let expected = 128 * joint + if flip { 64 } else { 0 };
                assert_eq!(
                    usize::from(offsets[pivot * PIVOT_SIGN_TABLE_MAX_JOINTS + joint]),
                    expected,
                    "pivot {pivot}, joint {joint}"
                );
            }
            // Past the joint count: 0, a valid offset.
            let row =
                &offsets[pivot * PIVOT_SIGN_TABLE_MAX_JOINTS..][..PIVOT_SIGN_TABLE_MAX_JOINTS];
            assert!(row[joints..].iter().all(|&offset| offset == 0));
        }
        assert!(flips > joints, "the palette flips: {flips}");
        let many = vec![Mat4::IDENTITY; PIVOT_SIGN_TABLE_MAX_JOINTS + 1];
        let mut large = prepare(&many, None, Method::CenterOfRotation).unwrap();
        assert!(large.signed_offsets.is_empty());
        large.update(&many[..PIVOT_SIGN_TABLE_MAX_JOINTS]).unwrap();
        assert_eq!(
            large.signed_offsets.len(),
            PIVOT_SIGN_TABLE_MAX_JOINTS * PIVOT_SIGN_TABLE_MAX_JOINTS
        );
    }

    /// The signed entries the pivot sign table points into, on cache lines, through
    /// `update`: a CoR palette holds each joint's 3x4 with its rotation's quaternion in the
    /// padding lanes (x, y, z in the columns', w in the translation's), then the same with the
    /// quaternion negated; a DQS palette each dual quaternion, then its negation (zeros after
    /// the eight f32s); LBS palettes and palettes without a table hold none.
    #[test]
    fn signed_entries_are_each_joint_as_prepared_then_negated() {
        let frame = |t: f32| -> Vec<Mat4> {
            (0..9)
                .map(|j| {
                    let axis = Vec3::new(0.2 * j as f32, 1.0, -0.5).normalize();
                    Mat4::from_rotation_translation(
                        Quat::from_axis_angle(axis, t + 0.8 * j as f32),
                        Vec3::new(j as f32, -t, 0.5),
                    )
                })
                .collect()
        };
        let mut cor = prepare(&frame(0.3), None, Method::CenterOfRotation).unwrap();
        let mut dq = prepare(&frame(0.3), None, Method::DualQuaternion).unwrap();
        for t in [0.3, 2.9] {
            cor.update(&frame(t)).unwrap();
            dq.update(&frame(t)).unwrap();
            assert_eq!(cor.signed_entries.len(), 18);
            assert_eq!(dq.signed_entries.len(), 18);
            for (joint, (matrix, rigid)) in cor
                .linear_matrices()
                .iter()
                .zip(&cor.dual_quats)
                .enumerate()
            {
                let columns = [
                    matrix.matrix3.x_axis,
                    matrix.matrix3.y_axis,
                    matrix.matrix3.z_axis,
                    matrix.translation,
                ];
                for (sign, entry) in [1.0, -1.0].iter().zip(&cor.signed_entries[2 * joint..]) {
                    assert_eq!(std::ptr::from_ref(entry) as usize % 64, 0);
                    for (c, column) in columns.iter().enumerate() {
                        assert_eq!(entry.0[4 * c..4 * c + 3], column.to_array());
                    }
                    let quaternion = SignedEntry::QUATERNION_LANES.map(|lane| entry.0[lane]);
                    assert_eq!(quaternion, (rigid.real * *sign).to_array());
                }
            }
            for (joint, rigid) in dq.dual_quats.iter().enumerate() {
                for (dual_quat, entry) in [*rigid, rigid.negated()]
                    .iter()
                    .zip(&dq.signed_entries[2 * joint..])
                {
                    assert_eq!(std::ptr::from_ref(entry) as usize % 64, 0);
                    assert_eq!(entry.0[..4], dual_quat.real.to_array());
                    assert_eq!(entry.0[4..8], dual_quat.dual.to_array());
                    assert_eq!(entry.0[8..], [0.0; 8]);
                }
            }
        }
        let linear = prepare(&frame(0.3), None, Method::Linear).unwrap();
        assert!(linear.signed_entries.is_empty() && linear.signed_offsets.is_empty());
        let many = vec![Mat4::IDENTITY; PIVOT_SIGN_TABLE_MAX_JOINTS + 1];
        for method in [Method::CenterOfRotation, Method::DualQuaternion] {
            let large = prepare(&many, None, method).unwrap();
            assert!(large.signed_entries.is_empty(), "{method:?}");
        }
    }

    #[test]
    fn linear_matrices_start_on_cache_lines() {
        let palette: Vec<Mat4> = (0..7)
            .map(|j| Mat4::from_rotation_translation(Quat::from_rotation_y(j as f32), Vec3::X))
            .collect();
        let on_line = |p: &PreparedPalette| {
            let matrices = p.linear_matrices();
            assert_eq!(matrices.len(), palette.len());
            matrices
                .iter()
                .all(|m| (std::ptr::from_ref(m) as usize).is_multiple_of(64))
        };
        // Several live at once: a 16-byte-aligned allocator would put some of them off a line
        // (one in four starts on one by chance).
        let several: Vec<PreparedPalette> = (0..8)
            .map(|_| prepare(&palette, None, Method::Linear).unwrap())
            .collect();
        assert!(several.iter().all(on_line), "prepare");
        let mut prepared = prepare(&palette, None, Method::CenterOfRotation).unwrap();
        assert!(on_line(&prepared), "prepare");
        prepared.update(&palette).unwrap();
        assert!(on_line(&prepared), "update");
        let dual_quats: Vec<DualQuat> = palette
            .iter()
            .map(|m| DualQuat::from_rotation_translation(Quat::from_mat4(m), m.w_axis.truncate()))
            .collect();
        let from_dq = PreparedPalette::from_dual_quats(&dual_quats, Method::Linear).unwrap();
        assert!(on_line(&from_dq), "from_dual_quats");
        for (a, b) in prepared.linear_matrices().iter().zip(&palette) {
            assert_eq!(*a, Affine3A::from_mat4(*b), "the matrices themselves");
        }
    }

    #[test]
    fn lbs_palettes_build_no_split_but_count_the_same_non_rigid_joints() {
        let sheared = Mat4::from_cols(
            Vec4::new(1.0, 0.0, 0.0, 0.0),
            Vec4::new(0.4, 1.0, 0.0, 0.0),
            Vec4::Z,
            Vec4::W,
        );
        let mut degenerate = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
        degenerate.y_axis = Vec4::ZERO;
        let mirrored = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
        let rigid = Mat4::from_rotation_translation(Quat::from_rotation_z(2.5), Vec3::X);
        let palette = [rigid, sheared, degenerate, mirrored, Mat4::IDENTITY];

        let (lbs, lbs_splits) = splits_built(Method::Linear, &palette);
        assert_eq!(
            lbs_splits, 0,
            "an LBS palette must not build the rigid split"
        );
        assert!(lbs.dual_quats().is_empty() && lbs.residuals().is_empty());
        assert!(lbs.rigid_flags().is_empty());
        assert_eq!(lbs.linear_matrices().len(), palette.len());
        assert_eq!(lbs.joint_count(), palette.len());

        for method in [Method::DualQuaternion, Method::CenterOfRotation] {
            let (split, splits) = splits_built(method, &palette);
            assert_eq!(
                splits,
                2 * palette.len(),
                "{method}: prepare and update split each joint"
            );
            assert_eq!(split.non_rigid_joints(), 3, "{method}");
            assert_eq!(lbs.non_rigid_joints(), split.non_rigid_joints(), "{method}");
        }
        let dq_only = prepare(&palette, None, Method::DualQuaternion).unwrap();
        assert!(dq_only.linear_matrices().is_empty());
    }

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
