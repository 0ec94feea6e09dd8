//! The clustering behind the precomputation: sparse per-vertex weights, sub-triangles merged
//! into clusters by joints and quantized weights, and the per-joint-pair index that sums the
//! similarity over only the clusters holding both joints.

use std::collections::HashMap;

use glam::{DVec3, Vec3};

use super::{merge, pair_term, NO_ROTATION_CENTER};
use crate::Influences;

/// The precomputation's constants in f64.
pub(super) struct Settings {
    pub(super) inverse_sigma_sq: f64,
    pub(super) epsilon: f64,
    pub(super) quantum: f64,
}

/// Every vertex's weights, normalized to sum to one, sorted by joint, zeros dropped (CSR).
pub(super) struct SparseWeights {
    offsets: Vec<usize>,
    entries: Vec<(u16, f64)>,
}

impl SparseWeights {
    pub(super) fn new(influences: &Influences) -> Self {
        let k = influences.influences_per_vertex();
        let mut offsets = Vec::with_capacity(influences.vertex_count() + 1);
        let mut entries = Vec::with_capacity(influences.joints().len());
        offsets.push(0);
        for (joints, weights) in influences
            .joints()
            .chunks_exact(k)
            .zip(influences.weights().chunks_exact(k))
        {
            let list = merge(joints.iter().zip(weights).map(|(&j, &w)| (j, f64::from(w))));
            let sum: f64 = list.iter().map(|&(_, w)| w).sum();
            entries.extend(list.iter().map(|&(j, w)| (j, w / sum)));
            offsets.push(entries.len());
        }
        Self { offsets, entries }
    }

    pub(super) fn of(&self, vertex: usize) -> &[(u16, f64)] {
        &self.entries[self.offsets[vertex]..self.offsets[vertex + 1]]
    }

    /// The first vertex of each distinct weight vector (bit-identical weights), in vertex
    /// order, and for every vertex the index of its distinct vector.
    pub(super) fn distinct(&self) -> (Vec<usize>, Vec<usize>) {
        let vertex_count = self.offsets.len() - 1;
        let mut first_of: HashMap<Vec<(u16, u64)>, usize> = HashMap::new();
        let mut distinct = Vec::new();
        let mut map = Vec::with_capacity(vertex_count);
        for vertex in 0..vertex_count {
            let key: Vec<(u16, u64)> = self
                .of(vertex)
                .iter()
                .map(|&(j, w)| (j, w.to_bits()))
                .collect();
            let index = *first_of.entry(key).or_insert_with(|| {
                distinct.push(vertex);
                distinct.len() - 1
            });
            map.push(index);
        }
        (distinct, map)
    }
}

/// Sub-triangles merged by their joints and rounded weights.
#[derive(Default)]
pub(super) struct ClusterMap {
    /// Key: for each joint of the support, the joint and its rounded weight.
    index: HashMap<Box<[u64]>, usize>,
    pub(super) clusters: Vec<Cluster>,
    /// Sub-triangles that went into this map.
    pub(super) sub_triangles: usize,
}

/// A set of sub-triangles with (nearly) the same weights.
pub(super) struct Cluster {
    /// The joints, ascending.
    joints: Box<[u16]>,
    /// Σ A_t.
    area: f64,
    /// Σ A_t c_t.
    moment: DVec3,
    /// Σ A_t w_t, per joint of `joints`.
    weight_moment: Box<[f64]>,
}

impl ClusterMap {
    /// Adds a sub-triangle of `area` at `centroid` with `weights` over `joints`; `key` holds the
    /// joints and rounded weights (reused by the caller).
    pub(super) fn add(
        &mut self,
        key: &[u64],
        joints: &[u16],
        weights: &[f64],
        area: f64,
        centroid: DVec3,
    ) {
        self.sub_triangles += 1;
        let index = match self.index.get(key) {
            Some(&index) => index,
            None => {
                self.clusters.push(Cluster {
                    joints: joints.into(),
                    area: 0.0,
                    moment: DVec3::ZERO,
                    weight_moment: vec![0.0; joints.len()].into(),
                });
                self.index.insert(key.into(), self.clusters.len() - 1);
                self.clusters.len() - 1
            }
        };
        let cluster = &mut self.clusters[index];
        cluster.area += area;
        cluster.moment += centroid * area;
        for (sum, &w) in cluster.weight_moment.iter_mut().zip(weights) {
            *sum += w * area;
        }
    }

    /// Adds another chunk's clusters (its sums, taken in its own order), in that chunk's
    /// cluster order, so the result depends only on the chunk order.
    pub(super) fn absorb(&mut self, other: ClusterMap) {
        self.sub_triangles += other.sub_triangles;
        let mut keys: Vec<(usize, Box<[u64]>)> =
            other.index.into_iter().map(|(key, i)| (i, key)).collect();
        keys.sort_unstable_by_key(|(i, _)| *i);
        let mut clusters: Vec<Option<Cluster>> = other.clusters.into_iter().map(Some).collect();
        for (i, key) in keys {
            let Some(cluster) = clusters[i].take() else {
                continue;
            };
            match self.index.get(&key) {
                Some(&mine) => {
                    let target = &mut self.clusters[mine];
                    target.area += cluster.area;
                    target.moment += cluster.moment;
                    for (sum, w) in target.weight_moment.iter_mut().zip(&*cluster.weight_moment) {
                        *sum += w;
                    }
                }
                None => {
                    self.clusters.push(cluster);
                    self.index.insert(key, self.clusters.len() - 1);
                }
            }
        }
    }
}

/// Subdivides and clusters one chunk of triangles, in triangle order.
pub(super) fn cluster_triangles(
    triangles: &[[u32; 3]],
    positions: &[Vec3],
    weights: &SparseWeights,
    settings: &Settings,
) -> ClusterMap {
    let mut map = ClusterMap::default();
    let mut joints: Vec<u16> = Vec::new();
    let mut corner_weights: [Vec<f64>; 3] = Default::default();
    let mut sub_weights: Vec<f64> = Vec::new();
    let mut key: Vec<u64> = Vec::new();
    for triangle in triangles {
        // The union of the corners' joints, and each corner's weights densely over it.
        joints.clear();
        for &vertex in triangle {
            joints.extend(weights.of(vertex as usize).iter().map(|&(j, _)| j));
        }
        joints.sort_unstable();
        joints.dedup();
        if joints.len() < 2 {
            continue; // One joint (or none): the similarity with anything is zero.
        }
        for (corner, &vertex) in corner_weights.iter_mut().zip(triangle) {
            corner.clear();
            corner.resize(joints.len(), 0.0);
            for &(j, w) in weights.of(vertex as usize) {
                if let Ok(slot) = joints.binary_search(&j) {
                    corner[slot] = w;
                }
            }
        }
        let [pa, pb, pc] = triangle.map(|v| positions[v as usize].as_dvec3());
        let area = 0.5 * (pb - pa).cross(pc - pa).length();
        if area <= 0.0 {
            continue;
        }
        // Uniform midpoint splits: each halves every edge's weight difference (weights are
        // linear over the triangle), so n = 2^levels parts per edge reach ε.
        let [wa, wb, wc] = &corner_weights;
        let largest = distance(wa, wb).max(distance(wb, wc)).max(distance(wc, wa));
        let mut n = 1u32;
        while largest / f64::from(n) > settings.epsilon {
            n *= 2;
        }
        let nf = f64::from(n);
        let sub_area = area / (nf * nf);
        let (eb, ec) = (pb - pa, pc - pa);
        let mut add = |u: f64, v: f64| {
            let centroid = pa + eb * u + ec * v;
            sub_weights.clear();
            sub_weights.extend(
                wa.iter()
                    .zip(wb)
                    .zip(wc)
                    .map(|((&a, &b), &c)| (a + (b - a) * u + (c - a) * v).max(0.0)),
            );
            key.clear();
            for (&joint, &w) in joints.iter().zip(&sub_weights) {
                key.push(u64::from(joint));
                key.push(if settings.quantum > 0.0 {
                    (w / settings.quantum).round() as u64
                } else {
                    w.to_bits()
                });
            }
            map.add(&key, &joints, &sub_weights, sub_area, centroid);
        };
        // Sub-triangle (i, j) pointing up has corners (i, j), (i+1, j), (i, j+1) in units of
        // 1/n along the edges from a to b and a to c; the one pointing down has (i+1, j),
        // (i, j+1), (i+1, j+1). Their centroids sit a third and two thirds across the cell.
        for i in 0..n {
            for j in 0..n - i {
                let (fi, fj) = (f64::from(i), f64::from(j));
                add((fi + 1.0 / 3.0) / nf, (fj + 1.0 / 3.0) / nf);
                if i + j + 1 < n {
                    add((fi + 2.0 / 3.0) / nf, (fj + 2.0 / 3.0) / nf);
                }
            }
        }
    }
    map
}

/// Euclidean distance of two weight vectors over the same joints.
pub(super) fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

/// For each pair of joints `j < k`, the clusters that hold both, with their weights on `j` and
/// `k`: the only clusters a vertex with both joints can be similar to through that pair.
pub(super) struct PairIndex {
    pairs: HashMap<(u16, u16), Vec<PairEntry>>,
}

/// One cluster as seen through one pair of its joints.
pub(super) struct PairEntry {
    weight_j: f64,
    weight_k: f64,
    area: f64,
    moment: DVec3,
}

impl PairIndex {
    pub(super) fn new(map: ClusterMap) -> Self {
        let mut pairs: HashMap<(u16, u16), Vec<PairEntry>> = HashMap::new();
        // Cluster order is the order of first appearance over the triangles: deterministic.
        for cluster in map.clusters {
            let mean: Vec<f64> = cluster
                .weight_moment
                .iter()
                .map(|w| w / cluster.area)
                .collect();
            for (x, &j) in cluster.joints.iter().enumerate() {
                for (y, &k) in cluster.joints.iter().enumerate().skip(x + 1) {
                    pairs.entry((j, k)).or_default().push(PairEntry {
                        weight_j: mean[x],
                        weight_k: mean[y],
                        area: cluster.area,
                        moment: cluster.moment,
                    });
                }
            }
        }
        Self { pairs }
    }

    /// `p*` for a vertex with these (sorted, normalized) weights, or [`NO_ROTATION_CENTER`].
    pub(super) fn center(&self, weights: &[(u16, f64)], inverse_sigma_sq: f64) -> Vec3 {
        let mut moment = DVec3::ZERO;
        let mut total = 0.0;
        for (x, &(j, wpj)) in weights.iter().enumerate() {
            for &(k, wpk) in &weights[x + 1..] {
                let Some(entries) = self.pairs.get(&(j, k)) else {
                    continue;
                };
                for entry in entries {
                    let s = pair_term(wpj, wpk, entry.weight_j, entry.weight_k, inverse_sigma_sq);
                    moment += entry.moment * s;
                    total += entry.area * s;
                }
            }
        }
        if total > 0.0 {
            (moment / total).as_vec3()
        } else {
            NO_ROTATION_CENTER
        }
    }
}
