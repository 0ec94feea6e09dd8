//! What the kernels derive from a mesh's influences, each the same way on every path and built
//! once with the influences: the DQS pivot of a vertex and the unweighted threshold, and the
//! tables the SIMD kernels read (pivot words, pivot pair counts, LBS byte offsets, the range of
//! the weight sums).

use crate::simd::layout::{
    BLOCK_VERTICES, LINEAR_ENTRY_BYTES, LINEAR_OFFSET_MAX_JOINTS, PIVOT_HAS_ZERO_WEIGHT,
    PIVOT_LIGHT, PIVOT_SIGN_TABLE_MAX_JOINTS,
};

/// Weights that sum to less than this (the smallest normal f32) leave a vertex unweighted:
/// `1 / sum` would overflow to infinity for a subnormal sum (and a GPU flushes such a sum to
/// zero anyway), so the vertex passes through unchanged and is counted, on every backend.
pub(crate) const MIN_WEIGHT_SUM: f32 = f32::MIN_POSITIVE;

/// The DQS pivot of a vertex: the slot of its heaviest influence, the lowest slot on ties (`>`),
/// so the sign choice does not depend on the order the influences arrived in. Branch-free: with
/// real weights which slot is heaviest is a coin toss per vertex, which a branch per slot would
/// mispredict (SIMD DQS with three influences, where this runs per vertex: 1.6× at 10k without
/// the branches, `ab.py 15 "dq pn 3 10000 5000"`, the recipe in `simd/mod.rs`).
#[inline(always)]
pub(crate) fn pivot_slot(weights: &[f32]) -> usize {
    let mut pivot = 0;
    let mut heaviest = weights.first().copied().unwrap_or(0.0);
    for (slot, &weight) in weights.iter().enumerate().skip(1) {
        // All ones where this slot is heavier: a mask, not a branch (`select_unpredictable`
        // needs Rust 1.88, above this crate's MSRV).
        let heavier = usize::from(weight > heaviest).wrapping_neg();
        pivot = (slot & heavier) | (pivot & !heavier);
        // Weights are finite (checked by `Influences`): `max` is the heavier one.
        heaviest = heaviest.max(weight);
    }
    pivot
}

/// `Influences::linear_offsets` of `joints`: `joint · LINEAR_ENTRY_BYTES` per slot where
/// `joint_count` is at most `LINEAR_OFFSET_MAX_JOINTS` (every joint below it, as checked),
/// else empty. LBS positions only at 100k vertices: 1.06× with them (`ab.py 15 "linear p 4
/// 100000 500"` against shifting each joint; the recipe is in `simd/mod.rs`).
pub(crate) fn linear_offsets(joints: &[u16], joint_count: usize) -> Vec<u16> {
    if joint_count > LINEAR_OFFSET_MAX_JOINTS {
        return Vec::new();
    }
    // joint < joint_count ≤ 1024, so joint · 64 ≤ 65,472.
    joints
        .iter()
        .map(|&joint| joint * LINEAR_ENTRY_BYTES as u16)
        .collect()
}

/// The SIMD kernels' blocks: `Influences::pivot_pair_counts` counts the vertices of the whole
/// blocks of this many from vertex 0 (a mesh's last `len % 8` vertices are not in one).
const PAIR_COUNT_BLOCK_VERTICES: usize = BLOCK_VERTICES;

/// `Influences::pivot_pair_counts` is built where the counted influences are at least this
/// many times its `joint_count²` entries: then reading the table once per call (about one
/// instruction per entry) costs a few per cent of the per-influence count it replaces (three
/// instructions per influence), and the counts take at most a twelfth of the memory of the
/// joints and weights (4 bytes per entry against 6 per influence).
const PAIR_COUNT_MIN_INFLUENCES_PER_ENTRY: usize = 8;

/// The counts of `Influences::pivot_pair_counts`: entry `pivot_joint * joint_count + joint`
/// counts the influences with a positive weight (the ones the DQ blend adds; zero weights are
/// skipped) whose vertex has `pivot_joint` in its pivot slot, over the vertices of the whole
/// eight-vertex blocks. Empty unless `k` is 4 or 8 (the SIMD kernels that read the palette's
/// pivot sign table), the joint count is at most the table's
/// (`PIVOT_SIGN_TABLE_MAX_JOINTS`), and the mesh has at least
/// [`PAIR_COUNT_MIN_INFLUENCES_PER_ENTRY`] influences per entry (fewer pay more for the per-call
/// read than they save); every count fits a `u32` (a mesh has fewer than 2³² slots there).
/// With `blend_values` (blended's, one per vertex), the vertices whose value is 0 are left
/// out: their blocks run LBS alone, which counts no flips.
pub(crate) fn pivot_pair_counts(
    k: usize,
    joint_count: usize,
    joints: &[u16],
    weights: &[f32],
    blend_values: Option<&[f32]>,
) -> Vec<u32> {
    let counted_slots =
        joints.len() / (k * PAIR_COUNT_BLOCK_VERTICES) * k * PAIR_COUNT_BLOCK_VERTICES;
    let entries = joint_count * joint_count;
    if !(k == 4 || k == 8)
        || joint_count > PIVOT_SIGN_TABLE_MAX_JOINTS
        || counted_slots < PAIR_COUNT_MIN_INFLUENCES_PER_ENTRY * entries
        || u32::try_from(counted_slots).is_err()
    {
        return Vec::new();
    }
    let mut counts = vec![0u32; entries];
    for (vertex, (vertex_joints, vertex_weights)) in joints[..counted_slots]
        .chunks_exact(k)
        .zip(weights.chunks_exact(k))
        .enumerate()
    {
        if blend_values.is_some_and(|values| values[vertex] == 0.0) {
            continue;
        }
        let row = usize::from(vertex_joints[pivot_slot(vertex_weights)]) * joint_count;
        for (&joint, &weight) in vertex_joints.iter().zip(vertex_weights) {
            if weight > 0.0 {
                counts[row + usize::from(joint)] += 1;
            }
        }
    }
    counts
}

/// The words of `Influences::pivots` for `joints` and `weights` (`k` per vertex, joints below
/// `joint_count`): empty unless `k` is 2 to 8 (the SIMD kernels that read them); per vertex
/// `pivot_slot | PIVOT_HAS_ZERO_WEIGHT | PIVOT_LIGHT` as they apply, and the pivot joint's row
/// offset in `PIVOT_ROW_BITS` where `joint_count` allows a pivot sign table.
pub(crate) fn vertex_pivots(
    k: usize,
    joints: &[u16],
    weights: &[f32],
    joint_count: usize,
) -> Vec<u16> {
    if !(2..=8).contains(&k) {
        return Vec::new();
    }
    let has_rows = joint_count <= PIVOT_SIGN_TABLE_MAX_JOINTS;
    let mut words = Vec::new();
    #[cfg(target_arch = "x86_64")]
    if let (4, Some(avx2_fma)) = (k, crate::simd::cpu::Avx2Fma::detect()) {
        // SAFETY: the token proves AVX2 and FMA, the features it is compiled for.
        words = unsafe {
            crate::simd::pivots::pivot_words4(avx2_fma, joints, weights, has_rows, MIN_WEIGHT_SUM)
        };
    }
    let done = words.len() * k;
    words.extend(
        joints[done..]
            .chunks_exact(k)
            .zip(weights[done..].chunks_exact(k))
            .map(|(vertex_joints, vertex)| pivot_word(vertex_joints, vertex, has_rows)),
    );
    words
}

/// One vertex's word of [`vertex_pivots`]: the definition (`simd::pivots` computes the same
/// eight vertices at a time for four influences).
#[inline]
fn pivot_word(vertex_joints: &[u16], vertex: &[f32], has_rows: bool) -> u16 {
    let slot = pivot_slot(vertex);
    // Below 8 (k is at most 8).
    let mut word = slot as u16;
    if vertex.contains(&0.0) {
        word |= PIVOT_HAS_ZERO_WEIGHT;
    }
    if vertex[slot] < MIN_WEIGHT_SUM {
        word |= PIVOT_LIGHT;
    }
    if has_rows {
        // Below 128 << 8 (the joint is below the joint count).
        word |= vertex_joints[slot] << 8;
    }
    word
}

/// `Influences::weight_sum_range` of `weights` (`k` per vertex; every weight finite and
/// non-negative, as `Influences` checks, so no sum is NaN).
pub(crate) fn weight_sum_range(k: usize, weights: &[f32]) -> (f32, f32) {
    match k {
        4 => weight_sum_range_of::<4>(weights),
        8 => weight_sum_range_of::<8>(weights),
        _ => weight_sum_range_scalar(k, weights),
    }
}

/// One vertex at a time: the definition, and the path for `k` other than 4 and 8.
fn weight_sum_range_scalar(k: usize, weights: &[f32]) -> (f32, f32) {
    weights
        .chunks_exact(k)
        .map(|vertex| vertex.iter().fold(0.0f32, |sum, &w| sum + w))
        .fold((f32::INFINITY, 0.0f32), |(low, high), sum| {
            (low.min(sum), high.max(sum))
        })
}

/// [`weight_sum_range_scalar`] for `K` slots, eight vertices side by side (each summed in slot
/// order from 0, as there), which the compiler vectorizes: a quarter of the time at 100k
/// vertices, four influences (0.06 against 0.26 ms, one 2-core Xeon VM thread). The smallest
/// and largest of the same sums is the same pair.
fn weight_sum_range_of<const K: usize>(weights: &[f32]) -> (f32, f32) {
    const SIDE_BY_SIDE: usize = 8;
    let blocks = weights.chunks_exact(K * SIDE_BY_SIDE);
    let rest = weight_sum_range_scalar(K, blocks.remainder());
    let mut low = [f32::INFINITY; SIDE_BY_SIDE];
    let mut high = [0.0f32; SIDE_BY_SIDE];
    for block in blocks {
        let mut sums = [0.0f32; SIDE_BY_SIDE];
        for slot in 0..K {
            for (lane, sum) in sums.iter_mut().enumerate() {
                *sum += block[lane * K + slot];
            }
        }
        for lane in 0..SIDE_BY_SIDE {
            // Compares, not `f32::min`: no NaN to order, and they vectorize.
            if sums[lane] < low[lane] {
                low[lane] = sums[lane];
            }
            if sums[lane] > high[lane] {
                high[lane] = sums[lane];
            }
        }
    }
    let low = low.iter().fold(rest.0, |l, &sum| l.min(sum));
    let high = high.iter().fold(rest.1, |h, &sum| h.max(sum));
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Weights from a fixed pseudo-random sequence, some zero, some large, so that sums of
    /// different vertices differ in their last bits.
    fn weights(count: usize, seed: u32) -> Vec<f32> {
        let mut state = seed;
        (0..count)
            .map(|_| {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                match state >> 29 {
                    0 => 0.0,
                    1 => (state >> 8) as f32,
                    _ => (state >> 8) as f32 / (1u32 << 24) as f32,
                }
            })
            .collect()
    }

    #[test]
    fn side_by_side_sums_give_the_scalar_range_to_the_bit() {
        // Vertex counts below, at and around whole blocks of eight, for the vectorized `k`s
        // and one that takes the scalar path.
        for k in [3, 4, 8] {
            for vertices in [0, 1, 7, 8, 9, 16, 61, 1000] {
                let w = weights(vertices * k, (k * 1000 + vertices) as u32);
                let (low, high) = weight_sum_range(k, &w);
                let (scalar_low, scalar_high) = weight_sum_range_scalar(k, &w);
                assert_eq!(
                    (low.to_bits(), high.to_bits()),
                    (scalar_low.to_bits(), scalar_high.to_bits()),
                    "k = {k}, {vertices} vertices"
                );
            }
        }
        assert_eq!(weight_sum_range(4, &[]), (f32::INFINITY, 0.0));
    }

    #[test]
    fn side_by_side_pivot_words_equal_the_definition() {
        // Ties (equal weights pick the first), zeros, light (subnormal) pivots and both row
        // settings; eight influences take the one-vertex path.
        for k in [4, 8] {
            for vertices in [0, 1, 7, 8, 9, 61, 1000] {
                let mut w = weights(vertices * k, (k * 7 + vertices) as u32);
                for (i, weight) in w.iter_mut().enumerate().filter(|(i, _)| i % 13 == 0) {
                    *weight = if i % 2 == 0 { 0.25 } else { 1e-39 };
                }
                let joints: Vec<u16> = (0..w.len()).map(|i| (i * 37 % 100) as u16).collect();
                for joint_count in [100, PIVOT_SIGN_TABLE_MAX_JOINTS + 1] {
                    let has_rows = joint_count <= PIVOT_SIGN_TABLE_MAX_JOINTS;
                    let expected: Vec<u16> = joints
                        .chunks_exact(k)
                        .zip(w.chunks_exact(k))
                        .map(|(j, v)| pivot_word(j, v, has_rows))
                        .collect();
                    assert_eq!(
                        vertex_pivots(k, &joints, &w, joint_count),
                        expected,
                        "k = {k}, {vertices} vertices, {joint_count} joints"
                    );
                }
            }
        }
    }
}
