//! A mesh's bind-pose positions and normals kept a second time, eight vertices to a block with
//! one component of all eight per 32 bytes, for the SIMD kernels to read without transposing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use glam::Vec3;

use crate::simd::layout::BLOCK_VERTICES;

/// Eight `Vec3`s as `x₀..x₇, y₀..y₇, z₀..z₇`: each component one aligned 32-byte load. 96 bytes,
/// the size of the eight `Vec3`s it holds.
#[repr(C, align(32))]
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Vec3x8 {
    pub(crate) x: [f32; BLOCK_VERTICES],
    pub(crate) y: [f32; BLOCK_VERTICES],
    pub(crate) z: [f32; BLOCK_VERTICES],
}

// The SIMD kernels step through blocks 96 bytes at a time and load `x`, `y`, `z` at 0, 32, 64.
const _: () = assert!(std::mem::size_of::<Vec3x8>() == 96);
const _: () = assert!(std::mem::align_of::<Vec3x8>() == 32);
const _: () = assert!(std::mem::offset_of!(Vec3x8, y) == 32);
const _: () = assert!(std::mem::offset_of!(Vec3x8, z) == 64);

impl Vec3x8 {
    /// Vertices `8 b .. 8 b + 8` of `values` (which holds them).
    fn from_block(values: &[Vec3]) -> Self {
        let mut block = Self {
            x: [0.0; BLOCK_VERTICES],
            y: [0.0; BLOCK_VERTICES],
            z: [0.0; BLOCK_VERTICES],
        };
        for (lane, value) in values.iter().enumerate() {
            block.x[lane] = value.x;
            block.y[lane] = value.y;
            block.z[lane] = value.z;
        }
        block
    }
}

/// A mesh's bind-pose positions and normals in blocks of eight vertices, one component of all
/// eight per 32 bytes: what the SIMD kernels would otherwise make from the `Vec3` arrays, block
/// by block, with shuffles. A [`crate::SkinMesh`] builds them once from its own attributes, so
/// they always hold exactly its values; results are bit-identical with and without them (only
/// where a kernel reads its inputs changes). Costs 24 bytes per vertex per attribute
/// (positions, and normals where the mesh has them); the last `vertex_count % 8` vertices are
/// not held (the kernels skin them from the arrays).
///
/// Read by LBS with positions and normals, four influences and unit weight sums (the case
/// `skinblend bench` and the comparison with ozz-animation measure): 1.09× as fast as from the
/// arrays at 10k and 100k vertices, 1.08× at 1M (the fastest of five alternated runs each of
/// `kernel_instructions linear pnb 4 100000 300`, which reads a `SkinMesh`, and the same with
/// `pn`; see that bench's doc). Read too by LBS's other block kernels, DQS, CoR and blended's
/// blocks between 0 and 1 (`simd::loads::load3x8_or_block`, `load_block3x8`), at 100k: LBS
/// with tangents 1.09×, with two influences 1.09×, with eight 1.04×, DQS 1.06×, CoR 1.07×
/// (`ab.py 5 "linear pntb 4 100000 300"`, `"dq pnb ..."` and the like, against the build
/// before); nothing at 1M for DQS, where memory binds. Tangents are read from the arrays.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VertexBlocks {
    positions: Vec<Vec3x8>,
    normals: Option<Vec<Vec3x8>>,
}

impl VertexBlocks {
    /// The blocks of `positions`, and of `normals` where given. O(vertices); allocates the
    /// blocks.
    pub(crate) fn new(positions: &[Vec3], normals: Option<&[Vec3]>) -> Self {
        Self {
            positions: blocks_of(positions),
            normals: normals.map(blocks_of),
        }
    }

    /// The blocks of positions: block `b` holds vertices `8 b .. 8 b + 8`.
    // Read by the x86-64 kernels only.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn position_blocks(&self) -> &[Vec3x8] {
        &self.positions
    }

    /// The blocks of normals, where the mesh has normals.
    // Read by the x86-64 kernels only.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn normal_blocks(&self) -> Option<&[Vec3x8]> {
        self.normals.as_deref()
    }
}

/// A mesh's [`VertexBlocks`], built on the second request: building them costs about one
/// skinning's worth of memory traffic, which a mesh skinned once would never earn back.
#[derive(Debug, Default)]
pub(crate) struct LazyBlocks {
    built: OnceLock<VertexBlocks>,
    requested: AtomicBool,
}

impl Clone for LazyBlocks {
    fn clone(&self) -> Self {
        Self {
            built: self.built.clone(),
            requested: AtomicBool::new(self.requested.load(Ordering::Relaxed)),
        }
    }
}

impl LazyBlocks {
    /// The blocks of `positions` and `normals`: `None` on the first request, built (once) on
    /// any later one.
    pub(crate) fn get(
        &self,
        positions: &[Vec3],
        normals: Option<&[Vec3]>,
    ) -> Option<&VertexBlocks> {
        if let Some(blocks) = self.built.get() {
            return Some(blocks);
        }
        if !self.requested.swap(true, Ordering::Relaxed) {
            return None;
        }
        Some(
            self.built
                .get_or_init(|| VertexBlocks::new(positions, normals)),
        )
    }
}

/// The whole blocks of eight of `values`.
fn blocks_of(values: &[Vec3]) -> Vec<Vec3x8> {
    values
        .chunks_exact(BLOCK_VERTICES)
        .map(Vec3x8::from_block)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vertices(count: usize, salt: f32) -> Vec<Vec3> {
        (0..count)
            .map(|i| Vec3::new(i as f32, salt - i as f32, 0.5 * i as f32 + salt))
            .collect()
    }

    #[test]
    fn blocks_hold_each_whole_block_by_component() {
        let positions = vertices(19, 1.0);
        let normals = vertices(19, -3.0);
        assert!(VertexBlocks::new(&positions, None)
            .normal_blocks()
            .is_none());
        let blocks = VertexBlocks::new(&positions, Some(&normals));
        assert_eq!(
            blocks.position_blocks().len(),
            2,
            "19 vertices: two whole blocks"
        );
        for (b, block) in blocks.position_blocks().iter().enumerate() {
            for lane in 0..BLOCK_VERTICES {
                let p = positions[b * BLOCK_VERTICES + lane];
                assert_eq!([block.x[lane], block.y[lane], block.z[lane]], p.to_array());
            }
        }
        let n = normals[13];
        let block = &blocks.normal_blocks().unwrap()[1];
        assert_eq!([block.x[5], block.y[5], block.z[5]], n.to_array());
        // Bits, not values: a negative zero stays negative.
        let mut signed_zero = positions.clone();
        signed_zero[3].y = -0.0;
        let blocks = VertexBlocks::new(&signed_zero, None);
        assert_eq!(
            blocks.position_blocks()[0].y[3].to_bits(),
            (-0.0f32).to_bits()
        );
    }
}
