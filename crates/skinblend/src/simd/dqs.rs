//! The DQS kernel of a block of eight vertices: the sign-aligned blend, normalized, applied as
//! a rigid motion (the motion also blended's, [`motion8`]).

use std::arch::x86_64::*;

use super::block::Block;
use super::dq_blend::blend8;
use super::math::cross8;
use super::rotation::Rotation8;
use crate::types::{Diagnostics, SkinOutputs};

/// DQS of vertices `base .. base + 8`. Returns `false`, having written nothing, when a vertex
/// of the block is unweighted, touches a residual, or blends to a zero rotation.
///
/// # Safety
/// The CPU has AVX2 and FMA. (Not a `#[target_feature]` function so that it can be
/// `#[inline(always)]`: the compiler kept it out of line, and the driver then called it per
/// block, saving registers and reading the block's fields again each time. Inlined, DQS with
/// normals ran 1.06× at 10k and 100k vertices and 1.03× at 1M, positions only 1.10× at 100k,
/// `ab.py 9 "dq pn 4 10000 3000"` and `ab.py 5` of the others; the measuring recipe is in
/// `simd/mod.rs`.)
#[inline(always)]
pub(super) unsafe fn block<const K: usize, const N: bool, const T: bool, const R: bool>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
) -> bool {
    // SAFETY: the caller guarantees AVX2 and FMA.
    let Some((rotation, translation)) = (unsafe { motion8::<K, R>(block, base, diagnostics) })
    else {
        return false;
    };
    // SAFETY: as above.
    unsafe { rotation.apply::<N, T>(block, outputs, base, translation, None) };
    true
}

/// The rigid motions of vertices `base .. base + 8` (the normalized sign-aligned blend as a
/// rotation and a translation), their sign flips added to `diagnostics`; `None`, counting
/// nothing, as [`block`] declines. Shared by DQS and blended.
///
/// # Safety
/// The CPU has AVX2 and FMA. (Not a `#[target_feature]` function so that it can be
/// `#[inline(always)]`: called out of line from blended's kernel, its eight registers came back
/// through the stack; inlined, blended with normals 1.16× at 100k vertices, every value 0.5,
/// `ab.py 7 "blended pn 4 100000 300"`; the measuring recipe is in `simd/mod.rs`.)
#[inline(always)]
pub(super) unsafe fn motion8<const K: usize, const R: bool>(
    block: &Block<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
) -> Option<(Rotation8, [__m256; 3])> {
    // SAFETY: the caller guarantees AVX2 and FMA.
    let (sum, flips) = unsafe { blend8::<K, R, true>(block, base) }?;
    let [rx, ry, rz, rw, dx, dy, dz, dw] = sum;
    // SAFETY: as above.
    let rotation = unsafe { Rotation8::from_real(block, [rx, ry, rz, rw]) }?;
    diagnostics.sign_flips += flips;
    // The translation of the normalized blend: 2 (w vε − wε v + v×vε) / |(v, w)|², bilinear in
    // the real and the dual part.
    let (v, w, ve) = (rotation.v, rotation.w, [dx, dy, dz]);
    // SAFETY: as above.
    let translation = unsafe {
        let c = cross8(v, ve);
        let mut translation = [_mm256_setzero_ps(); 3];
        for a in 0..3 {
            translation[a] = _mm256_mul_ps(
                rotation.two_over_norm,
                _mm256_add_ps(_mm256_fmsub_ps(w, ve[a], _mm256_mul_ps(dw, v[a])), c[a]),
            );
        }
        translation
    };
    Some((rotation, translation))
}
