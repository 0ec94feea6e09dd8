//! The split eight matrices at a time: the Gram–Schmidt factors ([`FactorLanes`]), the
//! rigidity count, and the rotation and translation of each split, lane by lane with the same
//! operations in the same order as one matrix at a time, so that the compiler vectorizes them
//! and every bit is the same.

use glam::{Mat3, Mat4, Quat, Vec3};

use super::{split_from_factors, Factors, RigidSplit, DEGENERATE_RELATIVE};
use crate::dual_quat::DualQuat;

/// How many of `matrices` (finite and affine) are not rigid motions within `rigid_tolerance`:
/// `is_rigid_checked` (the tests' definition) on each, to the bit (the same operations in the
/// same order, IEEE square roots and divisions), eight matrices side by side: with AVX2,
/// `simd::rigid_split::non_rigid_count8` (LBS's `PreparedPalette::update` at 64 joints
/// 0.73–0.74 µs against 1.28–1.29 µs for the compiler's vectorizing of [`FactorLanes::of`],
/// builds alternated three times, `examples/palette_update.rs`, one AMD EPYC VM thread), else
/// folded over [`FactorLanes::of`].
pub(crate) fn non_rigid_count(matrices: &[Mat4], rigid_tolerance: f32) -> usize {
    let blocks = matrices.chunks_exact(RIGID_LANES);
    let rest = blocks
        .remainder()
        .iter()
        .filter(|m| {
            !Factors::of(&Mat3::from_mat4(**m)).is_some_and(|f| f.is_rigid(rigid_tolerance))
        })
        .count();
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = crate::simd::cpu::Avx2Fma::detect() {
        let whole = &matrices[..matrices.len() - blocks.remainder().len()];
        // SAFETY: the token proves AVX2 and FMA (`Avx2Fma::detect`).
        return rest
            + unsafe {
                crate::simd::rigid_split::non_rigid_count8(
                    avx2,
                    whole,
                    rigid_tolerance,
                    DEGENERATE_RELATIVE,
                )
            };
    }
    crate::vectorize::vectorized(
        #[inline(always)]
        || {
            blocks.fold(rest, |count, block| {
                let rigid = FactorLanes::of(block).rigid(rigid_tolerance);
                count + rigid.iter().filter(|&&r| !r).count()
            })
        },
    )
}

/// [`super::split_checked`] of every matrix, in order, about `center(joint)`, handed to
/// `each`: eight at a time where none of the eight is degenerate (with AVX2
/// `simd::rigid_split::split8`, else [`split_block`]), else and for the last `len % 8` one at a
/// time; the same bits every way (test `side_by_side_rigidity_decides_as_one_matrix_at_a_time`).
/// `split8` took `PreparedPalette::update` with 64 DQS joints from 5.2–5.4 µs (the compiler's
/// vectorizing of `split_block`) to 3.1–3.2 µs (128 joints: 12.3–12.4 to 8.0–8.1), builds
/// alternated three times (`examples/palette_update.rs`), one AMD EPYC VM thread.
pub(crate) fn split_each(
    matrices: &[Mat4],
    center: impl Fn(usize) -> Vec3,
    rigid_tolerance: f32,
    mut each: impl FnMut(RigidSplit),
) {
    let blocks = matrices.chunks_exact(RIGID_LANES);
    let rest = blocks.remainder();
    #[cfg(target_arch = "x86_64")]
    let avx2 = crate::simd::cpu::Avx2Fma::detect();
    for (index, block) in blocks.enumerate() {
        let first = index * RIGID_LANES;
        let centers: [Vec3; RIGID_LANES] = std::array::from_fn(|lane| center(first + lane));
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = avx2 {
            let block: &[Mat4; RIGID_LANES] = block.try_into().expect("eight matrices");
            // SAFETY: the token proves AVX2 and FMA (`Avx2Fma::detect`).
            let split = unsafe {
                crate::simd::rigid_split::split8(
                    avx2,
                    block,
                    &centers,
                    rigid_tolerance,
                    DEGENERATE_RELATIVE,
                )
            };
            if let Some(split) = split {
                for lane in 0..RIGID_LANES {
                    each(RigidSplit {
                        dq: split.dual_quats[lane],
                        residual: (!split.rigid[lane]).then(|| {
                            residual(split.scale.map(|s| s[lane]), split.shear.map(|d| d[lane]))
                        }),
                        center: centers[lane],
                    });
                }
                continue;
            }
        }
        crate::vectorize::vectorized(
            #[inline(always)]
            || {
                let factors = FactorLanes::of(block);
                if factors.degenerate.contains(&true) {
                    for (lane, matrix) in block.iter().enumerate() {
                        let factors = factors.get(lane);
                        each(split_from_factors(
                            matrix,
                            centers[lane],
                            factors,
                            rigid_tolerance,
                        ));
                    }
                } else {
                    for split in split_block(block, &factors, &centers, rigid_tolerance) {
                        each(split);
                    }
                }
            },
        );
    }
    let first = matrices.len() - rest.len();
    for (offset, matrix) in rest.iter().enumerate() {
        each(super::split_checked(
            matrix,
            center(first + offset),
            rigid_tolerance,
        ));
    }
}

/// [`split_from_factors`] of eight matrices whose factors are all usable (none degenerate),
/// lane by lane: glam's `Quat::from_mat3` of the basis (its four cases as selects, each lane
/// taking its own case's values, so no branch per matrix), `Quat::normalize`, the translation
/// `A c + t − R c` as `Mat3 * Vec3` sums it, and `DualQuat::from_rotation_translation`'s
/// `(t * rotation) * 0.5` term by term as glam's SSE2 `Quat * Quat` sums it (`((tx·qw + tw·qx) +
/// (ty·qz − tz·qy))` for `x`, and so on), with the same operations in the same order.
#[inline(always)]
pub(super) fn split_block(
    block: &[Mat4],
    factors: &FactorLanes,
    centers: &[Vec3; RIGID_LANES],
    rigid_tolerance: f32,
) -> [RigidSplit; RIGID_LANES] {
    // m[c][r]: row r of column c of each lane's rotation (column c is basis vector c).
    let m = &factors.basis;
    let (m00, m01, m02) = (&m[0][0], &m[0][1], &m[0][2]);
    let (m10, m11, m12) = (&m[1][0], &m[1][1], &m[1][2]);
    let (m20, m21, m22) = (&m[2][0], &m[2][1], &m[2][2]);
    let dif10 = lanes(|l| m11[l] - m00[l]);
    let omm22 = lanes(|l| 1.0 - m22[l]);
    let sum10 = lanes(|l| m11[l] + m00[l]);
    let opm22 = lanes(|l| 1.0 + m22[l]);
    // glam's cases: x (m22 <= 0, dif10 <= 0), y (m22 <= 0), z (sum10 <= 0), else w; each
    // lane's values chosen by selects, not branches.
    let upper = |l: usize| m22[l] <= 0.0;
    let first = |l: usize| {
        if upper(l) {
            dif10[l] <= 0.0
        } else {
            sum10[l] <= 0.0
        }
    };
    let pick = |l: usize, [x, y, z, w]: [f32; 4]| match (upper(l), first(l)) {
        (true, true) => x,
        (true, false) => y,
        (false, true) => z,
        (false, false) => w,
    };
    let four = lanes(|l| {
        pick(
            l,
            [
                omm22[l] - dif10[l],
                omm22[l] + dif10[l],
                opm22[l] - sum10[l],
                opm22[l] + sum10[l],
            ],
        )
    });
    let inverse = lanes(|l| 0.5 / four[l].sqrt());
    let s01 = lanes(|l| m01[l] + m10[l]);
    let s02 = lanes(|l| m02[l] + m20[l]);
    let s12 = lanes(|l| m12[l] + m21[l]);
    let d12 = lanes(|l| m12[l] - m21[l]);
    let d20 = lanes(|l| m20[l] - m02[l]);
    let d01 = lanes(|l| m01[l] - m10[l]);
    // Each case's (x, y, z, w) before the scale by `inverse`.
    let qx = lanes(|l| pick(l, [four[l], s01[l], s02[l], d12[l]]) * inverse[l]);
    let qy = lanes(|l| pick(l, [s01[l], four[l], s12[l], d20[l]]) * inverse[l]);
    let qz = lanes(|l| pick(l, [s02[l], s12[l], four[l], d01[l]]) * inverse[l]);
    let qw = lanes(|l| pick(l, [d12[l], d20[l], d01[l], four[l]]) * inverse[l]);
    // `Quat::normalize`: divided by the length, its square summed `(x² + z²) + (y² + w²)`.
    let length =
        lanes(|l| ((qx[l] * qx[l] + qz[l] * qz[l]) + (qy[l] * qy[l] + qw[l] * qw[l])).sqrt());
    let [qx, qy, qz, qw] = [qx, qy, qz, qw].map(|q| lanes(|l| q[l] / length[l]));
    // The translation `A c + t − R c`, each product summed as `Mat3 * Vec3` sums it.
    let times =
        |columns: [Vec3; 3], c: Vec3| ((columns[0] * c.x) + columns[1] * c.y) + columns[2] * c.z;
    let translations: [Vec3; RIGID_LANES] = std::array::from_fn(|l| {
        let matrix = &block[l];
        let a = [matrix.x_axis, matrix.y_axis, matrix.z_axis].map(|axis| axis.truncate());
        let r = [0, 1, 2].map(|c| Vec3::new(m[c][0][l], m[c][1][l], m[c][2][l]));
        times(a, centers[l]) + matrix.w_axis.truncate() - times(r, centers[l])
    });
    let [tx, ty, tz] = [0, 1, 2].map(|c| lanes(|l| translations[l][c]));
    let tw = 0.0f32;
    // `(t * q) * 0.5` with `t = (tx, ty, tz, 0)`, as glam's SSE2 quaternion product.
    let dx = lanes(|l| ((tx[l] * qw[l] + tw * qx[l]) + (ty[l] * qz[l] + -(tz[l] * qy[l]))) * 0.5);
    let dy = lanes(|l| ((-(tx[l] * qz[l]) + tw * qy[l]) + (ty[l] * qw[l] + tz[l] * qx[l])) * 0.5);
    let dz = lanes(|l| ((tx[l] * qy[l] + tw * qz[l]) + (-(ty[l] * qx[l]) + tz[l] * qw[l])) * 0.5);
    let dw =
        lanes(|l| ((-(tx[l] * qx[l]) + tw * qw[l]) + (-(ty[l] * qy[l]) + -(tz[l] * qz[l]))) * 0.5);
    let rigid = factors.rigid(rigid_tolerance);
    std::array::from_fn(|l| RigidSplit {
        dq: DualQuat {
            real: Quat::from_xyzw(qx[l], qy[l], qz[l], qw[l]),
            dual: Quat::from_xyzw(dx[l], dy[l], dz[l], dw[l]),
        },
        residual: (!rigid[l]).then(|| {
            residual(
                factors.scale.each_ref().map(|s| s[l]),
                factors.shear.each_ref().map(|d| d[l]),
            )
        }),
        center: centers[l],
    })
}

/// `S` from its diagonal `[sx, sy, sz]` and upper triangle `[d01, d02, d12]`, column-major:
/// `S = Rᵀ A = [[sx, d01, d02], [0, sy, d12], [0, 0, sz]]`.
fn residual([sx, sy, sz]: [f32; 3], [d01, d02, d12]: [f32; 3]) -> Mat3 {
    Mat3::from_cols(
        Vec3::new(sx, 0.0, 0.0),
        Vec3::new(d01, sy, 0.0),
        Vec3::new(d02, d12, sz),
    )
}

/// Matrices whose factors [`FactorLanes`] computes side by side.
pub(super) const RIGID_LANES: usize = 8;
#[cfg(target_arch = "x86_64")]
const _: () = assert!(RIGID_LANES == crate::simd::rigid_split::SPLIT_LANES);

/// One component of eight matrices.
type Lanes = [f32; RIGID_LANES];

/// [`Factors`] of eight matrices, one lane each: what [`Factors::of`] computes, computed past a
/// degenerate column (`degenerate` then says the lane is `None`).
pub(super) struct FactorLanes {
    basis: [[Lanes; 3]; 3],
    scale: [Lanes; 3],
    shear: [Lanes; 3],
    mirrored: [bool; RIGID_LANES],
    pub(super) degenerate: [bool; RIGID_LANES],
}

impl FactorLanes {
    /// [`Factors::of`] of eight matrices' 3x3 parts, lane by lane: the same operations in the
    /// same order.
    #[inline(always)]
    pub(super) fn of(block: &[Mat4]) -> Self {
        // column[c][r]: row r of column c of each lane's 3x3.
        let mut column = [[[0.0f32; RIGID_LANES]; 3]; 3];
        for (lane, matrix) in block.iter().enumerate() {
            for (c, axis) in [matrix.x_axis, matrix.y_axis, matrix.z_axis]
                .iter()
                .enumerate()
            {
                column[c][0][lane] = axis.x;
                column[c][1][lane] = axis.y;
                column[c][2][lane] = axis.z;
            }
        }
        let [a0, a1, a2] = column;
        let (len0, len1, len2) = (length(&a0), length(&a1), length(&a2));
        let e0 = divided(&a0, &len0);
        let d01 = dot(&e0, &a1);
        let b1 = minus_scaled(&a1, &e0, &d01);
        let sy = length(&b1);
        let e1 = divided(&b1, &sy);
        let d02 = dot(&e0, &a2);
        let d12 = dot(&e1, &a2);
        let c1 = minus_scaled(&minus_scaled(&a2, &e0, &d02), &e1, &d12);
        let mut sz = length(&c1);
        let mut e2 = divided(&c1, &sz);
        let cross = [
            difference_of_products(&e0[1], &e1[2], &e1[1], &e0[2]),
            difference_of_products(&e0[2], &e1[0], &e1[2], &e0[0]),
            difference_of_products(&e0[0], &e1[1], &e1[0], &e0[1]),
        ];
        let handedness = dot(&cross, &e2);
        let mut mirrored = [false; RIGID_LANES];
        let mut degenerate = [false; RIGID_LANES];
        for lane in 0..RIGID_LANES {
            let largest = len0[lane].max(len1[lane]).max(len2[lane]);
            let floor = largest * DEGENERATE_RELATIVE;
            degenerate[lane] =
                largest <= 0.0 || len0[lane] <= floor || sy[lane] <= floor || sz[lane] <= floor;
            // A reflection folded into S, as `Factors::of` does.
            mirrored[lane] = handedness[lane] < 0.0;
            if mirrored[lane] {
                for row in &mut e2 {
                    row[lane] = -row[lane];
                }
                sz[lane] = -sz[lane];
            }
        }
        Self {
            basis: [e0, e1, e2],
            scale: [len0, sy, sz],
            shear: [d01, d02, d12],
            mirrored,
            degenerate,
        }
    }

    /// Whether each lane is rigid within `tolerance`: `of` then [`Factors::is_rigid`].
    #[inline(always)]
    pub(super) fn rigid(&self, tolerance: f32) -> [bool; RIGID_LANES] {
        let [sx, sy, sz] = &self.scale;
        let [d01, d02, d12] = &self.shear;
        // As `is_rigid`: each entry on its own, so that a NaN is never within tolerance.
        std::array::from_fn(|l| {
            !self.degenerate[l]
                && !self.mirrored[l]
                && (sx[l] - 1.0).abs() <= tolerance
                && (sy[l] - 1.0).abs() <= tolerance
                && (sz[l] - 1.0).abs() <= tolerance
                && d01[l].abs() <= tolerance
                && d02[l].abs() <= tolerance
                && d12[l].abs() <= tolerance
        })
    }

    /// Lane `lane`'s factors, as [`Factors::of`] returns them.
    fn get(&self, lane: usize) -> Option<Factors> {
        if self.degenerate[lane] {
            return None;
        }
        let vector = |v: &[Lanes; 3]| Vec3::new(v[0][lane], v[1][lane], v[2][lane]);
        Some(Factors {
            basis: self.basis.each_ref().map(vector),
            scale: vector(&self.scale),
            shear: vector(&self.shear),
            mirrored: self.mirrored[lane],
        })
    }
}

/// `Vec3::dot` lane by lane: `(x x') + (y y') + (z z')`.
#[inline(always)]
fn dot(a: &[Lanes; 3], b: &[Lanes; 3]) -> Lanes {
    std::array::from_fn(|l| (a[0][l] * b[0][l]) + (a[1][l] * b[1][l]) + (a[2][l] * b[2][l]))
}

/// `Vec3::length` lane by lane.
#[inline(always)]
fn length(a: &[Lanes; 3]) -> Lanes {
    let squared = dot(a, a);
    std::array::from_fn(|l| squared[l].sqrt())
}

/// `Vec3 / f32` lane by lane.
#[inline(always)]
fn divided(a: &[Lanes; 3], by: &Lanes) -> [Lanes; 3] {
    std::array::from_fn(|r| std::array::from_fn(|l| a[r][l] / by[l]))
}

/// `a - e * d` (`Vec3 - Vec3 * f32`) lane by lane.
#[inline(always)]
fn minus_scaled(a: &[Lanes; 3], e: &[Lanes; 3], d: &Lanes) -> [Lanes; 3] {
    std::array::from_fn(|r| std::array::from_fn(|l| a[r][l] - e[r][l] * d[l]))
}

/// `p q - r s` lane by lane (one component of `Vec3::cross`).
#[inline(always)]
fn difference_of_products(p: &Lanes, q: &Lanes, r: &Lanes, s: &Lanes) -> Lanes {
    std::array::from_fn(|l| p[l] * q[l] - r[l] * s[l])
}

/// A lane array from its lanes' values (`f(lane)`), inlined so that the compiler sees eight
/// independent lanes.
#[inline(always)]
fn lanes(f: impl Fn(usize) -> f32) -> Lanes {
    std::array::from_fn(f)
}
