//! Eight-wide vector maths on `[x, y, z]` registers (one component of eight vertices each):
//! products, lengths, the fast normalize and its window, lane masks.

use std::arch::x86_64::*;

/// `a × b`, lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn cross8(a: [__m256; 3], b: [__m256; 3]) -> [__m256; 3] {
    [
        _mm256_fmsub_ps(a[1], b[2], _mm256_mul_ps(a[2], b[1])),
        _mm256_fmsub_ps(a[2], b[0], _mm256_mul_ps(a[0], b[2])),
        _mm256_fmsub_ps(a[0], b[1], _mm256_mul_ps(a[1], b[0])),
    ]
}

/// `a · b`, lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn dot8(a: [__m256; 3], b: [__m256; 3]) -> __m256 {
    _mm256_fmadd_ps(
        a[2],
        b[2],
        _mm256_fmadd_ps(a[1], b[1], _mm256_mul_ps(a[0], b[0])),
    )
}

/// `|v|`, lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn abs8(v: __m256) -> __m256 {
    _mm256_andnot_ps(_mm256_set1_ps(-0.0), v)
}

/// Lanes where `v` is finite and above zero (NaN fails both ordered comparisons).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn finite_positive8(v: __m256) -> __m256 {
    _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_LT_OQ>(v, _mm256_set1_ps(f32::INFINITY)),
        _mm256_cmp_ps::<_CMP_GT_OQ>(v, _mm256_setzero_ps()),
    )
}

/// Squared lengths in `[2^FAST_NORMALIZE_LOW_EXPONENT, 2^(FAST_NORMALIZE_LOW_EXPONENT +
/// 2^FAST_NORMALIZE_SPAN_LOG2))`, that is `[2⁻⁶⁴, 2⁶⁴)` (lengths `[2⁻³², 2³²)`), take the fast
/// inverse square root of [`normalize8_or`]: `rsqrt`'s table and one Newton step are accurate
/// there (relative error below 1e-6, well inside `SIMD_VS_SCALAR`), and every such length has a
/// finite, positive exact inverse, so the fallback is never taken for them. Outside it (zero,
/// subnormal, huge, NaN) a block takes the exact path of the scalar kernel. A window of whole
/// binades, tested on the bits by [`all_in_binades8`]: no floating-point compare on the two
/// pipes the multiplies need.
const FAST_NORMALIZE_LOW_EXPONENT: i32 = -64;
/// See [`FAST_NORMALIZE_LOW_EXPONENT`]: 2⁷ binades.
const FAST_NORMALIZE_SPAN_LOG2: u32 = 7;

/// Whether every lane of `v` is in `[2^LOW, 2^(LOW + 2^SPAN_LOG2))` (so positive, finite and
/// normal where the window is inside the normal range), by integer operations on the bits:
/// `bits − bits(2^LOW)` is below `2^(23 + SPAN_LOG2)` unsigned exactly for those lanes (a
/// positive f32's bits increase with its value; negative values, zero, subnormals below the
/// window, infinities and NaN all land at or above the limit), so one subtraction and one
/// `vptest` of the bits above the limit replace two compares and an and. The compares issue on
/// the two pipes the multiplies need, on which the block kernels' rate depends; the subtraction
/// on any of four.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn all_in_binades8<const LOW: i32, const SPAN_LOG2: u32>(v: __m256) -> bool {
    const { assert!(23 + SPAN_LOG2 < 32 && LOW >= -126 && LOW + (1 << SPAN_LOG2) <= 128) };
    let [low, above] = const { binade_window_bits(LOW, SPAN_LOG2) };
    let offset = _mm256_sub_epi32(_mm256_castps_si256(v), _mm256_set1_epi32(low as i32));
    _mm256_testz_si256(offset, _mm256_set1_epi32(above as i32)) == 1
}

/// [`all_in_binades8`]'s two constants for the window `[2^low, 2^(low + 2^span_log2))`: the
/// bits of `2^low`, subtracted from each lane's, and the mask of the bits that must then be 0.
pub(super) const fn binade_window_bits(low: i32, span_log2: u32) -> [u32; 2] {
    [
        ((127 + low) << 23) as u32,
        !((1u32 << (23 + span_log2)) - 1),
    ]
}

/// The fast normalize's window ([`FAST_NORMALIZE_LOW_EXPONENT`]) as [`binade_window_bits`]:
/// what the hand-written LBS loop (`lbs_loop`) tests its normals' squared lengths against.
pub(super) const FAST_NORMALIZE_WINDOW_BITS: [u32; 2] =
    binade_window_bits(FAST_NORMALIZE_LOW_EXPONENT, FAST_NORMALIZE_SPAN_LOG2);

/// Unit vectors along `v`, lane by lane, or `fallback` where `v` has no finite non-zero
/// length (the contract of glam's `try_normalize`).
///
/// When every lane's squared length is inside the window of [`FAST_NORMALIZE_LOW_EXPONENT`],
/// the inverse length is `rsqrt` with one Newton step (four multiplies, no divider) instead of
/// the correctly rounded `1 / sqrt`, a square root and a division on the divider for each
/// block (LBS with normals 1.04×, `ab.py 15 "linear pn 4 10000 5000"` against a build that
/// always divides; the measuring recipe is in `simd/mod.rs`). `vrsqrtps` is not specified
/// bit-exactly, so the last bits may differ between CPU vendors. Otherwise the block takes
/// `1 / sqrt` and glam's finite-and-positive test, as the scalar kernel.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn normalize8_or(v: [__m256; 3], fallback: [__m256; 3]) -> [__m256; 3] {
    normalize8_flipped_or(v, _mm256_setzero_ps(), fallback)
}

/// [`normalize8_or`] of `v` with the sign bits `flip` (`-0.0` or `0.0` per lane) xored into
/// each component, bit for bit, but the flip applied after the length is taken (a length
/// ignores signs): a flip that is known late (LBS's mirror test waits for the determinant) is
/// off the block's dependency chain. `fallback` is returned as it is, unflipped.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn normalize8_flipped_or(
    v: [__m256; 3],
    flip: __m256,
    fallback: [__m256; 3],
) -> [__m256; 3] {
    let squared = dot8(v, v);
    if let Some([y0, correction]) = fast_inverse_length_factors8(squared) {
        // `v y₀` beside the correction, one multiply less on the chain; flipped there too.
        // A loop, not `array::map`: where the compiler declines to inline `map` (blended's
        // block kernel once tipped it), its closure runs out of line without AVX2, and the
        // 2,000-vertex blended kernel ran at half its speed.
        let mut scaled = scale8(v, y0);
        for c in &mut scaled {
            *c = _mm256_xor_ps(*c, flip);
        }
        return scale8(scaled, correction);
    }
    let inverse = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_sqrt_ps(squared));
    let ok = finite_positive8(inverse);
    let mut out = [_mm256_setzero_ps(); 3];
    for a in 0..3 {
        let unit = _mm256_xor_ps(_mm256_mul_ps(v[a], inverse), flip);
        out[a] = _mm256_blendv_ps(fallback[a], unit, ok);
    }
    out
}

/// `1 / √squared` by `rsqrt` and one Newton step where every lane of `squared` is inside
/// the window of [`FAST_NORMALIZE_LOW_EXPONENT`], else `None`: the product of
/// [`fast_inverse_length_factors8`].
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn fast_inverse_length8(squared: __m256) -> Option<__m256> {
    fast_inverse_length_factors8(squared).map(|[y0, correction]| _mm256_mul_ps(y0, correction))
}

/// `1 / √squared` as two factors, `rsqrt`'s estimate `y₀` and one Newton step's correction
/// `(3 − x y₀²) / 2`, where every lane of `squared` is inside the window of
/// [`FAST_NORMALIZE_LOW_EXPONENT`], else `None`. Kept apart so that a caller can scale by `y₀`
/// beside the correction.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn fast_inverse_length_factors8(squared: __m256) -> Option<[__m256; 2]> {
    if !all_in_binades8::<FAST_NORMALIZE_LOW_EXPONENT, FAST_NORMALIZE_SPAN_LOG2>(squared) {
        return None;
    }
    let y0 = _mm256_rsqrt_ps(squared);
    let half_three_minus = _mm256_fnmadd_ps(
        _mm256_mul_ps(squared, y0),
        _mm256_mul_ps(y0, _mm256_set1_ps(0.5)),
        _mm256_set1_ps(1.5),
    );
    Some([y0, half_three_minus])
}

/// [`normalize8_or`] of `rotated`, a rotation of `original` (so of its length, up to the
/// rotation's rounding): `rotated` scaled by `original`'s inverse length where every lane of
/// `original` has a squared length inside the window of [`FAST_NORMALIZE_LOW_EXPONENT`] (its
/// rotation is then finite and non-zero, so the fallback is never due), else
/// `normalize8_or(rotated, original)`. The inverse length then depends on the input alone, not
/// on the blend, so the block's dependency chain ends at the rotation (CoR with normals 1.06×,
/// `ab.py 15 "cor pn 4 10000 5000"` against normalizing the rotated vector). It differs from
/// the rotated vector's own by the rotation's rounding, a few f32 ulps, well inside
/// `SIMD_VS_SCALAR`.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn normalize8_rotated_or(rotated: [__m256; 3], original: [__m256; 3]) -> [__m256; 3] {
    match fast_inverse_length8(dot8(original, original)) {
        Some(inverse) => scale8(rotated, inverse),
        None => normalize8_or(rotated, original),
    }
}

/// `v` scaled by `s`, lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn scale8(v: [__m256; 3], s: __m256) -> [__m256; 3] {
    [
        _mm256_mul_ps(v[0], s),
        _mm256_mul_ps(v[1], s),
        _mm256_mul_ps(v[2], s),
    ]
}

/// `a + b`, lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn add8(a: [__m256; 3], b: [__m256; 3]) -> [__m256; 3] {
    [
        _mm256_add_ps(a[0], b[0]),
        _mm256_add_ps(a[1], b[1]),
        _mm256_add_ps(a[2], b[2]),
    ]
}

/// Whether every lane of a comparison mask is set.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn all8(mask: __m256) -> bool {
    _mm256_movemask_ps(mask) == 0xFF
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::cpu::Avx2Fma;

    /// `all_in_binades8` against the two float compares it replaces, on the window's edges and
    /// their neighbours, zero, subnormals, negatives, infinities and NaN: a lane in the window
    /// must pass, one outside must fail the whole block.
    #[test]
    fn binade_window_is_the_float_range() {
        let Some(_avx2_fma) = Avx2Fma::detect() else {
            return; // nothing to run the test on
        };
        let (low, high) = (2f32.powi(-64), 2f32.powi(64));
        let below = |x: f32| f32::from_bits(x.to_bits() - 1);
        let samples = [
            low,
            below(low),
            high,
            below(high),
            1.0,
            0.0,
            -0.0,
            f32::from_bits(1),
            f32::MIN_POSITIVE,
            -1.0,
            -low,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::MAX,
        ];
        for &x in &samples {
            let expected = (low..high).contains(&x);
            // The sample in one lane, 1.0 (inside) in the others.
            for lane in [0, 7] {
                let mut lanes = [1.0f32; 8];
                lanes[lane] = x;
                // SAFETY: AVX2 and FMA are available (the token); 8 f32s.
                let inside = unsafe {
                    all_in_binades8::<FAST_NORMALIZE_LOW_EXPONENT, FAST_NORMALIZE_SPAN_LOG2>(
                        _mm256_loadu_ps(lanes.as_ptr()),
                    )
                };
                assert_eq!(inside, expected, "{x:e} in lane {lane}");
            }
        }
    }
}
