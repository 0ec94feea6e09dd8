//! Dense per-vertex weights (one column per joint) turned into `Influences`' sparse slots.

use crate::error::SkinError;
use crate::influences::Influences;

impl Influences {
    /// Sparse influences from dense per-vertex weights (`weights[v * joint_count + j]` is
    /// vertex `v`'s weight on joint `j`), converted once: `k` is the most non-zero weights of
    /// any vertex (at least 1), each vertex's non-zero joints fill its first slots in ascending
    /// joint order and the rest are `(0, 0.0)`. Values are kept as they are (no
    /// renormalization), so skinning the result equals skinning the dense weights. The same
    /// layout as the Python package's `sparse_weights`. O(vertices × joints) once.
    ///
    /// # Errors
    /// [`SkinError::InfluenceArrayNotWhole`] when `weights` is not whole rows of `joint_count`,
    /// [`SkinError::TooManyJoints`] above 65,536 joints, and as [`Influences::new`] for the
    /// weights (naming the vertex and, there, the sparse slot).
    pub fn from_dense_weights(weights: &[f32], joint_count: usize) -> Result<Self, SkinError> {
        if joint_count == 0 || !weights.len().is_multiple_of(joint_count) {
            return Err(SkinError::InfluenceArrayNotWhole {
                len: weights.len(),
                influences_per_vertex: joint_count.max(1),
            });
        }
        if joint_count > usize::from(u16::MAX) + 1 {
            return Err(SkinError::TooManyJoints {
                joint_count,
                max: usize::from(u16::MAX) + 1,
            });
        }
        let rows = weights.chunks_exact(joint_count);
        let k = crate::vectorize::vectorized(
            #[inline(always)]
            || {
                rows.clone()
                    .map(|row| row.iter().fold(0usize, |n, &w| n + usize::from(w != 0.0)))
                    .max()
                    .unwrap_or(0)
                    .max(1)
            },
        );
        let vertices = weights.len() / joint_count;
        let mut joints = vec![0u16; vertices * k];
        let mut sparse = vec![0.0f32; vertices * k];
        // Each row's non-zero weights found 32 at a time as a bit mask (no branch per weight),
        // then taken lowest bit first, in ascending joint order; the slots after stay (0, 0.0).
        const MASK_BITS: usize = 32;
        for ((row, row_joints), row_weights) in rows
            .zip(joints.chunks_exact_mut(k))
            .zip(sparse.chunks_exact_mut(k))
        {
            let mut slot = 0;
            for (chunk_index, chunk) in row.chunks(MASK_BITS).enumerate() {
                let mut mask = chunk
                    .iter()
                    .enumerate()
                    .fold(0u32, |mask, (bit, &w)| mask | (u32::from(w != 0.0) << bit));
                while mask != 0 {
                    let bit = mask.trailing_zeros() as usize;
                    // Below 65,536 (checked above); `slot` below `k`, the most of any row.
                    row_joints[slot] = (chunk_index * MASK_BITS + bit) as u16;
                    row_weights[slot] = chunk[bit];
                    slot += 1;
                    mask &= mask - 1;
                }
            }
        }
        Self::new(k, joints, sparse, joint_count)
    }
}
