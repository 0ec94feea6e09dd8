//! The one sign-aligned dual quaternion blend (DQS and CoR), the rigid-motion apply, and DQS.

use std::arch::x86_64::*;

use super::lanes::{
    add8, all8, cross8, load3x8, load_entry_halves, load_entry_pairs, load_halves, load_tangents8,
    normalize8_rotated_or, store3x8, store_tangents8, transpose4_in_halves, transpose8, Block,
    JointOffsets, LANES,
};
use crate::influences::{
    pivot_slot, MIN_WEIGHT_SUM, PIVOT_HAS_ZERO_WEIGHT, PIVOT_LIGHT, PIVOT_ROW_BITS, PIVOT_SLOT_BITS,
};
use crate::palette::{PIVOT_SIGN_TABLE_MAX_JOINTS, SIGNED_ENTRY_FLIP_BYTES};
use crate::types::{Diagnostics, SkinOutputs};

// `blend4_signed`'s `asm!` counts a flip by this bit as a literal.
const _: () = assert!(SIGNED_ENTRY_FLIP_BYTES == 64);

/// The sign-aligned blends `Σ ±wᵢ dqᵢ` of vertices `base .. base + 8` (not normalized), one
/// component of all eight per register (`[x, y, z, w]` real, then dual), and their sign flips;
/// `None` when a vertex is unweighted (side by side, for two to eight influences: when all its
/// weights are below `MIN_WEIGHT_SUM`, which the scalar kernel then decides exactly) or, unless
/// the palette is rigid (`R`), has a non-zero weight on a non-rigid joint (the block then goes
/// to the scalar kernel whole).
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
/// `#[inline(always)]`, as `linear::blend8`.)
#[inline(always)]
pub(super) unsafe fn blend8<const K: usize, const R: bool, const D: bool>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 8], usize)> {
    if D && (K == 4 || K == 8) && !block.signed_entries.is_empty() {
        // SAFETY: the caller guarantees AVX2 and FMA; the table is the palette's.
        return unsafe { blend_signed_table8::<K, R>(block, base) };
    }
    if (2..=8).contains(&block.k::<K>()) {
        // SAFETY: the caller guarantees AVX2 and FMA.
        return unsafe { blend_slots8::<K, R, D>(block, base) };
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
            if !R && on_non_rigid_joint(block, joints, weights) {
                return None;
            }
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

/// Whether any of these influences puts a non-zero weight on a non-rigid joint (its vertex then
/// goes to the scalar kernel, which has the one definition of the residual blend).
#[inline(always)]
pub(super) fn on_non_rigid_joint(block: &Block<'_>, joints: &[u16], weights: &[f32]) -> bool {
    joints
        .iter()
        .zip(weights)
        .any(|(&j, &w)| w > 0.0 && !block.rigid[usize::from(j)])
}

/// Loads joint `joint`'s dual quaternion as `real | dual`.
///
/// # Safety
/// `joint` is below the palette length (every joint of `Influences` is below its joint count,
/// which `skin_into` checked against the palette), and the CPU has AVX.
#[inline(always)]
unsafe fn load_dual_quat(dual_quats: *const f32, joint: u16) -> __m256 {
    // SAFETY: a `DualQuat` is 8 contiguous f32s, real then dual (layout asserts in `lanes`);
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
/// `vgatherdps`: against [`blend_any`] vertex by vertex, DQS with three influences 1.57–1.83×,
/// two 1.21–1.42×, CoR with three 1.36–1.50×, `tools/ozz-compare/ab.py`, docs/bench.md).
/// The pivot (the lowest slot holding the largest weight) is read from `Influences::pivots`
/// ([`block_pivots`], the scalar kernel's rule applied once at construction); each slot's real
/// part is dotted with the pivot's as `(x·x' + z·z') + (y·y' + w·w')`, glam's grouping of
/// `Quat::dot`, so that the sign test decides as the scalar one does; the weight is negated where the dot is negative and the
/// slot is added with one multiply-add per component. `D = false` (CoR, which needs only the
/// rotation) skips the dual parts and leaves them zero.
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[inline(always)]
unsafe fn blend_slots8<const K: usize, const R: bool, const D: bool>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 8], usize)> {
    let k = block.k::<K>();
    assert!((2..=8).contains(&k));
    let (joints8, weights8) = block.influences8::<K>(base);
    let (joints8, weights8) = (&joints8[..k * LANES], &weights8[..k * LANES]);
    if !R && on_non_rigid_joint(block, joints8, weights8) {
        return None;
    }
    // SAFETY (whole body): the caller guarantees AVX2 and FMA; the pointer reads are justified
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
        // An index loop: iterating `w` instead compiled to 5 instructions per vertex more.
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
    // SAFETY (whole body): the caller guarantees AVX2 and FMA; the reads are justified where
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

/// The pivot words of vertices `base .. base + 8` (`Influences::pivots`: each vertex's pivot
/// slot, chosen at construction by the scalar kernel's rule, its flags and its pivot joint's
/// row of the pivot sign table), and whether one of
/// them has a zero weight; `None` where one has its largest weight below `MIN_WEIGHT_SUM` (the
/// block then goes to the scalar kernel, which decides exactly whether it is unweighted).
/// Weights are non-negative, so a largest weight of at least `MIN_WEIGHT_SUM` proves the sum is
/// too. Two to eight influences per vertex (`block.pivots` is empty otherwise).
#[inline(always)]
pub(super) fn block_pivots(block: &Block<'_>, base: usize) -> Option<([u16; LANES], bool)> {
    let words: [u16; LANES] = block.pivots[base..base + LANES]
        .try_into()
        .expect("eight words");
    // The eight words as two integers of four (one load each): a flag set in any word is set
    // in the same bit of some word of them, whatever the byte order.
    let pointer = words.as_ptr().cast::<u64>();
    // SAFETY: `words` is 16 bytes; both unaligned reads are inside it, and every bit pattern
    // is a u64.
    let lanes = unsafe { pointer.read_unaligned() | pointer.add(1).read_unaligned() };
    let every_lane = |flag: u16| u64::from(flag) * 0x0001_0001_0001_0001;
    if lanes & every_lane(PIVOT_LIGHT) != 0 {
        return None;
    }
    Some((words, lanes & every_lane(PIVOT_HAS_ZERO_WEIGHT) != 0))
}

/// The address of the row of the pivot sign table `table` (`Block::signed_offsets`) for the
/// vertex whose pivot word is `word` ([`PIVOT_ROW_BITS`]).
///
/// # Safety
/// `table` is a palette's pivot sign table and `word` the pivot word of a vertex of a mesh
/// whose joints the palette covers (so its row is inside the table).
#[inline(always)]
pub(super) unsafe fn pivot_row(table: *const u16, word: u16) -> *const u16 {
    // SAFETY: the caller's contract.
    unsafe { table.byte_add(usize::from(word & PIVOT_ROW_BITS)) }
}

/// The index in the pivot sign table of the first entry of the row that the pivot word `word`
/// points to ([`pivot_row`] as an index, for the paths that read the table by slice).
#[inline(always)]
fn pivot_row_start(word: u16) -> usize {
    usize::from(word & PIVOT_ROW_BITS) / size_of::<u16>()
}

/// Slot of a pivot word (`Influences::pivots`), below `k` (`K`, or for `K = 0` the block's
/// count): the mask, or for counts other than 4 and 8 the minimum, only lets the compiler see
/// the bound.
#[inline(always)]
pub(super) fn pivot_slot_of<const K: usize>(word: u16, k: usize) -> usize {
    let slot = usize::from(word & PIVOT_SLOT_BITS);
    if K == 4 || K == 8 {
        slot & (K - 1)
    } else {
        slot.min(k - 1)
    }
}

/// [`blend8`] of DQS (real and dual parts) for four or eight influences per vertex with the
/// palette's pivot sign table (`Block::signed_offsets`, not empty): each vertex's blend in one
/// register `real | dual`, one influence at a time, each influence's dual quaternion read from
/// the line its entry in the row of the vertex's pivot joint points to (the joint's dual
/// quaternion or its negation, `Block::signed_entries`; [`blend4_signed`]), instead of the
/// slot-by-slot blend's dot of every influence with the pivot; then the eight blends
/// transposed. The same decisions as the scalar kernel (the table holds its sign test, the
/// pivot is [`block_pivots`]'), so the same flips and results up to f32 rounding. Against the
/// slot-by-slot blend, DQS with normals 1.14–1.15× (four influences, 10k vertices), 1.14–1.16×
/// (100k), 1.19× (eight influences) when the table held sign masks that flipped each weight;
/// reading the negated dual quaternion instead (two instructions per influence fewer: no sign
/// broadcast, no xor) 1.04–1.05× (10k, 100k, eight influences, tangents; a probe with u32
/// offsets and 64-byte joints measured 1.08× / 1.06×) (`tools/ozz-compare/ab.py`, fastest
/// calls; docs/bench.md "Latency"). CoR reads the table in its own blend
/// (`cor::blend_with_rotations8`).
///
/// # Safety
/// The CPU has AVX2 and FMA; `block.signed_offsets` is the table of `block.dual_quats` and
/// `block.signed_entries` its lines.
#[inline(always)]
unsafe fn blend_signed_table8<const K: usize, const R: bool>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 8], usize)> {
    // SAFETY: as this function's.
    unsafe {
        if block.tally_flips {
            blend_signed_table8_counting::<K, R, false>(block, base)
        } else {
            blend_signed_table8_counting::<K, R, true>(block, base)
        }
    }
}

/// [`blend_signed_table8`], counting the flips where `C` (else the call counts them once,
/// `super::tallied_sign_flips`, and this returns 0).
///
/// # Safety
/// As [`blend_signed_table8`].
#[inline(always)]
unsafe fn blend_signed_table8_counting<const K: usize, const R: bool, const C: bool>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 8], usize)> {
    assert!(K == 4 || K == 8);
    let (joints8, weights8) = block.influences8::<K>(base);
    let (joints8, weights8) = (&joints8[..K * LANES], &weights8[..K * LANES]);
    if !R && on_non_rigid_joint(block, joints8, weights8) {
        return None;
    }
    let joints = block.dual_quats.len();
    assert!(
        block.signed_offsets.len() == joints * PIVOT_SIGN_TABLE_MAX_JOINTS
            && block.signed_entries.len() == 2 * joints
    );
    // SAFETY (whole body): the caller guarantees AVX2 and FMA; the pointer reads are justified
    // where they are.
    unsafe {
        let (pivots, zero_weights) = block_pivots(block, base)?;
        let entries = block.signed_entries.as_ptr().cast::<f32>();
        let table = block.signed_offsets.as_ptr();
        let mut count = 0;
        let mut rows = [_mm256_setzero_ps(); LANES];
        for (l, row) in rows.iter_mut().enumerate() {
            let vertex_joints = &joints8[K * l..K * (l + 1)];
            // SAFETY: the vertex's pivot joint is inside the palette, so its row is inside the
            // table; each call reads four weights and four joints of this vertex (K is 4 or
            // 8), every joint is inside the palette and its row, and every offset of the table
            // points to a line of `entries` (asserted lengths).
            let offsets = pivot_row(table, pivots[l]);
            let weights = weights8.as_ptr().add(K * l);
            let mut blend = _mm256_setzero_ps();
            for group in 0..K / 4 {
                blend = blend4_signed::<C>(
                    blend,
                    weights.add(4 * group),
                    vertex_joints.as_ptr().add(4 * group),
                    offsets,
                    entries,
                    &mut count,
                );
            }
            *row = blend;
        }
        let flips = if C {
            table_flips::<K>(block, base, pivots, zero_weights, count)
        } else {
            0
        };
        Some((transpose8(rows), flips))
    }
}

/// Whether every vertex's blended real part (the sign-aligned blend of its influences'
/// rotation parts, as DQS and CoR blend them) has a squared length in `[2⁻¹⁰⁰, 2¹⁰⁰]`, so that
/// [`Rotation8::from_real`]'s test cannot fail, from the mesh's weight sums
/// (`Influences::weight_sum_range`), `k` and the lengths of the palette's rotation parts
/// (`real_lengths`, `PreparedPalette::real_length_range`: kept with the palette, since three
/// passes over its joints per call cost every piece of a parallel call; DQS with normals at
/// 10k on two threads 1.079× by `ab.py`'s fastest calls, docs/bench.md) alone. Every
/// influence's part is aligned to the pivot's (the heaviest, weight at least `Σw / k`), so the
/// blend is the pivot's term plus terms whose dot with it is not negative, and its length is at
/// least the pivot term's: `Σw / k · min |q|`; at most `Σw · max |q|`. The f32 blend is within
/// `k Σw max |q| 2⁻²⁴` of the exact one (one rounding per influence and lane, twice), which the
/// last condition keeps under half the lower bound. Once per call.
pub(super) fn real_blends_usable(
    k: usize,
    weight_sums: (f32, f32),
    real_lengths: (f32, f32),
) -> bool {
    let (low, high) = (f64::from(weight_sums.0), f64::from(weight_sums.1));
    let (shortest, longest) = (f64::from(real_lengths.0), f64::from(real_lengths.1));
    // No joint, `(∞, 0)`, or a rotation part that is not finite, `(NaN, NaN)`.
    if k == 0 || !(shortest.is_finite() && longest.is_finite()) {
        return false;
    }
    let k = k as f64;
    // Also false for NaN sums and for a mesh without vertices, `(∞, 0)`.
    if !(low > 0.0 && low <= high && high.is_finite()) {
        return false;
    }
    let (least, most) = (low / k * shortest, high * longest);
    let error = 2.0 * k * most * 2f64.powi(-24);
    least * least >= 2f64.powi(-100) && most * most <= 2f64.powi(100) && error <= 0.5 * least
}

/// Whether `offset`, an entry of the pivot sign table, is a sign flip.
#[inline(always)]
pub(super) fn is_flip(offset: u16) -> bool {
    offset & SIGNED_ENTRY_FLIP_BYTES != 0
}

/// The sign flips that the call's tally (`super::tallied_sign_flips`) counts for the vertices
/// `range` of the block's range: those of the range's first `tallied_vertices`, each vertex's
/// positively weighted influences whose entry in its pivot joint's row of the table is a flip
/// (0 where the call does not tally). The driver takes these back where it sends vertices to
/// the scalar kernel, which counts its own.
pub(super) fn tallied_flips(block: &Block<'_>, range: std::ops::Range<usize>) -> usize {
    if !block.tally_flips {
        return 0;
    }
    let k = block.k::<0>();
    let mut flips = 0;
    for vertex in range.start..range.end.min(block.tallied_vertices) {
        let slots = vertex * k..(vertex + 1) * k;
        let (vertex_joints, weights) = (&block.joints[slots.clone()], &block.weights[slots]);
        let row = pivot_row_start(block.pivots[vertex]);
        for (&joint, &weight) in vertex_joints.iter().zip(weights) {
            if weight > 0.0 {
                flips += usize::from(is_flip(block.signed_offsets[row + usize::from(joint)]));
            }
        }
    }
    flips
}

/// The sign flips of a block blended with the pivot sign table, from `count` (each
/// influence's entry's flip bit, [`SIGNED_ENTRY_FLIP_BYTES`], added as it is read), less the
/// flips of zero weights, which never count (`zero_weights`: a vertex of the block has one,
/// its pivot word says which). Four or eight influences per vertex.
#[inline(always)]
pub(super) fn table_flips<const K: usize>(
    block: &Block<'_>,
    base: usize,
    pivots: [u16; LANES],
    zero_weights: bool,
    count: usize,
) -> usize {
    assert!(K == 4 || K == 8);
    let mut flips = count / usize::from(SIGNED_ENTRY_FLIP_BYTES);
    if zero_weights {
        let (joints8, weights8) = block.influences8::<K>(base);
        for l in (0..LANES).filter(|&l| pivots[l] & PIVOT_HAS_ZERO_WEIGHT != 0) {
            let vertex_joints = &joints8[K * l..K * (l + 1)];
            let row = pivot_row_start(pivots[l]);
            for (&joint, &weight) in vertex_joints.iter().zip(&weights8[K * l..K * (l + 1)]) {
                if weight == 0.0 {
                    let offset = block.signed_offsets[row + usize::from(joint)];
                    flips -= usize::from(is_flip(offset));
                }
            }
        }
    }
    flips
}

/// `blend + Σₛ weights[s] · (the line at entries + offsets[joints[s]])` over four influences:
/// each influence's dual quaternion, or its negation where the pivot sign table's row
/// `offsets` says so, as one `asm!` block: per influence a joint load, its offset's load, a
/// weight broadcast, an add and a multiply-add reading the line through a register alone (an
/// indexed memory operand would cost a second rename slot, see `linear::position_pair4`). Where
/// `C`, adds each offset's flip bit ([`SIGNED_ENTRY_FLIP_BYTES`]) to `count` (so `count` grows
/// by that many per flip).
///
/// # Safety
/// The CPU has AVX2 and FMA; `weights` and `joints` are valid for reading four elements, every
/// joint `j` among them indexes `offsets` (`offsets[j]` readable), and every offset read is
/// that of a 32-byte readable line of `entries`.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn blend4_signed<const C: bool>(
    blend: __m256,
    weights: *const f32,
    joints: *const u16,
    offsets: *const u16,
    entries: *const f32,
    count: &mut usize,
) -> __m256 {
    let mut blend = blend;
    // One influence: its joint at byte `$joint` of `joints`, its weight at byte `$weight` of
    // `weights`; `$count` counts its flip or is empty.
    macro_rules! influence {
        ($joint:literal, $weight:literal, $count:literal) => {
            concat!(
                "movzx {j:e}, word ptr [{joints} + ",
                $joint,
                "]\n",
                "movzx {j:e}, word ptr [{offsets} + 2*{j}]\n",
                "vbroadcastss {w}, dword ptr [{weights} + ",
                $weight,
                "]\n",
                $count,
                "add {j}, {entries}\n",
                "vfmadd231ps {blend}, {w}, ymmword ptr [{j}]\n",
            )
        };
    }
    // The same four influences, with or without the count.
    macro_rules! four {
        ($count:literal) => {
            std::arch::asm!(
                influence!("0", "0", $count),
                influence!("2", "4", $count),
                influence!("4", "8", $count),
                influence!("6", "12", $count),
                weights = in(reg) weights,
                joints = in(reg) joints,
                offsets = in(reg) offsets,
                entries = in(reg) entries,
                j = out(reg) _,
                flip = out(reg) _,
                w = out(ymm_reg) _,
                blend = inout(ymm_reg) blend,
                count = inout(reg) *count,
                options(pure, readonly, nostack),
            )
        };
    }
    // SAFETY: the caller guarantees the reads; the block reads memory and writes registers only.
    unsafe {
        if C {
            four!("mov {flip:e}, {j:e}\nand {flip:e}, 64\nadd {count}, {flip}\n");
        } else {
            four!("/* {count} {flip}: not counted */\n");
        }
    }
    blend
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
    // SAFETY (whole body): the caller guarantees AVX2 and FMA; a `DualQuat` is 8 contiguous
    // f32s (layout asserts in `lanes`) and the joints are inside the palette (the caller), so
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
    /// handedness. Shared by DQS and CoR.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA. (Not a `#[target_feature]` function so that it can be
    /// `#[inline(always)]`: called out of line, the rotation and the translation went through
    /// the stack, eight stores and eight reloads on the block's chain; inlined, DQS with normals
    /// 1.08× at 10k and 100k, eight influences 1.08×, CoR 1.02× by fastest calls,
    /// docs/bench.md "Latency".)
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
            let p = load3x8(block.positions, base);
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
                let n = load3x8(src, base);
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

/// DQS of vertices `base .. base + 8`. Returns `false`, having written nothing, when a vertex
/// of the block is unweighted, touches a residual, or blends to a zero rotation.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn block<const K: usize, const N: bool, const T: bool, const R: bool>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
) -> bool {
    // SAFETY: this function runs only where AVX2 and FMA are enabled.
    let Some((sum, flips)) = (unsafe { blend8::<K, R, true>(block, base) }) else {
        return false;
    };
    let [rx, ry, rz, rw, dx, dy, dz, dw] = sum;
    let Some(rotation) = Rotation8::from_real(block, [rx, ry, rz, rw]) else {
        return false;
    };
    diagnostics.sign_flips += flips;
    // The translation of the normalized blend: 2 (w vε − wε v + v×vε) / |(v, w)|², bilinear in
    // the real and the dual part.
    let (v, w, ve) = (rotation.v, rotation.w, [dx, dy, dz]);
    let c = cross8(v, ve);
    let mut translation = [_mm256_setzero_ps(); 3];
    for a in 0..3 {
        translation[a] = _mm256_mul_ps(
            rotation.two_over_norm,
            _mm256_add_ps(_mm256_fmsub_ps(w, ve[a], _mm256_mul_ps(dw, v[a])), c[a]),
        );
    }
    // SAFETY: this function runs only where AVX2 and FMA are enabled.
    unsafe { rotation.apply::<N, T>(block, outputs, base, translation, None) };
    true
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::real_blends_usable;
    use crate::palette::real_length_range;
    use crate::DualQuat;

    /// The per-call proof that no blended rotation part can fail `Rotation8::from_real`'s test
    /// holds for normalized weights and unit rotations, and is refused wherever a sum or a
    /// rotation part could make a blend too short or too long, or rounding could cancel it.
    #[test]
    fn real_blends_are_usable_only_where_provably() {
        let unit: Vec<DualQuat> = (0..8)
            .map(|j| {
                let q = Quat::from_axis_angle(Vec3::Y, 0.7 * j as f32);
                DualQuat::from_rotation_translation(q, Vec3::new(1.0, 2.0, 3.0))
            })
            .collect();
        assert!(real_blends_usable(4, (1.0, 1.0), real_length_range(&unit)));
        assert!(real_blends_usable(8, (0.5, 2.0), real_length_range(&unit)));
        // Sums of zero (an unweighted vertex), tiny, huge, NaN, or no vertex at all.
        for sums in [
            (0.0, 1.0),
            (1e-16, 1.0),
            (1.0, 1e16),
            (f32::NAN, 1.0),
            (f32::INFINITY, 0.0),
        ] {
            assert!(
                !real_blends_usable(4, sums, real_length_range(&unit)),
                "{sums:?}"
            );
        }
        // Sums so far apart that the f32 blend's rounding could cancel the shortest blend.
        assert!(!real_blends_usable(
            4,
            (1e-4, 1e4),
            real_length_range(&unit)
        ));
        // No palette, no influences, a rotation part of NaN or zero length.
        assert!(!real_blends_usable(4, (1.0, 1.0), real_length_range(&[])));
        assert!(!real_blends_usable(0, (1.0, 1.0), real_length_range(&unit)));
        let mut broken = unit.clone();
        broken[3].real = Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0);
        assert!(!real_blends_usable(
            4,
            (1.0, 1.0),
            real_length_range(&broken)
        ));
        broken[3].real = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        assert!(!real_blends_usable(
            4,
            (1.0, 1.0),
            real_length_range(&broken)
        ));
    }
}
