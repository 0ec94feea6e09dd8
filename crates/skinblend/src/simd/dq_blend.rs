//! The sign-aligned dual quaternion blend DQS and CoR share, eight vertices at a time: each
//! influence aligned in sign with the vertex's pivot and added, vertex by vertex or slot by
//! slot (the pivot sign table's blend is `dq_table`'s).

use std::arch::x86_64::*;

use std::mem::MaybeUninit;

use super::block::{block_pivots, pivot_slot_of, Block};
use super::dq_table::blend_signed_table8;
use super::layout::LANES;
use super::loads::{
    load_entry_halves, load_entry_pairs, load_halves, transpose4_in_halves, transpose8,
};
use crate::influence_tables::{pivot_slot, MIN_WEIGHT_SUM};

/// The sign-aligned blends `Σ ±wᵢ dqᵢ` of vertices `base .. base + 8` (not normalized), one
/// component of all eight per register (`[x, y, z, w]` real, then dual), and their sign flips;
/// `None` when a vertex is unweighted (side by side, for two to eight influences: when all its
/// weights are below `MIN_WEIGHT_SUM`, which the scalar kernel then decides exactly). The
/// palette's dual quaternions are the rigid parts of its joints: a kernel applies the residual
/// of a vertex on a non-rigid joint itself (`dqs::Residual8`).
///
/// Per vertex: the pivot is the heaviest influence; each influence's real part is dotted with
/// the pivot's as `(x·x' + z·z') + (y·y' + w·w')`, glam's grouping of `Quat::dot`, so that the
/// sign test decides as the scalar kernel's does (only its sign is used), and its weight is
/// negated branch-free where the dot is negative (random rigs flip half the time, which a
/// branch would mispredict); the dual quaternion is then added as one 256-bit multiply-add.
/// The weights are not renormalized: the blend is normalized afterwards anyway. Two to eight
/// influences per vertex (four and eight the common cases) blend eight vertices side by side
/// instead ([`blend_slots8`]); there `D = false` leaves the dual parts zero (CoR needs only the
/// rotation). Vertex by vertex, here: one influence, or more than eight.
///
/// # Safety
/// The CPU has AVX2 and FMA. (Not a `#[target_feature]` function so that it can be
/// `#[inline(always)]`, as `blend3x4::blend8`.)
#[inline(always)]
pub(super) unsafe fn blend8<const K: usize, const D: bool>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 8], usize)> {
    if D && (K == 4 || K == 8) && !block.signed_entries.is_empty() {
        // SAFETY: the caller guarantees AVX2 and FMA; the table is the palette's.
        return unsafe { blend_signed_table8::<K>(block, base) };
    }
    if (2..=8).contains(&block.k::<K>()) {
        // SAFETY: the caller guarantees AVX2 and FMA.
        return unsafe { blend_slots8::<K, D>(block, base) };
    }
    // SAFETY: the caller guarantees AVX2 and FMA.
    unsafe {
        let dual_quats = block.dual_quats.as_ptr().cast::<f32>();
        let mut rows = [_mm256_setzero_ps(); LANES];
        let mut weighted = true;
        // Flip counts, one per lane (an all-ones mask is −1 as an integer: subtracting it counts
        // one flip).
        let mut flipped = _mm256_setzero_si256();
        let k = block.k::<K>();
        let (joints8, weights8) = block.influences8::<K>(base);
        for (l, row) in rows.iter_mut().enumerate() {
            let (joints, weights) = (&joints8[l * k..(l + 1) * k], &weights8[l * k..(l + 1) * k]);
            *row = {
                let sum: f32 = weights.iter().sum();
                weighted &= sum >= MIN_WEIGHT_SUM;
                let pivot = joints[pivot_slot(weights)];
                blend_any(dual_quats, joints, weights, pivot, &mut flipped)
            };
        }
        if !weighted {
            return None;
        }
        let mut counts = [0i32; 8];
        // SAFETY: `counts` is 32 writable bytes.
        _mm256_storeu_si256(counts.as_mut_ptr().cast(), flipped);
        let flips = counts.iter().sum::<i32>() as usize;
        Some((transpose8(rows), flips))
    }
}

/// Loads joint `joint`'s dual quaternion as `real | dual`.
///
/// # Safety
/// `joint` is below the palette length (every joint of `Influences` is below its joint count,
/// which `skin_into` checked against the palette), and the CPU has AVX.
#[inline(always)]
unsafe fn load_dual_quat(dual_quats: *const f32, joint: u16) -> __m256 {
    // SAFETY: a `DualQuat` is 8 contiguous f32s, real then dual (`layout`'s asserts);
    // the caller guarantees the joint is inside the palette.
    unsafe { _mm256_loadu_ps(dual_quats.add(usize::from(joint) * 8)) }
}

/// The sign-aligned blend of one vertex, any number of influences, one influence at a time:
/// each real part is dotted with the pivot's as `(x·x' + z·z') + (y·y' + w·w')` (glam's grouping;
/// only its sign is used) and its weight negated branch-free where the dot is negative.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn blend_any(
    dual_quats: *const f32,
    joints: &[u16],
    weights: &[f32],
    pivot: u16,
    flipped: &mut __m256i,
) -> __m256 {
    let sign_bit = _mm_set1_ps(-0.0);
    // SAFETY: see `load_dual_quat`; the pivot is one of the vertex's joints.
    let pivot_real = _mm256_castps256_ps128(unsafe { load_dual_quat(dual_quats, pivot) });
    let mut count = _mm_setzero_si128();
    let mut blend = _mm256_setzero_ps();
    for (&joint, &weight) in joints.iter().zip(weights) {
        // SAFETY: see `load_dual_quat`.
        let dq = unsafe { load_dual_quat(dual_quats, joint) };
        let weight = _mm_set_ss(weight);
        let products = _mm_mul_ps(_mm256_castps256_ps128(dq), pivot_real);
        let pairs = _mm_add_ps(products, _mm_movehl_ps(products, products));
        let dot = _mm_add_ss(pairs, _mm_movehdup_ps(pairs));
        // The pivot never flips (its dot with itself is |q|² > 0); a zero weight neither
        // counts nor adds anything.
        let negative = _mm_cmplt_ss(dot, _mm_setzero_ps());
        let counted = _mm_and_ps(negative, _mm_cmpgt_ss(weight, _mm_setzero_ps()));
        count = _mm_sub_epi32(count, _mm_castps_si128(counted));
        let signed = _mm_xor_ps(weight, _mm_and_ps(negative, sign_bit));
        blend = _mm256_fmadd_ps(dq, _mm256_broadcastss_ps(signed), blend);
    }
    *flipped = _mm256_add_epi32(*flipped, _mm256_zextsi128_si256(count));
    blend
}

/// [`blend8`] for two to eight influences per vertex (`K`, or for `K = 0` the block's count),
/// eight vertices side by side: the decisions of [`blend_any`] (and of the scalar kernel), made
/// eight-wide.
///
/// Slot by slot, the eight vertices' dual quaternions are loaded as rows `(q_l | q_{l+4})` of
/// 16-byte halves (a load and an insert from memory each) and transposed inside the halves, so
/// that each register holds one component of all eight, in vertex order; the weights likewise
/// (for four or eight influences; other counts gather each slot's eight weights with one
/// `vgatherdps`: against [`blend_any`] vertex by vertex, DQS with three influences 1.6× at
/// 10k, `ab.py 15 "dq pn 3 10000 5000"`; the measuring recipe is in `simd/mod.rs`).
/// The pivot (the lowest slot holding the largest weight) is read from `Influences::pivots`
/// (`block_pivots`, the scalar kernel's rule applied once at construction); each slot's real
/// part is dotted with the pivot's as `(x·x' + z·z') + (y·y' + w·w')`, glam's grouping of
/// `Quat::dot`, so that the sign test decides as the scalar one does; the weight is negated
/// where the dot is negative and the slot is added with one multiply-add per component. `D = false` (CoR, which needs only the
/// rotation) skips the dual parts and leaves them zero.
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[inline(always)]
unsafe fn blend_slots8<const K: usize, const D: bool>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 8], usize)> {
    let k = block.k::<K>();
    assert!((2..=8).contains(&k));
    let (joints8, weights8) = block.influences8::<K>(base);
    let (joints8, weights8) = (&joints8[..k * LANES], &weights8[..k * LANES]);
    // SAFETY: (the whole body) the caller guarantees AVX2 and FMA; the pointer reads are justified
    // where they are.
    unsafe {
        let dual_quats = block.dual_quats.as_ptr().cast::<f32>();
        // A `DualQuat` is 8 f32s.
        let mut offsets = JointOffsets::new();
        offsets.fill::<3>(joints8);
        let (pivots, _) = block_pivots(block, base)?;
        let slot_weights = slot_weights8::<K>(weights8, k);
        let w = &slot_weights[..k];
        // The pivots' real parts, as `slot4x8` loads a slot's.
        let pivot = {
            let mut rows = [_mm256_setzero_ps(); 4];
            for (l, row) in rows.iter_mut().enumerate() {
                let offset = |v: usize| offsets.get(v * k + pivot_slot_of::<K>(pivots[v], k));
                // SAFETY: as in `slot4x8` (the 8 k offsets are filled); the pivot is one of the
                // vertex's joints.
                *row = load_entry_halves::<0>(dual_quats, offset(l), offset(l + 4));
            }
            transpose4_in_halves(rows)
        };
        let mut sum = [_mm256_setzero_ps(); 8];
        // Flip counts, one per lane (an all-ones mask is −1 as an integer: subtracting it counts
        // one flip).
        let mut flipped = _mm256_setzero_si256();
        // Slot by slot: real and dual parts together (each offset read once), or the real parts
        // alone for CoR.
        // An index loop: iterating `w` instead compiles to more instructions per vertex.
        #[allow(clippy::needless_range_loop)]
        for s in 0..k {
            let (real, dual) = if D {
                let (real, dual) = slots_both4x8(dual_quats, &offsets, k, s);
                (real, Some(dual))
            } else {
                (slot4x8::<0>(dual_quats, &offsets, k, s), None)
            };
            let dot = _mm256_add_ps(
                _mm256_add_ps(
                    _mm256_mul_ps(real[0], pivot[0]),
                    _mm256_mul_ps(real[2], pivot[2]),
                ),
                _mm256_add_ps(
                    _mm256_mul_ps(real[1], pivot[1]),
                    _mm256_mul_ps(real[3], pivot[3]),
                ),
            );
            // The pivot never flips (its dot with itself is |q|² > 0); a zero weight neither
            // counts nor adds anything.
            let negative = _mm256_cmp_ps::<_CMP_LT_OQ>(dot, _mm256_setzero_ps());
            let counted = _mm256_and_ps(
                negative,
                _mm256_cmp_ps::<_CMP_GT_OQ>(w[s], _mm256_setzero_ps()),
            );
            flipped = _mm256_sub_epi32(flipped, _mm256_castps_si256(counted));
            let signed = _mm256_xor_ps(w[s], _mm256_and_ps(negative, _mm256_set1_ps(-0.0)));
            for c in 0..4 {
                sum[c] = _mm256_fmadd_ps(real[c], signed, sum[c]);
            }
            if let Some(dual) = dual {
                for c in 0..4 {
                    sum[4 + c] = _mm256_fmadd_ps(dual[c], signed, sum[4 + c]);
                }
            }
        }
        Some((sum, lane_sum(flipped)))
    }
}

/// The weights of a block of eight vertices with `k` influences each (`K`, or for `K = 0` the
/// block's count, two to eight), one register per slot (`k` of them), lane `l` vertex `l`:
/// for four or eight influences as rows of 16-byte halves transposed inside the halves, for
/// other counts one `vgatherdps` per slot.
///
/// # Safety
/// The CPU has AVX2 and FMA; `weights8` holds 8 `k` weights.
#[inline(always)]
unsafe fn slot_weights8<const K: usize>(weights8: &[f32], k: usize) -> [__m256; 8] {
    assert!(weights8.len() == k * LANES && (2..=8).contains(&k));
    // SAFETY: (the whole body) the caller guarantees AVX2 and FMA; the reads are justified where
    // they are.
    unsafe {
        let mut slot_weights = [_mm256_setzero_ps(); 8];
        if K == 4 || K == 8 {
            for group in 0..K / 4 {
                let p = weights8.as_ptr().add(4 * group);
                let mut rows = [_mm256_setzero_ps(); 4];
                for (l, row) in rows.iter_mut().enumerate() {
                    // SAFETY: `weights8` is 8 vertices × K f32s: slots 4 group .. 4 group + 4
                    // of vertices l and l + 4 are inside.
                    *row = load_halves(p.add(K * l), p.add(K * (l + 4)));
                }
                let four = transpose4_in_halves(rows);
                slot_weights[4 * group..4 * group + 4].copy_from_slice(&four);
            }
        } else {
            // Vertex l's weight of slot s is at l k + s.
            let index = _mm256_mullo_epi32(
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                _mm256_set1_epi32(k as i32),
            );
            for (s, weights) in slot_weights.iter_mut().enumerate().take(k) {
                // SAFETY: the largest index, 7 k + s with s < k, is inside `weights8` (8 k
                // f32s).
                *weights = _mm256_i32gather_ps::<4>(weights8.as_ptr().add(s), index);
            }
        }
        slot_weights
    }
}

/// The sum of the eight lanes of `counts`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn lane_sum(counts: __m256i) -> usize {
    let four = _mm_add_epi32(
        _mm256_castsi256_si128(counts),
        _mm256_extracti128_si256::<1>(counts),
    );
    let two = _mm_add_epi32(four, _mm_unpackhi_epi64(four, four));
    let one = _mm_add_epi32(two, _mm_shuffle_epi32::<1>(two));
    _mm_cvtsi128_si32(one) as usize
}

/// The real and the dual parts of slot `s`, as two [`slot4x8`] would give them, reading each
/// offset once.
///
/// # Safety
/// As [`slot4x8`].
#[inline(always)]
unsafe fn slots_both4x8(
    dual_quats: *const f32,
    offsets: &JointOffsets,
    k: usize,
    s: usize,
) -> ([__m256; 4], [__m256; 4]) {
    // SAFETY: as in `slot4x8`.
    unsafe {
        let mut real = [_mm256_setzero_ps(); 4];
        let mut dual = [_mm256_setzero_ps(); 4];
        for l in 0..4 {
            let low = offsets.get(l * k + s);
            let high = offsets.get((l + 4) * k + s);
            (real[l], dual[l]) = load_entry_pairs(dual_quats, low, high);
        }
        (transpose4_in_halves(real), transpose4_in_halves(dual))
    }
}

/// The real (`PART_BYTES = 0`) or dual (`16`) parts of the dual quaternions of slot `s` of
/// eight vertices with `k` influences each (`offsets`: their joints' offsets),
/// one component of all eight per register, in vertex order.
///
/// # Safety
/// The CPU has AVX2 and FMA; every offset is that of a joint inside the palette `dual_quats`
/// (`Influences` guarantees joints below its joint count, which `skin_into` checked against
/// the palette).
#[inline(always)]
unsafe fn slot4x8<const PART_BYTES: usize>(
    dual_quats: *const f32,
    offsets: &JointOffsets,
    k: usize,
    s: usize,
) -> [__m256; 4] {
    // SAFETY: (the whole body) the caller guarantees AVX2 and FMA; a `DualQuat` is 8 contiguous
    // f32s (`layout`'s asserts) and the joints are inside the palette (the caller), so
    // every 16-byte read is inside it.
    unsafe {
        let mut rows = [_mm256_setzero_ps(); 4];
        for (l, row) in rows.iter_mut().enumerate() {
            let low = offsets.get(l * k + s);
            let high = offsets.get((l + 4) * k + s);
            *row = load_entry_halves::<PART_BYTES>(dual_quats, low, high);
        }
        transpose4_in_halves(rows)
    }
}

/// The palette offsets of a block's joints (eight vertices, up to eight influences each), in
/// f32s from the start of the palette array, widened and scaled eight at a time: the kernels'
/// loads then take an offset as one scalar load and need no shift per influence. Filled in
/// place (a returned copy would be moved lane by lane). Used by the slot-by-slot DQ blend only:
/// the other blends read each joint where they use it, which is faster for them (the store and
/// reload head the block's dependency chain) and slower for this one.
#[repr(C, align(32))]
pub(super) struct JointOffsets(MaybeUninit<[u32; 8 * LANES]>);

impl JointOffsets {
    /// Nothing filled yet.
    #[inline(always)]
    pub(super) fn new() -> Self {
        Self(MaybeUninit::uninit())
    }

    /// Fills offsets `0 .. joints.len()` with `joint << SHIFT` (palette entries of `1 << SHIFT`
    /// f32s); `joints.len()` is a multiple of 8 and at most 64.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn fill<const SHIFT: i32>(&mut self, joints: &[u16]) {
        assert!(joints.len().is_multiple_of(LANES) && joints.len() <= 8 * LANES);
        let out = self.0.as_mut_ptr().cast::<__m256i>();
        for i in 0..joints.len() / LANES {
            // SAFETY: the caller guarantees AVX2; reads joints 8i .. 8i + 8 (inside `joints`,
            // asserted above) and writes entries 8i .. 8i + 8, 32-byte aligned. The write is
            // volatile so that it stays one vector store: the compiler would otherwise store
            // the lanes one by one with extracts, for the scalar reads of `get`.
            unsafe {
                let eight = _mm_loadu_si128(joints.as_ptr().add(LANES * i).cast());
                let scaled = _mm256_slli_epi32::<SHIFT>(_mm256_cvtepu16_epi32(eight));
                std::ptr::write_volatile(out.add(i), scaled);
            }
        }
    }

    /// Offset `i`, as one scalar load (volatile: the compiler would otherwise extract it from
    /// the vector that wrote it, with a shuffle).
    ///
    /// # Safety
    /// `i` is below the length of the last `fill`.
    #[inline(always)]
    pub(super) unsafe fn get(&self, i: usize) -> usize {
        assert!(i < 8 * LANES);
        // SAFETY: inside the array (asserted) and written by `fill` (the caller).
        unsafe { self.0.as_ptr().cast::<u32>().add(i).read_volatile() as usize }
    }
}
