//! The per-call context of a vertex range: the borrowed arrays every block kernel reads, the
//! call's decisions (from `policy`), and what the pivot words and the pivot sign table say
//! about a block (its pivots, its sign flips).

use glam::{Affine3A, Vec3, Vec4};

use super::layout::{
    SignedEntry, SignedLayout, LANES, PIVOT_HAS_ZERO_WEIGHT, PIVOT_LIGHT, PIVOT_ROW_BITS,
    PIVOT_SLOT_BITS,
};
use super::policy;
use crate::blend_values::BlendValues;
use crate::dual_quat::DualQuat;
use crate::influence_tables::MIN_WEIGHT_SUM;
use crate::input::SkinInput;
use crate::palette::PreparedPalette;
use crate::types::Method;
use crate::vertex_blocks::{Vec3x8, VertexBlocks};

/// Which of the tables derived from a mesh's influences a call's SIMD kernel reads, decided
/// once per call ([`select`]) so that every piece of a parallel split reads the same. A mesh
/// skinned for the first time reads neither (`Influences::mark_skinned`): building them costs
/// more than one call saves (LBS offsets 0.1 ms, DQS pair counts 0.6 ms at 100k vertices, four
/// influences, against kernels of 0.33 and 0.4 ms; `examples/one_shot.rs`), and a one-shot call
/// builds nothing it reads only once.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CallTables {
    /// LBS, and blended's runs of blocks at 0, address their palette entries by
    /// `Influences::linear_offsets` (built).
    pub(crate) linear_offsets: bool,
    /// DQS and CoR count the sign flips of whole blocks once per call from
    /// `Influences::pivot_pair_counts` (built; `flips::flip_tally`).
    pub(crate) flip_tally: bool,
    /// DQS prefetches its inputs ahead: the call sweeps at least
    /// `driver::PREFETCH_MIN_VERTICES` vertices (its mesh, or the batch it is part of), too
    /// many for the cache to hold from one frame to the next, on a CPU where that gains
    /// (`cpu::input_prefetch_gains`).
    pub(crate) prefetch: bool,
}

/// The borrowed per-call arrays of one vertex range, and the palette's arrays.
pub(super) struct Block<'a> {
    k: usize,
    pub(super) joints: &'a [u16],
    pub(super) weights: &'a [f32],
    /// LBS and blended's blocks at 0: the range's slots of `Influences::linear_offsets` (each
    /// joint's palette entry as a byte offset), or empty where the call reads none
    /// (`CallTables::linear_offsets`) or the mesh has none (more than
    /// `LINEAR_OFFSET_MAX_JOINTS` joints): the kernels then shift each joint.
    pub(super) linear_offsets: &'a [u16],
    /// The range's words of `Influences::pivots` (empty unless two to eight influences per
    /// vertex).
    pub(super) pivots: &'a [u16],
    pub(super) positions: &'a [Vec3],
    pub(super) normals: Option<&'a [Vec3]>,
    pub(super) tangents: Option<&'a [Vec4]>,
    /// The range's blocks of positions and of normals (`SkinInput::vertex_blocks`; block `b`
    /// holds the range's vertices `8 b .. 8 b + 8`), or empty: where the input has none, or
    /// the range does not start at a multiple of eight (then its blocks are not the input's).
    pub(super) position_blocks: &'a [Vec3x8],
    pub(super) normal_blocks: &'a [Vec3x8],
    /// CoR: the range's centers of rotation (NaN: none).
    pub(super) centers: Option<&'a [Vec3]>,
    /// Blended: the range's blend values (per vertex, or one for the mesh); `None` for the
    /// other methods' palettes.
    pub(super) blend_values: Option<BlendValues<'a>>,
    /// LBS and CoR: the joints' 3x4s.
    pub(super) linear: &'a [Affine3A],
    /// DQS and CoR: the joints' rigid parts.
    pub(super) dual_quats: &'a [DualQuat],
    /// DQS and CoR: whether each joint is rigid.
    pub(super) rigid: &'a [bool],
    /// DQS and CoR: each joint's residual (`PreparedPalette::residuals`; the identity where
    /// rigid), sixteen floats each.
    pub(super) residuals: &'a [Affine3A],
    /// DQS and CoR: the palette's pivot sign table (`PreparedPalette::signed_offsets`: per
    /// joint a row of `PIVOT_SIGN_TABLE_MAX_JOINTS` byte offsets into `signed_entries`), or
    /// empty.
    pub(super) signed_offsets: &'a [u16],
    /// DQS and CoR with the pivot sign table: each joint's entry as prepared, then negated
    /// (`PreparedPalette::signed_entries`), or empty.
    pub(super) signed_entries: &'a [SignedEntry],
    /// How `signed_entries` is laid out: the table's offsets' stride and flip bit
    /// (`PreparedPalette::signed_layout`).
    pub(super) signed_layout: SignedLayout,
    /// LBS and CoR's center blend divide by each vertex's weight sum: the call renormalizes and
    /// some vertex's sum is not 1 within `policy::UNIT_WEIGHT_SUM_BAND`
    /// (`policy::divides_by_weight_sums`; DQS normalizes anyway).
    pub(super) divide_by_weight_sums: bool,
    /// LBS divides its blended 3x3 by `Σw` before the normals and tangents
    /// (`policy::columns_need_normalizing`).
    pub(super) normalize_columns: bool,
    /// Every vertex of the mesh has a weight sum of at least `MIN_WEIGHT_SUM`
    /// (`Influences::weight_sum_range`): no block has an unweighted vertex to test for.
    pub(super) all_weighted: bool,
    /// DQS and CoR: no vertex's blended rotation part can be too short or too long for
    /// `Rotation8::from_real` (`policy::real_blends_usable`), so it tests none.
    pub(super) real_blends_usable: bool,
    /// LBS's singular test without column lengths: `policy::singular_bound_root`.
    pub(super) singular_bound_root: Option<f32>,
    /// The same test's bound for every block at once, where every weight sum is 1 within
    /// `policy::UNIT_WEIGHT_SUM_BAND`: `policy::unit_singular_bound`.
    pub(super) unit_singular_bound: Option<f32>,
    /// DQS and CoR: the call counts sign flips once from the mesh's pivot pair counts
    /// (`flips::flip_tally`), so the table blends count none; the first `tallied_vertices`
    /// vertices of the range are among those the counts include.
    pub(super) tally_flips: bool,
    pub(super) tallied_vertices: usize,
    /// DQS prefetches its inputs ahead (`CallTables::prefetch`).
    pub(super) prefetch: bool,
}

impl<'a> Block<'a> {
    /// The range `first_vertex .. first_vertex + count` of `input`. Lengths were checked by
    /// `skin_into`: every joint index is below the palette's joint count.
    pub(super) fn new<const K: usize>(
        input: &SkinInput<'a>,
        palette: &'a PreparedPalette,
        tables: CallTables,
        renormalize: bool,
        first_vertex: usize,
        count: usize,
    ) -> Self {
        let influences = input.influences();
        let k = if K == 0 {
            influences.influences_per_vertex()
        } else {
            K
        };
        let vertices = first_vertex..first_vertex + count;
        let blocks = input.vertex_blocks();
        // The blocks of whole blocks of the range, where it starts on a block's first vertex.
        let range_blocks = |all: Option<&'a [Vec3x8]>| match all {
            Some(all) if first_vertex.is_multiple_of(LANES) => all
                .get(first_vertex / LANES..)
                .map_or(&[][..], |from| &from[..from.len().min(count / LANES)]),
            _ => &[],
        };
        let linear = palette.method() == Method::Linear;
        let tally_flips = tables.flip_tally;
        // The counts include the mesh's whole blocks of eight.
        let counted_end = influences.vertex_count() / LANES * LANES;
        let tallied_vertices = if tally_flips {
            counted_end.saturating_sub(first_vertex).min(count)
        } else {
            0
        };
        Self {
            k,
            joints: &influences.joints()[vertices.start * k..vertices.end * k],
            weights: &influences.weights()[vertices.start * k..vertices.end * k],
            // Each derived on first use, and only for the method that reads it: the LBS kernels
            // read the offsets, the DQS and CoR kernels the pivots.
            linear_offsets: if tables.linear_offsets {
                influences
                    .linear_offsets()
                    .get(vertices.start * k..vertices.end * k)
                    .unwrap_or_default()
            } else {
                &[]
            },
            pivots: if linear {
                &[]
            } else {
                influences
                    .pivots()
                    .get(vertices.clone())
                    .unwrap_or_default()
            },
            positions: &input.positions()[vertices.clone()],
            normals: input.normals().map(|n| &n[vertices.clone()]),
            tangents: input.tangents().map(|t| &t[vertices.clone()]),
            position_blocks: range_blocks(blocks.map(VertexBlocks::position_blocks)),
            normal_blocks: range_blocks(blocks.and_then(VertexBlocks::normal_blocks)),
            centers: input.rotation_centers().map(|c| &c[vertices.clone()]),
            blend_values: (palette.method() == Method::Blended)
                .then(|| input.blend_values())
                .flatten()
                .map(|values| match values {
                    BlendValues::PerVertex(values) => BlendValues::PerVertex(&values[vertices]),
                    uniform @ BlendValues::Uniform(_) => uniform,
                }),
            linear: palette.linear_matrices(),
            dual_quats: &palette.dual_quats,
            rigid: &palette.rigid,
            residuals: &palette.residuals,
            signed_offsets: &palette.signed_offsets,
            signed_entries: &palette.signed_entries,
            signed_layout: palette.signed_layout(),
            divide_by_weight_sums: policy::divides_by_weight_sums(
                renormalize,
                influences.weight_sum_range(),
            ),
            normalize_columns: policy::columns_need_normalizing(
                renormalize,
                influences.weight_sum_range(),
            ),
            all_weighted: influences.weight_sum_range().0 >= MIN_WEIGHT_SUM,
            singular_bound_root: policy::singular_bound_root(
                k,
                influences.weight_sum_range(),
                palette.largest_column_length,
            ),
            real_blends_usable: policy::real_blends_usable(
                k,
                influences.weight_sum_range(),
                palette.real_length_range,
            ),
            unit_singular_bound: policy::unit_singular_bound(
                k,
                influences.weight_sum_range(),
                palette.largest_column_length,
            ),
            tally_flips,
            tallied_vertices,
            prefetch: tables.prefetch,
        }
    }

    /// Influences per vertex: the constant `K` where the variant has one, so loops over slots
    /// unroll and their bounds checks fold away.
    #[inline(always)]
    pub(super) fn k<const K: usize>(&self) -> usize {
        if K == 0 {
            self.k
        } else {
            K
        }
    }

    /// Joints and weights of the eight vertices `base .. base + 8` of the range, sliced once
    /// per block so that the per-vertex slices inside it need no bounds checks.
    #[inline(always)]
    pub(super) fn influences8<const K: usize>(&self, base: usize) -> (&'a [u16], &'a [f32]) {
        let k = self.k::<K>();
        let slots = base * k..(base + LANES) * k;
        (&self.joints[slots.clone()], &self.weights[slots])
    }

    /// LBS's slots of the eight vertices `base .. base + 8`, as [`Block::influences8`] slices
    /// them but unchecked, with `OFFSETS` the palette byte offsets (`linear_offsets`) in place
    /// of the joints.
    ///
    /// # Safety
    /// `base + 8` is at most the range's length, and the joints (with `OFFSETS`, the offsets)
    /// and the weights hold `k` slots for each vertex of the range, their count not wrapping
    /// (`drive_avx2`'s length check for LBS).
    #[inline(always)]
    pub(super) unsafe fn linear_slots8<const K: usize, const OFFSETS: bool>(
        &self,
        base: usize,
    ) -> (&'a [u16], &'a [f32]) {
        let k = self.k::<K>();
        let slots = base * k..(base + LANES) * k;
        // SAFETY: the caller guarantees that the slices hold these slots.
        unsafe {
            (
                if OFFSETS {
                    self.linear_offsets.get_unchecked(slots.clone())
                } else {
                    self.joints.get_unchecked(slots.clone())
                },
                self.weights.get_unchecked(slots),
            )
        }
    }
}

/// Whether any of these influences puts a non-zero weight on a non-rigid joint: DQS and CoR
/// then blend the vertex's residual (`dqs::Residual8`); blended's blocks between 0 and 1 go to
/// the scalar kernel.
#[inline(always)]
pub(super) fn on_non_rigid_joint(block: &Block<'_>, joints: &[u16], weights: &[f32]) -> bool {
    joints
        .iter()
        .zip(weights)
        .any(|(&j, &w)| w > 0.0 && !block.rigid[usize::from(j)])
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

/// Whether `offset`, an entry of the pivot sign table whose flip bit is `flip_bytes`, is a
/// sign flip.
#[inline(always)]
pub(super) fn is_flip(offset: u16, flip_bytes: u16) -> bool {
    offset & flip_bytes != 0
}

/// The sign flips that the call's tally (`flips::tallied_sign_flips`) counts for the vertices
/// `range` of the block's range: those of the range's first `tallied_vertices`, each vertex's
/// positively weighted influences whose entry in its pivot joint's row of the table is a flip
/// (0 where the call does not tally), blended's vertices at 0 left out as its tally leaves
/// them (`CheckedBlend::dq_pivot_pair_counts`). The driver adds them to
/// `RangeCounts::tallied_flips_recounted` where it sends vertices to the scalar kernel, which
/// counts their flips again.
pub(super) fn tallied_flips(block: &Block<'_>, range: std::ops::Range<usize>) -> usize {
    if !block.tally_flips {
        return 0;
    }
    let k = block.k::<0>();
    let mut flips = 0;
    for vertex in range.start..range.end.min(block.tallied_vertices) {
        if block
            .blend_values
            .is_some_and(|values| values.value(vertex) == 0.0)
        {
            continue;
        }
        let slots = vertex * k..(vertex + 1) * k;
        let (vertex_joints, weights) = (&block.joints[slots.clone()], &block.weights[slots]);
        let row = pivot_row_start(block.pivots[vertex]);
        for (&joint, &weight) in vertex_joints.iter().zip(weights) {
            if weight > 0.0 {
                let offset = block.signed_offsets[row + usize::from(joint)];
                flips += usize::from(is_flip(offset, block.signed_layout.flip_bytes));
            }
        }
    }
    flips
}

/// The flip bits of a block's influences (as [`table_flips`] takes them) from `offsets_sum`,
/// every influence's entry of the pivot sign table added as it was read (`joints8`, the
/// block's joints): less the layout's stride per joint, what remains is the flip bit per flip.
/// Summing whole entries takes one add per influence, where masking out the flip bit first
/// took three instructions: DQS with normals on a 2,000-vertex mesh of 64 joints (too few
/// influences per pivot pair for the per-call tally, as in a crowd, so every block counts)
/// 1.05–1.08× (`ab.py 9 "dq pnb 4 2000 20000"`, the AMD EPYC Zen 3 VM); the 1,000 × 2,000 DQS
/// crowd as one batch (`crowd_memory dq`, 6 alternated runs) 148.0 / 146.8 Mverts/s fastest /
/// median against 146.2 / 142.0, where its inputs' misses hide most of the gain. CoR's blend
/// (intrinsics, not `asm!`) ran 0.95× with it and keeps the mask.
#[inline(always)]
pub(super) fn flip_bits_of_offsets(
    block: &Block<'_>,
    joints8: &[u16],
    offsets_sum: usize,
) -> usize {
    let joints_sum: usize = joints8.iter().map(|&joint| usize::from(joint)).sum();
    offsets_sum - usize::from(block.signed_layout.stride_bytes) * joints_sum
}

/// The sign flips of a block blended with the pivot sign table, from `flip_bits` (each
/// influence's entry's flip bit, `Block::signed_layout`'s, added), less the flips of zero
/// weights, which never count (`zero_weights`: a vertex of the block has one, as its pivot
/// word says). Four or eight influences per vertex. The zero weights are found eight at a
/// time, as a bit per slot, and visited bit by bit: a real file's weights (zeros in most
/// vertices, where a branch per slot mispredicts) are what reach here.
#[inline(always)]
pub(super) fn table_flips<const K: usize>(
    block: &Block<'_>,
    base: usize,
    pivots: [u16; LANES],
    zero_weights: bool,
    flip_bits: usize,
) -> usize {
    assert!(K == 4 || K == 8);
    let mut flips = flip_bits / usize::from(block.signed_layout.flip_bytes);
    if zero_weights {
        let (joints8, weights8) = block.influences8::<K>(base);
        let (joints8, weights8) = (&joints8[..K * LANES], &weights8[..K * LANES]);
        // SAFETY: the kernels that count here run with AVX2 (the driver's token).
        let mut zeros = unsafe { zero_slots(weights8) };
        while zeros != 0 {
            let slot = zeros.trailing_zeros() as usize;
            zeros &= zeros - 1;
            let row = pivot_row_start(pivots[slot / K]);
            let offset = block.signed_offsets[row + usize::from(joints8[slot])];
            flips -= usize::from(is_flip(offset, block.signed_layout.flip_bytes));
        }
    }
    flips
}

/// A bit per weight of `weights` (at most 64, a whole number of eights) that is 0 (or -0),
/// bit `s` for slot `s`.
#[inline]
#[target_feature(enable = "avx2")]
fn zero_slots(weights: &[f32]) -> u64 {
    use std::arch::x86_64::{
        _mm256_cmp_ps, _mm256_loadu_ps, _mm256_movemask_ps, _mm256_setzero_ps, _CMP_EQ_OQ,
    };
    assert!(weights.len() <= 64);
    let mut bits = 0u64;
    for (i, eight) in weights.chunks_exact(LANES).enumerate() {
        // SAFETY: eight f32s.
        let v = unsafe { _mm256_loadu_ps(eight.as_ptr()) };
        let zero = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, _mm256_setzero_ps()));
        bits |= u64::from(zero as u8) << (LANES * i);
    }
    bits
}
