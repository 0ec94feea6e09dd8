//! The CoR kernel of a block of eight vertices: the rotation of the sign-aligned dual
//! quaternion blend about each vertex's center, which the 3x4 blend places.

use std::arch::x86_64::*;

use super::blend3x4::{self, Linear8, RotationSigns};
use super::block::{block_pivots, pivot_row, table_flips, Block};
use super::dq_blend;
use super::dqs::{residual_lanes, Residual8};
use super::layout::{SignedLayout, LANES, PIVOT_SIGN_TABLE_MAX_JOINTS};
use super::loads::{load3x8, load3x8_or_block};
use super::math::all8;
use super::rotation::Rotation8;
use crate::types::{Diagnostics, SkinOutputs};

/// CoR of vertices `base .. base + 8`: the DQS blend's rotation `R` (normalized real part of
/// the sign-aligned blend, the same pivot and flip count as DQS) and the LBS blend `M` of the
/// 3x4s, then `v' = R v + (M p* − R p*)`, normals and tangents by `R`, as the scalar
/// `CenterOfRotation` kernel; computed as `R (v − p*) + M p*`, one rotation per vertex instead
/// of two (the same value up to f32 rounding, which is smaller this way for vertices near their
/// centers). The vertices on non-rigid joints take their residual `S`: `R S₃ (v − p*) + M p*`
/// (`dqs::Residual8`). Returns `false`, having written nothing, when a vertex of the block has
/// no center, is unweighted, or blends to a zero rotation (the scalar kernel then takes the
/// block, so those cases have one definition).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn block<const K: usize, const N: bool, const T: bool, const R: bool>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
) -> bool {
    let Some(centers) = block.centers else {
        return false;
    };
    let center = load3x8(centers, base);
    // A center is all finite or all NaN (checked by `with_rotation_centers`): x decides.
    if !all8(_mm256_cmp_ps::<_CMP_ORD_Q>(center[0], center[0])) {
        return false;
    }
    // The vertices on non-rigid joints, which take their residual (none where the palette is
    // rigid); the blends below then need not test for them.
    let lanes = if R {
        0
    } else {
        residual_lanes::<K>(block, base)
    };
    let blended = if (K == 4 || K == 8) && !block.signed_entries.is_empty() {
        // SAFETY: this function runs only where AVX2 and FMA are enabled.
        unsafe { blend_with_rotations8::<K>(block, base) }
    } else {
        // SAFETY: as above.
        unsafe { separate_blends8::<K>(block, base) }
    };
    let Some((real, m, flips)) = blended else {
        return false;
    };
    let Some(rotation) = Rotation8::from_real(block, real) else {
        return false;
    };
    diagnostics.sign_flips += flips;
    // R p + (M p* − R p*) = R (p − p*) + M p*: one rotation instead of two.
    let lbs_center = m.point(center);
    if lanes != 0 {
        // With the residual S: R S(p) + (M p* − R S(p*)) = R S₃ (p − p*) + M p*.
        // SAFETY: this function runs only where AVX2 and FMA are enabled.
        unsafe {
            let residual = Residual8::new::<K>(block, base, lanes);
            let p = load3x8_or_block(block.position_blocks, block.positions, base);
            let from_center =
                residual.vector(std::array::from_fn(|c| _mm256_sub_ps(p[c], center[c])));
            residual.store::<N, T>(
                block,
                outputs,
                base,
                (&rotation, from_center, lbs_center),
                diagnostics,
            );
        }
        return true;
    }
    // SAFETY: this function runs only where AVX2 and FMA are enabled.
    unsafe { rotation.apply::<N, T>(block, outputs, base, lbs_center, Some(center)) };
    true
}

/// The rotations' real parts (not normalized), the 3x4 blend and the sign flips of vertices
/// `base .. base + 8` from the two blends: the sign-aligned DQ blend (real parts only) and the
/// LBS blend. `None` as `dq_blend::blend8`.
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[inline(always)]
unsafe fn separate_blends8<const K: usize>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 4], Linear8, usize)> {
    // SAFETY: the caller guarantees AVX2 and FMA.
    unsafe {
        let (sum, flips) = dq_blend::blend8::<K, false>(block, base)?;
        let [rx, ry, rz, rw, ..] = sum;
        // Unreachable `None`: the DQ blend saw every weight sum above the minimum.
        let m = blend3x4::blend8::<K, true, false, false>(block, block.influences8::<K>(base))?;
        Some(([rx, ry, rz, rw], m, flips))
    }
}

/// [`separate_blends8`] in one blend, for four or eight influences and a palette with a pivot
/// sign table: each influence's 3x4 and quaternion share one cache line
/// (`PreparedPalette::signed_entries`, the quaternion in the padding lanes), blended as
/// sixteen floats by `blend3x4::blend_rows8`, the line with the quaternion negated where the
/// table's entry (pivot joint, joint) says so, as DQS's table blend reads its negated dual
/// quaternions; `Σw` from the weights (the padding lane that carries it for LBS holds the
/// quaternion's w here). Against the two blends, CoR with normals 1.1× at 10k
/// (`ab.py 15 "cor pn 4 10000 5000"` against a build without the lines; the measuring recipe
/// is in `simd/mod.rs`). Written in `asm!` with register-only addresses (as
/// `dq_table::blend4_signed`), the blend computes its addresses per influence and spills its
/// pointers: not faster.
///
/// # Safety
/// The CPU has AVX2 and FMA; `block.signed_entries` is not empty.
#[inline(always)]
unsafe fn blend_with_rotations8<const K: usize>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 4], Linear8, usize)> {
    // SAFETY: as this function's.
    unsafe {
        if block.tally_flips {
            blend_with_rotations8_counting::<K, false>(block, base)
        } else {
            blend_with_rotations8_counting::<K, true>(block, base)
        }
    }
}

/// [`blend_with_rotations8`], counting the flips where `C` (else the call counts them once,
/// `flips::tallied_sign_flips`, and this returns 0).
///
/// # Safety
/// As [`blend_with_rotations8`].
#[inline(always)]
unsafe fn blend_with_rotations8_counting<const K: usize, const C: bool>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 4], Linear8, usize)> {
    assert!(K == 4 || K == 8);
    let (joints8, weights8) = block.influences8::<K>(base);
    let (joints8, weights8) = (&joints8[..K * LANES], &weights8[..K * LANES]);
    // A largest weight of at least `MIN_WEIGHT_SUM` (the pivot words' flag) proves the vertex
    // weighted.
    let (pivots, zero_weights) = block_pivots(block, base)?;
    let joints = block.dual_quats.len();
    assert!(
        block.signed_offsets.len() == joints * PIVOT_SIGN_TABLE_MAX_JOINTS
            && block.signed_entries.len() == 2 * joints
            && block.signed_layout == SignedLayout::ROTATION_LANES
    );
    let table = block.signed_offsets.as_ptr();
    let mut signs = RotationSigns {
        rows: std::array::from_fn(|l| {
            // SAFETY: the pivot is a joint inside the palette, so its row is in the table.
            unsafe { pivot_row(table, pivots[l]) }
        }),
        count: 0,
    };
    // SAFETY: the caller guarantees AVX2 and FMA; the entries and the rows cover every joint of
    // the palette (asserted above).
    unsafe {
        let blend = blend3x4::blend_rows8::<K, C, true, false>(
            block,
            (joints8, weights8),
            block.signed_entries.as_ptr().cast(),
            Some(&mut signs),
        );
        let sum = if K == 4 {
            blend3x4::weight_sums4(weights8)
        } else {
            blend3x4::weight_sums8(weights8)
        };
        if !blend3x4::weighted8(block, sum) {
            return None;
        }
        let weight_scale = blend3x4::weight_scale8(block, sum);
        let flips = if C {
            table_flips::<K>(block, base, pivots, zero_weights, signs.count)
        } else {
            0
        };
        Some((
            blend.padding,
            Linear8 {
                columns: blend.columns,
                translation: blend.translation,
                weight_scale,
                weight_sum: sum,
            },
            flips,
        ))
    }
}
