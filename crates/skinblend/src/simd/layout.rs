//! The memory layout the SIMD kernels read through pointer casts: the block size, the palette's
//! cache-line entries, the pivot sign table and each vertex's pivot word, and compile-time
//! asserts of the glam storage those casts rely on.
//!
//! Data layout only, the same on every target and free of intrinsics: `palette.rs`,
//! `influence_tables.rs` and `vertex_blocks.rs` build what the kernels read by these
//! definitions, and nothing here depends on them.

use std::mem::{align_of, offset_of, size_of};

use glam::{Affine3A, Mat3A, Quat, Vec3, Vec4};

use crate::dual_quat::DualQuat;

/// Vertices per block of the SIMD kernels: one per lane of a 256-bit register. Ranges split at
/// multiples of this skin every vertex exactly as the whole range does.
pub(crate) const BLOCK_VERTICES: usize = 8;

/// Lanes of a 256-bit register of f32s: the kernels hold one vertex of a block in each.
pub(crate) const LANES: usize = BLOCK_VERTICES;

// The kernels read these glam types as arrays of f32.
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
const _: () = assert!(size_of::<Affine3A>() == LINEAR_ENTRY_BYTES);
const _: () = assert!(offset_of!(Mat3A, x_axis) == 0 && offset_of!(Mat3A, y_axis) == 16);
const _: () = assert!(offset_of!(Mat3A, z_axis) == 32);

/// Bytes per entry of a prepared LBS palette: an `Affine3A`, 16 f32s ([`LineAligned`]).
pub(crate) const LINEAR_ENTRY_BYTES: usize = 64;

/// The most joints whose LBS palette offsets fit a `u16` (`Influences::linear_offsets`).
pub(crate) const LINEAR_OFFSET_MAX_JOINTS: usize = (u16::MAX as usize + 1) / LINEAR_ENTRY_BYTES;

/// One joint's 3x4, aligned to a 64-byte cache line: the SIMD kernels load a matrix as two
/// 32-byte halves, and in a 16-byte-aligned array every second half crossed a line (loads half
/// of which cross a line issue at 1.7 per cycle instead of 2.8, `tools/ozz-compare/port_probe.c`).
///
/// The translation's fourth lane (padding to glam, which never reads it) holds 1: the SIMD LBS
/// blend multiplies the whole 16 floats by each weight, so that lane of the blend is `Σw`, summed
/// in slot order as the scalar kernel sums it, with no instruction of its own
/// ([`TRANSLATION_PADDING_LANE`]).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct LineAligned(pub(crate) Affine3A);

// No padding: a slice of `LineAligned` is a slice of `Affine3A` with the same stride.
const _: () = assert!(size_of::<LineAligned>() == size_of::<Affine3A>());
const _: () = assert!(align_of::<LineAligned>() >= align_of::<Affine3A>());

/// Index of the translation's padding lane among the 16 f32s of a prepared `Affine3A`; it
/// holds 1 ([`LineAligned`]).
pub(crate) const TRANSLATION_PADDING_LANE: usize = 15;

impl LineAligned {
    /// `matrix`, its translation's padding lane set to 1.
    pub(crate) fn new(matrix: Affine3A) -> Self {
        let mut aligned = Self(matrix);
        // SAFETY: an `Affine3A` is 16 f32s (three column `Vec3A`s and the translation, 16
        // bytes each; asserted above), so lane 15 is an f32 inside `aligned`.
        unsafe {
            std::ptr::from_mut(&mut aligned.0)
                .cast::<f32>()
                .add(TRANSLATION_PADDING_LANE)
                .write(1.0);
        }
        aligned
    }
}

/// One line of `PreparedPalette::signed_entries`, on its own cache line: for DQS a joint's
/// dual quaternion in f32s 0..8 (real then dual) and its negation in f32s 8..16
/// ([`SignedLayout::DUAL_QUAT`]); for CoR the `Affine3A`'s 16 f32s (columns x, y, z,
/// translation, four lanes each) with lanes 3, 7, 11 and 15 holding the quaternion's x, y, z
/// and w, the negated quaternion on the next line ([`SignedLayout::ROTATION_LANES`]).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct SignedEntry(pub(crate) [f32; 16]);

// One line is 64 bytes; CoR's hold 3x4s in `Affine3A`'s layout above, DQS's two `DualQuat`s.
const _: () = assert!(size_of::<SignedEntry>() == 64 && align_of::<SignedEntry>() == 64);

impl SignedEntry {
    /// The padding lanes of a CoR line that hold the quaternion's x, y, z and w.
    pub(crate) const QUATERNION_LANES: [usize; 4] = [3, 7, 11, TRANSLATION_PADDING_LANE];

    /// A DQS line: `dq`'s eight f32s, then its negation's.
    pub(crate) fn dual_quat(dq: &DualQuat) -> Self {
        let mut lanes = [0.0; 16];
        lanes[..4].copy_from_slice(&dq.real.to_array());
        lanes[4..8].copy_from_slice(&dq.dual.to_array());
        for lane in 0..8 {
            lanes[8 + lane] = -lanes[lane];
        }
        Self(lanes)
    }

    /// A CoR line: `matrix` with `rotation` in its padding lanes.
    pub(crate) fn rotation_lanes(matrix: &Affine3A, rotation: Quat) -> Self {
        let mut lanes = [0.0; 16];
        for (column, axis) in [
            matrix.matrix3.x_axis,
            matrix.matrix3.y_axis,
            matrix.matrix3.z_axis,
            matrix.translation,
        ]
        .iter()
        .enumerate()
        {
            lanes[4 * column..4 * column + 3].copy_from_slice(&axis.to_array());
        }
        for (lane, value) in Self::QUATERNION_LANES.into_iter().zip(rotation.to_array()) {
            lanes[lane] = value;
        }
        Self(lanes)
    }
}

/// Where a joint's entries sit in `PreparedPalette::signed_entries`, which the pivot sign
/// table's byte offsets point to: joint `j`'s entry as prepared at `j · stride_bytes`, its
/// negation `flip_bytes` further. The flip is a bit of its own in every offset, which the
/// kernels and the flip tally read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SignedLayout {
    /// Bytes from one joint's entries to the next joint's.
    pub(crate) stride_bytes: u16,
    /// What an offset adds to select the negated entry: its one "sign flip" bit.
    pub(crate) flip_bytes: u16,
}

impl SignedLayout {
    /// DQS and blended: a dual quaternion (32 bytes) and its negation share one line, so a
    /// palette's entries take one line per joint, half the lines of one line per sign. Against
    /// a line per sign, on the AMD EPYC Zen 3 VM, six alternated runs of `crowd_memory -- dq`:
    /// the 1,000 × 2,000 crowd as one batch 147.3 / 146.2 Mverts/s (fastest / median) against
    /// 144.4 / 142.0, and `palette_update` at 64 DQS joints 2.62–2.80 µs against 2.89–3.03 (three
    /// runs); the cached kernel unchanged (`ab.py 9 "dq pnb 4 100000 400"`, 0.999×).
    pub(crate) const DUAL_QUAT: Self = Self {
        stride_bytes: 64,
        flip_bytes: 32,
    };
    /// CoR: a 3x4 with its quaternion fills a line, and the negated quaternion's line follows.
    pub(crate) const ROTATION_LANES: Self = Self {
        stride_bytes: 128,
        flip_bytes: 64,
    };
}

// Every offset of the table fits its u16, and the flip is a bit of its own below the stride.
const _: () = {
    let layouts = [SignedLayout::DUAL_QUAT, SignedLayout::ROTATION_LANES];
    let mut i = 0;
    while i < layouts.len() {
        let SignedLayout {
            stride_bytes,
            flip_bytes,
        } = layouts[i];
        assert!(
            PIVOT_SIGN_TABLE_MAX_JOINTS * stride_bytes as usize <= u16::MAX as usize + 1
                && stride_bytes == 2 * flip_bytes
                && flip_bytes.is_power_of_two()
                && flip_bytes >= 32
        );
        i += 1;
    }
};

/// The most joints for which a prepared DQS or CoR palette holds its pivot sign table
/// (`PreparedPalette::signed_offsets`): 128² entries of 2 bytes, 32 KiB (each joint's row is
/// this long: 16 KiB for 64 joints). The table is rebuilt with every `update`: for 64 joints
/// about what the SIMD DQS kernel spends on 700 vertices (instructions counted by
/// `valgrind --tool=callgrind` on `kernel_instructions dq pn 4 8 1`, see that bench's doc).
/// Larger palettes skip the table, and their SIMD kernels dot each influence with the pivot.
pub(crate) const PIVOT_SIGN_TABLE_MAX_JOINTS: usize = 128;

/// Bytes of one row of the pivot sign table: [`PIVOT_SIGN_TABLE_MAX_JOINTS`] offsets.
pub(crate) const PIVOT_ROW_BYTES: usize = PIVOT_SIGN_TABLE_MAX_JOINTS * size_of::<u16>();

/// The pivot slot's bits in a vertex's pivot word (`Influences::pivots`).
pub(crate) const PIVOT_SLOT_BITS: u16 = 0b0000_0111;
/// Set in a pivot word when the vertex has a zero weight (`+0` or `-0`).
pub(crate) const PIVOT_HAS_ZERO_WEIGHT: u16 = 0b0100_0000;
/// Set in a pivot word when the vertex's largest weight is below `MIN_WEIGHT_SUM` (every weight
/// tiny: the scalar kernel decides whether it is unweighted).
pub(crate) const PIVOT_LIGHT: u16 = 0b1000_0000;
/// The high byte of a pivot word: the byte offset of the pivot joint's row in a palette's pivot
/// sign table, `pivot joint · PIVOT_ROW_BYTES` (`pivot joint << 8`), where the joint count is
/// at most [`PIVOT_SIGN_TABLE_MAX_JOINTS`] (the only meshes whose palettes have the table);
/// else 0. The SIMD kernels add it to the table's address: one load and a mask per vertex
/// instead of decoding the slot, loading its joint (a load more on the chain of dependent loads
/// that ends at the palette entries) and multiplying by the row length.
pub(crate) const PIVOT_ROW_BITS: u16 = 0xFF00;
// Every row offset fits the high byte, and the low byte's bits are the slot's and the flags'.
const _: () = assert!(
    PIVOT_ROW_BYTES == 1 << 8
        && PIVOT_SIGN_TABLE_MAX_JOINTS <= 256
        && (PIVOT_SLOT_BITS | PIVOT_HAS_ZERO_WEIGHT | PIVOT_LIGHT) & PIVOT_ROW_BITS == 0
);

#[cfg(test)]
mod tests {
    use glam::{Affine3A, Quat, Vec4};

    #[test]
    fn lane_order_of_glam_types() {
        // The kernels read these as f32 arrays: x, y, z, w in that order.
        let v = Vec4::new(1.0, 2.0, 3.0, 4.0);
        let q = Quat::from_xyzw(5.0, 6.0, 7.0, 8.0);
        assert_eq!(lanes_of(v), [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(lanes_of(q), [5.0, 6.0, 7.0, 8.0]);
        let m = Affine3A::from_cols_array(&[
            1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
        ]);
        // SAFETY: an `Affine3A` is 64 bytes (asserted above) and every bit pattern is an f32.
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

    /// The four f32s of a 16-byte glam type, in memory order.
    fn lanes_of<T: Copy>(value: T) -> [f32; 4] {
        assert_eq!(size_of::<T>(), 16);
        // SAFETY: `value` is 16 bytes (asserted) of a type made of f32s, and the read is
        // unaligned, so any address will do.
        unsafe {
            std::ptr::from_ref(&value)
                .cast::<[f32; 4]>()
                .read_unaligned()
        }
    }
}
