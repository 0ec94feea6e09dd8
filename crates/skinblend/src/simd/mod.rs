//! SIMD kernels: x86-64 AVX2 + FMA, detected at run time, chosen once per call from a table of
//! monomorphized variants (method × normals × tangents × influences per vertex 1, 2, 4, 8 or
//! any × whether the palette is entirely rigid, or for LBS whether every weight sum of the mesh
//! is 1). The scalar kernels in `reference.rs`
//! stay the reference and the fallback.
//!
//! One driver loop ([`avx2`]'s `drive`) walks a range in blocks of eight vertices. LBS blends
//! its vertices' 3x4s one vertex at a time in 256-bit registers (the columns two at a time) and
//! transposes the eight blends so that each register holds one component of all eight
//! vertices; the sign-aligned dual quaternion blend of DQS and CoR works on all eight vertices
//! at once, slot by slot, from rows of 16-byte halves transposed inside the halves (two to
//! eight influences), except that DQS with four or eight influences and a palette of at most
//! 128 joints blends each vertex in one register, each influence's dual quaternion read as is or
//! negated where the palette's pivot sign table points, and transposes the eight blends; CoR
//! with four or eight influences and the table blends each vertex's 3x4 and quaternion
//! together, sixteen floats from one cache line per influence (the quaternion negated in the
//! line the table points to), as LBS blends its 3x4s; one influence or more than eight blend
//! one vertex at a time. The rest is eight-wide. Where a mesh is large enough, those table
//! blends count no sign flips: the call counts them once ([`flip_tally`]).
//! LBS with normals and without tangents normalizes and stores each block's normals during the
//! next block (`linear::DeferredNormals`; the driver stores the last), and with unit weight
//! sums tests there whether the call's singular bound cleared them, making a block's normals
//! again by the exact test where it did not (`linear::exact_normals`).
//! The 3x4 and four-or-eight-influence DQ blends read each joint where they address its palette
//! entry; the slot-by-slot DQ blend widens a block's offsets eight at a time first (measured
//! both ways each, docs/bench.md "Latency"). A block the SIMD path cannot take whole (an unweighted vertex, a vertex
//! on a non-rigid joint under DQS or CoR, a CoR vertex without a center, a blend that cancels to
//! zero) and the last `len % 8` vertices go to the scalar kernel, so every such case has one
//! definition. The math follows the scalar kernels step for step, with fused multiply-adds, so
//! results differ from the scalar ones by f32 rounding only; the diagnostics' decisions
//! (singular, sign flip, unweighted) are the same.
//!
//! Modules by job: `lanes` (layout contracts, loads, stores, transposes, eight-wide vector
//! helpers, the block context), `linear` (the 3x4 blend and LBS), `dual_quat` (the one sign-aligned
//! DQ blend and the rigid-motion apply, DQS), `cor` (CoR from both blends).

use crate::palette::{PreparedPalette, SIGNED_ENTRY_FLIP_BYTES};
use crate::types::{Diagnostics, Method, SkinInput, SkinOutputs};

#[cfg(target_arch = "x86_64")]
mod cor;
#[cfg(target_arch = "x86_64")]
mod dual_quat;
#[cfg(target_arch = "x86_64")]
mod lanes;
#[cfg(target_arch = "x86_64")]
mod linear;

/// A kernel over vertices `first_vertex ..` into `outputs` (lengths already checked); the
/// `bool` is [`crate::RunOptions::renormalize`].
pub(crate) type Kernel =
    fn(&SkinInput<'_>, &PreparedPalette, bool, usize, SkinOutputs<'_>) -> Diagnostics;

/// Vertices per block of the SIMD kernels: one per lane of a 256-bit register. Ranges split at
/// multiples of this skin every vertex exactly as the whole range does.
pub(crate) const BLOCK_VERTICES: usize = 8;

/// The best SIMD kernel for this call, or `None` when the CPU or the method has none;
/// `renormalize` is [`crate::RunOptions::renormalize`].
pub(crate) fn select(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    outputs: &SkinOutputs<'_>,
    renormalize: bool,
) -> Option<Kernel> {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2::available() {
            let variant = match palette.method() {
                Method::Linear => linear::unit_weight_sums(
                    input.influences().influences_per_vertex(),
                    input.influences().weight_sum_range(),
                    palette.largest_column_length,
                ),
                Method::DualQuaternion | Method::CenterOfRotation => {
                    palette.non_rigid_joints() == 0
                }
            };
            return Some(avx2::table(
                palette.method(),
                outputs.normals.is_some(),
                outputs.tangents.is_some(),
                input.influences().influences_per_vertex(),
                variant,
            ));
        }
    }
    let _ = (input, palette, outputs, renormalize);
    None
}

/// The pair counts from which this call's SIMD kernel counts its sign flips once per call
/// (`Influences::pivot_pair_counts`), or `None` where the kernel counts them per influence: the
/// DQS and CoR kernels that read the palette's pivot sign table (four or eight influences per
/// vertex, at most `PIVOT_SIGN_TABLE_MAX_JOINTS` joints; CoR with centers) do so when the mesh
/// has the counts. Then each piece of a call leaves out the flips of the blocks the table blend
/// takes, and takes back (wrapping) those of the counted vertices it sends to the scalar kernel
/// instead, so that the pieces' counts plus [`tallied_sign_flips`] (wrapping) are exact. Against
/// a vector add per influence, SIMD DQS with normals 1.040× / 1.052×, CoR 1.080× / 1.081× (10k /
/// 100k vertices, fastest calls; docs/bench.md "Latency").
pub(crate) fn flip_tally<'a>(
    input: &SkinInput<'a>,
    palette: &PreparedPalette,
) -> Option<&'a [u32]> {
    let counts = input.influences().pivot_pair_counts();
    let table_blend = match palette.method() {
        Method::Linear => false,
        Method::DualQuaternion => !palette.signed_entries.is_empty(),
        Method::CenterOfRotation => {
            !palette.signed_entries.is_empty() && input.rotation_centers().is_some()
        }
    };
    (table_blend && !counts.is_empty()).then_some(counts)
}

/// The sign flips of the vertices `Influences::pivot_pair_counts` counts, under this palette's
/// pivot sign table: the count of each `(pivot joint, joint)` pair whose entry is a flip,
/// summed (0 where [`flip_tally`] is `None`). Reads `joint_count²` entries once per call.
pub(crate) fn tallied_sign_flips(input: &SkinInput<'_>, palette: &PreparedPalette) -> usize {
    let Some(counts) = flip_tally(input, palette) else {
        return 0;
    };
    let joints = input.influences().joint_count();
    // Rows of the table are `PIVOT_SIGN_TABLE_MAX_JOINTS` long, at least the mesh's joints.
    let table_row = crate::palette::PIVOT_SIGN_TABLE_MAX_JOINTS;
    let offsets = &palette.signed_offsets;
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: AVX2 is available (checked above).
        return unsafe { avx2::flipped_count(counts, offsets, joints, table_row) } as usize;
    }
    flipped_count(counts, offsets, joints, table_row) as usize
}

/// The sum of the `counts` (rows of `joints`) whose entry in `offsets` (the pivot sign table,
/// rows of `table_row`) is a flip. In u32, eight entries to a register: the counts add up to
/// at most the mesh's slot count, which `Influences::pivot_pair_counts` checked fits, so the
/// sum does not wrap.
#[inline(always)]
fn flipped_count(counts: &[u32], offsets: &[u16], joints: usize, table_row: usize) -> u32 {
    let row = |counts: &[u32], offsets: &[u16]| {
        counts
            .iter()
            .zip(offsets)
            .fold(0u32, |flips, (&count, &offset)| {
                // All ones where the entry flips.
                let flip = 0u32.wrapping_sub(u32::from(offset & SIGNED_ENTRY_FLIP_BYTES != 0));
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
    use super::lanes::Block;
    use super::{cor, dual_quat, linear, Kernel, BLOCK_VERTICES};
    use crate::palette::PreparedPalette;
    use crate::reference::skin_range;
    use crate::types::{Diagnostics, Method, SkinInput, SkinOutputs};

    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }

    /// `super::flipped_count`, compiled for AVX2 (eight entries per instruction, not SSE2's
    /// four: about 1.9 instructions per entry before, callgrind, 64 joints).
    #[target_feature(enable = "avx2")]
    pub(super) fn flipped_count(
        counts: &[u32],
        offsets: &[u16],
        joints: usize,
        table_row: usize,
    ) -> u32 {
        super::flipped_count(counts, offsets, joints, table_row)
    }

    /// Method codes for the driver's const parameter.
    const LINEAR: u8 = 0;
    const DUAL_QUATERNION: u8 = 1;
    const CENTER_OF_ROTATION: u8 = 2;

    /// The variant for one call; `K = 0` is the any-`k` variant. `R`: for DQS and CoR the
    /// palette without a non-rigid joint (they then skip the per-vertex residual test); for
    /// LBS every weight sum 1 (`linear::unit_weight_sums`: the blocks test no flag).
    pub(super) fn table(
        method: Method,
        normals: bool,
        tangents: bool,
        k: usize,
        rigid: bool,
    ) -> Kernel {
        macro_rules! by_k {
            ($m:expr, $n:literal, $t:literal, $r:literal) => {
                match k {
                    1 => drive::<{ $m }, 1, $n, $t, $r> as Kernel,
                    2 => drive::<{ $m }, 2, $n, $t, $r>,
                    4 => drive::<{ $m }, 4, $n, $t, $r>,
                    8 => drive::<{ $m }, 8, $n, $t, $r>,
                    _ => drive::<{ $m }, 0, $n, $t, $r>,
                }
            };
        }
        macro_rules! by_attributes {
            ($m:expr, $r:literal) => {
                match (normals, tangents) {
                    (false, false) => by_k!($m, false, false, $r),
                    (true, false) => by_k!($m, true, false, $r),
                    (false, true) => by_k!($m, false, true, $r),
                    (true, true) => by_k!($m, true, true, $r),
                }
            };
        }
        match (method, rigid) {
            (Method::Linear, true) => by_attributes!(LINEAR, true),
            (Method::Linear, false) => by_attributes!(LINEAR, false),
            (Method::DualQuaternion, true) => by_attributes!(DUAL_QUATERNION, true),
            (Method::DualQuaternion, false) => by_attributes!(DUAL_QUATERNION, false),
            (Method::CenterOfRotation, true) => by_attributes!(CENTER_OF_ROTATION, true),
            (Method::CenterOfRotation, false) => by_attributes!(CENTER_OF_ROTATION, false),
        }
    }

    /// DQS calls on meshes of at least this many vertices prefetch their inputs
    /// [`PREFETCH_AHEAD_VERTICES`] ahead, in every piece (the whole mesh counts, not the piece
    /// a thread skins: what the call sweeps decides whether its streams come from memory rather
    /// than cache). There DQS's longer chain per block leaves fewer loads in flight than LBS's.
    /// DQS with normals at 1M vertices 1.085× by `ab.py 11 "dq pn 4 1000000 100"`'s fastest
    /// calls on the Zen 4 host (an unchanged DQS build 0.997×); for every other method and size
    /// it lost: LBS 1M 0.93–1.06×, positions only 1M 0.79×, CoR 1M 0.95×, DQS 100k 0.95×
    /// (docs/bench.md).
    const PREFETCH_MIN_VERTICES: usize = 1 << 18;

    /// How far ahead [`prefetch_inputs`] reads.
    const PREFETCH_AHEAD_VERTICES: usize = 128;

    fn drive<const M: u8, const K: usize, const N: bool, const T: bool, const R: bool>(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        renormalize: bool,
        first_vertex: usize,
        outputs: SkinOutputs<'_>,
    ) -> Diagnostics {
        // SAFETY: `table` hands out this kernel only after `available()` saw AVX2 and FMA.
        unsafe { drive_avx2::<M, K, N, T, R>(input, palette, renormalize, first_vertex, outputs) }
    }

    /// The one driver loop: whole blocks by the method's block kernel, anything it declines and
    /// the tail by the scalar kernel. Under a flip tally (`super::flip_tally`) the sign flips
    /// returned are relative, wrapping: `skin_into` adds the tally.
    #[target_feature(enable = "avx2,fma")]
    fn drive_avx2<const M: u8, const K: usize, const N: bool, const T: bool, const R: bool>(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        renormalize: bool,
        first_vertex: usize,
        mut outputs: SkinOutputs<'_>,
    ) -> Diagnostics {
        let mut diagnostics = Diagnostics::default();
        let count = outputs.positions.len();
        if M == CENTER_OF_ROTATION && input.rotation_centers().is_none() {
            // `skin_into` refuses CoR without centers; keep one definition regardless.
            return skin_range(input, palette, renormalize, first_vertex, outputs);
        }
        let block = Block::new::<K>(input, palette, renormalize, first_vertex, count);
        // LBS: every slice a block indexes is the range's length (as `Block::new` and
        // `skin_into` made them), stated once so that the compiler folds the blocks' bounds
        // checks (53.7 -> 52.9 instructions per vertex with normals, 1.010x at 10k by
        // `ab.py`'s fastest calls). Not for DQS and CoR, which measured 0.976x and 0.947x
        // with it (docs/bench.md "fifteenth session"). Were one longer, the scalar kernel
        // would take the range. LBS's positions-only kernel then reads the blocks' slices
        // unchecked (`linear::positions4`), so the slot count must not wrap.
        let k = block.k::<K>();
        let slots = count.checked_mul(k);
        let lengths_agree = M != LINEAR
            || block.positions.len() == count
                && slots.is_some_and(|slots| {
                    block.joints.len() == slots
                        && block.weights.len() == slots
                        && (block.linear_offsets.is_empty() || block.linear_offsets.len() == slots)
                })
                && block.normals.is_none_or(|n| n.len() == count)
                && block.tangents.is_none_or(|t| t.len() == count)
                && outputs.normals.as_deref().is_none_or(|n| n.len() == count)
                && outputs.tangents.as_deref().is_none_or(|t| t.len() == count);
        if !lengths_agree {
            return skin_range(input, palette, renormalize, first_vertex, outputs);
        }
        // LBS: the palette entries by the mesh's byte offsets where it has them
        // (`Influences::linear_offsets`), else by shifted joints.
        // SAFETY (both calls): `lengths_agree` holds, for LBS the lengths `whole_blocks` needs.
        let base = if M == LINEAR && !block.linear_offsets.is_empty() {
            unsafe {
                whole_blocks::<M, K, N, T, R, true>(
                    input,
                    palette,
                    renormalize,
                    first_vertex,
                    &block,
                    &mut outputs,
                    &mut diagnostics,
                )
            }
        } else {
            unsafe {
                whole_blocks::<M, K, N, T, R, false>(
                    input,
                    palette,
                    renormalize,
                    first_vertex,
                    &block,
                    &mut outputs,
                    &mut diagnostics,
                )
            }
        };
        if base < count {
            let tallied = dual_quat::tallied_flips(&block, base..count);
            diagnostics.sign_flips = diagnostics.sign_flips.wrapping_sub(tallied);
            scalar_range(
                input,
                palette,
                renormalize,
                &mut outputs,
                first_vertex,
                base..count,
                &mut diagnostics,
            );
        }
        diagnostics
    }

    /// The driver loop's whole blocks of `block` (of `drive_avx2`), into `outputs`; returns
    /// the first vertex of the range left (the last `len % 8`). `OFFSETS`: LBS addresses its
    /// palette entries by `Block::linear_offsets` (which the caller has seen cover the range).
    /// One loop per way of addressing, so that no block tests which.
    ///
    /// # Safety
    /// For LBS, the block's slices have the lengths of `outputs` (`k` slots per vertex for
    /// the influences): `drive_avx2`'s length check.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn whole_blocks<
        const M: u8,
        const K: usize,
        const N: bool,
        const T: bool,
        const R: bool,
        const OFFSETS: bool,
    >(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        renormalize: bool,
        first_vertex: usize,
        block: &Block<'_>,
        outputs: &mut SkinOutputs<'_>,
        diagnostics: &mut Diagnostics,
    ) -> usize {
        let count = outputs.positions.len();
        let mut base = 0;
        let prefetch = M == DUAL_QUATERNION && input.vertex_count() >= PREFETCH_MIN_VERTICES;
        // LBS's normals of the block before (`linear::DeferredNormals`).
        let mut deferred_normals = None;
        while base + BLOCK_VERTICES <= count {
            if prefetch {
                prefetch_inputs::<K>(block, base + PREFETCH_AHEAD_VERTICES);
            }
            let done = match M {
                // SAFETY: `base + 8 <= count`, the range's length, which the block's slices
                // have (the caller's contract).
                LINEAR => unsafe {
                    linear::block::<K, N, T, R, OFFSETS>(
                        block,
                        outputs,
                        base,
                        diagnostics,
                        &mut deferred_normals,
                    )
                },
                DUAL_QUATERNION => {
                    dual_quat::block::<K, N, T, R>(block, outputs, base, diagnostics)
                }
                _ => cor::block::<K, N, T, R>(block, outputs, base, diagnostics),
            };
            if !done {
                // The scalar kernel counts these vertices' flips itself.
                let tallied = dual_quat::tallied_flips(block, base..base + BLOCK_VERTICES);
                diagnostics.sign_flips = diagnostics.sign_flips.wrapping_sub(tallied);
                scalar_range(
                    input,
                    palette,
                    renormalize,
                    outputs,
                    first_vertex,
                    base..base + BLOCK_VERTICES,
                    diagnostics,
                );
            }
            base += BLOCK_VERTICES;
        }
        if let (Some(deferred), Some(out), Some(inputs)) = (
            deferred_normals.take(),
            outputs.normals.as_deref_mut(),
            block.normals,
        ) {
            // SAFETY: the normals of a block of the range, whose length both slices have
            // (the caller's contract).
            unsafe { deferred.store::<K, R, OFFSETS>(block, out, inputs, diagnostics) };
        }
        base
    }

    /// Asks the cache for vertex `vertex`'s inputs (positions, normals, tangents, joints,
    /// weights, pivot words): a hint, which reads nothing and cannot fault, so `vertex` may lie
    /// past the end.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn prefetch_inputs<const K: usize>(block: &Block<'_>, vertex: usize) {
        use glam::{Vec3, Vec4};
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let k = block.k::<K>();
        // Every 64 bytes of each stream's span for the block from `vertex` on (a line the span
        // ends in is the next block's first).
        let lines = |p: *const u8, bytes: usize| {
            for offset in (0..bytes).step_by(64) {
                // A hint: it reads nothing and faults on no address.
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(offset).cast());
            }
        };
        let span = |element_bytes: usize| BLOCK_VERTICES * element_bytes;
        lines(
            block.positions.as_ptr().wrapping_add(vertex).cast(),
            span(size_of::<Vec3>()),
        );
        if let Some(normals) = block.normals {
            lines(
                normals.as_ptr().wrapping_add(vertex).cast(),
                span(size_of::<Vec3>()),
            );
        }
        if let Some(tangents) = block.tangents {
            lines(
                tangents.as_ptr().wrapping_add(vertex).cast(),
                span(size_of::<Vec4>()),
            );
        }
        lines(
            block.joints.as_ptr().wrapping_add(vertex * k).cast(),
            span(k * size_of::<u16>()),
        );
        lines(
            block.weights.as_ptr().wrapping_add(vertex * k).cast(),
            span(k * size_of::<f32>()),
        );
        if !block.pivots.is_empty() {
            lines(
                block.pivots.as_ptr().wrapping_add(vertex).cast(),
                span(size_of::<u16>()),
            );
        }
    }

    /// Skins vertices `range` of the outputs (input vertices `first_vertex + range`) with the
    /// scalar kernel, adding its counts (the sign flips wrapping: under a flip tally the
    /// piece's count may have wrapped below zero, `super::flip_tally`).
    fn scalar_range(
        input: &SkinInput<'_>,
        palette: &PreparedPalette,
        renormalize: bool,
        outputs: &mut SkinOutputs<'_>,
        first_vertex: usize,
        range: std::ops::Range<usize>,
        diagnostics: &mut Diagnostics,
    ) {
        let part = SkinOutputs {
            positions: &mut outputs.positions[range.clone()],
            normals: outputs
                .normals
                .as_deref_mut()
                .map(|n| &mut n[range.clone()]),
            tangents: outputs
                .tangents
                .as_deref_mut()
                .map(|t| &mut t[range.clone()]),
        };
        let scalar = skin_range(
            input,
            palette,
            renormalize,
            first_vertex + range.start,
            part,
        );
        diagnostics.singular_normal_matrices += scalar.singular_normal_matrices;
        diagnostics.sign_flips = diagnostics.sign_flips.wrapping_add(scalar.sign_flips);
        diagnostics.unweighted_vertices += scalar.unweighted_vertices;
    }
}
