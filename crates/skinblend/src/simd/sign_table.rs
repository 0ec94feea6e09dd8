//! The pivot sign table's rows (`PreparedPalette::signed_offsets`), eight entries at a time:
//! what every DQS and CoR palette update builds.

use std::arch::x86_64::*;

use super::cpu::Avx2Fma;
use super::layout::{
    PIVOT_SIGN_TABLE_MAX_JOINTS, SIGNED_ENTRY_FLIP_BYTES, SIGNED_ENTRY_STRIDE_BYTES,
};

/// Writes entries `0..joints` of the first `joints` rows of `rows` (rows of
/// [`PIVOT_SIGN_TABLE_MAX_JOINTS`] entries) as `palette::pivot_sign_rows_scalar` defines them,
/// from the rotation parts' components `real` (`x`, `y`, `z`, `w` of each joint; entries past
/// `joints` unread): per pivot and eight joints, the dots `(x·x' + z·z') + (y·y' + w·w')` as
/// multiplies and adds in that order (no FMA, so every sign is the scalar kernel's), a compare
/// and the flip bit added to the joints' line offsets. Entries past `joints` are written 0 up to
/// the next multiple of eight and left as they are after it. Against the compiler's loop, it
/// takes 1.1–1.3 µs off `PreparedPalette::update` at 64 DQS joints (7.7–7.8 to 6.4–6.7 µs)
/// and 2.3–2.6 µs at 128, builds alternated six times (`examples/palette_update.rs`), one AMD
/// EPYC VM thread.
///
/// # Panics
/// Where `joints` exceeds [`PIVOT_SIGN_TABLE_MAX_JOINTS`] or `rows` is shorter than `joints`
/// rows (the caller sizes it).
#[target_feature(enable = "avx2")]
pub(crate) fn pivot_sign_rows(
    _: Avx2Fma,
    real: &[[f32; PIVOT_SIGN_TABLE_MAX_JOINTS]; 4],
    joints: usize,
    rows: &mut [u16],
) {
    const LANES: usize = 8;
    assert!(
        joints <= PIVOT_SIGN_TABLE_MAX_JOINTS && rows.len() >= joints * PIVOT_SIGN_TABLE_MAX_JOINTS
    );
    let zero = _mm256_setzero_ps();
    let flip = _mm_set1_epi16(SIGNED_ENTRY_FLIP_BYTES as i16);
    let lane_index = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
    // Below 128 · 128 (asserted with the constants): every line offset fits an i16 as a u16.
    let stride = _mm_set1_epi16(SIGNED_ENTRY_STRIDE_BYTES as i16);
    let joint_count = _mm_set1_epi16(joints as i16);
    for first in (0..joints).step_by(LANES) {
        // `first + LANES <= PIVOT_SIGN_TABLE_MAX_JOINTS`: `first` is a multiple of eight below
        // `joints`, and the table's joint limit is a multiple of eight.
        let load = |c: usize| {
            let lanes: &[f32; LANES] = real[c][first..first + LANES]
                .try_into()
                .expect("eight lanes");
            // SAFETY: `lanes` is eight f32s; an unaligned load reads exactly them.
            unsafe { _mm256_loadu_ps(lanes.as_ptr()) }
        };
        let [x, y, z, w] = [load(0), load(1), load(2), load(3)];
        let joint = _mm_add_epi16(_mm_set1_epi16(first as i16), lane_index);
        let lines = _mm_mullo_epi16(joint, stride);
        // All ones for this chunk's joints below the count; the others' entries are written 0.
        let present = _mm_cmpgt_epi16(joint_count, joint);
        let lines = _mm_and_si128(lines, present);
        let flip = _mm_and_si128(flip, present);
        for pivot in 0..joints {
            let [px, py, pz, pw] = [0, 1, 2, 3].map(|c| _mm256_set1_ps(real[c][pivot]));
            let dot = _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(x, px), _mm256_mul_ps(z, pz)),
                _mm256_add_ps(_mm256_mul_ps(y, py), _mm256_mul_ps(w, pw)),
            );
            // All ones where the dot is below 0 (false for NaN, as `<` is).
            let negative = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LT_OQ>(dot, zero));
            let negative = _mm_packs_epi32(
                _mm256_castsi256_si128(negative),
                _mm256_extracti128_si256::<1>(negative),
            );
            let entries = _mm_or_si128(lines, _mm_and_si128(negative, flip));
            let out = &mut rows[pivot * PIVOT_SIGN_TABLE_MAX_JOINTS + first..][..LANES];
            // SAFETY: `out` is eight u16s; an unaligned store writes exactly them.
            unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), entries) };
        }
    }
}
