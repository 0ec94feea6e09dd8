//! What every block kernel shares: the layout contracts of the types the kernels read through
//! pointer casts, the per-call context of a vertex range, AoS ↔ SoA loads, stores and
//! transposes, and eight-wide vector helpers.

use std::arch::x86_64::*;
use std::mem::{align_of, offset_of, size_of, MaybeUninit};

use glam::{Affine3A, Mat3A, Quat, Vec3, Vec4};

use crate::influences::MIN_WEIGHT_SUM;
use crate::palette::{PreparedPalette, SignedEntry};
use crate::types::SkinInput;
use crate::vertex_blocks::{Vec3x8, VertexBlocks};
use crate::DualQuat;

// Layout contracts: the kernels read these types as arrays of f32 through pointer casts.
// `Vec3`: x, y, z packed (12 bytes), so eight of them are 24 contiguous f32s.
const _: () = assert!(size_of::<Vec3>() == 12 && align_of::<Vec3>() == 4);
const _: () = assert!(offset_of!(Vec3, x) == 0 && offset_of!(Vec3, y) == 4);
const _: () = assert!(offset_of!(Vec3, z) == 8);
// `Vec4` (tangents) and `Quat`: four f32s, x y z w in lane order (lane order pinned by the
// `lane_order_of_glam_types` test; glam stores them as one 128-bit register).
const _: () = assert!(size_of::<Vec4>() == 16 && size_of::<Quat>() == 16);
// `DualQuat` (`#[repr(C)]`): real at 0, dual at 16: one 32-byte load is `real | dual`.
const _: () = assert!(size_of::<DualQuat>() == 32);
const _: () = assert!(offset_of!(DualQuat, real) == 0 && offset_of!(DualQuat, dual) == 16);
// `Affine3A`: columns x, y, z, then the translation, each a 16-byte `Vec3A` (x y z in lanes
// 0..3, lane 3 padding): one matrix is 16 f32s. The kernels load the padding lanes with their
// columns and discard the columns' unread (`column_padding_lanes_are_never_used`); the
// translation's is 1 in a prepared palette and carries LBS's weight sum
// (`translation_padding_lane_carries_the_weight_sum`).
const _: () = assert!(size_of::<Affine3A>() == 64 && offset_of!(Affine3A, matrix3) == 0);
const _: () = assert!(offset_of!(Affine3A, translation) == 48);
const _: () = assert!(size_of::<Affine3A>() == crate::influences::LINEAR_ENTRY_BYTES);
const _: () = assert!(offset_of!(Mat3A, x_axis) == 0 && offset_of!(Mat3A, y_axis) == 16);
const _: () = assert!(offset_of!(Mat3A, z_axis) == 32);
// `SignedEntry` (the lines the pivot sign table points into, `#[repr(C, align(64))]` around 16
// f32s): one line is 64 bytes; CoR's hold 3x4s in `Affine3A`'s layout above, DQS's a
// `DualQuat` in its first 32 bytes.
const _: () = assert!(size_of::<SignedEntry>() == 64 && align_of::<SignedEntry>() == 64);

/// Vertices per block: one per lane of a 256-bit register.
pub(super) const LANES: usize = super::BLOCK_VERTICES;

/// The borrowed per-call arrays of one vertex range, and the palette's arrays.
pub(super) struct Block<'a> {
    k: usize,
    pub(super) joints: &'a [u16],
    pub(super) weights: &'a [f32],
    /// LBS: the range's slots of `Influences::linear_offsets` (each joint's palette entry as a
    /// byte offset), or empty where the mesh has none (more than `LINEAR_OFFSET_MAX_JOINTS`
    /// joints): the kernels then shift each joint.
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
    /// LBS and CoR: the joints' 3x4s.
    pub(super) linear: &'a [Affine3A],
    /// DQS and CoR: the joints' rigid parts.
    pub(super) dual_quats: &'a [DualQuat],
    /// DQS and CoR: whether each joint is rigid.
    pub(super) rigid: &'a [bool],
    /// DQS and CoR: the palette's pivot sign table (`PreparedPalette::signed_offsets`: per
    /// joint a row of `PIVOT_SIGN_TABLE_MAX_JOINTS` byte offsets into `signed_entries`), or
    /// empty.
    pub(super) signed_offsets: &'a [u16],
    /// DQS and CoR with the pivot sign table: each joint's line as prepared, then negated
    /// (`PreparedPalette::signed_entries`), or empty.
    pub(super) signed_entries: &'a [SignedEntry],
    /// LBS and CoR's center blend divide by each vertex's weight sum: the call renormalizes and
    /// some vertex's sum is not 1 within `linear::UNIT_WEIGHT_SUM_BAND`
    /// (`linear::divides_by_weight_sums`; DQS normalizes anyway).
    pub(super) divide_by_weight_sums: bool,
    /// LBS divides its blended 3x3 by `Σw` before the normals and tangents
    /// (`linear::columns_need_normalizing`).
    pub(super) normalize_columns: bool,
    /// Every vertex of the mesh has a weight sum of at least `MIN_WEIGHT_SUM`
    /// (`Influences::weight_sum_range`): no block has an unweighted vertex to test for.
    pub(super) all_weighted: bool,
    /// DQS and CoR: no vertex's blended rotation part can be too short or too long for
    /// `Rotation8::from_real` (`dual_quat::real_blends_usable`), so it tests none.
    pub(super) real_blends_usable: bool,
    /// LBS's singular test without column lengths: `linear::singular_bound_root`.
    pub(super) singular_bound_root: Option<f32>,
    /// The same test's bound for every block at once, where every weight sum is 1 within
    /// `linear::UNIT_WEIGHT_SUM_BAND`: `linear::unit_singular_bound`.
    pub(super) unit_singular_bound: Option<f32>,
    /// DQS and CoR: the call counts sign flips once from the mesh's pivot pair counts
    /// (`super::flip_tally`), so the table blends count none; the first `tallied_vertices`
    /// vertices of the range are among those the counts include.
    pub(super) tally_flips: bool,
    pub(super) tallied_vertices: usize,
}

impl<'a> Block<'a> {
    /// The range `first_vertex .. first_vertex + count` of `input`. Lengths were checked by
    /// `skin_into`: every joint index is below the palette's joint count.
    pub(super) fn new<const K: usize>(
        input: &SkinInput<'a>,
        palette: &'a PreparedPalette,
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
        let tally_flips = super::flip_tally(input, palette).is_some();
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
            linear_offsets: influences
                .linear_offsets()
                .get(vertices.start * k..vertices.end * k)
                .unwrap_or_default(),
            pivots: influences
                .pivots()
                .get(vertices.clone())
                .unwrap_or_default(),
            positions: &input.positions()[vertices.clone()],
            normals: input.normals().map(|n| &n[vertices.clone()]),
            tangents: input.tangents().map(|t| &t[vertices.clone()]),
            position_blocks: range_blocks(blocks.map(VertexBlocks::position_blocks)),
            normal_blocks: range_blocks(blocks.and_then(VertexBlocks::normal_blocks)),
            centers: input.rotation_centers().map(|c| &c[vertices]),
            linear: palette.linear_matrices(),
            dual_quats: &palette.dual_quats,
            rigid: &palette.rigid,
            signed_offsets: &palette.signed_offsets,
            signed_entries: &palette.signed_entries,
            divide_by_weight_sums: super::linear::divides_by_weight_sums(
                renormalize,
                influences.weight_sum_range(),
            ),
            normalize_columns: super::linear::columns_need_normalizing(
                renormalize,
                influences.weight_sum_range(),
            ),
            all_weighted: influences.weight_sum_range().0 >= MIN_WEIGHT_SUM,
            singular_bound_root: super::linear::singular_bound_root(
                k,
                influences.weight_sum_range(),
                palette.largest_column_length,
            ),
            real_blends_usable: super::dual_quat::real_blends_usable(
                k,
                influences.weight_sum_range(),
                palette.real_length_range,
            ),
            unit_singular_bound: super::linear::unit_singular_bound(
                k,
                influences.weight_sum_range(),
                palette.largest_column_length,
            ),
            tally_flips,
            tallied_vertices,
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

/// The palette offsets of a block's joints (eight vertices, up to eight influences each), in
/// f32s from the start of the palette array, widened and scaled eight at a time: the kernels'
/// loads then take an offset as one scalar load and need no shift per influence. Filled in
/// place (a returned copy would be moved lane by lane). Used by the slot-by-slot DQ blend only:
/// the other blends read each joint where they use it, which measured faster for them (the
/// store and reload head the block's dependency chain) and slower for this one (docs/bench.md
/// "Latency").
#[repr(C, align(32))]
pub(super) struct JointOffsets(MaybeUninit<[u32; 8 * LANES]>);

impl JointOffsets {
    /// Nothing filled yet.
    #[inline(always)]
    pub(super) fn new() -> Self {
        Self(MaybeUninit::uninit())
    }

    /// Fills offsets `0 .. joints.len()` with `joint << SHIFT` (palette entries of `1 << SHIFT`
    /// f32s); `joints.len()` is a multiple of 8 and at most 64.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) unsafe fn fill<const SHIFT: i32>(&mut self, joints: &[u16]) {
        assert!(joints.len().is_multiple_of(LANES) && joints.len() <= 8 * LANES);
        let out = self.0.as_mut_ptr().cast::<__m256i>();
        for i in 0..joints.len() / LANES {
            // SAFETY: the caller guarantees AVX2; reads joints 8i .. 8i + 8 (inside `joints`,
            // asserted above) and writes entries 8i .. 8i + 8, 32-byte aligned. The write is
            // volatile so that it stays one vector store: the compiler would otherwise store
            // the lanes one by one with extracts, for the scalar reads of `get`.
            unsafe {
                let eight = _mm_loadu_si128(joints.as_ptr().add(LANES * i).cast());
                let scaled = _mm256_slli_epi32::<SHIFT>(_mm256_cvtepu16_epi32(eight));
                std::ptr::write_volatile(out.add(i), scaled);
            }
        }
    }

    /// Offset `i`, as one scalar load (volatile: the compiler would otherwise extract it from
    /// the vector that wrote it, with a shuffle).
    ///
    /// # Safety
    /// `i` is below the length of the last `fill`.
    #[inline(always)]
    pub(super) unsafe fn get(&self, i: usize) -> usize {
        assert!(i < 8 * LANES);
        // SAFETY: inside the array (asserted) and written by `fill` (the caller).
        unsafe { self.0.as_ptr().cast::<u32>().add(i).read_volatile() as usize }
    }
}

/// `_mm256_shuffle_ps::<IMM>(a, b)`, kept a `vshufps`. LLVM rewrites the pair-moving masks
/// (`0x44`, `0xEE`) as `vunpcklpd`/`vunpckhpd`, which on the cores measured here issue on one
/// port (the one every lane-crossing shuffle needs) where `vshufps` issues on two
/// (`tools/ozz-compare/port_probe.c`).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn shuffle_ps<const IMM: u8>(a: __m256, b: __m256) -> __m256 {
    let out: __m256;
    // SAFETY: AVX is enabled here; the instruction reads and writes registers only.
    unsafe {
        std::arch::asm!(
            "vshufps {out}, {a}, {b}, {imm}",
            a = in(ymm_reg) a,
            b = in(ymm_reg) b,
            imm = const IMM,
            out = lateout(ymm_reg) out,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    out
}

/// Transposes 8 rows of 8 into 8 columns: `out[c]` lane `l` = `rows[l]` lane `c`.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn transpose8(rows: [__m256; 8]) -> [__m256; 8] {
    let [r0, r1, r2, r3, r4, r5, r6, r7] = rows;
    let [u0, u1, u2, u3] = transpose4_in_halves([r0, r1, r2, r3]);
    let [u4, u5, u6, u7] = transpose4_in_halves([r4, r5, r6, r7]);
    [
        _mm256_permute2f128_ps::<0x20>(u0, u4),
        _mm256_permute2f128_ps::<0x20>(u1, u5),
        _mm256_permute2f128_ps::<0x20>(u2, u6),
        _mm256_permute2f128_ps::<0x20>(u3, u7),
        _mm256_permute2f128_ps::<0x31>(u0, u4),
        _mm256_permute2f128_ps::<0x31>(u1, u5),
        _mm256_permute2f128_ps::<0x31>(u2, u6),
        _mm256_permute2f128_ps::<0x31>(u3, u7),
    ]
}

/// Loads elements `base .. base + 8` of a packed `Vec3` slice as `[x, y, z]`, eight lanes
/// each: vertices 0-3 in the low halves and 4-7 in the high halves, as three 16-byte loads
/// and three `vinsertf128` from memory, then five in-lane `vshufps` (no lane-crossing
/// shuffle).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn load3x8(values: &[Vec3], base: usize) -> [__m256; 3] {
    let block = &values[base..base + LANES];
    let p = block.as_ptr().cast::<f32>();
    // SAFETY: `block` is 8 Vec3s, 24 contiguous f32s (layout asserts above): 16-byte loads at
    // 0, 4, 8, 12, 16 and 20 are inside it.
    let (a, b, c) = unsafe {
        (
            load_halves(p, p.add(12)),
            load_halves(p.add(4), p.add(16)),
            load_halves(p.add(8), p.add(20)),
        )
    };
    // Per half (vertices v..v + 4): a = x0 y0 z0 x1, b = y1 z1 x2 y2, c = z2 x3 y3 z3.
    let x2y2x3y3 = shuffle_ps::<0x9E>(b, c);
    let y0z0y1z1 = shuffle_ps::<0x49>(a, b);
    [
        shuffle_ps::<0x8C>(a, x2y2x3y3),
        shuffle_ps::<0xD8>(y0z0y1z1, x2y2x3y3),
        shuffle_ps::<0xCD>(y0z0y1z1, c),
    ]
}

/// Stores `[x, y, z]` (eight lanes each) into elements `base .. base + 8`; the inverse of
/// [`load3x8`]: seven in-lane `vshufps`, six 16-byte stores (the high halves by `vextractf128`
/// to memory, a store with no shuffle). The stores are one `asm!` block: as intrinsics, LLVM
/// merged them into three 32-byte stores built by a `vinsertf128`, a `vperm2f128` and a
/// `vblendps` (three more shuffles), which with 12-byte vertices cross a cache line in every
/// other block. By `ab.py`'s fastest calls: LBS with normals 1.006× / 1.018× / 1.058× at 10k /
/// 100k / 1M, DQS 1.023×, CoR 1.042× at 10k (docs/bench.md "fifteenth session").
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn store3x8(values: &mut [Vec3], base: usize, [x, y, z]: [__m256; 3]) {
    let x0x1y0y1 = shuffle_ps::<0x44>(x, y);
    let x2x3y2y3 = shuffle_ps::<0xEE>(x, y);
    let z0z2x1x3 = shuffle_ps::<0xD8>(z, x);
    let y1y3z1z3 = shuffle_ps::<0xDD>(y, z);
    // Per half: x0 y0 z0 x1, y1 z1 x2 y2, z2 x3 y3 z3.
    let rows = [
        shuffle_ps::<0x88>(x0x1y0y1, z0z2x1x3),
        shuffle_ps::<0x88>(y1y3z1z3, x2x3y2y3),
        shuffle_ps::<0xDD>(z0z2x1x3, y1y3z1z3),
    ];
    let block = &mut values[base..base + LANES];
    let p = block.as_mut_ptr().cast::<f32>();
    // SAFETY: `block` is 8 Vec3s, 96 contiguous writable bytes: 16 bytes at 16r and at
    // 48 + 16r (r < 3) are inside it.
    unsafe {
        std::arch::asm!(
            "vmovups xmmword ptr [{p}], {r0:x}",
            "vextractf128 xmmword ptr [{p} + 48], {r0}, 1",
            "vmovups xmmword ptr [{p} + 16], {r1:x}",
            "vextractf128 xmmword ptr [{p} + 64], {r1}, 1",
            "vmovups xmmword ptr [{p} + 32], {r2:x}",
            "vextractf128 xmmword ptr [{p} + 80], {r2}, 1",
            p = in(reg) p,
            r0 = in(ymm_reg) rows[0],
            r1 = in(ymm_reg) rows[1],
            r2 = in(ymm_reg) rows[2],
            options(nostack, preserves_flags),
        );
    }
}

/// `(lo | hi)`: 16 bytes from `lo` in the low half and 16 from `hi` in the high half, as one
/// load and one `vinsertf128` from memory (a load and an ALU uop any of three ports takes, not
/// the one shuffle port a register-to-register lane permute needs; `port_probe.c`).
///
/// # Safety
/// Both pointers are valid for reading four f32s.
#[inline(always)]
pub(super) unsafe fn load_halves(lo: *const f32, hi: *const f32) -> __m256 {
    // SAFETY: the caller guarantees both reads.
    unsafe { _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi)) }
}

/// `(lo | hi)` of two palette entries: 16 bytes at `base + 4 (low + BYTES / 4)` in the low half
/// and at `base + 4 (high + BYTES / 4)` in the high half (offsets in f32s, `BYTES` a byte
/// displacement inside the entry), as one load and one `vinsertf128` from memory. Written as
/// one `asm!` block so that the two stay together: as intrinsics, the compiler hoists the
/// loads of a whole block ahead of their inserts, runs out of registers and spills the halves
/// (measured: about 8 instructions per vertex more in DQS).
///
/// # Safety
/// The CPU has AVX; both 16-byte reads are inside one allocation that `base` points into.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn load_entry_halves<const BYTES: usize>(
    base: *const f32,
    low: usize,
    high: usize,
) -> __m256 {
    let out: __m256;
    // SAFETY: the caller guarantees both reads; the block only reads memory and writes `out`.
    unsafe {
        std::arch::asm!(
            "vmovups {out:x}, xmmword ptr [{base} + 4*{low} + {bytes}]",
            "vinsertf128 {out}, {out}, xmmword ptr [{base} + 4*{high} + {bytes}], 1",
            base = in(reg) base,
            low = in(reg) low,
            high = in(reg) high,
            bytes = const BYTES,
            out = out(ymm_reg) out,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    out
}

/// Both halves of two 32-byte palette entries at offsets `low` and `high` (in f32s) of `base`:
/// `(low[0..4] | high[0..4])` and `(low[4..8] | high[4..8])`, each as one load and one insert
/// from memory, in one `asm!` block (see [`load_entry_halves`]).
///
/// # Safety
/// The CPU has AVX; both 32-byte reads are inside one allocation that `base` points into.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn load_entry_pairs(
    base: *const f32,
    low: usize,
    high: usize,
) -> (__m256, __m256) {
    let (first, second): (__m256, __m256);
    // SAFETY: the caller guarantees the reads; the block only reads memory and writes outputs.
    unsafe {
        std::arch::asm!(
            "vmovups {first:x}, xmmword ptr [{base} + 4*{low}]",
            "vinsertf128 {first}, {first}, xmmword ptr [{base} + 4*{high}], 1",
            "vmovups {second:x}, xmmword ptr [{base} + 4*{low} + 16]",
            "vinsertf128 {second}, {second}, xmmword ptr [{base} + 4*{high} + 16], 1",
            base = in(reg) base,
            low = in(reg) low,
            high = in(reg) high,
            first = out(ymm_reg) first,
            second = out(ymm_reg) second,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    (first, second)
}

/// Transposes four rows `(a_l | b_l)` of two 4-vectors each (`l` = 0..4) into four registers,
/// register `c` holding component `c` of `a_0 a_1 a_2 a_3 | b_0 b_1 b_2 b_3`: eight in-lane
/// shuffles, none crossing the 128-bit halves.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn transpose4_in_halves(rows: [__m256; 4]) -> [__m256; 4] {
    let [r0, r1, r2, r3] = rows;
    // Pairs first, then even and odd lanes: all `vshufps`.
    let low01 = shuffle_ps::<0x44>(r0, r1);
    let high01 = shuffle_ps::<0xEE>(r0, r1);
    let low23 = shuffle_ps::<0x44>(r2, r3);
    let high23 = shuffle_ps::<0xEE>(r2, r3);
    [
        shuffle_ps::<0x88>(low01, low23),
        shuffle_ps::<0xDD>(low01, low23),
        shuffle_ps::<0x88>(high01, high23),
        shuffle_ps::<0xDD>(high01, high23),
    ]
}

/// Tangents `base .. base + 8` as `[x, y, z]` and `w`, eight lanes each.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn load_tangents8(values: &[Vec4], base: usize) -> ([__m256; 3], __m256) {
    let block = &values[base..base + LANES];
    let p = block.as_ptr().cast::<f32>();
    let mut rows = [_mm256_setzero_ps(); 4];
    for (l, row) in rows.iter_mut().enumerate() {
        // SAFETY: elements l and l + 4 of the 8-element block, 16 bytes each (a `Vec4` is four
        // f32s, x y z w).
        *row = unsafe { load_halves(p.add(4 * l), p.add(4 * (l + 4))) };
    }
    // rows hold (t_l | t_{l+4}); transposing gives x, y, z, w in lanes l and l + 4.
    let [x, y, z, w] = transpose4_in_halves(rows);
    ([x, y, z], w)
}

/// Stores tangents `base .. base + 8` from `[x, y, z]` and `w`; the inverse of
/// [`load_tangents8`].
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn store_tangents8(values: &mut [Vec4], base: usize, [x, y, z]: [__m256; 3], w: __m256) {
    // (v_l | v_{l+4}) for l = 0..4.
    let rows = transpose4_in_halves([x, y, z, w]);
    let block = &mut values[base..base + LANES];
    let p = block.as_mut_ptr().cast::<f32>();
    for (l, row) in rows.iter().enumerate() {
        // SAFETY: elements l and l + 4 of the 8-element block, 16 writable bytes each.
        unsafe {
            _mm_storeu_ps(p.add(4 * l), _mm256_castps256_ps128(*row));
            _mm_storeu_ps(p.add(4 * (l + 4)), _mm256_extractf128_ps::<1>(*row));
        }
    }
}

/// `a × b`, lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn cross8(a: [__m256; 3], b: [__m256; 3]) -> [__m256; 3] {
    [
        _mm256_fmsub_ps(a[1], b[2], _mm256_mul_ps(a[2], b[1])),
        _mm256_fmsub_ps(a[2], b[0], _mm256_mul_ps(a[0], b[2])),
        _mm256_fmsub_ps(a[0], b[1], _mm256_mul_ps(a[1], b[0])),
    ]
}

/// `a · b`, lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn dot8(a: [__m256; 3], b: [__m256; 3]) -> __m256 {
    _mm256_fmadd_ps(
        a[2],
        b[2],
        _mm256_fmadd_ps(a[1], b[1], _mm256_mul_ps(a[0], b[0])),
    )
}

/// `|v|`, lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn abs8(v: __m256) -> __m256 {
    _mm256_andnot_ps(_mm256_set1_ps(-0.0), v)
}

/// Lanes where `v` is finite and above zero (NaN fails both ordered comparisons).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn finite_positive8(v: __m256) -> __m256 {
    _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_LT_OQ>(v, _mm256_set1_ps(f32::INFINITY)),
        _mm256_cmp_ps::<_CMP_GT_OQ>(v, _mm256_setzero_ps()),
    )
}

/// Squared lengths in `[2^FAST_NORMALIZE_LOW_EXPONENT, 2^(FAST_NORMALIZE_LOW_EXPONENT +
/// 2^FAST_NORMALIZE_SPAN_LOG2))`, that is `[2⁻⁶⁴, 2⁶⁴)` (lengths `[2⁻³², 2³²)`), take the fast
/// inverse square root of [`normalize8_or`]: `rsqrt`'s table and one Newton step are accurate
/// there (relative error below 1e-6, well inside `SIMD_VS_SCALAR`), and every such length has a
/// finite, positive exact inverse, so the fallback is never taken for them. Outside it (zero,
/// subnormal, huge, NaN) a block takes the exact path of the scalar kernel. A window of whole
/// binades, tested on the bits by [`all_in_binades8`]: no floating-point compare on the two
/// pipes the multiplies need.
const FAST_NORMALIZE_LOW_EXPONENT: i32 = -64;
/// See [`FAST_NORMALIZE_LOW_EXPONENT`]: 2⁷ binades.
const FAST_NORMALIZE_SPAN_LOG2: u32 = 7;

/// Whether every lane of `v` is in `[2^LOW, 2^(LOW + 2^SPAN_LOG2))` (so positive, finite and
/// normal where the window is inside the normal range), by integer operations on the bits:
/// `bits − bits(2^LOW)` is below `2^(23 + SPAN_LOG2)` unsigned exactly for those lanes (a
/// positive f32's bits increase with its value; negative values, zero, subnormals below the
/// window, infinities and NaN all land at or above the limit), so one subtraction and one
/// `vptest` of the bits above the limit replace two compares and an and. The compares issue on
/// the two pipes the multiplies need; the subtraction on any of four (docs/bench.md: each
/// multiply-class instruction less in LBS's block is about half a cycle).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn all_in_binades8<const LOW: i32, const SPAN_LOG2: u32>(v: __m256) -> bool {
    const { assert!(23 + SPAN_LOG2 < 32 && LOW >= -126 && LOW + (1 << SPAN_LOG2) <= 128) };
    let [low, above] = const { binade_window_bits(LOW, SPAN_LOG2) };
    let offset = _mm256_sub_epi32(_mm256_castps_si256(v), _mm256_set1_epi32(low as i32));
    _mm256_testz_si256(offset, _mm256_set1_epi32(above as i32)) == 1
}

/// [`all_in_binades8`]'s two constants for the window `[2^low, 2^(low + 2^span_log2))`: the
/// bits of `2^low`, subtracted from each lane's, and the mask of the bits that must then be 0.
pub(super) const fn binade_window_bits(low: i32, span_log2: u32) -> [u32; 2] {
    [
        ((127 + low) << 23) as u32,
        !((1u32 << (23 + span_log2)) - 1),
    ]
}

/// The fast normalize's window ([`FAST_NORMALIZE_LOW_EXPONENT`]) as [`binade_window_bits`]:
/// what the hand-written LBS loop (`lbs_loop`) tests its normals' squared lengths against.
pub(super) const FAST_NORMALIZE_WINDOW_BITS: [u32; 2] =
    binade_window_bits(FAST_NORMALIZE_LOW_EXPONENT, FAST_NORMALIZE_SPAN_LOG2);

/// Unit vectors along `v`, lane by lane, or `fallback` where `v` has no finite non-zero
/// length (the contract of glam's `try_normalize`).
///
/// When every lane's squared length is inside the window of [`FAST_NORMALIZE_LOW_EXPONENT`],
/// the inverse length is `rsqrt` with one Newton step (four multiplies, no divider) instead of
/// the correctly rounded `1 / sqrt`, a square root and a division on the divider for each
/// block: 1.04× (LBS), 1.01–1.03× (DQS), 1.03–1.04× (CoR) with normals (docs/bench.md). `vrsqrtps` is
/// not specified bit-exactly, so the last bits may differ between CPU vendors. Otherwise the
/// block takes `1 / sqrt` and glam's finite-and-positive test, as the scalar kernel.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn normalize8_or(v: [__m256; 3], fallback: [__m256; 3]) -> [__m256; 3] {
    normalize8_flipped_or(v, _mm256_setzero_ps(), fallback)
}

/// [`normalize8_or`] of `v` with the sign bits `flip` (`-0.0` or `0.0` per lane) xored into
/// each component, bit for bit, but the flip applied after the length is taken (a length
/// ignores signs): a flip that is known late (LBS's mirror test waits for the determinant) is
/// off the block's dependency chain. `fallback` is returned as it is, unflipped.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn normalize8_flipped_or(
    v: [__m256; 3],
    flip: __m256,
    fallback: [__m256; 3],
) -> [__m256; 3] {
    let squared = dot8(v, v);
    if let Some([y0, correction]) = fast_inverse_length_factors8(squared) {
        // `v y₀` beside the correction, one multiply less on the chain; flipped there too.
        let scaled = scale8(v, y0).map(|c| _mm256_xor_ps(c, flip));
        return scale8(scaled, correction);
    }
    let inverse = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_sqrt_ps(squared));
    let ok = finite_positive8(inverse);
    let mut out = [_mm256_setzero_ps(); 3];
    for a in 0..3 {
        let unit = _mm256_xor_ps(_mm256_mul_ps(v[a], inverse), flip);
        out[a] = _mm256_blendv_ps(fallback[a], unit, ok);
    }
    out
}

/// `1 / √squared` by `rsqrt` and one Newton step where every lane of `squared` is inside
/// the window of [`FAST_NORMALIZE_LOW_EXPONENT`], else `None`: the product of
/// [`fast_inverse_length_factors8`].
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn fast_inverse_length8(squared: __m256) -> Option<__m256> {
    fast_inverse_length_factors8(squared).map(|[y0, correction]| _mm256_mul_ps(y0, correction))
}

/// `1 / √squared` as two factors, `rsqrt`'s estimate `y₀` and one Newton step's correction
/// `(3 − x y₀²) / 2`, where every lane of `squared` is inside the window of
/// [`FAST_NORMALIZE_LOW_EXPONENT`], else `None`. Kept apart so that a caller can scale by `y₀`
/// beside the correction.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn fast_inverse_length_factors8(squared: __m256) -> Option<[__m256; 2]> {
    if !all_in_binades8::<FAST_NORMALIZE_LOW_EXPONENT, FAST_NORMALIZE_SPAN_LOG2>(squared) {
        return None;
    }
    let y0 = _mm256_rsqrt_ps(squared);
    let half_three_minus = _mm256_fnmadd_ps(
        _mm256_mul_ps(squared, y0),
        _mm256_mul_ps(y0, _mm256_set1_ps(0.5)),
        _mm256_set1_ps(1.5),
    );
    Some([y0, half_three_minus])
}

/// [`normalize8_or`] of `rotated`, a rotation of `original` (so of its length, up to the
/// rotation's rounding): `rotated` scaled by `original`'s inverse length where every lane of
/// `original` has a squared length inside the window of [`FAST_NORMALIZE_LOW_EXPONENT`] (its
/// rotation is then finite and non-zero, so the fallback is never due), else
/// `normalize8_or(rotated, original)`. The inverse length then depends on the input alone, not on the blend: the block's dependency
/// chain ends at the rotation (CoR with normals 1.06–1.07×, DQS 0.98–0.99×, fastest calls of
/// `tools/ozz-compare/ab.py`, docs/bench.md "Latency"). It differs from the rotated vector's
/// own by the rotation's rounding, a few f32 ulps, well inside `SIMD_VS_SCALAR`.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn normalize8_rotated_or(rotated: [__m256; 3], original: [__m256; 3]) -> [__m256; 3] {
    match fast_inverse_length8(dot8(original, original)) {
        Some(inverse) => scale8(rotated, inverse),
        None => normalize8_or(rotated, original),
    }
}

/// `v` scaled by `s`, lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn scale8(v: [__m256; 3], s: __m256) -> [__m256; 3] {
    [
        _mm256_mul_ps(v[0], s),
        _mm256_mul_ps(v[1], s),
        _mm256_mul_ps(v[2], s),
    ]
}

/// `a + b`, lane by lane.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn add8(a: [__m256; 3], b: [__m256; 3]) -> [__m256; 3] {
    [
        _mm256_add_ps(a[0], b[0]),
        _mm256_add_ps(a[1], b[1]),
        _mm256_add_ps(a[2], b[2]),
    ]
}

/// Whether every lane of a comparison mask is set.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn all8(mask: __m256) -> bool {
    _mm256_movemask_ps(mask) == 0xFF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_order_of_glam_types() {
        // The kernels read these as f32 arrays: x, y, z, w in that order.
        let v = Vec4::new(1.0, 2.0, 3.0, 4.0);
        let q = Quat::from_xyzw(5.0, 6.0, 7.0, 8.0);
        // SAFETY: both are 16 bytes (asserted above), and every bit pattern is an f32.
        let (v, q): ([f32; 4], [f32; 4]) = unsafe {
            (
                std::mem::transmute::<Vec4, [f32; 4]>(v),
                std::mem::transmute::<Quat, [f32; 4]>(q),
            )
        };
        assert_eq!(v, [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(q, [5.0, 6.0, 7.0, 8.0]);
        let m = Affine3A::from_cols_array(&[
            1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
        ]);
        // SAFETY: 64 bytes (asserted above).
        let lanes: [f32; 16] = unsafe { std::mem::transmute(m) };
        for (column, expected) in [
            [1.0, 2.0, 3.0],
            [4.0, 5.0, 6.0],
            [7.0, 8.0, 9.0],
            [10.0, 11.0, 12.0],
        ]
        .iter()
        .enumerate()
        {
            assert_eq!(
                &lanes[column * 4..column * 4 + 3],
                expected,
                "column {column}"
            );
        }
    }

    /// `all_in_binades8` against the two float compares it replaces, on the window's edges and
    /// their neighbours, zero, subnormals, negatives, infinities and NaN: a lane in the window
    /// must pass, one outside must fail the whole block.
    #[test]
    fn binade_window_is_the_float_range() {
        if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
            return; // nothing to run the test on
        }
        let (low, high) = (2f32.powi(-64), 2f32.powi(64));
        let below = |x: f32| f32::from_bits(x.to_bits() - 1);
        let samples = [
            low,
            below(low),
            high,
            below(high),
            1.0,
            0.0,
            -0.0,
            f32::from_bits(1),
            f32::MIN_POSITIVE,
            -1.0,
            -low,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::MAX,
        ];
        for &x in &samples {
            let expected = (low..high).contains(&x);
            // The sample in one lane, 1.0 (inside) in the others.
            for lane in [0, 7] {
                let mut lanes = [1.0f32; 8];
                lanes[lane] = x;
                // SAFETY: AVX2 and FMA are available (checked above); 8 f32s.
                let inside = unsafe {
                    all_in_binades8::<FAST_NORMALIZE_LOW_EXPONENT, FAST_NORMALIZE_SPAN_LOG2>(
                        _mm256_loadu_ps(lanes.as_ptr()),
                    )
                };
                assert_eq!(inside, expected, "{x:e} in lane {lane}");
            }
        }
    }
}
