//! The DQS kernel of a block of eight vertices: the sign-aligned blend, normalized, applied as
//! a rigid motion (the motion also blended's, [`motion8`]).

use std::arch::x86_64::*;

use super::blend3x4::{blend_rows8, weight_scale8, Linear8};
use super::block::{on_non_rigid_joint, Block};
use super::dq_blend::blend8;
use super::layout::LANES;
use super::lbs::{cofactor_normal8, negative_sign8, singular_flip8, transform8};
use super::loads::{load3x8_or_block, load_tangents8, store3x8, store_tangents8};
use super::math::{add8, cross8, dot8, normalize8_or, scale8};
use super::rotation::Rotation8;
use crate::types::{Diagnostics, SkinOutputs};

/// DQS of vertices `base .. base + 8`. Returns `false`, having written nothing, when a vertex
/// of the block is unweighted or blends to a zero rotation. Unless the palette is rigid (`R`),
/// the vertices on a non-rigid joint take their blended residual first ([`residual_block`]).
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
    if !R {
        let lanes = residual_lanes::<K>(block, base);
        if lanes != 0 {
            // SAFETY: the caller guarantees AVX2 and FMA.
            return unsafe { residual_block::<K, N, T>(block, outputs, base, diagnostics, lanes) };
        }
    }
    // SAFETY: the caller guarantees AVX2 and FMA; no vertex of the block is on a non-rigid
    // joint (tested above unless the palette is rigid).
    let Some((rotation, translation)) = (unsafe { motion8::<K>(block, base, diagnostics) }) else {
        return false;
    };
    // SAFETY: as above.
    unsafe { rotation.apply::<N, T>(block, outputs, base, translation, None) };
    true
}

/// A bit per vertex of `base .. base + 8` that puts a non-zero weight on a non-rigid joint.
/// Shared by DQS and CoR.
#[inline(always)]
pub(super) fn residual_lanes<const K: usize>(block: &Block<'_>, base: usize) -> i32 {
    let k = block.k::<K>();
    let (joints8, weights8) = block.influences8::<K>(base);
    let mut lanes = 0;
    for l in 0..LANES {
        let slots = l * k..(l + 1) * k;
        if on_non_rigid_joint(block, &joints8[slots.clone()], &weights8[slots]) {
            lanes |= 1 << l;
        }
    }
    lanes
}

/// DQS of a block with vertices on non-rigid joints (`lanes`, a bit each): positions `S p`
/// before the rigid motion, then [`Residual8::store`]. Returns `false` as [`block`] does.
///
/// # Safety
/// The CPU has AVX2 and FMA. (Inlined, as [`block`].)
#[inline(always)]
unsafe fn residual_block<const K: usize, const N: bool, const T: bool>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
    lanes: i32,
) -> bool {
    // SAFETY: (each) the caller guarantees AVX2 and FMA.
    unsafe {
        let Some((rotation, translation)) = motion8::<K>(block, base, diagnostics) else {
            return false;
        };
        let residual = Residual8::new::<K>(block, base, lanes);
        let p = load3x8_or_block(block.position_blocks, block.positions, base);
        let p = residual.pick(residual.linear.point(p), p);
        residual.store::<N, T>(
            block,
            outputs,
            base,
            (&rotation, p, translation),
            diagnostics,
        );
        true
    }
}

/// The blended residuals `S = Σ wᵢ Sᵢ` of eight vertices (weights divided by their sum where
/// the call renormalizes), applied where `lanes` has a bit (the vertices on a non-rigid joint)
/// and skipped elsewhere, as the scalar kernel: DQS (and blended's DQS side) moves `S p`, CoR
/// `S₃ (p − p*)`, by the rigid motion; normals by `S`'s cofactor with its sign and singular
/// test (counted for those vertices only), tangents `S t` with the handedness flipped where `S`
/// mirrors.
pub(super) struct Residual8 {
    /// `S`, one component of all eight per register (LBS's 3x4 blend over the residuals).
    pub(super) linear: Linear8,
    /// All ones in the lanes `S` applies to.
    on: __m256,
    /// A bit per lane `S` applies to.
    lanes: i32,
}

impl Residual8 {
    /// The residuals of vertices `base .. base + 8`, to apply in `lanes`.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA. (Inlined, as [`block`].)
    #[inline(always)]
    pub(super) unsafe fn new<const K: usize>(block: &Block<'_>, base: usize, lanes: i32) -> Self {
        // SAFETY: (each) the caller guarantees AVX2 and FMA; `block.residuals` holds sixteen
        // f32s (an `Affine3A`) for every joint of the palette, whose joints the slots index.
        unsafe {
            let slots = block.influences8::<K>(base);
            let blend = blend_rows8::<K, false, false, false>(
                block,
                slots,
                block.residuals.as_ptr().cast(),
                None,
            );
            // `Σw` in slot order, as the scalar kernel sums it, where the call divides by it;
            // the singular test takes no bound from it (it is scale-free).
            let weight_sum = if block.divide_by_weight_sums {
                let k = block.k::<K>();
                _mm256_loadu_ps(
                    std::array::from_fn::<f32, LANES, _>(|l| {
                        slots.1[l * k..(l + 1) * k].iter().sum()
                    })
                    .as_ptr(),
                )
            } else {
                _mm256_set1_ps(1.0)
            };
            Self {
                linear: Linear8 {
                    columns: blend.columns,
                    translation: blend.translation,
                    weight_scale: weight_scale8(block, weight_sum),
                    weight_sum,
                },
                on: lane_mask(lanes),
                lanes,
            }
        }
    }

    /// `a` in the lanes the residuals apply to, `b` in the others.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn pick(&self, a: [__m256; 3], b: [__m256; 3]) -> [__m256; 3] {
        std::array::from_fn(|c| _mm256_blendv_ps(b[c], a[c], self.on))
    }

    /// `S₃ v` (weights normalized where the call divides), in the lanes it applies to.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn vector(&self, v: [__m256; 3]) -> [__m256; 3] {
        // SAFETY: this function's features.
        let moved = unsafe { transform8(self.linear.columns, v) };
        let moved = match self.linear.weight_scale {
            Some(scale) => scale8(moved, scale),
            None => moved,
        };
        self.pick(moved, v)
    }

    /// Writes vertices `base .. base + 8`: positions `R p + t` for `(R, p, t)` of `motion`
    /// (`p` already through the residual where it applies), and where `N` / `T` and the input
    /// has them normals and tangents through the residual, then `R`, renormalized (a zero
    /// length gives the input back, as the scalar kernel).
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA. (Inlined, as [`block`].)
    #[inline(always)]
    pub(super) unsafe fn store<const N: bool, const T: bool>(
        &self,
        block: &Block<'_>,
        outputs: &mut SkinOutputs<'_>,
        base: usize,
        (rotation, p, translation): (&Rotation8, [__m256; 3], [__m256; 3]),
        diagnostics: &mut Diagnostics,
    ) {
        // SAFETY: (each) the caller guarantees AVX2 and FMA.
        unsafe {
            store3x8(
                outputs.positions,
                base,
                add8(rotation.rotate(p), translation),
            );
            if !(N || T) {
                return;
            }
            let cofactor = self.cofactor();
            if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), block.normals)
            {
                let n = load3x8_or_block(block.normal_blocks, src, base);
                let moved = self.normal(cofactor, n, (diagnostics, self.lanes));
                store3x8(out, base, normalize8_or(rotation.rotate(moved), n));
            }
            if let (true, Some(out), Some(src)) =
                (T, outputs.tangents.as_deref_mut(), block.tangents)
            {
                let (d, w) = load_tangents8(src, base);
                let (moved, mirrored) = self.tangent(cofactor, d);
                store_tangents8(
                    out,
                    base,
                    normalize8_or(rotation.rotate(moved), d),
                    _mm256_xor_ps(w, mirrored),
                );
            }
        }
    }

    /// `S`'s first cofactor column and its determinant, for [`Self::normal`] and
    /// [`Self::tangent`].
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn cofactor(&self) -> ([__m256; 3], __m256) {
        let columns = self.linear.columns;
        let cofactor0 = cross8(columns[1], columns[2]);
        (cofactor0, dot8(columns[0], cofactor0))
    }

    /// The normal `n` through `S` (its cofactor, negated where `S` mirrors; `n` itself where `S`
    /// is singular) in the lanes `S` applies to, `n` in the others, not normalized; the
    /// singular `S`s of the lanes of `counted` (a bit each) are added to `diagnostics`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn normal(
        &self,
        (cofactor0, det): ([__m256; 3], __m256),
        n: [__m256; 3],
        counted: (&mut Diagnostics, i32),
    ) -> [__m256; 3] {
        let columns = self.linear.columns;
        let flip = singular_flip8(
            columns,
            det,
            (self.linear.weight_sum, None, None),
            counted,
            &mut None,
        );
        let moved = cofactor_normal8(columns, cofactor0, n).map(|c| _mm256_xor_ps(c, flip));
        self.pick(moved, n)
    }

    /// The tangent direction `d` through `S` in the lanes `S` applies to, `d` in the others,
    /// not normalized, and the sign bit (`-0.0`) to xor into the handedness in the lanes where
    /// `S` mirrors.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn tangent(
        &self,
        (_, det): ([__m256; 3], __m256),
        d: [__m256; 3],
    ) -> ([__m256; 3], __m256) {
        // SAFETY: this function's features.
        let moved = unsafe { transform8(self.linear.columns, d) };
        (
            self.pick(moved, d),
            _mm256_and_ps(negative_sign8(det), self.on),
        )
    }
}

/// All ones in the lanes whose bit `lanes` sets, else zero.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lane_mask(lanes: i32) -> __m256 {
    let bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    let set = _mm256_and_si256(_mm256_set1_epi32(lanes), bits);
    _mm256_castsi256_ps(_mm256_cmpeq_epi32(set, bits))
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
pub(super) unsafe fn motion8<const K: usize>(
    block: &Block<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
) -> Option<(Rotation8, [__m256; 3])> {
    // SAFETY: the caller guarantees AVX2 and FMA.
    let (sum, flips) = unsafe { blend8::<K, true>(block, base) }?;
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
