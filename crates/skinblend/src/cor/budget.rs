//! The working-memory budget of the centers-of-rotation precomputation and the peak it bounds
//! (see the parent module's docs, "Memory").

use super::cluster::{CLUSTER_BYTES, JOINT_SLOT_BYTES, PAIR_BYTES, PAIR_ENTRY_BYTES};
use super::options::CorOptions;

/// The fixed part of the default working-memory budget (see the module docs, "Memory"), so
/// that a small mesh keeps the full quadrature however its weights vary. The densest sample
/// model, RiggedFigure (30 491 clusters and 245 042 pair entries over 256 triangles), needs
/// about 22 MB, 10 MB of it in its one chunk of triangles, whose share is an eighth of the
/// budget: 256 MiB leaves it a factor of three.
pub const COR_BUDGET_FIXED_BYTES: usize = 256 << 20;

/// The per-triangle part of the default working-memory budget: two clusters of four joints
/// with their pair entries per triangle beyond what the vertices' own weights need. Smooth
/// weights use a small fraction of it (a 100k-vertex painted cylinder: 4 102 clusters in all).
pub const COR_BUDGET_BYTES_PER_TRIANGLE: usize = 1024;

/// Bytes per vertex, beyond the budget, that the precomputation allocates for `k` influences
/// per vertex: the normalized weights (16 bytes per influence and an 8-byte offset), the map
/// from weight vectors to their first vertex (a key of 16 bytes per influence and a `HashMap`
/// bucket of up to 80 bytes), the vertex-to-vector index, and the centers (12 bytes, twice:
/// per distinct vector and per vertex), rounded up.
const fn per_vertex_overhead_bytes(k: usize) -> usize {
    k.saturating_mul(32).saturating_add(160)
}

/// Pairs of `n` things, saturating.
pub(super) fn pairs_of(n: usize) -> usize {
    n.saturating_mul(n.saturating_sub(1)) / 2
}

/// The clusters' working memory that the corner quadrature (every triangle lumped to its
/// corners) needs at most: one cluster per vertex with its `k` joints and their pairs, and every
/// pair of `joint_count` joints.
fn corner_quadrature_bytes(vertex_count: usize, k: usize, joint_count: usize) -> usize {
    let per_vertex = CLUSTER_BYTES
        .saturating_add(k.saturating_mul(JOINT_SLOT_BYTES))
        .saturating_add(pairs_of(k).saturating_mul(PAIR_ENTRY_BYTES));
    let joint_pairs = pairs_of(joint_count);
    vertex_count
        .saturating_mul(per_vertex)
        .saturating_add(joint_pairs.saturating_mul(PAIR_BYTES))
}

/// The default working-memory budget of the clusters for a mesh of `vertex_count` vertices with
/// `influences_per_vertex` influences each over `joint_count` joints, and `triangle_count`
/// triangles: [`COR_BUDGET_FIXED_BYTES`], plus [`COR_BUDGET_BYTES_PER_TRIANGLE`] per triangle,
/// plus what the corner quadrature needs (per vertex 192 bytes, 26 per influence and 48 per
/// pair of influences: 584 bytes for four; and 64 per pair of joints).
#[must_use]
pub fn default_memory_budget_bytes(
    vertex_count: usize,
    triangle_count: usize,
    influences_per_vertex: usize,
    joint_count: usize,
) -> usize {
    COR_BUDGET_FIXED_BYTES
        .saturating_add(triangle_count.saturating_mul(COR_BUDGET_BYTES_PER_TRIANGLE))
        .saturating_add(corner_quadrature_bytes(
            vertex_count,
            influences_per_vertex,
            joint_count,
        ))
}

/// The budget `options` give a mesh: [`CorOptions::memory_budget_bytes`] or the default, and
/// never less than the corner quadrature needs.
pub(super) fn memory_budget_bytes(
    options: &CorOptions,
    vertex_count: usize,
    triangle_count: usize,
    influences_per_vertex: usize,
    joint_count: usize,
) -> usize {
    let corner = corner_quadrature_bytes(vertex_count, influences_per_vertex, joint_count);
    options
        .memory_budget_bytes
        .unwrap_or_else(|| {
            default_memory_budget_bytes(
                vertex_count,
                triangle_count,
                influences_per_vertex,
                joint_count,
            )
        })
        .max(corner)
}

/// The most bytes [`super::rotation_centers`] allocates at once (its result included, its inputs
/// not) for a mesh of `vertex_count` vertices with `influences_per_vertex` influences each over
/// `joint_count` joints, and `triangle_count` triangles, under `options`: 9/4 of the budget
/// (the clusters merged so far, at most the budget; those of the chunks in flight, at most an
/// eighth of it each for eight chunks; a quarter for each chunk's last row of sub-triangles past
/// its share and the merge's temporary lists), plus 160 bytes and 32 per influence per vertex
/// for the weights and centers, plus 1 MiB for the thread pool's and the progress reports'
/// small allocations. Counted in bytes asked of the allocator (what a counting `GlobalAlloc`
/// sees; the process's resident memory adds the allocator's own overhead).
#[must_use]
pub fn memory_bound_bytes(
    vertex_count: usize,
    triangle_count: usize,
    influences_per_vertex: usize,
    joint_count: usize,
    options: &CorOptions,
) -> usize {
    let budget = memory_budget_bytes(
        options,
        vertex_count,
        triangle_count,
        influences_per_vertex,
        joint_count,
    );
    let per_vertex = per_vertex_overhead_bytes(influences_per_vertex);
    (budget / 4)
        .saturating_mul(9)
        .saturating_add(vertex_count.saturating_mul(per_vertex))
        .saturating_add(1 << 20)
}
