//! Skinning with centers of rotation, eight vertices at a time, from both blends.

use std::arch::x86_64::*;

use super::dual_quat::{self, Rotation8};
use super::lanes::{all8, load3x8, Block};
use super::linear;
use crate::types::{Diagnostics, SkinOutputs};

/// CoR of vertices `base .. base + 8`: the DQS blend's rotation `R` (normalized real part of
/// the sign-aligned blend, the same pivot and flip count as DQS) and the LBS blend `M` of the
/// 3x4s, then `v' = R v + (M p* − R p*)`, normals and tangents by `R`, as the scalar
/// `CenterOfRotation` kernel. Returns `false`, having written nothing, when a vertex of the
/// block has no center, is unweighted, touches a residual, or blends to a zero rotation (the
/// scalar kernel then takes the block, so those cases have one definition).
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
    // SAFETY: this function runs only where AVX2 and FMA are enabled.
    let Some((sum, flips)) = (unsafe { dual_quat::blend8::<K, R, false>(block, base) }) else {
        return false;
    };
    let [rx, ry, rz, rw, ..] = sum;
    let Some(rotation) = Rotation8::from_real([rx, ry, rz, rw]) else {
        return false;
    };
    // SAFETY: this function runs only where AVX2 and FMA are enabled.
    let Some(m) = (unsafe { linear::blend8::<K>(block, base) }) else {
        return false; // unreachable: the DQ blend saw every weight sum above the minimum
    };
    diagnostics.sign_flips += flips;
    let turned_center = rotation.rotate(center);
    let lbs_center = m.point(center);
    let translation = [
        _mm256_sub_ps(lbs_center[0], turned_center[0]),
        _mm256_sub_ps(lbs_center[1], turned_center[1]),
        _mm256_sub_ps(lbs_center[2], turned_center[2]),
    ];
    rotation.apply::<N, T>(block, outputs, base, translation);
    true
}
