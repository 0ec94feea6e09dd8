//! The blended kernel of a block of eight vertices: LBS's and DQS's results interpolated by
//! each vertex's blend value, both blends in one pass over the block.

use std::arch::x86_64::*;

use super::blend3x4::blend8;
use super::block::Block;
use super::dqs::{self, motion8};
use super::layout::LANES;
use super::lbs::{self, cofactor_normal8, negative_sign8, singular_flip8};
use super::loads::{load3x8, load_tangents8, store3x8, store_tangents8};
use super::math::{
    add8, cross8, dot8, normalize8_flipped_or, normalize8_or, normalize8_rotated_or,
};
use crate::blend_values::BlendValues;
use crate::types::{Diagnostics, SkinOutputs};

/// Blended of vertices `base .. base + 8`: a block whose values are all 0 is LBS's block
/// kernel's, all 1 DQS's (the same bits as those methods' calls, whose kernels they are);
/// every value strictly between 0 and 1, both blends here ([`interior`]). Returns `false`,
/// having written nothing, for a block that mixes end values with interior ones (the scalar
/// kernel then takes it, so that its end vertices are LBS's and DQS's exactly, counts
/// included) and where the block kernels it runs decline.
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
        Some(BlendValues::PerVertex(values)) => {
            let values = &values[base..base + LANES];
            // SAFETY: eight f32s, just sliced.
            unsafe { _mm256_loadu_ps(values.as_ptr()) }
        }
        None => return false,
    };
    let at_zero = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(values, _mm256_setzero_ps()));
    let at_one = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(values, _mm256_set1_ps(1.0)));
    if at_zero == 0xff {
        // LBS's general variant (weight sums read from the call's flags), its normals stored
        // now rather than held for the next block (`lbs::DeferredNormals`).
        let mut deferred = None;
        // SAFETY: the caller's length contract, which is LBS's.
        let done = unsafe {
            lbs::block::<K, N, T, false, false>(block, outputs, base, diagnostics, &mut deferred)
        };
        if let (Some(held), Some(out), Some(src)) =
            (deferred, outputs.normals.as_deref_mut(), block.normals)
        {
            // SAFETY: this block's normals, inside the range (the caller's contract).
            unsafe { held.store::<K, false, false>(block, out, src, diagnostics) };
        }
        return done;
    }
    if at_one == 0xff {
        return dqs::block::<K, N, T, R>(block, outputs, base, diagnostics);
    }
    if at_zero | at_one != 0 {
        return false;
    }
    interior::<K, N, T, R>(block, outputs, base, diagnostics, values)
}

/// Both blends of a block whose blend values `b` are all strictly between 0 and 1: positions
/// `p_L + b (p_D − p_L)`, normals and tangent directions the same between the two unit
/// results, renormalized, each tangent's handedness LBS's where `b < 0.5`, else DQS's (which a
/// rigid motion keeps). The sign flips of the DQ blend and the singular 3x3s of the LBS blend
/// are counted for every vertex, as the scalar kernel counts them. Declines as DQS's and LBS's
/// block kernels do (before writing anything).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn interior<const K: usize, const N: bool, const T: bool, const R: bool>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
    values: __m256,
) -> bool {
    // Both blends first, counting nothing, so that a decline leaves the counts as they were.
    let mut dq_counts = Diagnostics::default();
    // SAFETY: AVX2 and FMA are enabled here.
    let Some((rotation, translation)) = (unsafe { motion8::<K, R>(block, base, &mut dq_counts) })
    else {
        return false;
    };
    // SAFETY: AVX2 and FMA are enabled here; the slots are the block's (checked slicing).
    let Some(m) = (unsafe { blend8::<K, T, false, false>(block, block.influences8::<K>(base)) })
    else {
        return false;
    };
    diagnostics.sign_flips += dq_counts.sign_flips;
    let lerp = |from: [__m256; 3], to: [__m256; 3]| {
        let mut out = [_mm256_setzero_ps(); 3];
        for a in 0..3 {
            out[a] = _mm256_fmadd_ps(values, _mm256_sub_ps(to[a], from[a]), from[a]);
        }
        out
    };
    let p = load3x8(block.positions, base);
    let from_linear = m.point(p);
    let from_dq = add8(rotation.rotate(p), translation);
    store3x8(outputs.positions, base, lerp(from_linear, from_dq));
    if !(N || T) {
        return true;
    }
    // LBS's 3x3 and singular bounds, as LBS's general block kernel (not the unit-sum variant).
    // SAFETY: AVX2 and FMA are enabled here.
    let (columns, bound_root, unit_bound) = unsafe { lbs::normal_columns8::<false>(block, &m) };
    let cofactor0 = cross8(columns[1], columns[2]);
    let det = dot8(columns[0], cofactor0);
    let mut known_sign = None;
    if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), block.normals) {
        let n = load3x8(src, base);
        let flip = singular_flip8(
            columns,
            det,
            (m.weight_sum, bound_root, unit_bound),
            diagnostics,
            &mut known_sign,
        );
        let from_linear = normalize8_flipped_or(cofactor_normal8(columns, cofactor0, n), flip, n);
        let from_dq = normalize8_rotated_or(rotation.rotate(n), n);
        store3x8(out, base, normalize8_or(lerp(from_linear, from_dq), n));
    }
    if let (true, Some(out), Some(src)) = (T, outputs.tangents.as_deref_mut(), block.tangents) {
        let (d, w) = load_tangents8(src, base);
        // SAFETY: AVX2 and FMA are enabled here.
        let from_linear = normalize8_or(unsafe { lbs::transform8(columns, d) }, d);
        let from_dq = normalize8_rotated_or(rotation.rotate(d), d);
        // LBS's handedness below one half: the sign of the determinant where it mirrors.
        let linear_sign = known_sign.unwrap_or_else(|| negative_sign8(det));
        let below_half = _mm256_cmp_ps::<_CMP_LT_OQ>(values, _mm256_set1_ps(0.5));
        let w = _mm256_xor_ps(w, _mm256_and_ps(below_half, linear_sign));
        store_tangents8(out, base, normalize8_or(lerp(from_linear, from_dq), d), w);
    }
    true
}
