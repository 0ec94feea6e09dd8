//! The rigid motion DQS and CoR apply to a block: the rotation of a blended real part, and
//! positions, normals and tangents moved by it.

use std::arch::x86_64::*;

use super::block::Block;
use super::loads::{load3x8_or_block, load_tangents8, store3x8, store_tangents8};
use super::math::{add8, all8, cross8, normalize8_rotated_or};
use crate::types::SkinOutputs;

/// The rotations of eight vertices, from the real parts `(v, w)` of their blends, not
/// normalized: `(v, w) / |(v, w)|` rotates `x` to `x + (2 / |(v, w)|²) v×(v×x + w x)`, so the
/// normalization is one division and one multiply per rotated vector instead of a square root
/// and four multiplies (the same value as the scalar kernel's normalize-then-rotate up to f32
/// rounding).
pub(super) struct Rotation8 {
    /// The vector part.
    pub(super) v: [__m256; 3],
    /// The scalar part.
    pub(super) w: __m256,
    /// `2 / |(v, w)|²`.
    pub(super) two_over_norm: __m256,
}

impl Rotation8 {
    /// Writes vertices `base .. base + 8` moved by this rotation and `translation`: positions
    /// `R p + t`, or with an `origin` `o`, `R (p − o) + t`; and (where `N` / `T` and the input
    /// has them) normals and tangent directions `R n`, renormalized, tangents keeping their
    /// handedness; positions and normals read from the range's vertex blocks where it has them
    /// (`load3x8_or_block`). Shared by DQS and CoR.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA. (Not a `#[target_feature]` function so that it can be
    /// `#[inline(always)]`: called out of line, the rotation and the translation go through
    /// the stack, eight stores and eight reloads on the block's chain.)
    #[inline(always)]
    pub(super) unsafe fn apply<const N: bool, const T: bool>(
        &self,
        block: &Block<'_>,
        outputs: &mut SkinOutputs<'_>,
        base: usize,
        translation: [__m256; 3],
        origin: Option<[__m256; 3]>,
    ) {
        // SAFETY: the caller guarantees AVX2 and FMA.
        unsafe {
            let p = load3x8_or_block(block.position_blocks, block.positions, base);
            let p = match origin {
                Some(o) => self.rotate([
                    _mm256_sub_ps(p[0], o[0]),
                    _mm256_sub_ps(p[1], o[1]),
                    _mm256_sub_ps(p[2], o[2]),
                ]),
                None => self.rotate(p),
            };
            store3x8(outputs.positions, base, add8(p, translation));
            if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), block.normals)
            {
                let n = load3x8_or_block(block.normal_blocks, src, base);
                store3x8(out, base, normalize8_rotated_or(self.rotate(n), n));
            }
            if let (true, Some(out), Some(src)) =
                (T, outputs.tangents.as_deref_mut(), block.tangents)
            {
                let (d, tw) = load_tangents8(src, base);
                store_tangents8(out, base, normalize8_rotated_or(self.rotate(d), d), tw);
            }
        }
    }

    /// The rotations of the real parts `[x, y, z, w]` of eight blends, or `None` when one of
    /// them has no finite squared length of at least the smallest normal f32 (rounding
    /// cancelled the blend: the scalar kernel's fallback has one definition). Not tested where
    /// `block.real_blends_usable` ([`real_blends_usable`]) has shown that none can fail it.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn from_real(block: &Block<'_>, real: [__m256; 4]) -> Option<Self> {
        let [x, y, z, w] = real;
        let norm = _mm256_fmadd_ps(
            w,
            w,
            _mm256_fmadd_ps(z, z, _mm256_fmadd_ps(y, y, _mm256_mul_ps(x, x))),
        );
        if !block.real_blends_usable {
            let usable = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_LT_OQ>(norm, _mm256_set1_ps(f32::INFINITY)),
                _mm256_cmp_ps::<_CMP_GE_OQ>(norm, _mm256_set1_ps(f32::MIN_POSITIVE)),
            );
            if !all8(usable) {
                return None;
            }
        }
        Some(Self {
            v: [x, y, z],
            w,
            two_over_norm: _mm256_div_ps(_mm256_set1_ps(2.0), norm),
        })
    }

    /// `x` rotated.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn rotate(&self, x: [__m256; 3]) -> [__m256; 3] {
        let c = cross8(self.v, x);
        let inner = [
            _mm256_fmadd_ps(self.w, x[0], c[0]),
            _mm256_fmadd_ps(self.w, x[1], c[1]),
            _mm256_fmadd_ps(self.w, x[2], c[2]),
        ];
        let outer = cross8(self.v, inner);
        [
            _mm256_fmadd_ps(self.two_over_norm, outer[0], x[0]),
            _mm256_fmadd_ps(self.two_over_norm, outer[1], x[1]),
            _mm256_fmadd_ps(self.two_over_norm, outer[2], x[2]),
        ]
    }
}
