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
pub(crate) fn pivot_pair_counts(
    k: usize,
    joint_count: usize,
    joints: &[u16],
    weights: &[f32],
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
    for (vertex_joints, vertex_weights) in joints[..counted_slots]
        .chunks_exact(k)
        .zip(weights.chunks_exact(k))
    {
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
    joints
        .chunks_exact(k)
        .zip(weights.chunks_exact(k))
        .map(|(vertex_joints, vertex)| {
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
        })
        .collect()
}

/// `Influences::weight_sum_range` of `weights` (`k` per vertex).
pub(crate) fn weight_sum_range(k: usize, weights: &[f32]) -> (f32, f32) {
    weights
        .chunks_exact(k)
        .map(|vertex| vertex.iter().fold(0.0f32, |sum, &w| sum + w))
        .fold((f32::INFINITY, 0.0f32), |(low, high), sum| {
            (low.min(sum), high.max(sum))
        })
}
