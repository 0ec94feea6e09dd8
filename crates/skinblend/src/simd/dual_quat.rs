//! The one sign-aligned dual quaternion blend (DQS and CoR), the rigid-motion apply, and DQS.

use std::arch::x86_64::*;

use super::lanes::{
    add8, all8, cross8, finite_positive8, load3x8, load_tangents8, normalize8_or, scale8, store3x8,
    store_tangents8, transpose8, Block, LANES,
};
use crate::reference::MIN_WEIGHT_SUM;
use crate::types::{Diagnostics, SkinOutputs};

/// The slot of the heaviest influence; ties go to the lowest slot (the scalar kernel's pivot).
#[inline(always)]
fn pivot_slot(weights: &[f32]) -> usize {
    let mut pivot = 0;
    for (slot, &weight) in weights.iter().enumerate() {
        if weight > weights[pivot] {
            pivot = slot;
        }
    }
    pivot
}

/// The sign-aligned blends `Σ ±wᵢ dqᵢ` of vertices `base .. base + 8` (not normalized), one
/// component of all eight per register (`[x, y, z, w]` real, then dual), and their sign flips;
/// `None` when a vertex is unweighted (for `K = 4`: when all its weights are below
/// `MIN_WEIGHT_SUM`, which the scalar kernel then decides exactly) or, unless the palette is
/// rigid (`R`), has a non-zero weight on a non-rigid joint (the block then goes to the scalar
/// kernel whole).
///
/// Per vertex: the pivot is the heaviest influence; each influence's real part is dotted with
/// the pivot's as `(x·x' + y·y') + (z·z' + w·w')` (only its sign is used), and its weight is
/// negated branch-free where the dot is negative (random rigs flip half the time, which a
/// branch would mispredict); the dual quaternion is then added as one 256-bit multiply-add.
/// The weights are not renormalized: the blend is normalized afterwards anyway.
///
/// # Safety
/// The CPU has AVX2 and FMA. (Not a `#[target_feature]` function so that it can be
/// `#[inline(always)]`, as `linear::blend8`.)
#[inline(always)]
pub(super) unsafe fn blend8<const K: usize, const R: bool>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 8], usize)> {
    // SAFETY: the caller guarantees AVX2 and FMA.
    unsafe {
        let dual_quats = block.dual_quats.as_ptr().cast::<f32>();
        let mut rows = [_mm256_setzero_ps(); LANES];
        let mut weighted = true;
        // Flip counts, one per lane (an all-ones mask is −1 as an integer: subtracting it counts
        // one flip).
        let mut flipped = _mm256_setzero_si256();
        let k = block.k::<K>();
        let (joints8, weights8) = block.influences8::<K>(base);
        for (l, row) in rows.iter_mut().enumerate() {
            let (joints, weights) = (&joints8[l * k..(l + 1) * k], &weights8[l * k..(l + 1) * k]);
            if !R
                && joints
                    .iter()
                    .zip(weights)
                    .any(|(&j, &w)| w > 0.0 && !block.rigid[usize::from(j)])
            {
                return None;
            }
            *row = if K == 4 {
                // The pivot from the weights in one register: the lowest slot holding the
                // largest weight. Weights are non-negative, so a largest weight of at least
                // `MIN_WEIGHT_SUM` proves the sum is too; where it is not (every weight tiny),
                // the block goes to the scalar kernel, which decides exactly.
                // SAFETY: K = 4: `weights` is four f32s (16 bytes).
                let w = _mm_loadu_ps(weights.as_ptr());
                let pairs = _mm_max_ps(w, _mm_movehl_ps(w, w));
                let largest = _mm_max_ps(pairs, _mm_movehdup_ps(pairs));
                weighted &= _mm_cvtss_f32(largest) >= MIN_WEIGHT_SUM;
                let at_largest = _mm_cmpeq_ps(w, _mm_permute_ps::<0>(largest));
                let slot = (_mm_movemask_ps(at_largest) | 0b1_0000).trailing_zeros() as usize;
                blend4(dual_quats, joints, w, joints[slot & 3], &mut flipped)
            } else {
                let sum: f32 = weights.iter().sum();
                weighted &= sum >= MIN_WEIGHT_SUM;
                let pivot = joints[pivot_slot(weights)];
                blend_any(dual_quats, joints, weights, pivot, &mut flipped)
            };
        }
        if !weighted {
            return None;
        }
        let mut counts = [0i32; 8];
        // SAFETY: `counts` is 32 writable bytes.
        _mm256_storeu_si256(counts.as_mut_ptr().cast(), flipped);
        let flips = counts.iter().sum::<i32>() as usize;
        Some((transpose8(rows), flips))
    }
}

/// Loads joint `joint`'s dual quaternion as `real | dual`.
///
/// # Safety
/// `joint` is below the palette length (every joint of `Influences` is below its joint count,
/// which `skin_into` checked against the palette), and the CPU has AVX.
#[inline(always)]
unsafe fn load_dual_quat(dual_quats: *const f32, joint: u16) -> __m256 {
    // SAFETY: a `DualQuat` is 8 contiguous f32s, real then dual (layout asserts in `lanes`);
    // the caller guarantees the joint is inside the palette.
    unsafe { _mm256_loadu_ps(dual_quats.add(usize::from(joint) * 8)) }
}

/// The sign-aligned blend of one vertex, any number of influences, one influence at a time:
/// each real part is dotted with the pivot's as `(x·x' + y·y') + (z·z' + w·w')` (only its sign
/// is used) and its weight negated branch-free where the dot is negative.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn blend_any(
    dual_quats: *const f32,
    joints: &[u16],
    weights: &[f32],
    pivot: u16,
    flipped: &mut __m256i,
) -> __m256 {
    let sign_bit = _mm_set1_ps(-0.0);
    // SAFETY: see `load_dual_quat`; the pivot is one of the vertex's joints.
    let pivot_real = _mm256_castps256_ps128(unsafe { load_dual_quat(dual_quats, pivot) });
    let mut count = _mm_setzero_si128();
    let mut blend = _mm256_setzero_ps();
    for (&joint, &weight) in joints.iter().zip(weights) {
        // SAFETY: see `load_dual_quat`.
        let dq = unsafe { load_dual_quat(dual_quats, joint) };
        let weight = _mm_set_ss(weight);
        let products = _mm_mul_ps(_mm256_castps256_ps128(dq), pivot_real);
        let pairs = _mm_add_ps(products, _mm_movehdup_ps(products));
        let dot = _mm_add_ss(pairs, _mm_movehl_ps(pairs, pairs));
        // The pivot never flips (its dot with itself is |q|² > 0); a zero weight neither
        // counts nor adds anything.
        let negative = _mm_cmplt_ss(dot, _mm_setzero_ps());
        let counted = _mm_and_ps(negative, _mm_cmpgt_ss(weight, _mm_setzero_ps()));
        count = _mm_sub_epi32(count, _mm_castps_si128(counted));
        let signed = _mm_xor_ps(weight, _mm_and_ps(negative, sign_bit));
        blend = _mm256_fmadd_ps(dq, _mm256_broadcastss_ps(signed), blend);
    }
    *flipped = _mm256_add_epi32(*flipped, _mm256_zextsi128_si256(count));
    blend
}

/// The sign-aligned blend of one vertex with four influences (`stored`: its weights): the
/// decisions of [`blend_any`],
/// with the four sign tests done together. Real-part pairs `(q₀ | q₁)`, `(q₂ | q₃)` are
/// multiplied by the pivot's `(p | p)`, and two horizontal adds give every dot as
/// `(x·x' + y·y') + (z·z' + w·w')` in lanes `[d₀ d₂ d₀ d₂ | d₁ d₃ d₁ d₃]`; the weights are
/// permuted to the same lanes, signed, and broadcast back one by one.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn blend4(
    dual_quats: *const f32,
    joints: &[u16],
    stored: __m128,
    pivot: u16,
    flipped: &mut __m256i,
) -> __m256 {
    // Volatile reads keep each index a scalar load (see `linear::blend8`).
    let joints = &joints[..4];
    // SAFETY: each pointer comes from a reference, valid and aligned for reads.
    let joints = [0, 1, 2, 3].map(|s| unsafe { std::ptr::from_ref(&joints[s]).read_volatile() });
    // SAFETY: see `load_dual_quat`; the pivot is one of the vertex's joints.
    let (dq, pivot) = unsafe {
        (
            [
                load_dual_quat(dual_quats, joints[0]),
                load_dual_quat(dual_quats, joints[1]),
                load_dual_quat(dual_quats, joints[2]),
                load_dual_quat(dual_quats, joints[3]),
            ],
            load_dual_quat(dual_quats, pivot),
        )
    };
    let pivot_real = _mm256_permute2f128_ps::<0x00>(pivot, pivot);
    let real01 = _mm256_permute2f128_ps::<0x20>(dq[0], dq[1]);
    let real23 = _mm256_permute2f128_ps::<0x20>(dq[2], dq[3]);
    let pairs = _mm256_hadd_ps(
        _mm256_mul_ps(real01, pivot_real),
        _mm256_mul_ps(real23, pivot_real),
    );
    let dots = _mm256_hadd_ps(pairs, pairs);
    let w = _mm256_permutevar_ps(
        _mm256_set_m128(stored, stored),
        _mm256_setr_epi32(0, 2, 0, 2, 1, 3, 1, 3),
    );
    let negative = _mm256_cmp_ps::<_CMP_LT_OQ>(dots, _mm256_setzero_ps());
    // Count lanes 0, 1, 4, 5 (slots 0, 2, 1, 3) once; a zero weight does not count.
    let counted = _mm256_and_ps(
        _mm256_and_ps(
            negative,
            _mm256_cmp_ps::<_CMP_GT_OQ>(w, _mm256_setzero_ps()),
        ),
        _mm256_castsi256_ps(_mm256_setr_epi32(-1, -1, 0, 0, -1, -1, 0, 0)),
    );
    *flipped = _mm256_sub_epi32(*flipped, _mm256_castps_si256(counted));
    let signed = _mm256_xor_ps(w, _mm256_and_ps(negative, _mm256_set1_ps(-0.0)));
    let mut lanes = [0f32; 8];
    // SAFETY: `lanes` is 32 writable bytes.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), signed) };
    // Slots 0, 1, 2, 3 sit in lanes 0, 4, 1, 5.
    // Two chains, then one add: half the latency of one chain of four.
    let low = _mm256_fmadd_ps(
        dq[1],
        _mm256_set1_ps(lanes[4]),
        _mm256_mul_ps(dq[0], _mm256_set1_ps(lanes[0])),
    );
    let high = _mm256_fmadd_ps(
        dq[3],
        _mm256_set1_ps(lanes[5]),
        _mm256_mul_ps(dq[2], _mm256_set1_ps(lanes[1])),
    );
    _mm256_add_ps(low, high)
}

/// Unit rotations of eight vertices: the real part `(v, w)` of a normalized blend.
pub(super) struct Rotation8 {
    /// The vector part.
    pub(super) v: [__m256; 3],
    /// The scalar part.
    pub(super) w: __m256,
}

impl Rotation8 {
    /// `x + 2 v×(v×x + w x)`: `x` rotated.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn rotate(&self, x: [__m256; 3]) -> [__m256; 3] {
        let two = _mm256_set1_ps(2.0);
        let c = cross8(self.v, x);
        let inner = [
            _mm256_fmadd_ps(self.w, x[0], c[0]),
            _mm256_fmadd_ps(self.w, x[1], c[1]),
            _mm256_fmadd_ps(self.w, x[2], c[2]),
        ];
        let outer = cross8(self.v, inner);
        [
            _mm256_fmadd_ps(two, outer[0], x[0]),
            _mm256_fmadd_ps(two, outer[1], x[1]),
            _mm256_fmadd_ps(two, outer[2], x[2]),
        ]
    }
}

/// `1 / |real|` of eight blends, or `None` when one of them has no finite non-zero length
/// (rounding cancelled the blend: the scalar kernel's fallback has one definition).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn inverse_length8(real: [__m256; 4]) -> Option<__m256> {
    let [x, y, z, w] = real;
    let length = _mm256_sqrt_ps(_mm256_fmadd_ps(
        w,
        w,
        _mm256_fmadd_ps(z, z, _mm256_fmadd_ps(y, y, _mm256_mul_ps(x, x))),
    ));
    if !all8(finite_positive8(length)) {
        return None;
    }
    Some(_mm256_div_ps(_mm256_set1_ps(1.0), length))
}

/// DQS of vertices `base .. base + 8`. Returns `false`, having written nothing, when a vertex
/// of the block is unweighted, touches a residual, or blends to a zero rotation.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn block<const K: usize, const N: bool, const T: bool, const R: bool>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
) -> bool {
    // SAFETY: this function runs only where AVX2 and FMA are enabled.
    let Some((sum, flips)) = (unsafe { blend8::<K, R>(block, base) }) else {
        return false;
    };
    let [rx, ry, rz, rw, dx, dy, dz, dw] = sum;
    let Some(inverse) = inverse_length8([rx, ry, rz, rw]) else {
        return false;
    };
    diagnostics.sign_flips += flips;
    let rotation = Rotation8 {
        v: scale8([rx, ry, rz], inverse),
        w: _mm256_mul_ps(rw, inverse),
    };
    let v = rotation.v;
    let w = rotation.w;
    let ve = scale8([dx, dy, dz], inverse);
    let we = _mm256_mul_ps(dw, inverse);
    // 2 (w vε − wε v + v×vε)
    let two = _mm256_set1_ps(2.0);
    let c = cross8(v, ve);
    let mut translation = [_mm256_setzero_ps(); 3];
    for a in 0..3 {
        translation[a] = _mm256_mul_ps(
            two,
            _mm256_add_ps(_mm256_fmsub_ps(w, ve[a], _mm256_mul_ps(we, v[a])), c[a]),
        );
    }
    let p = rotation.rotate(load3x8(block.positions, base));
    store3x8(outputs.positions, base, add8(p, translation));
    if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), block.normals) {
        let n = load3x8(src, base);
        store3x8(out, base, normalize8_or(rotation.rotate(n), n));
    }
    if let (true, Some(out), Some(src)) = (T, outputs.tangents.as_deref_mut(), block.tangents) {
        let (d, tw) = load_tangents8(src, base);
        store_tangents8(out, base, normalize8_or(rotation.rotate(d), d), tw);
    }
    true
}
