//! The LBS kernel of a block of eight vertices with normals or tangents: the blend's positions,
//! the cofactor normals with the singular test, tangents, and normals held over to the next
//! block (positions only with four influences go to `lbs_positions`).

use std::arch::x86_64::*;

use glam::Vec3;

use super::blend3x4::{blend8, Linear8};
use super::block::Block;
use super::layout::LANES;
use super::lbs_positions::positions4;
use super::loads::{load3x8, load_block3x8, load_tangents8, store3x8, store_tangents8};
use super::math::{
    abs8, all8, cross8, dot8, fast_inverse_length8, normalize8_flipped_or, normalize8_or, scale8,
};
use super::policy::SINGULAR_BAND;
use crate::reference::SINGULAR_RELATIVE;
use crate::types::{Diagnostics, SkinOutputs};

/// The lanes whose determinant `det` the singular bound `bound` does not clear: `|det| >
/// bound` fails (NaN included), so the exact test must decide them. [`singular8`]'s first test
/// and the deferred verdict of [`DeferredNormals::unclear`], which must agree for a block the
/// bound clears to be decided as the exact test decides it.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn not_cleared8(det: __m256, bound: __m256) -> __m256 {
    _mm256_cmp_ps::<_CMP_NGT_UQ>(abs8(det), bound)
}

/// Largest squared column lengths inside this range keep every term of [`singular8`]'s squared
/// test a normal f32 (`SINGULAR_RELATIVE² m³` stays above 2⁻¹⁰⁰).
const SINGULAR_FAST_RANGE: (f32, f32) = (1.0 / 1_048_576.0, 1_048_576.0);

/// Lanes whose 3x3 (`columns`, determinant `det`) is singular for the normal transform:
/// `|det| ≤ SINGULAR_RELATIVE · (largest column length)³`, the scalar kernel's test; `None`
/// when the first test clears every lane (then every lane's `det` is also ordered and non-zero,
/// so its sign bit is its sign).
/// First, with no column length computed, where the call has a `bound_root`
/// (`policy::singular_bound_root`): `(Σw r)³` bounds `SINGULAR_RELATIVE` times the cube of each
/// lane's largest column length with `policy::BOUND_MARGIN` (`Σw` times the palette's largest column
/// length bounds the lane's, see [`PreparedPalette`]); when `|det|` exceeds it in every lane, no
/// lane is singular (three multiplies and a compare; the bound as `det²` against a sixth power,
/// its range tested per block, took nine instructions on the two pipes the multiplies need).
/// Otherwise compared squared (`det² ≤ SINGULAR_RELATIVE² m³`, `m` the largest squared
/// length), with no square root on the block's dependency chain; a block with a lane near the
/// threshold (within [`SINGULAR_BAND`]) or outside [`SINGULAR_FAST_RANGE`] takes the scalar
/// kernel's exact form, so every decision is the exact form's on this determinant (which itself
/// differs from the scalar kernel's by f32 rounding only).
///
/// [`PreparedPalette`]: crate::PreparedPalette
#[inline]
#[target_feature(enable = "avx2,fma")]
fn singular8(
    columns: [[__m256; 3]; 3],
    det: __m256,
    weight_sum: __m256,
    bound_root: Option<f32>,
    unit_bound: Option<f32>,
) -> Option<__m256> {
    // The bound for the whole block where the weight sums are 1, else per lane from `Σw`.
    let bound = match (unit_bound, bound_root) {
        (Some(bound), _) => Some(_mm256_set1_ps(bound)),
        (None, Some(root)) => {
            let b = _mm256_mul_ps(weight_sum, _mm256_set1_ps(root));
            Some(_mm256_mul_ps(_mm256_mul_ps(b, b), b))
        }
        (None, None) => None,
    };
    if let Some(bound) = bound {
        // The bound alone clears the block (the common case: no column length computed).
        // Every lane `|det| > bound` (ordered): no lane "not greater". Tested as `vtestps` of
        // the mask with itself, which needs no all-ones register (`all8` of the greater-than
        // mask took one, and a spill and reload to free it).
        let not_clear = not_cleared8(det, bound);
        if _mm256_testz_ps(not_clear, not_clear) == 1 {
            return None;
        }
    }
    let (low, high) = SINGULAR_FAST_RANGE;
    let det_squared = _mm256_mul_ps(det, det);
    let [c0, c1, c2] = columns;
    let m = _mm256_max_ps(_mm256_max_ps(dot8(c0, c0), dot8(c1, c1)), dot8(c2, c2));
    let bound_squared = _mm256_mul_ps(
        _mm256_mul_ps(
            _mm256_mul_ps(_mm256_set1_ps(SINGULAR_RELATIVE * SINGULAR_RELATIVE), m),
            m,
        ),
        m,
    );
    let in_range = _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_GE_OQ>(m, _mm256_set1_ps(low)),
        _mm256_cmp_ps::<_CMP_LE_OQ>(m, _mm256_set1_ps(high)),
    );
    let clear = _mm256_or_ps(
        _mm256_cmp_ps::<_CMP_LT_OQ>(
            det_squared,
            _mm256_mul_ps(bound_squared, _mm256_set1_ps(1.0 - SINGULAR_BAND)),
        ),
        _mm256_cmp_ps::<_CMP_GT_OQ>(
            det_squared,
            _mm256_mul_ps(bound_squared, _mm256_set1_ps(1.0 + SINGULAR_BAND)),
        ),
    );
    if all8(_mm256_and_ps(in_range, clear)) {
        return Some(_mm256_cmp_ps::<_CMP_LE_OQ>(det_squared, bound_squared));
    }
    // sqrt is monotonic and correctly rounded: the largest length is the root of the largest
    // squared length, exactly.
    let largest = _mm256_sqrt_ps(m);
    let bound = _mm256_mul_ps(
        _mm256_mul_ps(
            _mm256_mul_ps(_mm256_set1_ps(SINGULAR_RELATIVE), largest),
            largest,
        ),
        largest,
    );
    Some(_mm256_cmp_ps::<_CMP_LE_OQ>(abs8(det), bound))
}

/// One block's LBS normals, transformed and flipped where the blend mirrors, not yet of unit
/// length: [`block`] with normals and without tangents hands them on and normalizes and stores
/// them while it skins the next block (or the driver loop does, after its last block,
/// [`DeferredNormals::store`]). The normalize's chain (a dot product, `rsqrt`, a Newton step:
/// about 28 cycles by the latencies of its steps) then no longer ends each block's chain, which
/// the block rate follows: LBS with normals 1.07× at 100k (`ab.py 15 "linear pn 4 100000 500"`
/// against normalizing in the block; the measuring recipe is in `simd/mod.rs`). Off the chain,
/// the fast inverse length is taken as one factor (`rsqrt` times its Newton correction) and the
/// normal scaled once, four multiplies where normalizing at once ([`normalize8_flipped_or`],
/// with tangents) takes six with the chain shorter: so the last bit may differ from that one's,
/// well inside `SIMD_VS_SCALAR`. A length ignores the flip.
///
/// With `R` the singular test waits too ([`DeferredNormals::unclear`]): the block flips by the
/// determinant's sign and keeps the lanes the call's one bound did not clear, and the next
/// block tests them where it stores these normals, so that no branch waits at the end of the
/// block's chain (the determinant's). Where a lane is left, the block's normals are made again
/// with the exact test ([`exact_normals`]), so every normal and count is the exact test's.
pub(super) struct DeferredNormals {
    /// The block's normals, one component of all eight per register.
    pub(super) normals: [__m256; 3],
    /// The block's first vertex in the range.
    pub(super) base: usize,
    /// With `R`: the lanes (bit `l` for vertex `base + l`) whose determinant the call's
    /// singular bound (`policy::unit_singular_bound`) did not clear, so that their flip by the sign
    /// alone may be wrong; else 0.
    pub(super) unclear: i32,
}

impl DeferredNormals {
    /// Normalizes the block's normals into `out` (by the fast inverse length where every
    /// lane's is in its window, else `normalize8_or`: where a normal has no length, the input's
    /// normal from `inputs`, as the scalar kernel); or, with `R`, where the singular bound left
    /// a lane unclear, makes them again by the exact test ([`exact_normals`]).
    ///
    /// # Safety
    /// `out` and `inputs` hold the block's vertices (they are the range's, which the block
    /// was inside), and so do `block`'s slices ([`block`]'s contract).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn store<const K: usize, const R: bool, const OFFSETS: bool>(
        self,
        block: &Block<'_>,
        out: &mut [Vec3],
        inputs: &[Vec3],
        diagnostics: &mut Diagnostics,
    ) {
        if R && self.unclear != 0 {
            // SAFETY: the caller's contract.
            unsafe { exact_normals::<K, OFFSETS>(block, self.base, out, inputs, diagnostics) };
            return;
        }
        let vertices = self.base..self.base + LANES;
        // SAFETY: the caller guarantees both slices hold the vertices.
        let (out, inputs) = unsafe {
            (
                out.get_unchecked_mut(vertices.clone()),
                inputs.get_unchecked(vertices),
            )
        };
        store3x8(out, 0, unit_normals8(self.normals, || load3x8(inputs, 0)));
    }
}

/// LBS's normals (without tangents) of unit length, from `normals` transformed and flipped:
/// scaled once by the fast inverse length where every lane's is in its window, else
/// `normalize8_or` with the input normals (`inputs`, loaded only then) where a normal has no
/// length. The one rounding of LBS's normals wherever a call skins no tangents
/// ([`DeferredNormals::store`]), and of blended's vertices at 0 beside them, so that those are
/// LBS's to the bit.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn unit_normals8(
    normals: [__m256; 3],
    inputs: impl FnOnce() -> [__m256; 3],
) -> [__m256; 3] {
    match fast_inverse_length8(dot8(normals, normals)) {
        Some(inverse) => scale8(normals, inverse),
        None => normalize8_or(normals, inputs()),
    }
}

/// LBS of vertices `base .. base + 8`. Returns `false`, having written nothing, when one of
/// them is unweighted. `R`: every weight sum is 1 (`policy::unit_weight_sums`, chosen once per
/// call): no flag is tested. Without it, the call's flags decide the unweighted test, the
/// division by `Σw`, whether the blended 3x3 is divided by `Σw` before the normals and
/// tangents (`policy::columns_need_normalizing`) and the singular test's bound. With normals and
/// without tangents, the normals are left in `deferred` ([`DeferredNormals`]), after those held
/// there from an earlier block are stored. `OFFSETS`: the palette entries are addressed by
/// `Block::linear_offsets`, which the caller has seen cover the range (no shift per influence).
///
/// # Safety
/// `base + 8` is at most the range's length, which `outputs.positions` and the block's
/// positions have and (`k` slots per vertex) its joints, weights and, with `OFFSETS`, linear
/// offsets: the driver's length check for LBS (`driver::drive_avx2`).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn block<
    const K: usize,
    const N: bool,
    const T: bool,
    const R: bool,
    const OFFSETS: bool,
>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
    deferred: &mut Option<DeferredNormals>,
) -> bool {
    if K == 4 && !(N || T) {
        // SAFETY: this function runs only where AVX2 and FMA are enabled; the lengths are the
        // caller's contract.
        return unsafe { positions4::<R, OFFSETS>(block, outputs.positions, base) };
    }
    // The block's slots and vertices, unchecked: the driver checked every slice's length once
    // per call.
    let vertices = base..base + LANES;
    // SAFETY: the caller's contract: the slices cover the block's slots and vertices.
    let slots = unsafe { block.linear_slots8::<K, OFFSETS>(base) };
    // SAFETY: this function runs only where AVX2 and FMA are enabled.
    // Tangents follow: the two groups' blends may interleave (`blend3x4::blend_rows8`).
    let Some(m) = (unsafe { blend8::<K, T, R, OFFSETS>(block, slots) }) else {
        return false;
    };
    // SAFETY: each slice of `vertices` below is inside the block (the caller's contract).
    unsafe {
        store3x8(
            outputs.positions.get_unchecked_mut(vertices.clone()),
            0,
            m.point(match block.position_blocks.get(base / LANES) {
                Some(b) => load_block3x8(b),
                None => load3x8(block.positions.get_unchecked(vertices.clone()), 0),
            }),
        );
    }
    if !(N || T) {
        return true;
    }
    // SAFETY: this function runs only where AVX2 and FMA are enabled.
    let (columns, bound_root, unit_bound) = unsafe { normal_columns8::<R>(block, &m) };
    let cofactor0 = cross8(columns[1], columns[2]);
    let det = dot8(columns[0], cofactor0);
    // The same, where the singular test has shown every lane's determinant ordered and non-zero.
    let mut known_sign = None;
    if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), block.normals) {
        // The earlier block's normals are stored after this block's are made (below): fewer
        // registers live across the blend, so fewer stack accesses per block.
        let earlier = deferred.take();
        let n = match block.normal_blocks.get(base / LANES) {
            Some(b) => load_block3x8(b),
            // SAFETY: the caller's contract.
            None => load3x8(unsafe { src.get_unchecked(vertices.clone()) }, 0),
        };
        let normal = cofactor_normal8(columns, cofactor0, n);
        // Flip where not singular and the determinant is negative: xor the sign, after the
        // length is taken (the determinant's test ends later than the normal).
        let mut unclear = 0;
        let flip = if R && !T {
            // The call's one bound (which `unit_weight_sums` saw), tested where the next block
            // stores these normals (`DeferredNormals::unclear`); meanwhile the sign's flip.
            let bound = block.unit_singular_bound.unwrap_or(f32::INFINITY);
            unclear = _mm256_movemask_ps(not_cleared8(det, _mm256_set1_ps(bound)));
            _mm256_and_ps(det, _mm256_set1_ps(-0.0))
        } else {
            singular_flip8(
                columns,
                det,
                (m.weight_sum, bound_root, unit_bound),
                (diagnostics, ALL_LANES),
                &mut known_sign,
            )
        };
        if T {
            // SAFETY: the caller's contract.
            let out = unsafe { out.get_unchecked_mut(vertices.clone()) };
            store3x8(out, 0, normalize8_flipped_or(normal, flip, n));
        } else {
            let normals = normal.map(|c| _mm256_xor_ps(c, flip));
            if let Some(earlier) = earlier {
                // SAFETY: an earlier block's vertices, inside the range (the caller's contract).
                unsafe { earlier.store::<K, R, OFFSETS>(block, out, src, diagnostics) };
            }
            *deferred = Some(DeferredNormals {
                normals,
                base,
                unclear,
            });
        }
    }
    if let (true, Some(out), Some(src)) = (T, outputs.tangents.as_deref_mut(), block.tangents) {
        // SAFETY: both slices are of the block's vertices (the caller's contract).
        let (src, out) = unsafe {
            (
                src.get_unchecked(vertices.clone()),
                out.get_unchecked_mut(vertices),
            )
        };
        let (d, w) = load_tangents8(src, 0);
        // SAFETY: as above.
        let direction = unsafe { transform8(columns, d) };
        let sign = match known_sign {
            Some(sign) => sign,
            None => negative_sign8(det),
        };
        let w = _mm256_xor_ps(w, sign);
        store_tangents8(out, 0, normalize8_or(direction, d), w);
    }
    true
}

/// The 3x3 that LBS's normals and tangents are transformed by, and the singular test's bounds
/// (`singular_flip8`'s `(bound_root, unit_bound)`), for the blends `m`: where `UNIT` (every
/// weight sum of the call is 1) the blend as it is and the call's one bound (infinite, were it
/// missing: every block would take the exact test); where the call's weight sums are far from
/// one and renormalized, the 3x3 of normalized weights, as the scalar kernel blends it, and
/// the exact test; else the blend and the call's bounds. Shared by LBS and blended.
///
/// # Safety
/// The CPU has AVX2 and FMA (not a `#[target_feature]` function, so that it inlines: its nine
/// registers would otherwise come back through memory).
#[inline(always)]
pub(super) unsafe fn normal_columns8<const UNIT: bool>(
    block: &Block<'_>,
    m: &Linear8,
) -> ([[__m256; 3]; 3], Option<f32>, Option<f32>) {
    if UNIT {
        let bound = block.unit_singular_bound.unwrap_or(f32::INFINITY);
        (m.columns, None, Some(bound))
    } else if block.normalize_columns {
        let columns = match m.weight_scale {
            // SAFETY: the caller guarantees AVX2 and FMA.
            Some(scale) => m.columns.map(|column| unsafe { scale8(column, scale) }),
            None => m.columns,
        };
        (columns, None, None)
    } else {
        (
            m.columns,
            block.singular_bound_root,
            block.unit_singular_bound,
        )
    }
}

/// `columns` (a 3x3 by columns, eight vertices to a register) times `d`: the tangent
/// directions of LBS and blended, before normalizing.
///
/// # Safety
/// The CPU has AVX2 and FMA (inlined, as [`normal_columns8`]).
#[inline(always)]
pub(super) unsafe fn transform8(columns: [[__m256; 3]; 3], d: [__m256; 3]) -> [__m256; 3] {
    let [c0, c1, c2] = columns;
    // SAFETY: the caller guarantees AVX2 and FMA.
    std::array::from_fn(|a| unsafe {
        _mm256_fmadd_ps(
            c2[a],
            d[2],
            _mm256_fmadd_ps(c1[a], d[1], _mm256_mul_ps(c0[a], d[0])),
        )
    })
}

/// The cofactor matrix of `columns` times `n`, `n_x (c1 × c2) + n_y (c2 × c0) + n_z (c0 ×
/// c1)`, as `n_x (c1 × c2) + c0 × (n_z c1 − n_y c2)` (`cofactor0` is `c1 × c2`): 18
/// multiply-class instructions for the normal instead of 24 (two cross products less).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn cofactor_normal8(
    columns: [[__m256; 3]; 3],
    cofactor0: [__m256; 3],
    n: [__m256; 3],
) -> [__m256; 3] {
    let [c0, c1, c2] = columns;
    let mut v = [_mm256_setzero_ps(); 3];
    for a in 0..3 {
        v[a] = _mm256_fnmadd_ps(n[1], c2[a], _mm256_mul_ps(n[2], c1[a]));
    }
    let mut normal = [_mm256_setzero_ps(); 3];
    for a in 0..3 {
        let (b, c) = ((a + 1) % 3, (a + 2) % 3);
        normal[a] = _mm256_fmadd_ps(
            n[0],
            cofactor0[a],
            _mm256_fmsub_ps(c0[b], v[c], _mm256_mul_ps(c0[c], v[b])),
        );
    }
    normal
}

/// `-0.0` in the lanes whose determinant `det` is negative (a mirror), else `0.0` (also for
/// zero and NaN).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn negative_sign8(det: __m256) -> __m256 {
    _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_LT_OQ>(det, _mm256_setzero_ps()),
        _mm256_set1_ps(-0.0),
    )
}

/// Every lane of a block, as a `movemask` bit per lane.
pub(super) const ALL_LANES: i32 = 0xff;

/// The sign bits to xor into a block's normals: `-0.0` where the 3x3 (`columns`, determinant
/// `det`) mirrors and is not singular, else `0.0`, by [`singular8`] (`bounds`: the blocks'
/// `Σw`, bound root and unit bound it takes), its singular lanes among `counted` (a bit per
/// lane, `0xff` for all) counted in `diagnostics`. Where no lane is singular, `known_sign` is
/// set to the determinant's sign bits.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn singular_flip8(
    columns: [[__m256; 3]; 3],
    det: __m256,
    (weight_sum, bound_root, unit_bound): (__m256, Option<f32>, Option<f32>),
    (diagnostics, counted): (&mut Diagnostics, i32),
    known_sign: &mut Option<__m256>,
) -> __m256 {
    match singular8(columns, det, weight_sum, bound_root, unit_bound) {
        None => {
            // No lane singular, every determinant ordered and non-zero: its sign bit.
            let sign = _mm256_and_ps(det, _mm256_set1_ps(-0.0));
            *known_sign = Some(sign);
            sign
        }
        Some(singular) => {
            diagnostics.singular_normal_matrices +=
                (_mm256_movemask_ps(singular) & counted).count_ones() as usize;
            _mm256_andnot_ps(singular, negative_sign8(det))
        }
    }
}

/// The normals of the block `base .. base + 8` with unit weight sums (`R`), made again with
/// the exact singular test and stored in `out`: where the call's bound left one of its lanes
/// unclear ([`DeferredNormals::unclear`]). The same blend, cofactor normal and normalize as
/// [`block`]'s, so the normals are those [`block`] makes with the exact test inline, and the
/// singular lanes are counted. Out of line: the bound leaves a lane only where a determinant
/// is within about `SINGULAR_RELATIVE` of the palette's scale cubed.
///
/// # Safety
/// As [`block`]'s for `base`; `out` and `inputs` are the range's normals.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx2,fma")]
unsafe fn exact_normals<const K: usize, const OFFSETS: bool>(
    block: &Block<'_>,
    base: usize,
    out: &mut [Vec3],
    inputs: &[Vec3],
    diagnostics: &mut Diagnostics,
) {
    // SAFETY: the caller's contract.
    let slots = unsafe { block.linear_slots8::<K, OFFSETS>(base) };
    // SAFETY: the caller's contract; with unit weight sums no vertex is unweighted.
    let Some(m) = (unsafe { blend8::<K, false, true, OFFSETS>(block, slots) }) else {
        return;
    };
    let cofactor0 = cross8(m.columns[1], m.columns[2]);
    let det = dot8(m.columns[0], cofactor0);
    // SAFETY: the caller's contract.
    let n = load3x8(unsafe { inputs.get_unchecked(base..base + LANES) }, 0);
    let normal = cofactor_normal8(m.columns, cofactor0, n);
    // As `block` with `R` and the exact test: no bound root, the call's unit bound.
    let bound = block.unit_singular_bound.unwrap_or(f32::INFINITY);
    let flip = singular_flip8(
        m.columns,
        det,
        (m.weight_sum, None, Some(bound)),
        (diagnostics, ALL_LANES),
        &mut None,
    );
    let normals = DeferredNormals {
        normals: normal.map(|c| _mm256_xor_ps(c, flip)),
        base,
        unclear: 0,
    };
    // SAFETY: the caller's contract.
    unsafe { normals.store::<K, false, OFFSETS>(block, out, inputs, diagnostics) };
}
