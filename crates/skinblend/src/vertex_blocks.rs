//! A mesh's bind-pose positions and normals kept a second time, eight vertices to a block with
//! one component of all eight per 32 bytes, for the SIMD kernels to read without transposing.

use glam::Vec3;

use crate::simd::BLOCK_VERTICES;
use crate::types::SkinInput;
use crate::SkinError;

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

    /// The first lane whose bits differ from `values[lane]`, if any.
    fn first_difference(&self, values: &[Vec3]) -> Option<usize> {
        values.iter().enumerate().position(|(lane, value)| {
            self.x[lane].to_bits() != value.x.to_bits()
                || self.y[lane].to_bits() != value.y.to_bits()
                || self.z[lane].to_bits() != value.z.to_bits()
        })
    }
}

/// A mesh's bind-pose positions and normals in blocks of eight vertices, one component of all
/// eight per 32 bytes: what the SIMD kernels would otherwise make from the `Vec3` arrays, block
/// by block, with shuffles. Built once per mesh from its [`SkinInput`] and handed back to it with
/// [`SkinInput::with_vertex_blocks`]; results are bit-identical with and without it (only where
/// a kernel reads its inputs changes). Costs 24 bytes per vertex per attribute (positions, and
/// normals where the input has them); the last `vertex_count % 8` vertices are not held (the
/// kernels skin them from the arrays).
///
/// Read by LBS with positions and normals, four influences and unit weight sums (the case
/// `skinblend bench` and the comparison with ozz-animation measure): 1.04× / 1.05× / 1.04×
/// faster than from the arrays at 10k / 100k / 1M vertices (`tools/ozz-compare/ab.py` of
/// `kernel_instructions linear pn` against `pnb`, docs/bench.md "twenty-second session").
/// Every other kernel reads the arrays.
#[derive(Debug, Clone, PartialEq)]
pub struct VertexBlocks {
    vertex_count: usize,
    positions: Vec<Vec3x8>,
    normals: Option<Vec<Vec3x8>>,
}

impl VertexBlocks {
    /// The blocks of `input`'s positions, and of its normals where it has them. O(vertices);
    /// allocates the blocks.
    #[must_use]
    pub fn new(input: &SkinInput<'_>) -> Self {
        let blocks = |values: &[Vec3]| {
            values
                .chunks_exact(BLOCK_VERTICES)
                .map(Vec3x8::from_block)
                .collect()
        };
        Self {
            vertex_count: input.vertex_count(),
            positions: blocks(input.positions()),
            normals: input.normals().map(blocks),
        }
    }

    /// The vertex count of the input the blocks were made from.
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// Whether the blocks hold normals (the input they were made from had them).
    #[must_use]
    pub fn has_normals(&self) -> bool {
        self.normals.is_some()
    }

    /// The blocks of positions: block `b` holds vertices `8 b .. 8 b + 8`.
    // Read by the x86-64 kernels only.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn position_blocks(&self) -> &[Vec3x8] {
        &self.positions
    }

    /// The blocks of normals, where the input had normals.
    // Read by the x86-64 kernels only.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn normal_blocks(&self) -> Option<&[Vec3x8]> {
        self.normals.as_deref()
    }

    /// `Ok` where these blocks hold exactly `input`'s positions and normals, bit for bit.
    ///
    /// # Errors
    /// [`SkinError::AttributeLength`] (`"vertex_blocks"`) for another vertex count,
    /// [`SkinError::VertexBlocksMismatch`] naming the attribute and the first vertex that
    /// differs (or `vertex: None` where one side has normals and the other not).
    pub(crate) fn check_matches(&self, input: &SkinInput<'_>) -> Result<(), SkinError> {
        crate::types::check_length("vertex_blocks", input.vertex_count(), self.vertex_count)?;
        let compare = |attribute: &'static str, blocks: &[Vec3x8], values: &[Vec3]| {
            for (b, (block, values)) in blocks
                .iter()
                .zip(values.chunks_exact(BLOCK_VERTICES))
                .enumerate()
            {
                if let Some(lane) = block.first_difference(values) {
                    return Err(SkinError::VertexBlocksMismatch {
                        attribute,
                        vertex: Some(b * BLOCK_VERTICES + lane),
                    });
                }
            }
            Ok(())
        };
        compare("positions", &self.positions, input.positions())?;
        match (self.normals.as_deref(), input.normals()) {
            (Some(blocks), Some(values)) => compare("normals", blocks, values),
            (None, None) => Ok(()),
            _ => Err(SkinError::VertexBlocksMismatch {
                attribute: "normals",
                vertex: None,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Influences;

    fn vertices(count: usize, salt: f32) -> Vec<Vec3> {
        (0..count)
            .map(|i| Vec3::new(i as f32, salt - i as f32, 0.5 * i as f32 + salt))
            .collect()
    }

    #[test]
    fn blocks_hold_each_whole_block_by_component() {
        let positions = vertices(19, 1.0);
        let normals = vertices(19, -3.0);
        let influences = Influences::new(1, vec![0; 19], vec![1.0; 19], 1).unwrap();
        let input = SkinInput::new(&positions, Some(&normals), None, &influences).unwrap();
        let blocks = VertexBlocks::new(&input);
        assert_eq!(blocks.vertex_count(), 19);
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
        assert_eq!(blocks.check_matches(&input), Ok(()));
    }

    #[test]
    fn a_mismatch_names_the_attribute_and_vertex() {
        let positions = vertices(16, 1.0);
        let normals = vertices(16, 2.0);
        let influences = Influences::new(1, vec![0; 16], vec![1.0; 16], 1).unwrap();
        let input = SkinInput::new(&positions, Some(&normals), None, &influences).unwrap();
        let blocks = VertexBlocks::new(&input);

        let mut moved = normals.clone();
        moved[11].y += 1.0;
        let other = SkinInput::new(&positions, Some(&moved), None, &influences).unwrap();
        assert_eq!(
            other.with_vertex_blocks(&blocks).unwrap_err(),
            SkinError::VertexBlocksMismatch {
                attribute: "normals",
                vertex: Some(11)
            }
        );
        // Bits, not values: -0 is not +0 here.
        let mut signed_zero = positions.clone();
        signed_zero[0].x = -0.0;
        assert_eq!(positions[0].x.to_bits(), 0.0f32.to_bits());
        let other = SkinInput::new(&signed_zero, Some(&normals), None, &influences).unwrap();
        assert_eq!(
            other.with_vertex_blocks(&blocks).unwrap_err(),
            SkinError::VertexBlocksMismatch {
                attribute: "positions",
                vertex: Some(0)
            }
        );
        let without_normals = SkinInput::new(&positions, None, None, &influences).unwrap();
        assert_eq!(
            without_normals.with_vertex_blocks(&blocks).unwrap_err(),
            SkinError::VertexBlocksMismatch {
                attribute: "normals",
                vertex: None
            }
        );
        let shorter = Influences::new(1, vec![0; 8], vec![1.0; 8], 1).unwrap();
        let short_input = SkinInput::new(&positions[..8], None, None, &shorter).unwrap();
        assert_eq!(
            short_input.with_vertex_blocks(&blocks).unwrap_err(),
            SkinError::AttributeLength {
                attribute: "vertex_blocks",
                expected: 8,
                found: 16
            }
        );
        assert!(input.with_vertex_blocks(&blocks).is_ok());
    }
}
