//! The rigid split of eight skin matrices at a time, as AVX2 intrinsics: the Gram–Schmidt
//! factors `A = R · S`, the rigidity count, and the split's rotation and translation as dual
//! quaternions. What `rigid_split::lanes` computes portably, with the same operations in the
//! same order (multiplies and adds, no FMA; IEEE square roots and divisions), so every bit is
//! the same (test `side_by_side_rigidity_decides_as_one_matrix_at_a_time` in `rigid_split`).
//! Every palette update runs it: LBS's count of non-rigid joints, and the split of DQS, CoR
//! and blended.

use std::arch::x86_64::*;

use glam::{Mat4, Vec3};

use super::cpu::Avx2Fma;
use super::loads::{load_halves, transpose8};
use crate::dual_quat::DualQuat;

/// Matrices per step: one per lane.
pub(crate) const SPLIT_LANES: usize = 8;

/// The factors of eight 3x3s, one component of all eight per register, lane `l` matrix
/// `l`'s: `R`'s columns, `S`'s diagonal (`sz` negative where `A` mirrors) and upper
/// triangle (`d01`, `d02`, `d12`), and all ones in the lanes that mirror or are degenerate (a
/// column zero or dependent on the others, relative to the largest: their other values are
/// meaningless).
struct Factors8 {
    /// `R`'s columns, `basis[c][r]` (the third negated where `A` mirrors).
    basis: [[__m256; 3]; 3],
    scale: [__m256; 3],
    shear: [__m256; 3],
    mirrored: __m256,
    degenerate: __m256,
}

/// The rigid split of eight matrices none of which is degenerate: each lane's dual quaternion
/// (the rotation `R` and the translation `A c + t − R c` about its center `c`), whether it is
/// rigid within `tolerance`, and `S`'s diagonal and upper triangle (`d01`, `d02`, `d12`) for
/// the residual of those that are not.
pub(crate) struct Split8 {
    pub(crate) dual_quats: [DualQuat; SPLIT_LANES],
    pub(crate) rigid: [bool; SPLIT_LANES],
    pub(crate) scale: [[f32; SPLIT_LANES]; 3],
    pub(crate) shear: [[f32; SPLIT_LANES]; 3],
}

/// `rigid_split::lanes::split_block`'s split of `block` about `centers`, or `None` where a lane
/// is degenerate (the caller then splits the block one matrix at a time). The rotation is
/// glam's `Quat::from_mat3` of the basis (its four cases as selects), normalized as
/// `Quat::normalize`; the dual part `(t * q) * 0.5` term by term as glam's SSE2 `Quat * Quat`
/// sums it.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn split8(
    _: Avx2Fma,
    block: &[Mat4; SPLIT_LANES],
    centers: &[Vec3; SPLIT_LANES],
    tolerance: f32,
    degenerate_relative: f32,
) -> Option<Split8> {
    let f = factors8(block, degenerate_relative);
    if _mm256_movemask_ps(f.degenerate) != 0 {
        return None;
    }
    let [e0, e1, e2] = f.basis;
    let (m00, m01, m02) = (e0[0], e0[1], e0[2]);
    let (m10, m11, m12) = (e1[0], e1[1], e1[2]);
    let (m20, m21, m22) = (e2[0], e2[1], e2[2]);
    let (zero, one) = (_mm256_setzero_ps(), _mm256_set1_ps(1.0));
    let dif10 = _mm256_sub_ps(m11, m00);
    let omm22 = _mm256_sub_ps(one, m22);
    let sum10 = _mm256_add_ps(m11, m00);
    let opm22 = _mm256_add_ps(one, m22);
    // glam's cases: x (m22 <= 0, dif10 <= 0), y (m22 <= 0), z (sum10 <= 0), else w.
    let at_most_zero = |v: __m256| _mm256_cmp_ps::<_CMP_LE_OQ>(v, zero);
    let upper = at_most_zero(m22);
    let first = _mm256_blendv_ps(at_most_zero(sum10), at_most_zero(dif10), upper);
    let pick = |[x, y, z, w]: [__m256; 4]| {
        _mm256_blendv_ps(
            _mm256_blendv_ps(w, z, first),
            _mm256_blendv_ps(y, x, first),
            upper,
        )
    };
    let four = pick([
        _mm256_sub_ps(omm22, dif10),
        _mm256_add_ps(omm22, dif10),
        _mm256_sub_ps(opm22, sum10),
        _mm256_add_ps(opm22, sum10),
    ]);
    let inverse = _mm256_div_ps(_mm256_set1_ps(0.5), _mm256_sqrt_ps(four));
    let s01 = _mm256_add_ps(m01, m10);
    let s02 = _mm256_add_ps(m02, m20);
    let s12 = _mm256_add_ps(m12, m21);
    let d12 = _mm256_sub_ps(m12, m21);
    let d20 = _mm256_sub_ps(m20, m02);
    let d01 = _mm256_sub_ps(m01, m10);
    let qx = _mm256_mul_ps(pick([four, s01, s02, d12]), inverse);
    let qy = _mm256_mul_ps(pick([s01, four, s12, d20]), inverse);
    let qz = _mm256_mul_ps(pick([s02, s12, four, d01]), inverse);
    let qw = _mm256_mul_ps(pick([d12, d20, d01, four]), inverse);
    // `Quat::normalize`: divided by the length, its square summed `(x² + z²) + (y² + w²)`.
    let squared = |v: __m256| _mm256_mul_ps(v, v);
    let length = _mm256_sqrt_ps(_mm256_add_ps(
        _mm256_add_ps(squared(qx), squared(qz)),
        _mm256_add_ps(squared(qy), squared(qw)),
    ));
    let [qx, qy, qz, qw] = [qx, qy, qz, qw].map(|q| _mm256_div_ps(q, length));
    // The translation `A c + t − R c`, each product summed as `Mat3 * Vec3` sums it.
    let mut center = [[0.0f32; SPLIT_LANES]; 3];
    for (lane, c) in centers.iter().enumerate() {
        center[0][lane] = c.x;
        center[1][lane] = c.y;
        center[2][lane] = c.z;
    }
    // SAFETY: each row is eight f32s.
    let [cx, cy, cz] = center.map(|row| unsafe { _mm256_loadu_ps(row.as_ptr()) });
    let a = [0, 1, 2].map(|c| column8(block, c));
    let w = column8(block, 3);
    let times = |columns: [[__m256; 3]; 3], r: usize| {
        _mm256_add_ps(
            _mm256_add_ps(
                _mm256_mul_ps(columns[0][r], cx),
                _mm256_mul_ps(columns[1][r], cy),
            ),
            _mm256_mul_ps(columns[2][r], cz),
        )
    };
    let [tx, ty, tz] =
        [0, 1, 2].map(|r| _mm256_sub_ps(_mm256_add_ps(times(a, r), w[r]), times(f.basis, r)));
    // `(t * q) * 0.5` with `t = (tx, ty, tz, 0)`, as glam's SSE2 quaternion product.
    let tw = zero;
    let negated = |v: __m256| _mm256_xor_ps(v, _mm256_set1_ps(-0.0));
    let product = |p: __m256, q: __m256| _mm256_mul_ps(p, q);
    let sum = |p: __m256, q: __m256| _mm256_add_ps(p, q);
    let half = _mm256_set1_ps(0.5);
    let dx = sum(
        sum(product(tx, qw), product(tw, qx)),
        sum(product(ty, qz), negated(product(tz, qy))),
    );
    let dy = sum(
        sum(negated(product(tx, qz)), product(tw, qy)),
        sum(product(ty, qw), product(tz, qx)),
    );
    let dz = sum(
        sum(product(tx, qy), product(tw, qz)),
        sum(negated(product(ty, qx)), product(tz, qw)),
    );
    let dw = sum(
        sum(negated(product(tx, qx)), product(tw, qw)),
        sum(negated(product(ty, qy)), negated(product(tz, qz))),
    );
    let [dx, dy, dz, dw] = [dx, dy, dz, dw].map(|d| _mm256_mul_ps(d, half));
    // One dual quaternion per register, lane `l`'s in row `l`: eight 32-byte stores.
    let rows = transpose8([qx, qy, qz, qw, dx, dy, dz, dw]);
    let mut dual_quats = [DualQuat::IDENTITY; SPLIT_LANES];
    for (dq, row) in dual_quats.iter_mut().zip(rows) {
        // SAFETY: a `DualQuat` is eight contiguous f32s, `real` then `dual` (`#[repr(C)]`).
        unsafe { _mm256_storeu_ps(std::ptr::from_mut(dq).cast::<f32>(), row) };
    }
    let rigid = _mm256_movemask_ps(rigid8(&f, tolerance));
    let store = |v: __m256| {
        let mut lanes = [0.0f32; SPLIT_LANES];
        // SAFETY: `lanes` is eight writable f32s.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), v) };
        lanes
    };
    Some(Split8 {
        dual_quats,
        rigid: std::array::from_fn(|lane| rigid & (1 << lane) != 0),
        scale: f.scale.map(store),
        shear: f.shear.map(store),
    })
}

/// How many of `matrices` (a whole number of blocks of eight) are not rigid within
/// `tolerance` ([`rigid8`]).
///
/// # Panics
/// Where `matrices.len()` is not a multiple of eight.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn non_rigid_count8(
    _: Avx2Fma,
    matrices: &[Mat4],
    tolerance: f32,
    degenerate_relative: f32,
) -> usize {
    assert!(matrices.len().is_multiple_of(SPLIT_LANES));
    let mut count = 0;
    for block in matrices.chunks_exact(SPLIT_LANES) {
        let block: &[Mat4; SPLIT_LANES] = block.try_into().expect("eight matrices");
        let rigid = rigid8(&factors8(block, degenerate_relative), tolerance);
        count += SPLIT_LANES - _mm256_movemask_ps(rigid).count_ones() as usize;
    }
    count
}

/// All ones in the lanes of `f` that are rigid within `tolerance`: not degenerate, not
/// mirrored, each entry of `S` within `tolerance` of the identity's, each compared on its own
/// (so that a NaN is never within it), as `FactorLanes::rigid` decides.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn rigid8(f: &Factors8, tolerance: f32) -> __m256 {
    let magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(i32::MAX));
    let all_ones = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    let one = _mm256_set1_ps(1.0);
    let tolerance = _mm256_set1_ps(tolerance);
    let within = |v: __m256| _mm256_cmp_ps::<_CMP_LE_OQ>(_mm256_and_ps(v, magnitude), tolerance);
    let mut rigid = _mm256_andnot_ps(_mm256_or_ps(f.degenerate, f.mirrored), all_ones);
    for s in f.scale {
        rigid = _mm256_and_ps(rigid, within(_mm256_sub_ps(s, one)));
    }
    for d in f.shear {
        rigid = _mm256_and_ps(rigid, within(d));
    }
    rigid
}

/// The factors of `block`'s 3x3 parts, as `FactorLanes::of` computes them lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn factors8(block: &[Mat4; SPLIT_LANES], degenerate_relative: f32) -> Factors8 {
    let [a0, a1, a2] = [0, 1, 2].map(|c| column8(block, c));
    let (len0, len1, len2) = (length8(a0), length8(a1), length8(a2));
    let e0 = divided8(a0, len0);
    let d01 = dot8(e0, a1);
    let b1 = minus_scaled8(a1, e0, d01);
    let sy = length8(b1);
    let e1 = divided8(b1, sy);
    let d02 = dot8(e0, a2);
    let d12 = dot8(e1, a2);
    let c1 = minus_scaled8(minus_scaled8(a2, e0, d02), e1, d12);
    let sz = length8(c1);
    let e2 = divided8(c1, sz);
    // `e0 × e1`, each component `p q − r s`.
    let product = |p: __m256, q: __m256, r: __m256, s: __m256| {
        _mm256_sub_ps(_mm256_mul_ps(p, q), _mm256_mul_ps(r, s))
    };
    let cross = [
        product(e0[1], e1[2], e1[1], e0[2]),
        product(e0[2], e1[0], e1[2], e0[0]),
        product(e0[0], e1[1], e1[0], e0[1]),
    ];
    let mirrored = _mm256_cmp_ps::<_CMP_LT_OQ>(dot8(cross, e2), _mm256_setzero_ps());
    // Lengths are never NaN (square roots of sums of squares of finite values), so `max` is
    // `f32::max`.
    let largest = _mm256_max_ps(_mm256_max_ps(len0, len1), len2);
    let floor = _mm256_mul_ps(largest, _mm256_set1_ps(degenerate_relative));
    let at_most = |v: __m256, bound: __m256| _mm256_cmp_ps::<_CMP_LE_OQ>(v, bound);
    let degenerate = _mm256_or_ps(
        _mm256_or_ps(at_most(largest, _mm256_setzero_ps()), at_most(len0, floor)),
        _mm256_or_ps(at_most(sy, floor), at_most(sz, floor)),
    );
    // A reflection folded into S: the third axis and `sz` negated where the lane mirrors.
    let flip = _mm256_and_ps(mirrored, _mm256_set1_ps(-0.0));
    Factors8 {
        basis: [e0, e1, e2.map(|c| _mm256_xor_ps(c, flip))],
        scale: [len0, sy, _mm256_xor_ps(sz, flip)],
        shear: [d01, d02, d12],
        mirrored,
        degenerate,
    }
}

/// Column `c` (`x`, `y`, `z` of axis `c`, the translation for `c = 3`) of the eight matrices,
/// one component per register: rows `(m_l | m_{l+4})` transposed inside their halves.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn column8(block: &[Mat4; SPLIT_LANES], c: usize) -> [__m256; 3] {
    let base = block.as_ptr().cast::<f32>();
    let half = SPLIT_LANES / 2;
    assert!(c < 4);
    // SAFETY: `block` is eight `Mat4`s of sixteen f32s, column-major; axis `c < 4` of matrix
    // `l` is the four f32s at `16 l + 4 c`, inside it.
    let row = |l: usize| unsafe {
        load_halves(base.add(16 * l + 4 * c), base.add(16 * (l + half) + 4 * c))
    };
    let (t0, t1, t2, t3) = (row(0), row(1), row(2), row(3));
    let (u0, u1) = (_mm256_unpacklo_ps(t0, t1), _mm256_unpackhi_ps(t0, t1));
    let (u2, u3) = (_mm256_unpacklo_ps(t2, t3), _mm256_unpackhi_ps(t2, t3));
    [
        _mm256_shuffle_ps::<0x44>(u0, u2),
        _mm256_shuffle_ps::<0xEE>(u0, u2),
        _mm256_shuffle_ps::<0x44>(u1, u3),
    ]
}

/// `Vec3::dot` lane by lane: `(x x') + (y y') + (z z')`, no FMA.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn dot8(a: [__m256; 3], b: [__m256; 3]) -> __m256 {
    _mm256_add_ps(
        _mm256_add_ps(_mm256_mul_ps(a[0], b[0]), _mm256_mul_ps(a[1], b[1])),
        _mm256_mul_ps(a[2], b[2]),
    )
}

/// `Vec3::length` lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn length8(a: [__m256; 3]) -> __m256 {
    _mm256_sqrt_ps(dot8(a, a))
}

/// `Vec3 / f32` lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn divided8(a: [__m256; 3], by: __m256) -> [__m256; 3] {
    [
        _mm256_div_ps(a[0], by),
        _mm256_div_ps(a[1], by),
        _mm256_div_ps(a[2], by),
    ]
}

/// `a − e d` (`Vec3 − Vec3 * f32`) lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn minus_scaled8(a: [__m256; 3], e: [__m256; 3], d: __m256) -> [__m256; 3] {
    [
        _mm256_sub_ps(a[0], _mm256_mul_ps(e[0], d)),
        _mm256_sub_ps(a[1], _mm256_mul_ps(e[1], d)),
        _mm256_sub_ps(a[2], _mm256_mul_ps(e[2], d)),
    ]
}
