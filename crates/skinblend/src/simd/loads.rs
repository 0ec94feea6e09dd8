//! Loads, stores and transposes between the vertex arrays or palette entries and eight-lane
//! registers (one component of eight vertices per register).
//!
//! Four of these are `asm!` blocks, each beside its intrinsics twin (`*_intrinsics`), which a
//! build with `--cfg skinblend_intrinsics` uses instead and `simd::checkasm` tests it against:
//! [`shuffle_ps`], the stores of [`store3x8`], [`load_entry_halves`] and [`load_entry_pairs`].

use std::arch::x86_64::*;

use glam::{Vec3, Vec4};

use super::layout::LANES;
use crate::vertex_blocks::Vec3x8;

/// `_mm256_shuffle_ps::<IMM>(a, b)`, kept a `vshufps`: LLVM rewrites the pair-moving masks
/// (`0x44`, `0xEE`) as `vunpcklpd`/`vunpckhpd`, which on the cores `port_probe.c` measured issue
/// on one port (the one every lane-crossing shuffle needs) where `vshufps` issues on two
/// (`tools/ozz-compare/port_probe.c`).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn shuffle_ps<const IMM: i32>(a: __m256, b: __m256) -> __m256 {
    if cfg!(skinblend_intrinsics) {
        return shuffle_ps_intrinsics::<IMM>(a, b);
    }
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

/// [`shuffle_ps`]'s intrinsics twin.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn shuffle_ps_intrinsics<const IMM: i32>(a: __m256, b: __m256) -> __m256 {
    _mm256_shuffle_ps::<IMM>(a, b)
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

/// Loads elements `base .. base + 8` of a packed `Vec3` slice as `[x, y, z]`, eight lanes
/// each: vertices 0-3 in the low halves and 4-7 in the high halves, as three 16-byte loads
/// and three `vinsertf128` from memory, then five in-lane `vshufps` (no lane-crossing
/// shuffle).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn load3x8(values: &[Vec3], base: usize) -> [__m256; 3] {
    let block = &values[base..base + LANES];
    let p = block.as_ptr().cast::<f32>();
    // SAFETY: `block` is 8 Vec3s, 24 contiguous f32s (`layout`'s asserts): 16-byte loads at
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

/// Vertices `base .. base + 8` of `values` as [`load3x8`] gives them, read from `blocks` (the
/// range's `VertexBlocks`, block `b` holding vertices `8 b .. 8 b + 8`) where it holds their
/// block: three aligned loads instead of six loads and five shuffles. The same values either way
/// (the blocks are the mesh's own attributes).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn load3x8_or_block(blocks: &[Vec3x8], values: &[Vec3], base: usize) -> [__m256; 3] {
    match blocks.get(base / LANES) {
        Some(block) => load_block3x8(block),
        None => load3x8(values, base),
    }
}

/// The eight vertices of `block`, one component per register: three aligned loads.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn load_block3x8(block: &Vec3x8) -> [__m256; 3] {
    // SAFETY: each component is eight f32s at a 32-byte boundary (`Vec3x8`'s asserts).
    unsafe {
        [
            _mm256_load_ps(block.x.as_ptr()),
            _mm256_load_ps(block.y.as_ptr()),
            _mm256_load_ps(block.z.as_ptr()),
        ]
    }
}

/// Stores `[x, y, z]` (eight lanes each) into elements `base .. base + 8`; the inverse of
/// [`load3x8`]: seven in-lane `vshufps`, six 16-byte stores (the high halves by `vextractf128`
/// to memory, a store with no shuffle). The stores are one `asm!` block: as intrinsics
/// ([`store_rows3_intrinsics`]), LLVM merges them into three 32-byte stores built by a
/// `vinsertf128`, a `vperm2f128` and a `vblendps` (three more shuffles), which with 12-byte
/// vertices cross a cache line in every other block (LBS with normals at 1M vertices 1.06×
/// with the block, `ab.py 15 "linear pn 4 1000000 100"` against the twin; the measuring recipe
/// is in `simd/mod.rs`).
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
    if cfg!(skinblend_intrinsics) {
        // SAFETY: `block` is 8 Vec3s, 96 contiguous writable bytes (`layout`'s asserts).
        unsafe { store_rows3_intrinsics(p, rows) };
        return;
    }
    // SAFETY: `block` is 8 Vec3s, 96 contiguous writable bytes (`layout`'s asserts): 16 bytes
    // at 16r and at 48 + 16r (r < 3) are inside it. The block writes that memory only.
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

/// The stores of [`store3x8`] as intrinsics, its twin: the three rows `(r_low | r_high)`
/// written as eight packed `Vec3`s, each low half at `16 r` bytes of `p`, each high half at
/// `48 + 16 r`.
///
/// # Safety
/// The CPU has AVX; `p` is valid for writing 96 bytes.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn store_rows3_intrinsics(p: *mut f32, rows: [__m256; 3]) {
    for (r, row) in rows.into_iter().enumerate() {
        // SAFETY: the caller guarantees 96 writable bytes at `p`: f32s 4r .. 4r + 4 and
        // 12 + 4r .. 16 + 4r (r < 3) are inside them.
        unsafe {
            _mm_storeu_ps(p.add(4 * r), _mm256_castps256_ps128(row));
            _mm_storeu_ps(p.add(12 + 4 * r), _mm256_extractf128_ps::<1>(row));
        }
    }
}

/// `(lo | hi)`: 16 bytes from `lo` in the low half and 16 from `hi` in the high half, as one
/// load and one `vinsertf128` from memory (a load and an ALU uop any of three ports takes, not
/// the one shuffle port a register-to-register lane permute needs; `port_probe.c`).
///
/// # Safety
/// The CPU has AVX; both pointers are valid for reading four f32s.
#[inline(always)]
pub(super) unsafe fn load_halves(lo: *const f32, hi: *const f32) -> __m256 {
    // SAFETY: the caller guarantees AVX and both reads.
    unsafe { _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi)) }
}

/// `(lo | hi)` of two palette entries: 16 bytes at `base + 4 (low + BYTES / 4)` in the low half
/// and at `base + 4 (high + BYTES / 4)` in the high half (offsets in f32s, `BYTES` a byte
/// displacement inside the entry), as one load and one `vinsertf128` from memory. An `asm!`
/// block keeps the two together: as intrinsics, the compiler hoists the loads of a whole block
/// ahead of their inserts, runs out of registers and spills the halves.
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
    if cfg!(skinblend_intrinsics) {
        // SAFETY: the caller's contract.
        return unsafe { load_entry_halves_intrinsics::<BYTES>(base, low, high) };
    }
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

/// [`load_entry_halves`]'s intrinsics twin.
///
/// # Safety
/// As [`load_entry_halves`].
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn load_entry_halves_intrinsics<const BYTES: usize>(
    base: *const f32,
    low: usize,
    high: usize,
) -> __m256 {
    // SAFETY: the caller guarantees both reads.
    unsafe {
        load_halves(
            base.add(low).byte_add(BYTES),
            base.add(high).byte_add(BYTES),
        )
    }
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
    if cfg!(skinblend_intrinsics) {
        // SAFETY: the caller's contract.
        return unsafe { load_entry_pairs_intrinsics(base, low, high) };
    }
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

/// [`load_entry_pairs`]'s intrinsics twin.
///
/// # Safety
/// As [`load_entry_pairs`].
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn load_entry_pairs_intrinsics(
    base: *const f32,
    low: usize,
    high: usize,
) -> (__m256, __m256) {
    // SAFETY: the caller guarantees both 32-byte reads.
    unsafe {
        let (low, high) = (base.add(low), base.add(high));
        (load_halves(low, high), load_halves(low.add(4), high.add(4)))
    }
}

/// Tangents `base .. base + 8` as `[x, y, z]` and `w`, eight lanes each.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn load_tangents8(values: &[Vec4], base: usize) -> ([__m256; 3], __m256) {
    let block = &values[base..base + LANES];
    let p = block.as_ptr().cast::<f32>();
    let mut rows = [_mm256_setzero_ps(); 4];
    for (l, row) in rows.iter_mut().enumerate() {
        // SAFETY: AVX is enabled here; elements l and l + 4 of the 8-element block, 16 bytes
        // each (a `Vec4` is four f32s, x y z w).
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
