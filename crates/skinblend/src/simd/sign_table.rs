//! The pivot sign table's rows (`PreparedPalette::signed_offsets`), eight entries at a time:
//! what every DQS and CoR palette update builds.

use std::arch::x86_64::*;

use super::cpu::Avx2Fma;
use super::layout::{SignedLayout, PIVOT_SIGN_TABLE_MAX_JOINTS};

/// Writes entries `0..joints` of the first `joints` rows of `rows` (rows of
/// [`PIVOT_SIGN_TABLE_MAX_JOINTS`] entries) as `palette::pivot_sign_rows_scalar` defines them,
/// from the rotation parts' components `real` (`x`, `y`, `z`, `w` of each joint; entries past
/// `joints` unread) and the entries' `layout`: per pivot and sixteen joints, the dots `(x·x' + z·z') + (y·y' + w·w')` as
/// multiplies and adds in that order (no FMA, so every sign is the scalar kernel's), a compare
/// and the flip bit added to the joints' line offsets, one 32-byte store. Entries past
/// `joints` are written 0 up to the next multiple of sixteen and left as they are after it.
/// Against the compiler's loop, eight entries at a time took 1.1–1.3 µs off
/// `PreparedPalette::update` at 64 DQS joints and 2.3–2.6 µs at 128; sixteen at a time,
/// against eight: 2.9–3.0 against 3.1 µs at 64 joints, 7.3–7.6 against 7.9–8.1 at 128, 0.94–0.96
/// against 0.92–0.93 at 24 (`examples/palette_update.rs`, builds alternated seven times, slow
/// spells of the host left out, one AMD EPYC VM thread).
///
/// # Panics
/// Where `joints` exceeds [`PIVOT_SIGN_TABLE_MAX_JOINTS`] or `rows` is shorter than `joints`
/// rows (the caller sizes it).
#[target_feature(enable = "avx2")]
pub(crate) fn pivot_sign_rows(
    _: Avx2Fma,
    real: &[[f32; PIVOT_SIGN_TABLE_MAX_JOINTS]; 4],
    joints: usize,
    layout: SignedLayout,
    rows: &mut [u16],
) {
    const LANES: usize = 8;
    const STEP: usize = 2 * LANES;
    // A step of sixteen never passes the row: the table's joint limit is a multiple of it.
    const _: () = assert!(PIVOT_SIGN_TABLE_MAX_JOINTS.is_multiple_of(STEP));
    assert!(
        joints <= PIVOT_SIGN_TABLE_MAX_JOINTS && rows.len() >= joints * PIVOT_SIGN_TABLE_MAX_JOINTS
    );
    let zero = _mm256_setzero_ps();
    // The bit patterns as i16s (the intrinsics' type): every bit kept.
    let flip = _mm256_set1_epi16(layout.flip_bytes as i16);
    let lane_index = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    // Below 65,536 (asserted with the layouts): every line offset fits an i16 as a u16.
    let stride = _mm256_set1_epi16(layout.stride_bytes as i16);
    let joint_count = _mm256_set1_epi16(joints as i16);
    for first in (0..joints).step_by(STEP) {
        // `first + STEP <= PIVOT_SIGN_TABLE_MAX_JOINTS`: `first` is a multiple of sixteen below
        // `joints`.
        let load = |c: usize, at: usize| {
            let lanes: &[f32; LANES] = real[c][at..at + LANES].try_into().expect("eight lanes");
            // SAFETY: `lanes` is eight f32s; an unaligned load reads exactly them.
            unsafe { _mm256_loadu_ps(lanes.as_ptr()) }
        };
        let low = [0, 1, 2, 3].map(|c| load(c, first));
        let high = [0, 1, 2, 3].map(|c| load(c, first + LANES));
        let joint = _mm256_add_epi16(_mm256_set1_epi16(first as i16), lane_index);
        let lines = _mm256_mullo_epi16(joint, stride);
        // All ones for this step's joints below the count; the others' entries are written 0.
        let present = _mm256_cmpgt_epi16(joint_count, joint);
        let lines = _mm256_and_si256(lines, present);
        let flip = _mm256_and_si256(flip, present);
        for pivot in 0..joints {
            let [px, py, pz, pw] = [0, 1, 2, 3].map(|c| _mm256_set1_ps(real[c][pivot]));
            // All ones where the dot is below 0 (false for NaN, as `<` is).
            let negative = |[x, y, z, w]: [__m256; 4]| {
                let dot = _mm256_add_ps(
                    _mm256_add_ps(_mm256_mul_ps(x, px), _mm256_mul_ps(z, pz)),
                    _mm256_add_ps(_mm256_mul_ps(y, py), _mm256_mul_ps(w, pw)),
                );
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LT_OQ>(dot, zero))
            };
            // The packs interleave the two halves' quarters; the permute puts joints in order.
            let negative = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi32(
                negative(low),
                negative(high),
            ));
            let entries = _mm256_or_si256(lines, _mm256_and_si256(negative, flip));
            let out = &mut rows[pivot * PIVOT_SIGN_TABLE_MAX_JOINTS + first..][..STEP];
            // SAFETY: `out` is sixteen u16s; an unaligned store writes exactly them.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), entries) };
        }
    }
}
