//! SIMD kernels: x86-64 AVX2 + FMA, detected at run time, chosen once per call from a table of
//! monomorphized variants (method × normals × tangents × influences per vertex 1, 2, 4, 8 or
//! any). The scalar kernels in `kernels.rs` stay the reference and the fallback.
//!
//! Layout: each vertex is worked in 128-bit lanes `(x, y, z, _)`. LBS blends the prepared 3x4
//! columns two at a time in 256-bit registers (the palette's `Affine3A` is four 16-byte
//! columns); DQS blends a whole dual quaternion (`real | dual`, 32 bytes) in one 256-bit
//! register. The per-vertex math (cofactors, dual quaternion transform, normalization) follows
//! the scalar kernels step for step, with fused multiply-adds, so results differ from the scalar
//! ones by f32 rounding only; the diagnostics' decisions (singular, sign flip, unweighted) are
//! the same. DQS vertices that touch a non-rigid joint take the scalar path, one vertex at a
//! time, so the residual has one definition. CoR reuses both blends per vertex (the rotation
//! from the DQS blend, the center's image from the LBS blend); its vertices that touch a
//! non-rigid joint or have no center take the scalar kernel the same way.

use crate::palette::PreparedPalette;
use crate::skin::{Diagnostics, SkinInput, SkinOutputs};

/// A kernel over vertices `first_vertex ..` into `outputs` (lengths already checked).
pub(crate) type Kernel =
    fn(&SkinInput<'_>, &PreparedPalette, usize, SkinOutputs<'_>) -> Diagnostics;

/// The best SIMD kernel for this call, or `None` when the CPU or the method has none.
pub(crate) fn select(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    outputs: &SkinOutputs<'_>,
) -> Option<Kernel> {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2::available() {
            return avx2::table(
                palette.options().method,
                outputs.normals.is_some(),
                outputs.tangents.is_some(),
                input.influences().influences_per_vertex(),
            );
        }
    }
    let _ = (input, palette, outputs);
    None
}

/// The SIMD instruction set the kernels use on this CPU (`"avx2+fma"`), or `None` when they
/// fall back to the scalar reference. Detected at run time; the build stays portable.
#[must_use]
pub fn simd_backend() -> Option<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2::available() {
            return Some("avx2+fma");
        }
    }
    None
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::Kernel;
    use crate::kernels::{skin_range, MIN_WEIGHT_SUM, SINGULAR_RELATIVE};
    use crate::palette::PreparedPalette;
    use crate::skin::{Diagnostics, Method, SkinInput, SkinOutputs};

    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }

    /// The variant for one call; `K = 0` is the any-`k` variant.
    pub(super) fn table(method: Method, normals: bool, tangents: bool, k: usize) -> Option<Kernel> {
        macro_rules! by_k {
            ($kernel:ident, $n:literal, $t:literal) => {
                Some(match k {
                    1 => $kernel::<1, $n, $t> as Kernel,
                    2 => $kernel::<2, $n, $t>,
                    4 => $kernel::<4, $n, $t>,
                    8 => $kernel::<8, $n, $t>,
                    _ => $kernel::<0, $n, $t>,
                })
            };
        }
        macro_rules! by_attributes {
            ($kernel:ident) => {
                match (normals, tangents) {
                    (false, false) => by_k!($kernel, false, false),
                    (true, false) => by_k!($kernel, true, false),
                    (false, true) => by_k!($kernel, false, true),
                    (true, true) => by_k!($kernel, true, true),
                }
            };
        }
        #[allow(unreachable_patterns)]
        match method {
            Method::Linear => by_attributes!(linear),
            Method::DualQuaternion => by_attributes!(dual_quaternion),
            Method::CenterOfRotation => by_attributes!(center_of_rotation),
        }
    }

    fn linear<const K: usize, const N: bool, const T: bool>(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        first_vertex: usize,
        outputs: SkinOutputs<'_>,
    ) -> Diagnostics {
        // SAFETY: `table` hands out this kernel only after `available()` saw AVX2 and FMA.
        unsafe { linear_avx2::<K, N, T>(input, palette, first_vertex, outputs) }
    }

    fn dual_quaternion<const K: usize, const N: bool, const T: bool>(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        first_vertex: usize,
        outputs: SkinOutputs<'_>,
    ) -> Diagnostics {
        // SAFETY: `table` hands out this kernel only after `available()` saw AVX2 and FMA.
        unsafe { dual_quaternion_avx2::<K, N, T>(input, palette, first_vertex, outputs) }
    }

    fn center_of_rotation<const K: usize, const N: bool, const T: bool>(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        first_vertex: usize,
        outputs: SkinOutputs<'_>,
    ) -> Diagnostics {
        // SAFETY: `table` hands out this kernel only after `available()` saw AVX2 and FMA.
        unsafe { center_of_rotation_avx2::<K, N, T>(input, palette, first_vertex, outputs) }
    }

    /// The borrowed per-call arrays of one vertex range.
    struct Range<'a> {
        k: usize,
        joints: &'a [u16],
        weights: &'a [f32],
        positions: &'a [glam::Vec3],
        normals: Option<&'a [glam::Vec3]>,
        tangents: Option<&'a [glam::Vec4]>,
    }

    impl<'a> Range<'a> {
        /// Influences per vertex: the constant `K` where the variant has one, so loops over
        /// slots unroll and their bounds checks fold away.
        #[inline(always)]
        fn k<const K: usize>(&self) -> usize {
            if K == 0 {
                self.k
            } else {
                K
            }
        }

        fn new<const K: usize>(input: &SkinInput<'a>, first_vertex: usize, count: usize) -> Self {
            let influences = input.influences();
            let k = if K == 0 {
                influences.influences_per_vertex()
            } else {
                K
            };
            let vertices = first_vertex..first_vertex + count;
            Self {
                k,
                joints: &influences.joints()[vertices.start * k..vertices.end * k],
                weights: &influences.weights()[vertices.start * k..vertices.end * k],
                positions: &input.positions()[vertices.clone()],
                normals: input.normals().map(|n| &n[vertices.clone()]),
                tangents: input.tangents().map(|t| &t[vertices]),
            }
        }
    }

    /// Loads `(x, y, z, _)` of element `i` of a packed `Vec3` slice. Reads 16 bytes when a next
    /// element exists (its `x` lands in the unused lane), 12 otherwise.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn load3(values: &[glam::Vec3], i: usize) -> __m128 {
        let v = &values[i];
        if i + 1 < values.len() {
            // SAFETY: elements i and i + 1 exist and are contiguous f32s, so the 16 bytes from
            // element i are inside the slice; loadu has no alignment requirement.
            unsafe { _mm_loadu_ps(std::ptr::from_ref(v).cast::<f32>()) }
        } else {
            _mm_setr_ps(v.x, v.y, v.z, 0.0)
        }
    }

    /// Stores the `(x, y, z)` lanes into element `i` of a packed `Vec3` slice. Writes 16 bytes
    /// when a next element exists (its `x` is overwritten when that element is stored, which
    /// comes later in the same loop), 12 otherwise.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn store3(values: &mut [glam::Vec3], i: usize, v: __m128) {
        if i + 1 < values.len() {
            // SAFETY: as in `load3`, the 16 bytes from element i are inside the slice.
            unsafe { _mm_storeu_ps(std::ptr::from_mut(&mut values[i]).cast::<f32>(), v) }
        } else {
            let mut lanes = [0f32; 4];
            // SAFETY: `lanes` is 16 writable bytes.
            unsafe { _mm_storeu_ps(lanes.as_mut_ptr(), v) };
            values[i] = glam::Vec3::new(lanes[0], lanes[1], lanes[2]);
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn lane<const L: i32>(v: __m128) -> __m128 {
        match L {
            0 => _mm_permute_ps::<0x00>(v),
            1 => _mm_permute_ps::<0x55>(v),
            2 => _mm_permute_ps::<0xAA>(v),
            _ => _mm_permute_ps::<0xFF>(v),
        }
    }

    /// `x + y + z` of the first three lanes, summed in that order (as glam's `dot`).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn sum3(v: __m128) -> f32 {
        let x = _mm_cvtss_f32(v);
        let y = _mm_cvtss_f32(lane::<1>(v));
        let z = _mm_cvtss_f32(lane::<2>(v));
        x + y + z
    }

    /// `a × b` in the first three lanes.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn cross(a: __m128, b: __m128) -> __m128 {
        // yzx and zxy rotations of the first three lanes; the fourth lane is left as is.
        let a_yzx = _mm_permute_ps::<0b11_00_10_01>(a);
        let b_yzx = _mm_permute_ps::<0b11_00_10_01>(b);
        let c = _mm_fmsub_ps(a, b_yzx, _mm_mul_ps(a_yzx, b));
        _mm_permute_ps::<0b11_00_10_01>(c)
    }

    /// The unit vector along `v`, or `fallback` when `v` has no finite non-zero length (the
    /// contract of glam's `try_normalize`).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn normalize_or(v: __m128, fallback: __m128) -> __m128 {
        let length = sum3(_mm_mul_ps(v, v)).sqrt();
        let inverse = 1.0 / length;
        if inverse.is_finite() && inverse > 0.0 {
            _mm_mul_ps(v, _mm_set1_ps(inverse))
        } else {
            fallback
        }
    }

    /// Sum of the weights and the factor that renormalizes them, or `None` when they sum to
    /// less than `MIN_WEIGHT_SUM` (as the scalar kernels).
    #[inline(always)]
    fn weight_scale(weights: &[f32], renormalize: bool) -> Option<f32> {
        let sum: f32 = weights.iter().sum();
        if sum < MIN_WEIGHT_SUM {
            return None;
        }
        Some(if renormalize { 1.0 / sum } else { 1.0 })
    }

    /// Copies vertex `i` of the input to the outputs unchanged (weights summing to zero).
    #[inline(always)]
    fn pass_through(range: &Range<'_>, outputs: &mut SkinOutputs<'_>, i: usize) {
        outputs.positions[i] = range.positions[i];
        if let (Some(out), Some(src)) = (outputs.normals.as_deref_mut(), range.normals) {
            out[i] = src[i];
        }
        if let (Some(out), Some(src)) = (outputs.tangents.as_deref_mut(), range.tangents) {
            out[i] = src[i];
        }
    }

    /// Skins vertex `i` of the range (input vertex `first_vertex + i`) with the scalar kernel of
    /// the palette's method, adding its counts: one definition for the vertices the SIMD paths
    /// hand back (non-rigid residuals, CoR vertices without a center).
    fn scalar_vertex(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        outputs: &mut SkinOutputs<'_>,
        first_vertex: usize,
        i: usize,
        diagnostics: &mut Diagnostics,
    ) {
        let one = SkinOutputs {
            positions: &mut outputs.positions[i..=i],
            normals: outputs.normals.as_deref_mut().map(|n| &mut n[i..=i]),
            tangents: outputs.tangents.as_deref_mut().map(|t| &mut t[i..=i]),
        };
        let scalar = skin_range(input, palette, first_vertex + i, one);
        diagnostics.singular_normal_matrices += scalar.singular_normal_matrices;
        diagnostics.sign_flips += scalar.sign_flips;
        diagnostics.unweighted_vertices += scalar.unweighted_vertices;
    }

    /// Vertices per SoA block: one per lane of a 256-bit register.
    const LANES: usize = 8;

    #[target_feature(enable = "avx2,fma")]
    fn linear_avx2<const K: usize, const N: bool, const T: bool>(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        first_vertex: usize,
        mut outputs: SkinOutputs<'_>,
    ) -> Diagnostics {
        let mut diagnostics = Diagnostics::default();
        let count = outputs.positions.len();
        let range = Range::new::<K>(input, first_vertex, count);
        let renormalize = palette.options().renormalize;
        let mut i = 0;
        while i + LANES <= count {
            if !linear_block::<K, N, T>(
                &range,
                palette,
                &mut outputs,
                i,
                renormalize,
                &mut diagnostics,
            ) {
                for v in i..i + LANES {
                    linear_vertex::<K, N, T>(
                        &range,
                        palette,
                        &mut outputs,
                        v,
                        renormalize,
                        &mut diagnostics,
                    );
                }
            }
            i += LANES;
        }
        for v in i..count {
            linear_vertex::<K, N, T>(
                &range,
                palette,
                &mut outputs,
                v,
                renormalize,
                &mut diagnostics,
            );
        }
        diagnostics
    }

    /// The blended 3x4 of vertex `i` as `(c0 | c1, c2 | t)`, or `None` when its weights sum to
    /// zero.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn blend_linear<const K: usize>(
        range: &Range<'_>,
        palette: &PreparedPalette,
        i: usize,
        renormalize: bool,
    ) -> Option<(__m256, __m256)> {
        let k = range.k::<K>();
        let weights = &range.weights[i * k..(i + 1) * k];
        let joints = &range.joints[i * k..(i + 1) * k];
        let scale = weight_scale(weights, renormalize)?;
        let matrices = palette.linear.as_ptr().cast::<f32>();
        let mut c01 = _mm256_setzero_ps();
        let mut c23 = _mm256_setzero_ps();
        for (&joint, &weight) in joints.iter().zip(weights) {
            let w = _mm256_set1_ps(weight * scale);
            // SAFETY: `Influences` guarantees joint < joint_count and `skin_into` checked that
            // the palette has at least joint_count matrices; an `Affine3A` is 16 contiguous f32s
            // (four 16-byte columns), so both 32-byte loads are inside matrix `joint`.
            let (m01, m23) = unsafe {
                let m = matrices.add(usize::from(joint) * 16);
                (_mm256_loadu_ps(m), _mm256_loadu_ps(m.add(8)))
            };
            c01 = _mm256_fmadd_ps(m01, w, c01);
            c23 = _mm256_fmadd_ps(m23, w, c23);
        }
        Some((c01, c23))
    }

    /// One vertex in 128-bit lanes: the tail of a range, and blocks with an unweighted vertex.
    #[target_feature(enable = "avx2,fma")]
    fn linear_vertex<const K: usize, const N: bool, const T: bool>(
        range: &Range<'_>,
        palette: &PreparedPalette,
        outputs: &mut SkinOutputs<'_>,
        i: usize,
        renormalize: bool,
        diagnostics: &mut Diagnostics,
    ) {
        let Some((c01, c23)) = blend_linear::<K>(range, palette, i, renormalize) else {
            diagnostics.unweighted_vertices += 1;
            pass_through(range, outputs, i);
            return;
        };
        let c0 = _mm256_castps256_ps128(c01);
        let c1 = _mm256_extractf128_ps::<1>(c01);
        let c2 = _mm256_castps256_ps128(c23);
        let t = _mm256_extractf128_ps::<1>(c23);
        let p = load3(range.positions, i);
        let posed = _mm_fmadd_ps(
            c2,
            lane::<2>(p),
            _mm_fmadd_ps(c1, lane::<1>(p), _mm_fmadd_ps(c0, lane::<0>(p), t)),
        );
        store3(outputs.positions, i, posed);
        if !(N || T) {
            return;
        }
        let cofactor0 = cross(c1, c2);
        let det = sum3(_mm_mul_ps(c0, cofactor0));
        if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), range.normals) {
            let cofactor1 = cross(c2, c0);
            let cofactor2 = cross(c0, c1);
            let n = load3(src, i);
            let mut normal = _mm_fmadd_ps(
                cofactor2,
                lane::<2>(n),
                _mm_fmadd_ps(cofactor1, lane::<1>(n), _mm_mul_ps(cofactor0, lane::<0>(n))),
            );
            // sqrt is monotonic and correctly rounded: the largest length is the root of the
            // largest squared length, exactly.
            let largest = sum3(_mm_mul_ps(c0, c0))
                .max(sum3(_mm_mul_ps(c1, c1)))
                .max(sum3(_mm_mul_ps(c2, c2)))
                .sqrt();
            if det.abs() <= SINGULAR_RELATIVE * largest * largest * largest {
                diagnostics.singular_normal_matrices += 1;
            } else if det < 0.0 {
                normal = _mm_sub_ps(_mm_setzero_ps(), normal);
            }
            store3(out, i, normalize_or(normal, n));
        }
        if let (true, Some(out), Some(src)) = (T, outputs.tangents.as_deref_mut(), range.tangents) {
            let tangent = src[i];
            let d = _mm_setr_ps(tangent.x, tangent.y, tangent.z, 0.0);
            let direction = _mm_fmadd_ps(
                c2,
                lane::<2>(d),
                _mm_fmadd_ps(c1, lane::<1>(d), _mm_mul_ps(c0, lane::<0>(d))),
            );
            out[i] = tangent_out(normalize_or(direction, d), tangent.w, det < 0.0);
        }
    }

    /// Eight vertices `base ..` in SoA: the 3x4s are blended per vertex, transposed so that each
    /// register holds one matrix entry of all eight, and the rest runs eight-wide. Returns
    /// `false`, having written nothing, when a vertex of the block is unweighted.
    #[target_feature(enable = "avx2,fma")]
    fn linear_block<const K: usize, const N: bool, const T: bool>(
        range: &Range<'_>,
        palette: &PreparedPalette,
        outputs: &mut SkinOutputs<'_>,
        base: usize,
        renormalize: bool,
        diagnostics: &mut Diagnostics,
    ) -> bool {
        let mut rows01 = [_mm256_setzero_ps(); LANES];
        let mut rows23 = [_mm256_setzero_ps(); LANES];
        for l in 0..LANES {
            let Some((c01, c23)) = blend_linear::<K>(range, palette, base + l, renormalize) else {
                return false;
            };
            rows01[l] = c01;
            rows23[l] = c23;
        }
        // [c0x c0y c0z c0w c1x c1y c1z c1w] and [c2x c2y c2z c2w tx ty tz tw], per lane.
        let [c0x, c0y, c0z, _, c1x, c1y, c1z, _] = transpose8(rows01);
        let [c2x, c2y, c2z, _, tx, ty, tz, _] = transpose8(rows23);
        let c0 = [c0x, c0y, c0z];
        let c1 = [c1x, c1y, c1z];
        let c2 = [c2x, c2y, c2z];
        let [px, py, pz] = load3x8(range.positions, base);
        let posed = [
            _mm256_fmadd_ps(
                c2x,
                pz,
                _mm256_fmadd_ps(c1x, py, _mm256_fmadd_ps(c0x, px, tx)),
            ),
            _mm256_fmadd_ps(
                c2y,
                pz,
                _mm256_fmadd_ps(c1y, py, _mm256_fmadd_ps(c0y, px, ty)),
            ),
            _mm256_fmadd_ps(
                c2z,
                pz,
                _mm256_fmadd_ps(c1z, py, _mm256_fmadd_ps(c0z, px, tz)),
            ),
        ];
        store3x8(outputs.positions, base, posed);
        if !(N || T) {
            return true;
        }
        let cofactor0 = cross8(c1, c2);
        let det = dot8(c0, cofactor0);
        let negative = _mm256_cmp_ps::<_CMP_LT_OQ>(det, _mm256_setzero_ps());
        if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), range.normals) {
            let cofactor1 = cross8(c2, c0);
            let cofactor2 = cross8(c0, c1);
            let n = load3x8(src, base);
            let mut normal = [_mm256_setzero_ps(); 3];
            for a in 0..3 {
                normal[a] = _mm256_fmadd_ps(
                    cofactor2[a],
                    n[2],
                    _mm256_fmadd_ps(cofactor1[a], n[1], _mm256_mul_ps(cofactor0[a], n[0])),
                );
            }
            let largest = _mm256_sqrt_ps(_mm256_max_ps(
                _mm256_max_ps(dot8(c0, c0), dot8(c1, c1)),
                dot8(c2, c2),
            ));
            let bound = _mm256_mul_ps(
                _mm256_mul_ps(
                    _mm256_mul_ps(_mm256_set1_ps(SINGULAR_RELATIVE), largest),
                    largest,
                ),
                largest,
            );
            let singular = _mm256_cmp_ps::<_CMP_LE_OQ>(abs8(det), bound);
            diagnostics.singular_normal_matrices +=
                _mm256_movemask_ps(singular).count_ones() as usize;
            // Flip where not singular and the determinant is negative (a mirror).
            let flip = _mm256_andnot_ps(singular, negative);
            for component in &mut normal {
                *component = _mm256_blendv_ps(
                    *component,
                    _mm256_sub_ps(_mm256_setzero_ps(), *component),
                    flip,
                );
            }
            store3x8(out, base, normalize8_or(normal, n));
        }
        if let (true, Some(out), Some(src)) = (T, outputs.tangents.as_deref_mut(), range.tangents) {
            let (d, w) = load_tangents8(src, base);
            let mut direction = [_mm256_setzero_ps(); 3];
            for a in 0..3 {
                direction[a] = _mm256_fmadd_ps(
                    c2[a],
                    d[2],
                    _mm256_fmadd_ps(c1[a], d[1], _mm256_mul_ps(c0[a], d[0])),
                );
            }
            let w = _mm256_blendv_ps(w, _mm256_sub_ps(_mm256_setzero_ps(), w), negative);
            store_tangents8(out, base, normalize8_or(direction, d), w);
        }
        true
    }

    /// Transposes 8 rows of 8 into 8 columns: `out[c]` lane `l` = `rows[l]` lane `c`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn transpose8(rows: [__m256; 8]) -> [__m256; 8] {
        let [r0, r1, r2, r3, r4, r5, r6, r7] = rows;
        let t0 = _mm256_unpacklo_ps(r0, r1);
        let t1 = _mm256_unpackhi_ps(r0, r1);
        let t2 = _mm256_unpacklo_ps(r2, r3);
        let t3 = _mm256_unpackhi_ps(r2, r3);
        let t4 = _mm256_unpacklo_ps(r4, r5);
        let t5 = _mm256_unpackhi_ps(r4, r5);
        let t6 = _mm256_unpacklo_ps(r6, r7);
        let t7 = _mm256_unpackhi_ps(r6, r7);
        let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
        let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
        let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
        let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
        let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
        let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
        let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
        let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
        [
            _mm256_permute2f128_ps::<0x20>(u0, u4),
            _mm256_permute2f128_ps::<0x20>(u1, u5),
            _mm256_permute2f128_ps::<0x20>(u2, u6),
            _mm256_permute2f128_ps::<0x20>(u3, u7),
            _mm256_permute2f128_ps::<0x31>(u0, u4),
            _mm256_permute2f128_ps::<0x31>(u1, u5),
            _mm256_permute2f128_ps::<0x31>(u2, u6),
            _mm256_permute2f128_ps::<0x31>(u3, u7),
        ]
    }

    /// Loads elements `base .. base + 8` of a packed `Vec3` slice as `[x, y, z]`, eight lanes
    /// each: three 32-byte loads, then blends and lane permutes.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn load3x8(values: &[glam::Vec3], base: usize) -> [__m256; 3] {
        let block = &values[base..base + LANES];
        let p = block.as_ptr().cast::<f32>();
        // SAFETY: `block` is 8 Vec3s, 24 contiguous f32s: loads at 0, 8 and 16 are inside it.
        let (m0, m1, m2) = unsafe {
            (
                _mm256_loadu_ps(p),
                _mm256_loadu_ps(p.add(8)),
                _mm256_loadu_ps(p.add(16)),
            )
        };
        // m0 = x0 y0 z0 x1 y1 z1 x2 y2 | m1 = z2 x3 y3 z3 x4 y4 z4 x5 | m2 = y5 z5 x6 y6 z6 x7 y7 z7
        let xs = _mm256_blend_ps::<0x24>(_mm256_blend_ps::<0x92>(m0, m1), m2);
        let ys = _mm256_blend_ps::<0x49>(_mm256_blend_ps::<0x24>(m0, m1), m2);
        let zs = _mm256_blend_ps::<0x92>(_mm256_blend_ps::<0x49>(m0, m1), m2);
        [
            _mm256_permutevar8x32_ps(xs, _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5)),
            _mm256_permutevar8x32_ps(ys, _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6)),
            _mm256_permutevar8x32_ps(zs, _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7)),
        ]
    }

    /// Stores `[x, y, z]` (eight lanes each) into elements `base .. base + 8`; the inverse of
    /// [`load3x8`].
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn store3x8(values: &mut [glam::Vec3], base: usize, [x, y, z]: [__m256; 3]) {
        let xs = _mm256_permutevar8x32_ps(x, _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5));
        let ys = _mm256_permutevar8x32_ps(y, _mm256_setr_epi32(5, 0, 3, 6, 1, 4, 7, 2));
        let zs = _mm256_permutevar8x32_ps(z, _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7));
        let m0 = _mm256_blend_ps::<0x24>(_mm256_blend_ps::<0x92>(xs, ys), zs);
        let m1 = _mm256_blend_ps::<0x24>(_mm256_blend_ps::<0x92>(zs, xs), ys);
        let m2 = _mm256_blend_ps::<0x24>(_mm256_blend_ps::<0x92>(ys, zs), xs);
        let block = &mut values[base..base + LANES];
        let p = block.as_mut_ptr().cast::<f32>();
        // SAFETY: `block` is 8 Vec3s, 24 contiguous writable f32s.
        unsafe {
            _mm256_storeu_ps(p, m0);
            _mm256_storeu_ps(p.add(8), m1);
            _mm256_storeu_ps(p.add(16), m2);
        }
    }

    /// Tangents `base .. base + 8` as `[x, y, z]` and `w`, eight lanes each.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn load_tangents8(values: &[glam::Vec4], base: usize) -> ([__m256; 3], __m256) {
        let block = &values[base..base + LANES];
        let p = block.as_ptr().cast::<f32>();
        let mut rows = [_mm256_setzero_ps(); 8];
        for (l, row) in rows.iter_mut().enumerate().take(4) {
            // SAFETY: elements l and l + 4 of the 8-element block, 16 bytes each.
            *row = unsafe {
                _mm256_set_m128(_mm_loadu_ps(p.add(4 * (l + 4))), _mm_loadu_ps(p.add(4 * l)))
            };
        }
        // rows 0..4 hold (t_l | t_{l+4}); transposing gives x, y, z, w in lanes l and l + 4
        // of the first four outputs, which is lane order 0..8 after the permute2f128 below.
        let [r0, r1, r2, r3, ..] = rows;
        let t0 = _mm256_unpacklo_ps(r0, r1);
        let t1 = _mm256_unpackhi_ps(r0, r1);
        let t2 = _mm256_unpacklo_ps(r2, r3);
        let t3 = _mm256_unpackhi_ps(r2, r3);
        let x = _mm256_shuffle_ps::<0x44>(t0, t2);
        let y = _mm256_shuffle_ps::<0xEE>(t0, t2);
        let z = _mm256_shuffle_ps::<0x44>(t1, t3);
        let w = _mm256_shuffle_ps::<0xEE>(t1, t3);
        ([x, y, z], w)
    }

    /// Stores tangents `base .. base + 8` from `[x, y, z]` and `w`; the inverse of
    /// [`load_tangents8`].
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn store_tangents8(values: &mut [glam::Vec4], base: usize, [x, y, z]: [__m256; 3], w: __m256) {
        let t0 = _mm256_unpacklo_ps(x, y);
        let t1 = _mm256_unpackhi_ps(x, y);
        let t2 = _mm256_unpacklo_ps(z, w);
        let t3 = _mm256_unpackhi_ps(z, w);
        // (v_l | v_{l+4}) for l = 0..4.
        let rows = [
            _mm256_shuffle_ps::<0x44>(t0, t2),
            _mm256_shuffle_ps::<0xEE>(t0, t2),
            _mm256_shuffle_ps::<0x44>(t1, t3),
            _mm256_shuffle_ps::<0xEE>(t1, t3),
        ];
        let block = &mut values[base..base + LANES];
        let p = block.as_mut_ptr().cast::<f32>();
        for (l, row) in rows.iter().enumerate() {
            // SAFETY: elements l and l + 4 of the 8-element block, 16 writable bytes each.
            unsafe {
                _mm_storeu_ps(p.add(4 * l), _mm256_castps256_ps128(*row));
                _mm_storeu_ps(p.add(4 * (l + 4)), _mm256_extractf128_ps::<1>(*row));
            }
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn cross8(a: [__m256; 3], b: [__m256; 3]) -> [__m256; 3] {
        [
            _mm256_fmsub_ps(a[1], b[2], _mm256_mul_ps(a[2], b[1])),
            _mm256_fmsub_ps(a[2], b[0], _mm256_mul_ps(a[0], b[2])),
            _mm256_fmsub_ps(a[0], b[1], _mm256_mul_ps(a[1], b[0])),
        ]
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn dot8(a: [__m256; 3], b: [__m256; 3]) -> __m256 {
        _mm256_fmadd_ps(
            a[2],
            b[2],
            _mm256_fmadd_ps(a[1], b[1], _mm256_mul_ps(a[0], b[0])),
        )
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn abs8(v: __m256) -> __m256 {
        _mm256_andnot_ps(_mm256_set1_ps(-0.0), v)
    }

    /// Unit vectors along `v`, lane by lane, or `fallback` where `v` has no finite non-zero
    /// length (the contract of glam's `try_normalize`).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn normalize8_or(v: [__m256; 3], fallback: [__m256; 3]) -> [__m256; 3] {
        let inverse = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_sqrt_ps(dot8(v, v)));
        // finite and > 0: below +inf and above 0 (NaN fails both ordered comparisons).
        let ok = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_LT_OQ>(inverse, _mm256_set1_ps(f32::INFINITY)),
            _mm256_cmp_ps::<_CMP_GT_OQ>(inverse, _mm256_setzero_ps()),
        );
        let mut out = [_mm256_setzero_ps(); 3];
        for a in 0..3 {
            out[a] = _mm256_blendv_ps(fallback[a], _mm256_mul_ps(v[a], inverse), ok);
        }
        out
    }

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn tangent_out(direction: __m128, w: f32, flips: bool) -> glam::Vec4 {
        let mut lanes = [0f32; 4];
        // SAFETY: `lanes` is 16 writable bytes.
        unsafe { _mm_storeu_ps(lanes.as_mut_ptr(), direction) };
        glam::Vec4::new(lanes[0], lanes[1], lanes[2], if flips { -w } else { w })
    }

    #[target_feature(enable = "avx2,fma")]
    fn dual_quaternion_avx2<const K: usize, const N: bool, const T: bool>(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        first_vertex: usize,
        mut outputs: SkinOutputs<'_>,
    ) -> Diagnostics {
        let mut diagnostics = Diagnostics::default();
        let count = outputs.positions.len();
        let range = Range::new::<K>(input, first_vertex, count);
        let renormalize = palette.options().renormalize;
        let mut i = 0;
        while i + LANES <= count {
            if !dual_quaternion_block::<K, N, T>(
                &range,
                palette,
                &mut outputs,
                i,
                renormalize,
                &mut diagnostics,
            ) {
                for v in i..i + LANES {
                    dual_quaternion_vertex::<K, N, T>(
                        input,
                        &range,
                        palette,
                        &mut outputs,
                        first_vertex,
                        v,
                        renormalize,
                        &mut diagnostics,
                    );
                }
            }
            i += LANES;
        }
        for v in i..count {
            dual_quaternion_vertex::<K, N, T>(
                input,
                &range,
                palette,
                &mut outputs,
                first_vertex,
                v,
                renormalize,
                &mut diagnostics,
            );
        }
        diagnostics
    }

    /// Whether vertex `i` has a non-zero weight on a non-rigid joint (it then takes the scalar
    /// residual path).
    #[inline]
    fn touches_residual<const K: usize>(
        range: &Range<'_>,
        palette: &PreparedPalette,
        i: usize,
    ) -> bool {
        let k = range.k::<K>();
        palette.non_rigid_joints() > 0
            && range.joints[i * k..(i + 1) * k]
                .iter()
                .zip(&range.weights[i * k..(i + 1) * k])
                .any(|(&j, &w)| w > 0.0 && !palette.rigid[usize::from(j)])
    }

    /// The slot of the heaviest influence; ties go to the lowest slot.
    #[inline]
    fn pivot_slot(weights: &[f32]) -> usize {
        let mut pivot = 0;
        for (slot, &weight) in weights.iter().enumerate() {
            if weight > weights[pivot] {
                pivot = slot;
            }
        }
        pivot
    }

    /// One vertex in 128-bit lanes: the tail of a range, and blocks the SoA path cannot take.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx2,fma")]
    fn dual_quaternion_vertex<const K: usize, const N: bool, const T: bool>(
        input: &SkinInput<'_>,
        range: &Range<'_>,
        palette: &PreparedPalette,
        outputs: &mut SkinOutputs<'_>,
        first_vertex: usize,
        i: usize,
        renormalize: bool,
        diagnostics: &mut Diagnostics,
    ) {
        let k = range.k::<K>();
        let weights = &range.weights[i * k..(i + 1) * k];
        let joints = &range.joints[i * k..(i + 1) * k];
        if weight_scale(weights, renormalize).is_none() {
            diagnostics.unweighted_vertices += 1;
            pass_through(range, outputs, i);
            return;
        }
        if touches_residual::<K>(range, palette, i) {
            scalar_vertex(input, palette, outputs, first_vertex, i, diagnostics);
            return;
        }
        let dual_quats = palette.dual_quats.as_ptr().cast::<f32>();
        let pivot = pivot_slot(weights);
        // SAFETY: joint < joint_count <= palette length (see `blend_linear`); a `DualQuat` is 8
        // contiguous f32s (real, then dual).
        let load = |joint: u16| unsafe { _mm256_loadu_ps(dual_quats.add(usize::from(joint) * 8)) };
        let pivot_real = _mm256_castps256_ps128(load(joints[pivot]));
        let mut sum = _mm256_setzero_ps();
        for (slot, (&joint, &weight)) in joints.iter().zip(weights).enumerate() {
            if weight > 0.0 {
                let dq = load(joint);
                let d = _mm_mul_ps(_mm256_castps256_ps128(dq), pivot_real);
                let dot = sum3(d) + _mm_cvtss_f32(lane::<3>(d));
                // Branch-free: random rigs flip half the time, which a branch mispredicts.
                let negative = u32::from(dot < 0.0);
                diagnostics.sign_flips += (negative & u32::from(slot != pivot)) as usize;
                let signed = f32::from_bits(weight.to_bits() ^ (negative << 31));
                sum = _mm256_fmadd_ps(dq, _mm256_set1_ps(signed), sum);
            }
        }
        let mut real = _mm256_castps256_ps128(sum);
        let mut dual = _mm256_extractf128_ps::<1>(sum);
        let r2 = _mm_mul_ps(real, real);
        let length = (sum3(r2) + _mm_cvtss_f32(lane::<3>(r2))).sqrt();
        if length.is_finite() && length > 0.0 {
            let inverse = _mm_set1_ps(1.0 / length);
            real = _mm_mul_ps(real, inverse);
            dual = _mm_mul_ps(dual, inverse);
        } else {
            let dq = load(joints[pivot]);
            real = _mm256_castps256_ps128(dq);
            dual = _mm256_extractf128_ps::<1>(dq);
        }
        let two = _mm_set1_ps(2.0);
        let w = lane::<3>(real);
        // p + 2 v×(v×p + w p) + 2 (w vε − wε v + v×vε)
        let rotate = |x: __m128| {
            let inner = _mm_fmadd_ps(w, x, cross(real, x));
            _mm_fmadd_ps(two, cross(real, inner), x)
        };
        let translation = _mm_mul_ps(
            two,
            _mm_add_ps(
                _mm_fmsub_ps(w, dual, _mm_mul_ps(lane::<3>(dual), real)),
                cross(real, dual),
            ),
        );
        let p = load3(range.positions, i);
        store3(outputs.positions, i, _mm_add_ps(rotate(p), translation));
        if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), range.normals) {
            let n = load3(src, i);
            store3(out, i, normalize_or(rotate(n), n));
        }
        if let (true, Some(out), Some(src)) = (T, outputs.tangents.as_deref_mut(), range.tangents) {
            let tangent = src[i];
            let d = _mm_setr_ps(tangent.x, tangent.y, tangent.z, 0.0);
            out[i] = tangent_out(normalize_or(rotate(d), d), tangent.w, false);
        }
    }

    /// CoR, one vertex at a time in 128-bit lanes: the DQS blend's rotation `R` (normalized
    /// real part of the sign-aligned blend, the same pivot and flip count as DQS) and the LBS
    /// blend `M` of the 3x4s, then `v' = R v + (M p* − R p*)`, normals and tangents by `R`, as
    /// the scalar `CenterOfRotation` kernel. Vertices that touch a residual, and vertices
    /// without a center, take the scalar kernel (which skins the latter by DQS), so both have
    /// one definition.
    #[target_feature(enable = "avx2,fma")]
    fn center_of_rotation_avx2<const K: usize, const N: bool, const T: bool>(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        first_vertex: usize,
        mut outputs: SkinOutputs<'_>,
    ) -> Diagnostics {
        let mut diagnostics = Diagnostics::default();
        let count = outputs.positions.len();
        let range = Range::new::<K>(input, first_vertex, count);
        let renormalize = palette.options().renormalize;
        let Some(centers) = input.rotation_centers() else {
            // `skin_into` refuses CoR without centers; keep one definition regardless.
            return skin_range(input, palette, first_vertex, outputs);
        };
        let centers = &centers[first_vertex..first_vertex + count];
        for i in 0..count {
            let center = centers[i];
            let mut flips = 0;
            let blended = if center.is_finite() {
                blend_dual_quaternion::<K>(&range, palette, i, renormalize, &mut flips)
            } else {
                None
            };
            let Some(sum) = blended else {
                // Unweighted, residual or no center: the scalar kernel, for this vertex.
                scalar_vertex(
                    input,
                    palette,
                    &mut outputs,
                    first_vertex,
                    i,
                    &mut diagnostics,
                );
                continue;
            };
            let mut real = _mm256_castps256_ps128(sum);
            let r2 = _mm_mul_ps(real, real);
            let length = (sum3(r2) + _mm_cvtss_f32(lane::<3>(r2))).sqrt();
            if !(length.is_finite() && length > 0.0) {
                // Rounding cancelled the blend (see the scalar kernel): one definition.
                scalar_vertex(
                    input,
                    palette,
                    &mut outputs,
                    first_vertex,
                    i,
                    &mut diagnostics,
                );
                continue;
            }
            diagnostics.sign_flips += flips;
            real = _mm_mul_ps(real, _mm_set1_ps(1.0 / length));
            let two = _mm_set1_ps(2.0);
            let w = lane::<3>(real);
            // x + 2 v×(v×x + w x)
            let rotate = |x: __m128| {
                let inner = _mm_fmadd_ps(w, x, cross(real, x));
                _mm_fmadd_ps(two, cross(real, inner), x)
            };
            let Some((c01, c23)) = blend_linear::<K>(&range, palette, i, renormalize) else {
                continue; // unreachable: blend_dual_quaternion saw a positive weight sum
            };
            let c0 = _mm256_castps256_ps128(c01);
            let c1 = _mm256_extractf128_ps::<1>(c01);
            let c2 = _mm256_castps256_ps128(c23);
            let t = _mm256_extractf128_ps::<1>(c23);
            let c = _mm_setr_ps(center.x, center.y, center.z, 0.0);
            let lbs_center = _mm_fmadd_ps(
                c2,
                lane::<2>(c),
                _mm_fmadd_ps(c1, lane::<1>(c), _mm_fmadd_ps(c0, lane::<0>(c), t)),
            );
            let translation = _mm_sub_ps(lbs_center, rotate(c));
            let p = load3(range.positions, i);
            store3(outputs.positions, i, _mm_add_ps(rotate(p), translation));
            if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), range.normals)
            {
                let n = load3(src, i);
                store3(out, i, normalize_or(rotate(n), n));
            }
            if let (true, Some(out), Some(src)) =
                (T, outputs.tangents.as_deref_mut(), range.tangents)
            {
                let tangent = src[i];
                let d = _mm_setr_ps(tangent.x, tangent.y, tangent.z, 0.0);
                out[i] = tangent_out(normalize_or(rotate(d), d), tangent.w, false);
            }
        }
        diagnostics
    }

    /// The sign-aligned blend `Σ ±wᵢ dqᵢ` of vertex `i` as `real | dual` (not normalized),
    /// adding its sign flips to `flips`, or `None` when the vertex is unweighted or touches a
    /// residual (the caller then takes the per-vertex path).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn blend_dual_quaternion<const K: usize>(
        range: &Range<'_>,
        palette: &PreparedPalette,
        i: usize,
        renormalize: bool,
        flips: &mut usize,
    ) -> Option<__m256> {
        let k = range.k::<K>();
        let weights = &range.weights[i * k..(i + 1) * k];
        let joints = &range.joints[i * k..(i + 1) * k];
        weight_scale(weights, renormalize)?;
        if touches_residual::<K>(range, palette, i) {
            return None;
        }
        let dual_quats = palette.dual_quats.as_ptr().cast::<f32>();
        // SAFETY: joint < joint_count <= palette length (see `blend_linear`); a `DualQuat` is 8
        // contiguous f32s (real, then dual).
        let load = |joint: u16| unsafe { _mm256_loadu_ps(dual_quats.add(usize::from(joint) * 8)) };
        let pivot_real = _mm256_castps256_ps128(load(joints[pivot_slot(weights)]));
        let mut sum = _mm256_setzero_ps();
        let sign_bit = _mm_set1_ps(-0.0);
        let mut flipped = _mm_setzero_si128();
        for slot in 0..k {
            let dq = load(joints[slot]);
            let weight = _mm_set_ss(weights[slot]);
            // x·x' + y·y' + z·z' + w·w' as (x + y) + (z + w); only its sign is used.
            let products = _mm_mul_ps(_mm256_castps256_ps128(dq), pivot_real);
            let pairs = _mm_add_ps(products, _mm_movehdup_ps(products));
            let dot = _mm_add_ss(pairs, _mm_movehl_ps(pairs, pairs));
            // Branch-free, in lane 0: random rigs flip half the time, which a branch would
            // mispredict. The pivot never flips (its dot with itself is |q|² > 0); a zero
            // weight neither counts nor adds anything.
            let negative = _mm_cmplt_ss(dot, _mm_setzero_ps());
            let counted = _mm_and_ps(negative, _mm_cmpgt_ss(weight, _mm_setzero_ps()));
            // An all-ones mask is −1 as an integer: subtracting it counts one flip.
            flipped = _mm_sub_epi32(flipped, _mm_castps_si128(counted));
            let signed = _mm_xor_ps(weight, _mm_and_ps(negative, sign_bit));
            sum = _mm256_fmadd_ps(dq, _mm256_broadcastss_ps(signed), sum);
        }
        *flips += _mm_cvtsi128_si32(flipped) as usize;
        Some(sum)
    }

    /// Eight vertices `base ..`: each blended per vertex (all in registers), then transposed so
    /// that each register holds one component of all eight, and normalized, applied and
    /// stored eight-wide. Returns `false`, having written nothing, when a vertex of the block is
    /// unweighted, touches a residual, or blends to a zero rotation.
    #[target_feature(enable = "avx2,fma")]
    fn dual_quaternion_block<const K: usize, const N: bool, const T: bool>(
        range: &Range<'_>,
        palette: &PreparedPalette,
        outputs: &mut SkinOutputs<'_>,
        base: usize,
        renormalize: bool,
        diagnostics: &mut Diagnostics,
    ) -> bool {
        let mut rows = [_mm256_setzero_ps(); LANES];
        let mut flips = 0;
        for (l, row) in rows.iter_mut().enumerate() {
            match blend_dual_quaternion::<K>(range, palette, base + l, renormalize, &mut flips) {
                Some(sum) => *row = sum,
                None => return false,
            }
        }
        let sum = transpose8(rows);
        let [rx, ry, rz, rw, dx, dy, dz, dw] = sum;
        let length = _mm256_sqrt_ps(_mm256_fmadd_ps(
            rw,
            rw,
            _mm256_fmadd_ps(rz, rz, _mm256_fmadd_ps(ry, ry, _mm256_mul_ps(rx, rx))),
        ));
        let finite_positive = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_LT_OQ>(length, _mm256_set1_ps(f32::INFINITY)),
            _mm256_cmp_ps::<_CMP_GT_OQ>(length, _mm256_setzero_ps()),
        );
        if _mm256_movemask_ps(finite_positive) != 0xFF {
            return false;
        }
        diagnostics.sign_flips += flips;
        let inverse = _mm256_div_ps(_mm256_set1_ps(1.0), length);
        let v = [
            _mm256_mul_ps(rx, inverse),
            _mm256_mul_ps(ry, inverse),
            _mm256_mul_ps(rz, inverse),
        ];
        let w = _mm256_mul_ps(rw, inverse);
        let ve = [
            _mm256_mul_ps(dx, inverse),
            _mm256_mul_ps(dy, inverse),
            _mm256_mul_ps(dz, inverse),
        ];
        let we = _mm256_mul_ps(dw, inverse);
        let two = _mm256_set1_ps(2.0);
        // x + 2 v×(v×x + w x)
        let rotate = |x: [__m256; 3]| {
            let c = cross8(v, x);
            let inner = [
                _mm256_fmadd_ps(w, x[0], c[0]),
                _mm256_fmadd_ps(w, x[1], c[1]),
                _mm256_fmadd_ps(w, x[2], c[2]),
            ];
            let outer = cross8(v, inner);
            [
                _mm256_fmadd_ps(two, outer[0], x[0]),
                _mm256_fmadd_ps(two, outer[1], x[1]),
                _mm256_fmadd_ps(two, outer[2], x[2]),
            ]
        };
        // 2 (w vε − wε v + v×vε)
        let c = cross8(v, ve);
        let mut translation = [_mm256_setzero_ps(); 3];
        for a in 0..3 {
            translation[a] = _mm256_mul_ps(
                two,
                _mm256_add_ps(_mm256_fmsub_ps(w, ve[a], _mm256_mul_ps(we, v[a])), c[a]),
            );
        }
        let p = rotate(load3x8(range.positions, base));
        store3x8(
            outputs.positions,
            base,
            [
                _mm256_add_ps(p[0], translation[0]),
                _mm256_add_ps(p[1], translation[1]),
                _mm256_add_ps(p[2], translation[2]),
            ],
        );
        if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), range.normals) {
            let n = load3x8(src, base);
            store3x8(out, base, normalize8_or(rotate(n), n));
        }
        if let (true, Some(out), Some(src)) = (T, outputs.tangents.as_deref_mut(), range.tangents) {
            let (d, tw) = load_tangents8(src, base);
            store_tangents8(out, base, normalize8_or(rotate(d), d), tw);
        }
        true
    }
}
