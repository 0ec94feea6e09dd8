//! The dual quaternion blend through the palette's pivot sign table (DQS with four or eight
//! influences): each influence's dual quaternion read as prepared or negated, as the vertex's
//! pivot row says, four influences per `asm!` block ([`blend4_signed`], beside its intrinsics
//! twin).

use std::arch::x86_64::*;

use super::block::{block_pivots, flip_bits_of_offsets, pivot_row, table_flips, Block};
use super::layout::{SignedLayout, LANES, PIVOT_SIGN_TABLE_MAX_JOINTS};
use super::loads::transpose8;

/// `dq_blend::blend8` of DQS (real and dual parts) for four or eight influences per vertex with
/// the palette's pivot sign table (`Block::signed_offsets`, not empty): each vertex's blend in
/// one register `real | dual`, one influence at a time, each influence's dual quaternion read
/// from the half line its entry in the row of the vertex's pivot joint points to (the joint's
/// dual quaternion or its negation, which share the joint's line in `Block::signed_entries`;
/// [`blend4_signed`]), instead of the slot-by-slot blend's dot of every influence with the
/// pivot; then the eight blends transposed. The same decisions as the scalar kernel (the table holds its sign test, the
/// pivot is `block_pivots`'), so the same flips and results up to f32 rounding. Reading the
/// negated half takes no sign broadcast and no xor per influence: against the slot-by-slot
/// blend, DQS with normals 1.15× at 100k (`ab.py 15 "dq pn 4 100000 500"` against a build
/// without the table; the measuring recipe is in `simd/mod.rs`). CoR reads the table in its
/// own blend (`cor::blend_with_rotations8`).
///
/// # Safety
/// The CPU has AVX2 and FMA; `block.signed_offsets` is the table of `block.dual_quats` and
/// `block.signed_entries` its entries.
#[inline(always)]
pub(super) unsafe fn blend_signed_table8<const K: usize>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 8], usize)> {
    // SAFETY: as this function's.
    unsafe {
        if block.tally_flips {
            blend_signed_table8_counting::<K, false>(block, base)
        } else {
            blend_signed_table8_counting::<K, true>(block, base)
        }
    }
}

/// [`blend_signed_table8`], counting the flips where `C` (else the call counts them once,
/// `flips::tallied_sign_flips`, and this returns 0).
///
/// # Safety
/// As [`blend_signed_table8`].
#[inline(always)]
unsafe fn blend_signed_table8_counting<const K: usize, const C: bool>(
    block: &Block<'_>,
    base: usize,
) -> Option<([__m256; 8], usize)> {
    assert!(K == 4 || K == 8);
    let (joints8, weights8) = block.influences8::<K>(base);
    let (joints8, weights8) = (&joints8[..K * LANES], &weights8[..K * LANES]);
    let joints = block.dual_quats.len();
    assert!(
        block.signed_offsets.len() == joints * PIVOT_SIGN_TABLE_MAX_JOINTS
            && block.signed_entries.len() == joints
            && block.signed_layout == SignedLayout::DUAL_QUAT
    );
    // SAFETY: (the whole body) the caller guarantees AVX2 and FMA; the pointer reads are justified
    // where they are.
    unsafe {
        let (pivots, zero_weights) = block_pivots(block, base)?;
        let entries = block.signed_entries.as_ptr().cast::<f32>();
        let table = block.signed_offsets.as_ptr();
        let mut count = 0;
        let mut rows = [_mm256_setzero_ps(); LANES];
        for (l, row) in rows.iter_mut().enumerate() {
            let vertex_joints = &joints8[K * l..K * (l + 1)];
            // SAFETY: the vertex's pivot joint is inside the palette, so its row is inside the
            // table; each call reads four weights and four joints of this vertex (K is 4 or
            // 8), every joint is inside the palette and its row, and every offset of the table
            // points to a dual quaternion of `entries` (asserted lengths).
            let offsets = pivot_row(table, pivots[l]);
            let weights = weights8.as_ptr().add(K * l);
            let mut blend = _mm256_setzero_ps();
            for group in 0..K / 4 {
                blend = blend4_signed::<C>(
                    blend,
                    weights.add(4 * group),
                    vertex_joints.as_ptr().add(4 * group),
                    offsets,
                    entries,
                    &mut count,
                );
            }
            *row = blend;
        }
        let flips = if C {
            let flip_bits = flip_bits_of_offsets(block, joints8, count);
            table_flips::<K>(block, base, pivots, zero_weights, flip_bits)
        } else {
            0
        };
        Some((transpose8(rows), flips))
    }
}

/// `blend + Σₛ weights[s] · (the 8 f32s at entries + offsets[joints[s]])` over four influences:
/// each influence's dual quaternion, or its negation where the pivot sign table's row
/// `offsets` says so, as one `asm!` block: per influence a joint load, its offset's load, a
/// weight broadcast, an add and a multiply-add reading the entry through a register alone (an
/// indexed memory operand would cost a second rename slot, see
/// `lbs_positions::position_pair4`). Where `C`, adds each offset to `count`, from which
/// `block::flip_bits_of_offsets` takes the flip bits.
///
/// # Safety
/// The CPU has AVX2 and FMA; `weights` and `joints` are valid for reading four elements, every
/// joint `j` among them indexes `offsets` (`offsets[j]` readable), and every offset read is
/// that of 32 readable bytes of `entries`.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn blend4_signed<const C: bool>(
    blend: __m256,
    weights: *const f32,
    joints: *const u16,
    offsets: *const u16,
    entries: *const f32,
    count: &mut usize,
) -> __m256 {
    if cfg!(skinblend_intrinsics) {
        // SAFETY: the caller's contract.
        return unsafe {
            blend4_signed_intrinsics::<C>(blend, weights, joints, offsets, entries, count)
        };
    }
    let mut blend = blend;
    // One influence: its joint at byte `$joint` of `joints`, its weight at byte `$weight` of
    // `weights`; `$count` counts its flip or is empty.
    macro_rules! influence {
        ($joint:literal, $weight:literal, $count:literal) => {
            concat!(
                "movzx {j:e}, word ptr [{joints} + ",
                $joint,
                "]\n",
                "movzx {j:e}, word ptr [{offsets} + 2*{j}]\n",
                "vbroadcastss {w}, dword ptr [{weights} + ",
                $weight,
                "]\n",
                $count,
                "add {j}, {entries}\n",
                "vfmadd231ps {blend}, {w}, ymmword ptr [{j}]\n",
            )
        };
    }
    // The same four influences, with or without the count.
    macro_rules! four {
        ($count:literal) => {
            std::arch::asm!(
                influence!("0", "0", $count),
                influence!("2", "4", $count),
                influence!("4", "8", $count),
                influence!("6", "12", $count),
                weights = in(reg) weights,
                joints = in(reg) joints,
                offsets = in(reg) offsets,
                entries = in(reg) entries,
                j = out(reg) _,
                w = out(ymm_reg) _,
                blend = inout(ymm_reg) blend,
                count = inout(reg) *count,
                options(pure, readonly, nostack),
            )
        };
    }
    // SAFETY: the caller guarantees the reads; the block reads memory and writes registers only.
    unsafe {
        if C {
            four!("add {count}, {j}\n");
        } else {
            four!("/* {count}: not counted */\n");
        }
    }
    blend
}

/// [`blend4_signed`]'s intrinsics twin: the same loads and multiply-adds in the same order, so
/// the same bits and the same count.
///
/// # Safety
/// As [`blend4_signed`].
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn blend4_signed_intrinsics<const C: bool>(
    blend: __m256,
    weights: *const f32,
    joints: *const u16,
    offsets: *const u16,
    entries: *const f32,
    count: &mut usize,
) -> __m256 {
    let mut blend = blend;
    for s in 0..4 {
        // SAFETY: the caller guarantees the four joints and weights, each joint's offset and
        // each offset's 32 bytes.
        unsafe {
            let offset = offsets.add(usize::from(joints.add(s).read())).read();
            let weight = _mm256_set1_ps(weights.add(s).read());
            if C {
                *count += usize::from(offset);
            }
            let line = _mm256_loadu_ps(entries.byte_add(usize::from(offset)));
            blend = _mm256_fmadd_ps(weight, line, blend);
        }
    }
    blend
}
