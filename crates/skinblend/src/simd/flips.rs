//! The call's sign-flip tally: where the DQS and CoR kernels read the pivot sign table, the
//! flips of the mesh's whole blocks counted once per call from the mesh's pivot pair counts,
//! instead of once per influence.
//!
//! How the tally and the pieces of a call add up to the exact count: each piece counts exactly
//! the flips of the vertices it counts itself (the scalar kernel's, and the blocks blended
//! without the table), and exactly the tally's flips of the blocks it gave the scalar kernel
//! (`RangeCounts::tallied_flips_recounted`, which `Block::tallied_flips` reads from the table);
//! the call sums the pieces and then takes those recounted flips out of the tally once
//! (`RangeCounts::into_diagnostics`). Every count is a sum of non-negative terms; the one
//! subtraction takes a part of the tally out of the tally.

use super::block::CallTables;
use super::cpu::Avx2Fma;
use super::layout::PIVOT_SIGN_TABLE_MAX_JOINTS;
use crate::input::SkinInput;
use crate::palette::PreparedPalette;
use crate::types::Method;

/// The pair counts (built here) from which a call's SIMD kernel can count its sign flips once
/// per call (`Influences::pivot_pair_counts`), or `None` where it counts them per influence
/// (`select` decides, from this and whether the mesh was skinned before: `CallTables`): the
/// DQS and CoR kernels that read the palette's pivot sign table (four or eight influences per
/// vertex, at most `PIVOT_SIGN_TABLE_MAX_JOINTS` joints; CoR with centers) do so when the mesh
/// has the counts. Against a vector add per influence, SIMD DQS with normals 1.05× at 100k
/// vertices (`ab.py 15 "dq pn 4 100000 500"` against a build that counts per influence; the
/// measuring recipe is in `simd/mod.rs`).
///
/// `method` is the kernel's (`select`'s). Blended's own kernel tallies the vertices whose
/// value is above 0 (`CheckedBlend::dq_pivot_pair_counts`, kept by the `SkinMesh` that holds
/// the values): the blocks all at 0 run LBS alone, which counts no flips; every other block's
/// DQ blend counts none either; the recount of the blocks given to the scalar kernel leaves the
/// 0s out too (`block::tallied_flips`). Against counting per block, on the CesiumMan sample's
/// painted map (`bench_blended.py`, its 0s in more than half of the blocks) blended ran
/// 1.6x as fast, most of it the per-block count's correction for zero weights, which a real
/// file's influences have and the benchmark's random ones do not. Against counting per
/// influence, blended with normals 1.05× at 100k vertices, every value 0.5
/// (`ab.py 7 "blended pn 4 100000 300"`).
pub(super) fn flip_tally<'a>(
    input: &SkinInput<'a>,
    palette: &PreparedPalette,
    method: Method,
) -> Option<&'a [u32]> {
    let table_blend = match method {
        Method::Linear => false,
        Method::DualQuaternion => !palette.signed_entries.is_empty(),
        Method::Blended => !palette.signed_entries.is_empty(),
        Method::CenterOfRotation => {
            !palette.signed_entries.is_empty() && input.rotation_centers().is_some()
        }
    };
    // Derived on first use: only a call that can read them counts them.
    let counts = match (table_blend, method) {
        (false, _) => &[],
        (true, Method::Blended) => input.checked_blend().map_or(&[][..], |blend| {
            blend.dq_pivot_pair_counts(input.influences())
        }),
        (true, _) => input.influences().pivot_pair_counts(),
    };
    (!counts.is_empty()).then_some(counts)
}

/// The sign flips of the vertices `Influences::pivot_pair_counts` counts, under this palette's
/// pivot sign table: the count of each `(pivot joint, joint)` pair whose entry is a flip,
/// summed (0 where the call does not tally: `CallTables::flip_tally`). Reads `joint_count²`
/// entries once per call.
pub(super) fn tallied_sign_flips(
    avx2_fma: Avx2Fma,
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    tables: CallTables,
) -> usize {
    if !tables.flip_tally {
        return 0;
    }
    // The call tallies: `select` saw the counts built (`flip_tally`). Blended's whose values
    // are all 1 (DQS's kernel) are the influences' own, as DQS's.
    let Some(counts) = flip_tally(input, palette, palette.method()) else {
        return 0;
    };
    let joints = input.influences().joint_count();
    // SAFETY: the token proves AVX2 (`Avx2Fma::detect`).
    let flips = unsafe { flipped_count_avx2(avx2_fma, counts, palette, joints) };
    flips as usize
}

/// [`flipped_count`], compiled for AVX2: eight entries per instruction, not SSE2's four.
#[target_feature(enable = "avx2")]
fn flipped_count_avx2(_: Avx2Fma, counts: &[u32], palette: &PreparedPalette, joints: usize) -> u32 {
    flipped_count(counts, palette, joints)
}

/// The sum of the `counts` (rows of `joints`) whose entry in `palette`'s pivot sign table (rows
/// of `PIVOT_SIGN_TABLE_MAX_JOINTS`, at least the mesh's joints) is a flip, as a mask and an add
/// per entry, eight entries to a register. The counts add up to at most the mesh's slot count,
/// which `Influences::pivot_pair_counts` checked fits a u32, so no sum wraps: the wrapping
/// operations are the plain u32 ones the compiler vectorizes (an overflow check would stop it
/// in a debug build).
#[inline(always)]
fn flipped_count(counts: &[u32], palette: &PreparedPalette, joints: usize) -> u32 {
    let (offsets, table_row) = (&palette.signed_offsets, PIVOT_SIGN_TABLE_MAX_JOINTS);
    let flip_bytes = palette.signed_layout().flip_bytes;
    let row = |counts: &[u32], offsets: &[u16]| {
        counts
            .iter()
            .zip(offsets)
            .fold(0u32, |flips, (&count, &offset)| {
                // All ones where the entry flips.
                let flip = 0u32.wrapping_sub(u32::from(offset & flip_bytes != 0));
                flips.wrapping_add(count & flip)
            })
    };
    if table_row == joints {
        // One loop over the whole table (no sum across the lanes per row).
        return row(counts, offsets);
    }
    counts
        .chunks_exact(joints)
        .zip(offsets.chunks_exact(table_row))
        .fold(0u32, |flips, (counts, offsets)| {
            flips.wrapping_add(row(counts, offsets))
        })
}
