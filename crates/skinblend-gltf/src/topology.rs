//! Triangles of a primitive: the one place that turns `mode` and the index list (or the implicit
//! one) into triangles, for export, the centers of rotation and the reports.

use gltf::json::mesh::Mode;

use crate::model::Primitive;

impl Primitive {
    /// The primitive's triangles (its indices, or `0..n` when it has none), counter-clockwise
    /// as stored; strips and fans converted, points and lines give none. Allocates the result.
    #[must_use]
    pub fn triangles(&self) -> Vec<[u32; 3]> {
        match &self.indices {
            Some(index) => triangles(self.mode, index),
            None => {
                let index: Vec<u32> = (0..self.positions.len() as u32).collect();
                triangles(self.mode, &index)
            }
        }
    }
}

/// Triangles of a primitive's index list, counter-clockwise as stored (strips and fans
/// converted; points and lines give none). Allocates the result.
#[must_use]
pub fn triangles(mode: Mode, index: &[u32]) -> Vec<[u32; 3]> {
    match mode {
        Mode::Triangles => index.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
        Mode::TriangleStrip => (2..index.len())
            .map(|i| {
                if i % 2 == 0 {
                    [index[i - 2], index[i - 1], index[i]]
                } else {
                    [index[i - 1], index[i - 2], index[i]]
                }
            })
            .collect(),
        Mode::TriangleFan => (2..index.len())
            .map(|i| [index[i - 1], index[i], index[0]])
            .collect(),
        _ => Vec::new(),
    }
}
