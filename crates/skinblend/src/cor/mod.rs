//! Centers of rotation (Le & Hodgins 2016, "Real-time skeletal skinning with optimized centers
//! of rotation"): the per-vertex precomputation (this file), its clustering (`cluster.rs`), and a
//! small binary format to save its result (`file_format.rs`).
//!
//! Each vertex `i` gets a center of rotation `p*_i`, the area-weighted average of the mesh's
//! triangle centroids `c_t`, each weighted by how similar the triangle's skinning weights `w_t`
//! are to the vertex's `w_i`:
//!
//! `p*_i = Σ_t s(w_i, w_t) A_t c_t / Σ_t s(w_i, w_t) A_t`, with
//! `s(w_p, w_v) = Σ_{j<k} w_pj w_pk w_vj w_vk exp(−(w_pj w_vk − w_pk w_vj)² / σ²)`.
//!
//! Weights are sparse vectors over all joints, each vertex's normalized to sum to one (as the
//! skinning kernels do by default); a triangle's weights are the mean of its vertices'. Before
//! the sum every triangle is subdivided (edges split at their midpoints, weights averaged, which
//! is uniform 1-to-4 splitting for weights linear over the triangle) until the weights at the two
//! ends of every edge differ by at most ε (Euclidean norm), so that the sum is a fine enough
//! quadrature of the paper's integral. At run time ([`crate::Method::CenterOfRotation`]) the
//! vertex turns by the blended joint rotation about `p*`, which LBS places: this keeps a twisted
//! joint round (unlike LBS) without DQS's bulge at a bend.
//!
//! `s` is zero unless both weight vectors have at least two joints in common, so a vertex with a
//! single influence has no center (it needs none: every method moves it rigidly with its joint);
//! such a vertex holds [`NO_ROTATION_CENTER`] and is skinned by DQS. The count is
//! [`RotationCenters::vertices_without_center`].
//!
//! # Cost
//! Not the naive O(vertices × triangles). `p*` depends only on the vertex's weights, so it is
//! computed once per distinct weight vector. Sub-triangles are merged into clusters by their
//! joints and their weights rounded to [`CorOptions::weight_quantum`] (each cluster keeps its
//! area, area-weighted centroid sum and area-weighted mean weights, so a cluster of identical
//! weights is exact), and `s` is summed pair of joints by pair of joints over only the clusters
//! that hold both joints. With the `rayon` feature both stages run on the current rayon pool;
//! the work is split into fixed chunks and every sum is taken in a fixed order, so the result is
//! bit-identical on any number of threads, and to [`CorOptions::parallel`] `false`.
//!
//! # Memory
//! Clusters merge only where neighbouring weights agree. Where they do not (weights that change
//! from vertex to vertex, e.g. four random joints of 64 per vertex) every triangle splits into
//! 64 to 256 sub-triangles of up to 12 joints, each its own cluster with up to 66 joint pairs:
//! over 100 kB per triangle, 23 GB for 100k vertices before this bound. So the clusters and
//! their pair index get a working-memory budget, [`CorOptions::memory_budget_bytes`], by default
//! [`default_memory_budget_bytes`]: [`COR_BUDGET_FIXED_BYTES`] (256 MiB) +
//! [`COR_BUDGET_BYTES_PER_TRIANGLE`] (1 KiB) per triangle + what the corner quadrature below
//! needs (584 bytes per vertex for four influences, and 64 per pair of joints). Their size is
//! counted from the number of clusters, joints and pairs (upper bounds of what they allocate),
//! so the decision is deterministic.
//!
//! The precomputation first tries the full quadrature. If the clusters merged so far (with the
//! pair index they will need), or those of any one chunk of triangles (with at most an eighth of
//! the budget), pass the budget, it starts again with the triangles whose subdivision could
//! create more than 4096 pair entries (sub-triangles × joint pairs) *lumped*: each corner with
//! two or more joints stands for the third of the triangle nearest to it (area `A/3`, centroid
//! `(22a + 7b + 7c)/36` for corner `a`) with that vertex's own weights, so those clusters are at
//! most one per distinct vertex weight vector. Then above 256 entries, and finally every
//! triangle, which fits by construction. The attempts, chunks and merge order are the same on
//! any thread count, so the result stays bit-identical to the serial one.
//! [`RotationCenters::lumped_triangles`] counts the lumped triangles.
//!
//! Smooth weights never get there: the fixtures, the sample models and 100k-vertex painted
//! cylinders (`examples/cor_timing.rs`) use a few percent of the budget and are unchanged to the
//! bit. Lumping trades the sub-triangle quadrature of the lumped triangles for one sample per
//! corner: on random weights (four random joints of 64 per vertex on a grid of 400 and 1600
//! vertices) the centers move by a mean 8% and 6% of the mesh's diagonal against the full
//! quadrature. On such weights the full quadrature is itself a noisy average of many unrelated
//! triangles. At ε below the default a dense small mesh may pass the budget too (RiggedFigure
//! and Fox at ε = 0.03 lump half their triangles); raise [`CorOptions::memory_budget_bytes`] to
//! keep it exact.
//!
//! The peak is at most [`memory_bound_bytes`]: 9/4 of the budget, plus 160 bytes and 32 per
//! influence per vertex, plus 1 MiB, counted in bytes asked of the allocator (its result
//! included, its inputs not): 1.23 GB (12.2 kB per vertex) for 100k vertices with four
//! influences of 64 joints and 200k triangles. Measured by `cargo test --release -p skinblend
//! --test cor_memory -- --nocapture` on a shared two-core machine, on random
//! weights, all lumped in the end: 100 489 vertices and 199 712 triangles in 2.8–3.3 s (28–33 µs
//! per vertex), peak 177 MB (1.8 kB per vertex); 20 164 vertices in 1.0 s, peak 171 MB. Most of
//! the peak and a second of the time is the full quadrature's attempt filling its share of the
//! fixed budget before it is abandoned. The rest of the time is the sum over pairs,
//! proportional to the vertices times the clusters sharing their joint pairs: seconds for 100k
//! vertices when clusters are per vertex, longer when a budget-sized pair index survives the
//! attempts (a mesh of both smooth and random regions).
//!
//! # File format
//! [`encode_rotation_centers`] / [`decode_rotation_centers`], little-endian:
//! `b"SKBLCOR\0"`, `u32` version ([`COR_FORMAT_VERSION`]), `u64` vertex count, then per vertex
//! three `f32` (x, y, z; NaN for no center), then a `u64` FNV-1a 64 checksum of every byte before
//! it. The glTF custom vertex attribute `_SKINBLEND_COR` belongs to the glTF crate.

mod budget;
mod centers;
mod cluster;
mod file_format;
mod options;
mod similarity;

pub use budget::{
    default_memory_budget_bytes, memory_bound_bytes, COR_BUDGET_BYTES_PER_TRIANGLE,
    COR_BUDGET_FIXED_BYTES,
};
use budget::{memory_budget_bytes, pairs_of};
pub(crate) use centers::check_rotation_centers;
pub use centers::{has_rotation_center, NO_ROTATION_CENTER};
use cluster::{cluster_triangles, ClusterMap, PairIndex, Settings, SparseWeights};
pub use file_format::{decode_rotation_centers, encode_rotation_centers, COR_FORMAT_VERSION};
use options::check_options;
pub use options::{
    CorOptions, DEFAULT_SIGMA, DEFAULT_SUBDIVISION_EPSILON, DEFAULT_WEIGHT_QUANTUM,
    MIN_SUBDIVISION_EPSILON,
};
pub use similarity::weight_similarity;

use std::ops::Range;

use glam::Vec3;

use crate::error::SkinError;
use crate::influences::Influences;

/// Pair entries per triangle above which a triangle is represented by its corners instead of
/// being subdivided, one value per attempt (see the module docs, "Memory"): first none (the
/// full quadrature), then the costliest triangles, finally all. Powers of 16 apart, so each
/// attempt keeps the cheaper triangles exact.
const LUMP_ABOVE: [usize; 4] = [usize::MAX, 4096, 256, 0];

/// Triangles per unit of subdivision work: fixed, so the clusters' sums are grouped the same
/// way on any number of threads.
const TRIANGLE_CHUNK: usize = 256;
/// Distinct weight vectors per unit of center work.
const WEIGHT_CHUNK: usize = 64;
/// Chunks per progress report (and per parallel batch): enough to keep a few cores busy.
const CHUNKS_PER_REPORT: usize = 8;

/// Which stage of the precomputation a [`CorProgress`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CorStage {
    /// Subdividing triangles and clustering them by weight; counts triangles.
    Subdivide,
    /// Summing the similarity-weighted centroids; counts distinct vertex weight vectors.
    Centers,
}

/// Progress of the precomputation: `done` of `total` units of `stage`, reported from the
/// calling thread, in order, ending with `done == total` for each stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CorProgress {
    /// The stage.
    pub stage: CorStage,
    /// Units finished.
    pub done: usize,
    /// Units in the stage.
    pub total: usize,
}

/// The precomputed centers of rotation of a mesh, and what it took.
#[derive(Debug, Clone, PartialEq)]
pub struct RotationCenters {
    /// One center per vertex, in the bind-pose space of the positions (metres);
    /// [`NO_ROTATION_CENTER`] (NaN) for a vertex without one. Pass to
    /// [`crate::SkinInput::with_rotation_centers`].
    pub centers: Vec<Vec3>,
    /// Vertices with zero total similarity (fewer than two influences, or no triangle sharing
    /// two of their joints, or no weight at all): they have no center and fall back to DQS.
    pub vertices_without_center: usize,
    /// Sub-triangles summed over (after subdivision), counting only those with two or more
    /// joints (the others cannot contribute); a lumped triangle counts its corners with two or
    /// more joints.
    pub subdivided_triangles: usize,
    /// Clusters the sub-triangles were merged into.
    pub triangle_clusters: usize,
    /// Distinct vertex weight vectors, each computed once.
    pub distinct_weights: usize,
    /// Entries of the per-joint-pair index: each cluster once per pair of its joints.
    pub pair_entries: usize,
    /// Triangles represented by their corners rather than subdivided, to stay within
    /// [`CorOptions::memory_budget_bytes`]; 0 when the full quadrature fitted (see the module
    /// docs, "Memory").
    pub lumped_triangles: usize,
}

/// Computes every vertex's center of rotation (see the module docs). Allocates the result and
/// working sets proportional to the mesh.
///
/// `positions` are the bind-pose positions (one per vertex of `influences`), `triangles` index
/// them. Equivalent to [`rotation_centers_with_progress`] without a progress callback.
///
/// # Errors
/// As [`rotation_centers_with_progress`].
pub fn rotation_centers(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    influences: &Influences,
    options: &CorOptions,
) -> Result<RotationCenters, SkinError> {
    rotation_centers_with_progress(positions, triangles, influences, options, &mut |_| {})
}

/// [`rotation_centers`], reporting progress to `progress` from the calling thread (every 2048
/// triangles and 512 distinct weight vectors, and at the end of each stage). When an attempt
/// passes the memory budget (see the module docs, "Memory") the triangles are gone through
/// again; their reports resume once past the last one made, so `done` only grows.
///
/// Deterministic: the same input gives the same bits, serial or parallel, on any thread count.
///
/// # Errors
/// [`SkinError::AttributeLength`] when `positions` does not have one element per vertex,
/// [`SkinError::NonFiniteAttribute`] for a position that is not finite,
/// [`SkinError::VertexIndexOutOfRange`] for a triangle naming a missing vertex, and
/// [`SkinError::InvalidCorOption`] for a σ, ε or quantum out of range.
pub fn rotation_centers_with_progress(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    influences: &Influences,
    options: &CorOptions,
    progress: &mut dyn FnMut(CorProgress),
) -> Result<RotationCenters, SkinError> {
    check_options(options)?;
    let vertex_count = influences.vertex_count();
    if positions.len() != vertex_count {
        return Err(SkinError::AttributeLength {
            attribute: "positions",
            expected: vertex_count,
            found: positions.len(),
        });
    }
    if let Some(vertex) = positions.iter().position(|p| !p.is_finite()) {
        return Err(SkinError::NonFiniteAttribute {
            attribute: "positions",
            vertex,
        });
    }
    for (index, triangle) in triangles.iter().enumerate() {
        for &vertex in triangle {
            if vertex as usize >= vertex_count {
                return Err(SkinError::VertexIndexOutOfRange {
                    element: "triangles",
                    index,
                    vertex,
                    vertex_count,
                });
            }
        }
    }

    let weights = SparseWeights::new(influences);
    let settings = Settings {
        inverse_sigma_sq: 1.0 / (f64::from(options.sigma) * f64::from(options.sigma)),
        epsilon: f64::from(options.subdivision_epsilon),
        quantum: f64::from(options.weight_quantum),
    };
    let parallel = options.parallel;

    // Stage 1: subdivide and cluster, chunk by chunk; merge chunks in order. Within the
    // budget, or again with more triangles lumped to their corners (the last attempt fits by
    // construction). Progress is reported only forward, across attempts.
    let joint_count = influences.joint_count();
    let joint_pairs = pairs_of(joint_count);
    let budget = memory_budget_bytes(
        options,
        vertex_count,
        triangles.len(),
        influences.influences_per_vertex(),
        joint_count,
    );
    let chunk_cap = budget / CHUNKS_PER_REPORT;
    let mut reported = None;
    let mut clusters = ClusterMap::default();
    for (attempt, &lump_above) in LUMP_ABOVE.iter().enumerate() {
        let last = attempt + 1 == LUMP_ABOVE.len();
        let (cap, limit) = if last {
            (usize::MAX, usize::MAX)
        } else {
            (chunk_cap, budget)
        };
        let mut merged = ClusterMap::default();
        let fitted = for_batches(
            triangles.len(),
            TRIANGLE_CHUNK,
            parallel,
            |range| {
                cluster_triangles(
                    &triangles[range],
                    positions,
                    &weights,
                    &settings,
                    lump_above,
                    cap,
                )
            },
            |local| match local {
                Some(local) => {
                    merged.absorb(local);
                    merged.working_bytes(joint_pairs) <= limit
                }
                None => false,
            },
            |done| {
                if reported.is_none_or(|before| done > before) {
                    reported = Some(done);
                    progress(CorProgress {
                        stage: CorStage::Subdivide,
                        done,
                        total: triangles.len(),
                    });
                }
            },
        );
        if fitted {
            clusters = merged;
            break;
        }
    }
    let subdivided_triangles = clusters.sub_triangles;
    let triangle_clusters = clusters.clusters.len();
    let pair_entries = clusters.pair_entries;
    let lumped_triangles = clusters.lumped_triangles;
    let pairs = PairIndex::new(clusters);

    // Stage 2: one center per distinct weight vector.
    let (distinct, vertex_to_distinct) = weights.distinct();
    let mut distinct_centers = Vec::with_capacity(distinct.len());
    for_batches(
        distinct.len(),
        WEIGHT_CHUNK,
        parallel,
        |range| {
            range
                .map(|d| pairs.center(weights.of(distinct[d]), settings.inverse_sigma_sq))
                .collect::<Vec<Vec3>>()
        },
        |centers| {
            distinct_centers.extend(centers);
            true
        },
        |done| {
            progress(CorProgress {
                stage: CorStage::Centers,
                done,
                total: distinct.len(),
            });
        },
    );
    let centers: Vec<Vec3> = vertex_to_distinct
        .iter()
        .map(|&d| distinct_centers[d])
        .collect();
    let vertices_without_center = centers.iter().filter(|c| !has_rotation_center(**c)).count();
    Ok(RotationCenters {
        centers,
        vertices_without_center,
        subdivided_triangles,
        triangle_clusters,
        distinct_weights: distinct.len(),
        pair_entries,
        lumped_triangles,
    })
}

/// Runs `work` over fixed chunks of `0..len`, `CHUNKS_PER_REPORT` chunks at a time (in parallel
/// where enabled), hands each chunk's result to `merge` in chunk order, and after each batch
/// calls `report` with the units done (once with 0 when `len` is 0). Stops, returning `false`,
/// as soon as `merge` returns `false`; `true` when every chunk was merged. The chunking does not
/// depend on the thread count.
fn for_batches<T: Send>(
    len: usize,
    chunk: usize,
    parallel: bool,
    work: impl Fn(Range<usize>) -> T + Sync,
    mut merge: impl FnMut(T) -> bool,
    mut report: impl FnMut(usize),
) -> bool {
    let chunks = len.div_ceil(chunk);
    let range_of = |c: usize| c * chunk..((c + 1) * chunk).min(len);
    let mut first = 0;
    while first < chunks {
        let last = (first + CHUNKS_PER_REPORT).min(chunks);
        for result in run_chunks(first..last, parallel, |c| work(range_of(c))) {
            if !merge(result) {
                return false;
            }
        }
        report(range_of(last - 1).end);
        first = last;
    }
    if chunks == 0 {
        report(0);
    }
    true
}

/// The results of `work` over `chunks`, in order.
#[cfg(feature = "rayon")]
fn run_chunks<T: Send>(
    chunks: Range<usize>,
    parallel: bool,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    use rayon::prelude::*;
    if parallel && rayon::current_num_threads() > 1 {
        chunks.into_par_iter().map(&work).collect()
    } else {
        chunks.map(work).collect()
    }
}

/// The results of `work` over `chunks`, in order.
#[cfg(not(feature = "rayon"))]
fn run_chunks<T: Send>(
    chunks: Range<usize>,
    _parallel: bool,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    chunks.map(work).collect()
}
