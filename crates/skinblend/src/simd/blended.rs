//! The blended kernel of a block of eight vertices: LBS's and DQS's results interpolated by
//! each vertex's blend value, both blends in one pass over the block.

use std::arch::x86_64::*;

use super::blend3x4::blend8;
use super::block::Block;
use super::dqs::{motion8, residual_lanes, Residual8};
use super::layout::LANES;
use super::lbs::{self, cofactor_normal8, negative_sign8, singular_flip8, ALL_LANES};
use super::loads::{load3x8_or_block, load_tangents8, store3x8, store_tangents8};
use super::math::{
    add8, cross8, dot8, normalize8_flipped_or, normalize8_or, normalize8_rotated_or,
};
use crate::blend_values::BlendValues;
use crate::influence_tables::pivot_slot;
use crate::types::{Diagnostics, SkinOutputs};

/// Which kernel a block of eight vertices takes (`driver::blended_runs`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum BlockKind {
    /// Every value 0: LBS's block kernel, the same bits as an LBS call.
    Linear,
    /// Every value 1: DQS's, the same bits as a DQS call.
    DualQuaternion,
    /// Any other: both blends here ([`block`]).
    Between,
}

/// The kind of the block of `values[base .. base + 8]` (in range: the driver's whole blocks).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn block_kind(values: &[f32], base: usize) -> BlockKind {
    let ends = Ends::of(load8(values, base));
    match (ends.at_zero, ends.at_one) {
        (0xff, _) => BlockKind::Linear,
        (_, 0xff) => BlockKind::DualQuaternion,
        _ => BlockKind::Between,
    }
}

/// Blended of vertices `base .. base + 8`, a block of [`BlockKind::Between`]: both blends
/// here ([`both`]), its vertices at 0 or 1 taking LBS's or DQS's result ([`mixed`]). Returns
/// `false`, having written nothing, where the blends decline (the scalar kernel then takes the
/// block).
///
/// # Safety
/// As `lbs::block`'s without offsets: the driver's length check (`driver::drive_avx2`).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn block<const K: usize, const N: bool, const T: bool, const R: bool>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
) -> bool {
    let values = match block.blend_values {
        Some(BlendValues::Uniform(value)) => _mm256_set1_ps(value),
        Some(BlendValues::PerVertex(values)) => load8(values, base),
        None => return false,
    };
    let ends = Ends::of(values);
    if ends.at_zero | ends.at_one == 0 {
        return both::<K, N, T, R, false>(block, outputs, base, diagnostics, values, None);
    }
    mixed::<K, N, T, R>(block, outputs, base, diagnostics, values, ends)
}

/// [`both`] for a block that mixes end values with interior ones. Out of line: inlined beside
/// the interior blocks' instance, it left `block` too large for the compiler to inline into
/// the driver (`perf` showed `block` and the normalize helpers as calls), which slowed the
/// blocks whose values are all between 0 and 1 too.
#[inline(never)]
#[target_feature(enable = "avx2,fma")]
fn mixed<const K: usize, const N: bool, const T: bool, const R: bool>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
    values: __m256,
    ends: Ends,
) -> bool {
    both::<K, N, T, R, true>(block, outputs, base, diagnostics, values, Some(ends))
}

/// The lanes of a block whose blend value is 0 or 1, as masks and as `movemask` bits.
#[derive(Clone, Copy)]
struct Ends {
    zero_lanes: __m256,
    one_lanes: __m256,
    at_zero: i32,
    at_one: i32,
}

/// `values[base .. base + 8]` (in range: the driver's whole blocks).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn load8(values: &[f32], base: usize) -> __m256 {
    let values = &values[base..base + LANES];
    // SAFETY: eight f32s, just sliced.
    unsafe { _mm256_loadu_ps(values.as_ptr()) }
}

impl Ends {
    /// The lanes of `values` at 0 and at 1.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn of(values: __m256) -> Self {
        let zero_lanes = _mm256_cmp_ps::<_CMP_EQ_OQ>(values, _mm256_setzero_ps());
        let one_lanes = _mm256_cmp_ps::<_CMP_EQ_OQ>(values, _mm256_set1_ps(1.0));
        Self {
            zero_lanes,
            one_lanes,
            at_zero: _mm256_movemask_ps(zero_lanes),
            at_one: _mm256_movemask_ps(one_lanes),
        }
    }

    /// `blended` where the value is strictly between 0 and 1, `linear` where it is 0 and `dq`
    /// where it is 1: an end vertex takes LBS's or DQS's result itself, as the scalar kernel
    /// does, not an interpolation that rounds.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn select(self, blended: [__m256; 3], linear: [__m256; 3], dq: [__m256; 3]) -> [__m256; 3] {
        std::array::from_fn(|a| {
            let at_ends = _mm256_blendv_ps(blended[a], linear[a], self.zero_lanes);
            _mm256_blendv_ps(at_ends, dq[a], self.one_lanes)
        })
    }
}

/// The sign flips the DQ blend counts for the vertices of `lanes` (a bit per lane) of the
/// block at `base`: each positively weighted influence other than the pivot whose real part's
/// dot with the pivot's is negative, as the scalar kernel counts them.
fn lane_sign_flips<const K: usize>(block: &Block<'_>, base: usize, lanes: i32) -> usize {
    let k = block.k::<K>();
    let (joints8, weights8) = block.influences8::<K>(base);
    (0..LANES)
        .filter(|&lane| lanes & (1 << lane) != 0)
        .map(|lane| {
            let (joints, weights) = (&joints8[lane * k..][..k], &weights8[lane * k..][..k]);
            let pivot = pivot_slot(weights);
            let pivot_dq = &block.dual_quats[usize::from(joints[pivot])];
            (0..k)
                .filter(|&slot| {
                    slot != pivot
                        && weights[slot] > 0.0
                        && block.dual_quats[usize::from(joints[slot])].real_dot(pivot_dq) < 0.0
                })
                .count()
        })
        .sum()
}

/// Both blends of a block: for a blend value `b` strictly between 0 and 1, positions
/// `p_L + b (p_D − p_L)`, normals and tangent directions the same between the two unit
/// results, renormalized, each tangent's handedness LBS's where `b < 0.5`, else DQS's (kept
/// by the rigid motion, flipped where a vertex's blended residual mirrors); where `E`, the
/// lanes of `ends` at 0 take LBS's results and those at 1 DQS's, each the bits of that
/// method's call (test `vertices_at_0_and_1_are_lbs_and_dqs_to_the_bit`). The sign flips of
/// the DQ blend are counted for every vertex with `b > 0`, and the singular 3x3s of the LBS
/// blend for every vertex with `b < 1` and of the residual for every vertex on a non-rigid
/// joint with `b > 0`, as the scalar kernel counts them. Declines as DQS's and LBS's block
/// kernels do (before writing anything).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn both<const K: usize, const N: bool, const T: bool, const R: bool, const E: bool>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
    values: __m256,
    ends: Option<Ends>,
) -> bool {
    let ends = ends.filter(|_| E);
    // Both blends first, counting nothing, so that a decline leaves the counts as they were.
    let mut dq_counts = Diagnostics::default();
    // DQS's side of the vertices on a non-rigid joint takes their blended residual first, as a
    // DQS call's (`dqs::residual_block`); LBS's side blends the whole 3x4s anyway.
    let lanes = if R {
        0
    } else {
        residual_lanes::<K>(block, base)
    };
    // SAFETY: AVX2 and FMA are enabled here; the vertices on a non-rigid joint take the
    // residual below (`motion8` then blends the rigid parts, as DQS's kernel).
    let Some((rotation, translation)) = (unsafe { motion8::<K>(block, base, &mut dq_counts) })
    else {
        return false;
    };
    // SAFETY: AVX2 and FMA are enabled here; the slots are the block's (checked slicing).
    let Some(m) = (unsafe { blend8::<K, T, false, false>(block, block.influences8::<K>(base)) })
    else {
        return false;
    };
    // The vertices at 0 are LBS's alone, whose flips the scalar kernel does not count: where
    // the block counts its flips (`motion8` counted every lane's), they come out; the call's
    // tally leaves them out itself (`flips::flip_tally`).
    let lbs_only_flips = match ends {
        Some(e) if e.at_zero != 0 && !block.tally_flips => {
            lane_sign_flips::<K>(block, base, e.at_zero)
        }
        _ => 0,
    };
    diagnostics.sign_flips += dq_counts.sign_flips.saturating_sub(lbs_only_flips);
    let lerp = |from: [__m256; 3], to: [__m256; 3]| {
        let mut out = [_mm256_setzero_ps(); 3];
        for a in 0..3 {
            out[a] = _mm256_fmadd_ps(values, _mm256_sub_ps(to[a], from[a]), from[a]);
        }
        out
    };
    let p = load3x8_or_block(block.position_blocks, block.positions, base);
    // SAFETY: AVX2 and FMA are enabled here.
    let residual = (lanes != 0).then(|| unsafe { Residual8::new::<K>(block, base, lanes) });
    let from_linear = m.point(p);
    let from_dq = match &residual {
        Some(r) => add8(rotation.rotate(r.pick(r.linear.point(p), p)), translation),
        None => add8(rotation.rotate(p), translation),
    };
    let mut positions = lerp(from_linear, from_dq);
    if let Some(e) = ends {
        positions = e.select(positions, from_linear, from_dq);
    }
    store3x8(outputs.positions, base, positions);
    if !(N || T) {
        return true;
    }
    // LBS's 3x3 and singular bounds, as LBS's general block kernel (not the unit-sum variant).
    // SAFETY: AVX2 and FMA are enabled here.
    let (columns, bound_root, unit_bound) = unsafe { lbs::normal_columns8::<false>(block, &m) };
    let cofactor0 = cross8(columns[1], columns[2]);
    let det = dot8(columns[0], cofactor0);
    let mut known_sign = None;
    let residual_cofactor = residual.as_ref().map(|r| r.cofactor());
    if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), block.normals) {
        let n = load3x8_or_block(block.normal_blocks, src, base);
        let flip = singular_flip8(
            columns,
            det,
            (m.weight_sum, bound_root, unit_bound),
            // The vertices at 1 are DQS's alone, whose 3x3 the scalar kernel does not test.
            (diagnostics, ALL_LANES & !ends.map_or(0, |e| e.at_one)),
            &mut known_sign,
        );
        let normal = cofactor_normal8(columns, cofactor0, n);
        // Rounded as LBS's call rounds them (which depends on whether it skins tangents), so
        // that the vertices at 0 are LBS's to the bit in any block.
        let from_linear = if T {
            normalize8_flipped_or(normal, flip, n)
        } else {
            // Not `array::map`: see `math::normalize8_flipped_or`.
            let [x, y, z] = normal;
            lbs::unit_normals8(
                [
                    _mm256_xor_ps(x, flip),
                    _mm256_xor_ps(y, flip),
                    _mm256_xor_ps(z, flip),
                ],
                || n,
            )
        };
        let from_dq = match (&residual, residual_cofactor) {
            (Some(r), Some(cofactor)) => {
                // The vertices at 0 are LBS's alone, whose residual the scalar kernel does not
                // test.
                let counted = lanes & !ends.map_or(0, |e| e.at_zero);
                let moved = r.normal(cofactor, n, (&mut *diagnostics, counted));
                normalize8_or(rotation.rotate(moved), n)
            }
            _ => normalize8_rotated_or(rotation.rotate(n), n),
        };
        let mut normals = normalize8_or(lerp(from_linear, from_dq), n);
        if let Some(e) = ends {
            normals = e.select(normals, from_linear, from_dq);
        }
        store3x8(out, base, normals);
    }
    if let (true, Some(out), Some(src)) = (T, outputs.tangents.as_deref_mut(), block.tangents) {
        let (d, w) = load_tangents8(src, base);
        // SAFETY: AVX2 and FMA are enabled here.
        let from_linear = normalize8_or(unsafe { lbs::transform8(columns, d) }, d);
        let (from_dq, dq_sign) = match (&residual, residual_cofactor) {
            (Some(r), Some(cofactor)) => {
                let (moved, mirrored) = r.tangent(cofactor, d);
                (normalize8_or(rotation.rotate(moved), d), mirrored)
            }
            _ => (
                normalize8_rotated_or(rotation.rotate(d), d),
                _mm256_setzero_ps(),
            ),
        };
        // LBS's handedness below one half (the sign of the determinant where it mirrors), DQS's
        // from it (the residual's where it mirrors).
        let linear_sign = known_sign.unwrap_or_else(|| negative_sign8(det));
        let below_half = _mm256_cmp_ps::<_CMP_LT_OQ>(values, _mm256_set1_ps(0.5));
        let sign = _mm256_blendv_ps(dq_sign, linear_sign, below_half);
        let w = _mm256_xor_ps(w, sign);
        let mut directions = normalize8_or(lerp(from_linear, from_dq), d);
        if let Some(e) = ends {
            directions = e.select(directions, from_linear, from_dq);
        }
        store_tangents8(out, base, directions, w);
    }
    true
}
