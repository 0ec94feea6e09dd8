//! The driver loop every AVX2 kernel runs in: the table of its monomorphized variants, the walk
//! over a range in blocks of eight, and the hand-over to the scalar kernel of whatever a block
//! kernel declines and of the range's tail.

use glam::{Vec3, Vec4};

use super::block::CallTables;
use super::block::{tallied_flips, Block};
use super::cpu::Avx2Fma;
use super::layout::{BLOCK_VERTICES, PIVOT_SIGN_TABLE_MAX_JOINTS};
use super::{blended, cor, dqs, lbs, lbs_loop, policy};
use crate::blend_values::BlendValues;
use crate::input::SkinInput;
use crate::palette::PreparedPalette;
use crate::reference::skin_range;
use crate::types::{Method, RangeCounts, SkinOutputs};
use crate::vertex_blocks::Vec3x8;

/// One variant of the driver loop, as [`table`] hands it out: skins vertices `first_vertex ..`
/// of the input into `outputs` (lengths already checked; the tables the call reads; the `bool` is
/// [`crate::RunOptions::renormalize`]). Only a CPU with AVX2 and FMA runs it: the token says so.
pub(super) type Avx2Kernel = fn(
    Avx2Fma,
    &SkinInput<'_>,
    &PreparedPalette,
    CallTables,
    bool,
    usize,
    SkinOutputs<'_>,
) -> RangeCounts;

/// Method codes for the driver's const parameter.
pub(super) const LINEAR: u8 = 0;
const DUAL_QUATERNION: u8 = 1;
const CENTER_OF_ROTATION: u8 = 2;
const BLENDED: u8 = 3;

/// The variant for one call; `K = 0` is the any-`k` variant. `R`: for DQS, CoR and blended the
/// palette without a non-rigid joint (they then skip the per-vertex residual test); for LBS
/// every weight sum 1 (`policy::unit_weight_sums`: the blocks test no flag).
pub(super) fn table(
    method: Method,
    normals: bool,
    tangents: bool,
    k: usize,
    rigid: bool,
) -> Avx2Kernel {
    macro_rules! by_k {
        ($m:expr, $n:literal, $t:literal, $r:literal) => {
            match k {
                1 => drive::<{ $m }, 1, $n, $t, $r> as Avx2Kernel,
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
        (Method::Blended, true) => by_attributes!(BLENDED, true),
        (Method::Blended, false) => by_attributes!(BLENDED, false),
    }
}

/// DQS calls that sweep at least this many vertices (a mesh, or a batch's meshes: `select`
/// decides, `CallTables::prefetch`) on the CPUs where it was measured to gain
/// (`cpu::input_prefetch_gains`) prefetch their inputs
/// [`PREFETCH_AHEAD_VERTICES`] ahead, in every piece (what the call sweeps decides whether its
/// streams come from memory rather than cache, not the piece a thread skins). There DQS's longer
/// chain per block leaves fewer loads in flight than LBS's. On the Intel Xeon host (family 6
/// model 167), DQS with normals at 1M vertices ran 1.09× with it (`ab.py 11 "dq pn 4 1000000
/// 100"` against a build without it, when the kernels read the arrays rather than the vertex
/// blocks; the measuring recipe is in `simd/mod.rs`), where every other method, and DQS at
/// 100k, ran slower with it. On the AMD EPYC Zen 3 host it costs: `ab.py 15 "dq pnb 4 1000000
/// 40"`, fastest calls, the build without it 1.06× the build with it (and 1.13× a build that
/// prefetched the arrays while the kernel read the blocks, as it did for a while);
/// `crowd_memory dq`'s batch 122–128 Mverts/s without it, 101–116 with that stale prefetch.
/// On the AMD EPYC Zen 4 host (family 25 model 17) it gains again: one build with it switched
/// off and on, `ab.py 9 "dq pnb 4 1000000 40"` 1.07× (fastest calls, median) and 1.09×
/// (runs, median), the same on two threads 1.09× and 1.06×, at 300k vertices 0.96× and 1.02×
/// (noise), and `crowd_memory dq`'s batch (1,000 × 2,000) median 163 Mverts/s against 158 over
/// eight rounds each.
pub(super) const PREFETCH_MIN_VERTICES: usize = 1 << 18;

/// How far ahead [`prefetch_inputs`] reads.
const PREFETCH_AHEAD_VERTICES: usize = 128;

/// An entry of the [`table`]: [`drive_avx2`], which the token lets it call.
fn drive<const M: u8, const K: usize, const N: bool, const T: bool, const R: bool>(
    _: Avx2Fma,
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    tables: CallTables,
    renormalize: bool,
    first_vertex: usize,
    outputs: SkinOutputs<'_>,
) -> RangeCounts {
    // SAFETY: the token proves AVX2 and FMA (only `Avx2Fma::detect` makes one).
    unsafe {
        drive_avx2::<M, K, N, T, R>(input, palette, tables, renormalize, first_vertex, outputs)
    }
}

/// The one driver loop: whole blocks by the method's block kernel, anything it declines and
/// the tail by the scalar kernel, with the range's counts (`flips` says how they add up to the
/// call's).
#[target_feature(enable = "avx2,fma")]
fn drive_avx2<const M: u8, const K: usize, const N: bool, const T: bool, const R: bool>(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    tables: CallTables,
    renormalize: bool,
    first_vertex: usize,
    mut outputs: SkinOutputs<'_>,
) -> RangeCounts {
    let mut counts = RangeCounts::default();
    let count = outputs.positions.len();
    if M == CENTER_OF_ROTATION && input.rotation_centers().is_none()
        || M == BLENDED && input.blend_values().is_none()
    {
        // `skin_into` refuses CoR without centers and blended without blend values; keep one
        // definition regardless.
        counts.counted = skin_range(input, palette, renormalize, first_vertex, outputs);
        return counts;
    }
    let block = Block::new::<K>(input, palette, tables, renormalize, first_vertex, count);
    // LBS: every slice a block indexes is the range's length (as `Block::new` and `skin_into`
    // made them), stated once so that the compiler folds the blocks' bounds checks. Not for DQS
    // and CoR, which run slower with it. Were one longer, the scalar kernel would take the
    // range. LBS's positions-only kernel then reads the blocks' slices unchecked
    // (`lbs_positions::positions4`), so the slot count must not wrap. Blended runs LBS's
    // block kernel too.
    let k = block.k::<K>();
    let slots = count.checked_mul(k);
    let lengths_agree = M != LINEAR && M != BLENDED
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
        counts.counted = skin_range(input, palette, renormalize, first_vertex, outputs);
        return counts;
    }
    warm_sign_table::<M>(palette, &block, count);
    // A build with `--cfg skinblend_intrinsics` runs the compiled twin of the `asm!` loop.
    const ASM: bool = !cfg!(skinblend_intrinsics);
    // LBS: the palette entries by the mesh's byte offsets where it has them
    // (`Influences::linear_offsets`), else by shifted joints.
    let run = Run {
        input,
        palette,
        renormalize,
        first_vertex,
        block: &block,
    };
    let whole = count / BLOCK_VERTICES * BLOCK_VERTICES;
    let (run, out, tally) = (&run, &mut outputs, &mut counts);
    let base = if M == BLENDED {
        // SAFETY: `lengths_agree` holds, for blended the lengths LBS's `whole_blocks` needs.
        unsafe { blended_runs::<K, N, T, R, ASM>(run, out, tally, whole) }
    } else if M == LINEAR && !block.linear_offsets.is_empty() {
        // SAFETY: `lengths_agree` holds, for LBS the lengths `whole_blocks` needs.
        unsafe { whole_blocks::<M, K, N, T, R, true, ASM>(run, &block, out, tally, 0..whole) }
    } else {
        // SAFETY: as above.
        unsafe { whole_blocks::<M, K, N, T, R, false, ASM>(run, &block, out, tally, 0..whole) }
    };
    if base < count {
        run.scalar_range(&block, &mut outputs, base..count, &mut counts);
    }
    counts
}

/// How many influences a range must read per line of the table for [`warm_sign_table`] to load
/// it: at least two vertices of four influences per line, so that the loads (about one cycle
/// per line where the table is cached) cost at most a few per cent of the kernel's time (about
/// 16 cycles per vertex) where they gain nothing.
const WARM_INFLUENCES_PER_LINE: usize = 8;

/// One line of the palette's tables ([`kernel_table_slices`]).
const LINE_BYTES: usize = 64;

/// Loads a byte of every line of the palette's tables that the range's block kernel reads
/// ([`kernel_table_slices`]), where the range reads at least [`WARM_INFLUENCES_PER_LINE`]
/// influences per line. In a crowd each mesh's palette comes from memory, and the kernel would
/// meet each line's miss in the middle of a chain of dependent loads (joint, row entry, line).
/// Loads, not prefetches: prefetch instructions on the same lines at the start of the call
/// moved the 1,000 × 2,000 DQS crowd (each mesh its own palette, skinned in turn) 1.02× on the
/// AMD EPYC Zen 3 VM, these loads 1.08× (the fastest of 8 alternated runs of each build;
/// `examples/crowd_memory.rs` shows the crowd under one palette beside it). LBS's palette, its
/// 3x4s alone, gained nothing from the same loads. A batch on one thread also prefetches the
/// next job's tables a whole mesh ahead ([`prefetch_kernel_tables`]), so that these loads find
/// them in L2.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn warm_sign_table<const M: u8>(palette: &PreparedPalette, block: &Block<'_>, count: usize) {
    if M == LINEAR {
        return;
    }
    let mut lines = 0;
    kernel_table_slices(palette, M == BLENDED, |_, bytes| {
        lines += bytes.div_ceil(LINE_BYTES);
    });
    if lines == 0 || count.saturating_mul(block.k::<0>()) < WARM_INFLUENCES_PER_LINE * lines {
        return;
    }
    // Summed so that no load is dropped.
    let mut sum = 0u8;
    kernel_table_slices(palette, M == BLENDED, |first, bytes| {
        for offset in line_offsets(bytes) {
            // SAFETY: `offset < bytes`, the byte length of the slice that `first` starts;
            // every byte of these types is initialized (f32s and u16s, no padding).
            sum = sum.wrapping_add(unsafe { first.add(offset).read() });
        }
    });
    std::hint::black_box(sum);
}

/// Asks for the lines of `palette`'s tables that its method's block kernel reads
/// ([`kernel_table_slices`]) to be brought into L2 (`prefetcht2`: a crowd's mesh streams its
/// vertices through L1), without waiting for them. `skin_batch` on one thread calls it for the
/// next job's palette before it skins a job, a whole mesh ahead of [`warm_sign_table`]'s loads.
/// On the 2-core AMD EPYC Zen 4 VM, DQS, one thread, each mesh its own palette, the same build
/// with and without (`crowd_memory -- dq`'s batch, five alternated rounds): 1,000 meshes of
/// 2,000 vertices 0.98–1.08×, median 1.04×; 200 of 10,000 0.94–1.02×, median 0.99×. In L1
/// (`prefetcht0`) 0.97×, past the caches (`prefetchnta`) 1.00× (medians of four and six rounds).
pub(crate) fn prefetch_kernel_tables(palette: &PreparedPalette) {
    if palette.method() == Method::Linear {
        return;
    }
    kernel_table_slices(
        palette,
        palette.method() == Method::Blended,
        |first, bytes| {
            for offset in line_offsets(bytes) {
                // SAFETY: `offset < bytes`, inside the slice that `first` starts; a prefetch
                // reads nothing into the program.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T2 }>(
                        first.add(offset).cast(),
                    );
                }
            }
        },
    );
}

/// Each slice of `palette` that the DQS, CoR and blended block kernels read beside the
/// vertices' own data, as its first byte and byte length: the signed entries, each joint's row
/// of the pivot sign table as far as the palette's joints, and with `blended` the 3x4s. None
/// where the palette has no signed entries (LBS's, or too many joints for the table).
fn kernel_table_slices(
    palette: &PreparedPalette,
    blended: bool,
    mut each: impl FnMut(*const u8, usize),
) {
    fn bytes<T>(slice: &[T]) -> (*const u8, usize) {
        (slice.as_ptr().cast(), size_of_val(slice))
    }
    if palette.signed_entries.is_empty() {
        return;
    }
    let joints = palette.dual_quats.len();
    let (first, len) = bytes(&palette.signed_entries);
    each(first, len);
    for row in palette
        .signed_offsets
        .chunks_exact(PIVOT_SIGN_TABLE_MAX_JOINTS)
        .take(joints)
    {
        let (first, len) = bytes(&row[..joints]);
        each(first, len);
    }
    if blended {
        let (first, len) = bytes(palette.linear_matrices());
        each(first, len);
    }
}

/// The offset of one byte in each 64-byte line of a slice of `bytes` bytes: every 64th and the
/// last (a table's row need not start on a line).
fn line_offsets(bytes: usize) -> impl Iterator<Item = usize> {
    (0..bytes).step_by(LINE_BYTES).chain(bytes.checked_sub(1))
}

/// What [`drive_avx2`]'s helpers share: the call's arguments and the range's [`Block`].
pub(super) struct Run<'r, 'a> {
    pub(super) input: &'r SkinInput<'a>,
    pub(super) palette: &'r PreparedPalette,
    pub(super) renormalize: bool,
    pub(super) first_vertex: usize,
    pub(super) block: &'r Block<'a>,
}

impl Run<'_, '_> {
    /// Skins vertices `range` of the outputs (input vertices `first_vertex + range`) with the
    /// scalar kernel, adding its counts, and, where the call tallies sign flips
    /// (`flips::flip_tally`), the tally's flips of those vertices to
    /// `RangeCounts::tallied_flips_recounted` (the scalar kernel counted them again).
    pub(super) fn scalar_range(
        &self,
        block: &Block<'_>,
        outputs: &mut SkinOutputs<'_>,
        range: std::ops::Range<usize>,
        counts: &mut RangeCounts,
    ) {
        counts.tallied_flips_recounted += tallied_flips(block, range.clone());
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
            self.input,
            self.palette,
            self.renormalize,
            self.first_vertex + range.start,
            part,
        );
        counts.counted.add(&scalar);
    }
}

/// Blended's whole blocks (the range's vertices `..whole`, a multiple of eight), in runs of
/// consecutive blocks of one kind: all values 0 by LBS's loop, all 1 by DQS's, any other by
/// blended's own (`blended::block`). A painted map's blocks come in runs (the CesiumMan
/// sample's neck and forearms by the joint rule: 3.4 blocks per run), and each method's own
/// loop runs its blocks at 0.89-0.96 of that method's call, where one loop holding all three
/// kernels ran LBS's blocks at 0.70x and DQS's at 0.75x (`bench_blended.py --values zero`, and
/// `--values one`; docs/blended.md).
///
/// # Safety
/// As [`whole_blocks`]'s for LBS (blended's length check is LBS's: [`drive_avx2`]).
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn blended_runs<
    const K: usize,
    const N: bool,
    const T: bool,
    const R: bool,
    const ASM: bool,
>(
    run: &Run<'_, '_>,
    outputs: &mut SkinOutputs<'_>,
    counts: &mut RangeCounts,
    whole: usize,
) -> usize {
    let block = run.block;
    let values = match block.blend_values {
        Some(BlendValues::PerVertex(values)) if values.len() >= whole => values,
        _ => {
            // One value for the mesh, strictly between 0 and 1 (`select` runs LBS's or DQS's
            // kernel for 0 and 1).
            // SAFETY: the caller's.
            return unsafe {
                whole_blocks::<BLENDED, K, N, T, R, false, ASM>(
                    run,
                    block,
                    outputs,
                    counts,
                    0..whole,
                )
            };
        }
    };
    // LBS's runs as LBS's call would run them where the mesh allows: every weight sum 1 (no
    // flag tested) and the palette entries by the mesh's byte offsets.
    let influences = run.input.influences();
    let linear_unit_offsets = !block.linear_offsets.is_empty()
        && policy::unit_weight_sums(
            block.k::<K>(),
            influences.weight_sum_range(),
            run.palette.largest_column_length,
        );
    let mut start = 0;
    while start < whole {
        let kind = blended::block_kind(values, start);
        let mut end = start + BLOCK_VERTICES;
        while end < whole && blended::block_kind(values, end) == kind {
            end += BLOCK_VERTICES;
        }
        let blocks = start..end;
        // SAFETY: (each) the caller's; LBS's variants and DQS's read what a blended palette
        // holds, LBS's with offsets the mesh's (`Block::linear_offsets`, the range's where
        // not empty).
        let done = unsafe {
            match kind {
                blended::BlockKind::Linear if linear_unit_offsets => {
                    whole_blocks::<LINEAR, K, N, T, true, true, ASM>(
                        run, block, outputs, counts, blocks,
                    )
                }
                blended::BlockKind::Linear => whole_blocks::<LINEAR, K, N, T, false, false, ASM>(
                    run, block, outputs, counts, blocks,
                ),
                blended::BlockKind::DualQuaternion => {
                    whole_blocks::<DUAL_QUATERNION, K, N, T, R, false, ASM>(
                        run, block, outputs, counts, blocks,
                    )
                }
                blended::BlockKind::Between => whole_blocks::<BLENDED, K, N, T, R, false, ASM>(
                    run, block, outputs, counts, blocks,
                ),
            }
        };
        // Only LBS's hand-written loop stops short, without normals to skin, which `skin_into`
        // does not let through.
        if done < end {
            run.scalar_range(block, outputs, done..end, counts);
        }
        start = end;
    }
    whole
}

/// The driver loop over the whole blocks `blocks` (vertices of the range, a multiple of eight
/// at each end) of `block` (of [`drive_avx2`]), into `outputs`; returns the first vertex it
/// left (`blocks.end`, or where LBS's hand-written loop stopped); `block` is `run.block` (see
/// below). `OFFSETS`: LBS addresses its
/// palette entries by `Block::linear_offsets` (which the caller has seen cover the range). One
/// loop per way of addressing, so that no block tests which. `ASM`: the variant that has one
/// runs the hand-written loop (`lbs_loop`); without, its compiled twin, the loop below.
///
/// # Safety
/// For LBS, the block's slices have the lengths of `outputs` (`k` slots per vertex for the
/// influences): [`drive_avx2`]'s length check.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn whole_blocks<
    const M: u8,
    const K: usize,
    const N: bool,
    const T: bool,
    const R: bool,
    const OFFSETS: bool,
    const ASM: bool,
>(
    run: &Run<'_, '_>,
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    counts: &mut RangeCounts,
    blocks: std::ops::Range<usize>,
) -> usize {
    // The same block: LBS reads it through the argument, whose fields the compiler then keeps
    // in registers across blocks (LBS with normals, eight influences, 1.03× against reading
    // it through `run`), DQS and CoR through `run` (CoR 1.06× against the argument;
    // `ab.py 7 "cor pn 4 10000 3000"` and `"linear pn 8 10000 3000"`, the recipe in
    // `simd/mod.rs`).
    let block = if M == LINEAR { block } else { run.block };
    if ASM && M == LINEAR && K == 4 && N && !T && R && OFFSETS {
        // The variant `skinblend bench` measures, as one hand-written loop
        // (tools/codegen/lbs_loop.py).
        // SAFETY: AVX2 and FMA (this function's features); the caller's length contract,
        // which for LBS covers the normals in and out; `Block::new` made the vertex
        // blocks empty or the range's; `blocks` are whole blocks of the range.
        return unsafe { lbs_loop::pn4_unit_blocks(block, outputs, &mut counts.counted, blocks) };
    }
    let mut base = blocks.start;
    let prefetch = M == DUAL_QUATERNION && block.prefetch;
    // LBS's normals of the block before (`lbs::DeferredNormals`).
    let mut deferred_normals = None;
    while base < blocks.end {
        if prefetch {
            prefetch_inputs::<K>(block, base + PREFETCH_AHEAD_VERTICES);
        }
        let diagnostics = &mut counts.counted;
        let done = match M {
            // SAFETY: `base + 8 <= count`, the range's length, which the block's slices
            // have (the caller's contract).
            LINEAR => unsafe {
                lbs::block::<K, N, T, R, OFFSETS>(
                    block,
                    outputs,
                    base,
                    diagnostics,
                    &mut deferred_normals,
                )
            },
            // SAFETY: AVX2 and FMA (this function's features).
            DUAL_QUATERNION => unsafe {
                dqs::block::<K, N, T, R>(block, outputs, base, diagnostics)
            },
            CENTER_OF_ROTATION => cor::block::<K, N, T, R>(block, outputs, base, diagnostics),
            // SAFETY: as LBS's above (the length check covers blended too).
            _ => unsafe { blended::block::<K, N, T, R>(block, outputs, base, diagnostics) },
        };
        if !done {
            // The scalar kernel counts these vertices' flips itself.
            run.scalar_range(block, outputs, base..base + BLOCK_VERTICES, counts);
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
        unsafe { deferred.store::<K, R, OFFSETS>(block, out, inputs, &mut counts.counted) };
    }
    blocks.end
}

/// Asks the cache for vertex `vertex`'s inputs (positions, normals, tangents, joints, weights,
/// pivot words): a hint, which reads nothing and cannot fault, so `vertex` may lie past the end.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn prefetch_inputs<const K: usize>(block: &Block<'_>, vertex: usize) {
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
    // Positions and normals from the vertex blocks where the range has them, which the kernels
    // then read instead of the arrays (`loads::load3x8_or_block`).
    let attribute = |blocks: &[Vec3x8], values: &[Vec3]| {
        if blocks.is_empty() {
            lines(
                values.as_ptr().wrapping_add(vertex).cast(),
                span(size_of::<Vec3>()),
            );
        } else {
            lines(
                blocks.as_ptr().wrapping_add(vertex / BLOCK_VERTICES).cast(),
                size_of::<Vec3x8>(),
            );
        }
    };
    attribute(block.position_blocks, block.positions);
    if let Some(normals) = block.normals {
        attribute(block.normal_blocks, normals);
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
