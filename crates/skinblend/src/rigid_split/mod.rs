//! The rigid/residual split of one skin matrix (Gram–Schmidt): the rigid motion a dual
//! quaternion carries exactly and the residual it cannot, and the checks of a palette matrix.

use glam::{Affine3A, Mat3, Mat4, Quat, Vec3, Vec4};

use crate::dual_quat::DualQuat;
use crate::error::SkinError;

mod lanes;

pub(crate) use lanes::{non_rigid_count, split_each};

/// A column whose Gram–Schmidt remainder is at most this fraction of the largest column is
/// treated as zero: the matrix has no usable rotation basis. Well above f32 round-off (1.2e-7 per
/// operation) so a column parallel to another is caught, well below real scales.
pub(crate) const DEGENERATE_RELATIVE: f32 = 1e-6;

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
/// decision [`split_checked`] makes, without building the split; one matrix at a time, the
/// definition [`non_rigid_count`] is tested against.
#[cfg(test)]
fn is_rigid_checked(matrix: &Mat4, rigid_tolerance: f32) -> bool {
    Factors::of(&Mat3::from_mat4(*matrix)).is_some_and(|f| f.is_rigid(rigid_tolerance))
}

/// The split of a matrix already known to be finite and affine.
pub(crate) fn split_checked(matrix: &Mat4, center: Vec3, rigid_tolerance: f32) -> RigidSplit {
    let factors = Factors::of(&Mat3::from_mat4(*matrix));
    split_from_factors(matrix, center, factors, rigid_tolerance)
}

/// [`split_checked`] given the factors of the matrix's 3x3 part.
fn split_from_factors(
    matrix: &Mat4,
    center: Vec3,
    factors: Option<Factors>,
    rigid_tolerance: f32,
) -> RigidSplit {
    #[cfg(test)]
    SPLITS.with(|count| count.set(count.get() + 1));
    let a = Mat3::from_mat4(*matrix);
    let t = matrix.w_axis.truncate();
    let Some(factors) = factors else {
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

/// Checks that a palette matrix is finite and affine.
pub(crate) fn check_matrix(joint: usize, matrix: &Mat4) -> Result<(), SkinError> {
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

pub(crate) fn check_tolerance(tolerance: f32) -> Result<(), SkinError> {
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(SkinError::InvalidTolerance { tolerance });
    }
    Ok(())
}

#[cfg(test)]
thread_local! {
    /// Splits built on this thread ([`split_checked`] calls), to check which palettes build
    /// none.
    pub(crate) static SPLITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::lanes::{split_block, FactorLanes, RIGID_LANES};
    use super::*;
    use crate::types::DEFAULT_RIGID_TOLERANCE;

    /// f32 round-off over a Gram–Schmidt and a quaternion conversion on entries of order 1-3.
    const SPLIT_TOLERANCE: f32 = 1e-5;

    /// Rotations with translations, and each kind of non-rigid part at sizes around
    /// `tolerance` (so that rounding decides some), mirrors and degenerate columns; then
    /// extremes: lengths that overflow to infinity, a zero matrix, a column at the degenerate
    /// floor, denormal entries.
    fn sample_matrices(tolerance: f32) -> Vec<Mat4> {
        let mut state = 0x2545_f491u32;
        let mut unit = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1u32 << 24) as f32
        };
        (0..1003)
            .map(|i| {
                let rotation = Quat::from_euler(
                    glam::EulerRot::XYZ,
                    6.0 * unit(),
                    6.0 * unit(),
                    6.0 * unit(),
                );
                let offset = tolerance * (2.0 * unit() - 1.0) * 2.0;
                let part = match i % 6 {
                    0 => Mat4::IDENTITY,
                    1 => Mat4::from_scale(Vec3::new(1.0 + offset, 1.0, 1.0)),
                    2 => Mat4::from_cols_array(&[
                        1.0, 0.0, 0.0, 0.0, offset, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
                        0.0, 1.0,
                    ]),
                    3 => Mat4::from_scale(Vec3::new(1.0, -1.0, 1.0)),
                    4 => Mat4::from_scale(Vec3::new(1.0, 1.0, 0.0)),
                    _ => Mat4::from_scale(Vec3::splat(0.5 + 2.0 * unit())),
                };
                Mat4::from_rotation_translation(rotation, Vec3::new(unit(), 2.0, -unit())) * part
            })
            .chain([
                Mat4::from_scale(Vec3::splat(3e19)),
                Mat4::from_scale(Vec3::new(1.0, 3e19, 1.0)),
                Mat4::ZERO,
                Mat4::from_scale(Vec3::new(1.0, DEGENERATE_RELATIVE, 1.0)),
                Mat4::from_scale(Vec3::new(1.0, 1.0, 1e-39)),
                Mat4::from_scale(Vec3::splat(1e-30)),
                Mat4::from_scale(Vec3::new(-1.0, -1.0, -1.0)),
            ])
            .collect()
    }

    #[test]
    fn side_by_side_rigidity_decides_as_one_matrix_at_a_time() {
        let tolerance = DEFAULT_RIGID_TOLERANCE;
        let matrices = sample_matrices(tolerance);
        let one_at_a_time: Vec<bool> = matrices
            .iter()
            .map(|m| is_rigid_checked(m, tolerance))
            .collect();
        let mut side_by_side = Vec::new();
        for block in matrices.chunks_exact(RIGID_LANES) {
            side_by_side.extend(FactorLanes::of(block).rigid(tolerance));
        }
        let whole = matrices.len() / RIGID_LANES * RIGID_LANES;
        assert_eq!(side_by_side, one_at_a_time[..whole]);
        let rigid = one_at_a_time.iter().filter(|&&r| r).count();
        assert!(
            rigid > 100 && rigid < 900,
            "both decisions occur: {rigid} rigid"
        );
        for len in [0, 5, 8, 17, matrices.len()] {
            let expected = one_at_a_time[..len].iter().filter(|&&r| !r).count();
            assert_eq!(
                non_rigid_count(&matrices[..len], tolerance),
                expected,
                "{len}"
            );
        }
        // The splits too, about per-joint centers, to the bit.
        let center = |joint: usize| Vec3::new(0.1 * joint as f32, -0.5, 0.25);
        let bits = |split: &RigidSplit| {
            let dq = [split.dq.real.to_array(), split.dq.dual.to_array()].concat();
            let residual = split.residual.map(|r| r.to_cols_array().map(f32::to_bits));
            (dq.iter().map(|c| c.to_bits()).collect::<Vec<_>>(), residual)
        };
        // With the degenerate matrices (every block of eight has one: one at a time) and
        // without them (every block split side by side, `lanes::split_block`).
        let usable: Vec<Mat4> = matrices
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 6 != 4)
            .map(|(_, m)| *m)
            .collect();
        for matrices in [&matrices, &usable] {
            let mut joint = 0;
            split_each(matrices, center, tolerance, |split| {
                let alone = split_checked(&matrices[joint], center(joint), tolerance);
                assert_eq!(bits(&split), bits(&alone), "joint {joint}");
                joint += 1;
            });
            assert_eq!(joint, matrices.len(), "one split per matrix");
        }
        // The portable side-by-side split too, which machines without AVX2 run.
        let mut portable = 0;
        for (index, block) in usable.chunks_exact(RIGID_LANES).enumerate() {
            let factors = FactorLanes::of(block);
            if factors.degenerate.contains(&true) {
                continue;
            }
            let first = index * RIGID_LANES;
            let centers = std::array::from_fn(|lane| center(first + lane));
            for (lane, split) in split_block(block, &factors, &centers, tolerance)
                .iter()
                .enumerate()
            {
                let alone = split_checked(&block[lane], centers[lane], tolerance);
                assert_eq!(bits(split), bits(&alone), "joint {}", first + lane);
                portable += 1;
            }
        }
        assert!(portable > 700, "{portable} split side by side");
    }

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
