//! The clustering behind the precomputation: sparse per-vertex weights, sub-triangles merged
//! into clusters by joints and quantized weights, and the per-joint-pair index that sums the
//! similarity over only the clusters holding both joints.

use std::collections::HashMap;
use std::ops::Range;

use glam::{DVec3, Vec3};

use super::centers::NO_ROTATION_CENTER;
use super::similarity::{merge, pair_term};
use crate::influences::Influences;

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
    /// Σ over clusters of their joint count.
    joint_slots: usize,
    /// Σ over clusters of their joint pairs: the entries of the [`PairIndex`] built from them.
    pub(super) pair_entries: usize,
    /// Triangles represented by their corners (see [`cluster_triangles`]).
    pub(super) lumped_triangles: usize,
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

/// Bytes one cluster holds in a [`ClusterMap`], beyond its joints: its slot in `clusters` (a
/// `Vec` that may be up to twice its length) and its entry in `index` (a `HashMap` bucket of a
/// boxed key and an index plus a control byte, the table at most 8/7 × 2 its length).
pub(super) const CLUSTER_BYTES: usize = 2 * std::mem::size_of::<Cluster>() + 64;
/// Bytes per joint of a cluster: its joint (`u16`), its weight sum (`f64`) and its key's joint
/// and rounded weight (two `u64`), all in exact-size boxes.
pub(super) const JOINT_SLOT_BYTES: usize = 2 + 8 + 16;
/// Bytes per entry of the [`PairIndex`] (its entries are one exact-size array).
pub(super) const PAIR_ENTRY_BYTES: usize = std::mem::size_of::<PairEntry>();
/// Bytes per distinct joint pair of the [`PairIndex`]: a `HashMap` bucket of the pair and its
/// range (24 bytes and a control byte) in a table at most 8/7 × 2 its length, rounded up.
pub(super) const PAIR_BYTES: usize = 64;

/// The bytes a set of clusters takes (`clusters` of them with `joint_slots` joints in all) plus
/// the [`PairIndex`] of `pair_entries` entries over at most `pairs` distinct joint pairs that
/// will be built from them: an upper bound of what [`ClusterMap`] and [`PairIndex`] allocate.
pub(super) fn working_bytes(
    clusters: usize,
    joint_slots: usize,
    pair_entries: usize,
    pairs: usize,
) -> usize {
    clusters
        .saturating_mul(CLUSTER_BYTES)
        .saturating_add(joint_slots.saturating_mul(JOINT_SLOT_BYTES))
        .saturating_add(pair_entries.saturating_mul(PAIR_ENTRY_BYTES))
        .saturating_add(pairs.min(pair_entries).saturating_mul(PAIR_BYTES))
}

impl ClusterMap {
    /// What this map and the [`PairIndex`] built from it allocate at most, for a rig of
    /// `joint_pairs` possible joint pairs (see [`working_bytes`]).
    pub(super) fn working_bytes(&self, joint_pairs: usize) -> usize {
        working_bytes(
            self.clusters.len(),
            self.joint_slots,
            self.pair_entries,
            joint_pairs,
        )
    }

    /// What this map allocates now (no [`PairIndex`] yet): an upper bound.
    fn own_bytes(&self) -> usize {
        working_bytes(self.clusters.len(), self.joint_slots, 0, 0)
    }

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
                self.joint_slots += joints.len();
                self.pair_entries += joints.len() * (joints.len() - 1) / 2;
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
        self.lumped_triangles += other.lumped_triangles;
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
                    let joints = cluster.joints.len();
                    self.joint_slots += joints;
                    self.pair_entries += joints * (joints - 1) / 2;
                    self.clusters.push(cluster);
                    self.index.insert(key, self.clusters.len() - 1);
                }
            }
        }
    }
}

/// Subdivides and clusters one chunk of triangles, in triangle order; `None` as soon as the
/// map's own allocation ([`ClusterMap::own_bytes`]) passes `cap_bytes`.
///
/// A triangle whose subdivision could add more than `lump_above` pair entries (its
/// sub-triangles times its joint pairs) is not subdivided: each of its corners with two or more
/// joints stands for the third of the triangle nearest to it (area `A/3`, centroid
/// `(22a + 7b + 7c)/36` for corner `a`), with that vertex's own weights.
pub(super) fn cluster_triangles(
    triangles: &[[u32; 3]],
    positions: &[Vec3],
    weights: &SparseWeights,
    settings: &Settings,
    lump_above: usize,
    cap_bytes: usize,
) -> Option<ClusterMap> {
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
        let pairs = joints.len() * (joints.len() - 1) / 2;
        let sub_triangle_count = (n as usize) * (n as usize);
        if sub_triangle_count.saturating_mul(pairs) > lump_above {
            map.lumped_triangles += 1;
            let corners = [(pa, pb, pc), (pb, pc, pa), (pc, pa, pb)];
            for (&vertex, (own, next, last)) in triangle.iter().zip(corners) {
                let list = weights.of(vertex as usize);
                if list.len() < 2 {
                    continue;
                }
                joints.clear();
                joints.extend(list.iter().map(|&(j, _)| j));
                sub_weights.clear();
                sub_weights.extend(list.iter().map(|&(_, w)| w));
                fill_key(&mut key, &joints, &sub_weights, settings.quantum);
                let centroid = (own * 22.0 + next * 7.0 + last * 7.0) / 36.0;
                map.add(&key, &joints, &sub_weights, area / 3.0, centroid);
            }
            if map.own_bytes() > cap_bytes {
                return None;
            }
            continue;
        }
        let nf = f64::from(n);
        let sub_area = area / (nf * nf);
        let (eb, ec) = (pb - pa, pc - pa);
        let mut add = |map: &mut ClusterMap, u: f64, v: f64| {
            let centroid = pa + eb * u + ec * v;
            sub_weights.clear();
            sub_weights.extend(
                wa.iter()
                    .zip(wb)
                    .zip(wc)
                    .map(|((&a, &b), &c)| (a + (b - a) * u + (c - a) * v).max(0.0)),
            );
            fill_key(&mut key, &joints, &sub_weights, settings.quantum);
            map.add(&key, &joints, &sub_weights, sub_area, centroid);
        };
        // Sub-triangle (i, j) pointing up has corners (i, j), (i+1, j), (i, j+1) in units of
        // 1/n along the edges from a to b and a to c; the one pointing down has (i+1, j),
        // (i, j+1), (i+1, j+1). Their centroids sit a third and two thirds across the cell.
        // The cap is checked after each row, so a chunk passes it by at most one row.
        for i in 0..n {
            for j in 0..n - i {
                let (fi, fj) = (f64::from(i), f64::from(j));
                add(&mut map, (fi + 1.0 / 3.0) / nf, (fj + 1.0 / 3.0) / nf);
                if i + j + 1 < n {
                    add(&mut map, (fi + 2.0 / 3.0) / nf, (fj + 2.0 / 3.0) / nf);
                }
            }
            if map.own_bytes() > cap_bytes {
                return None;
            }
        }
    }
    Some(map)
}

/// The cluster key of `weights` over `joints`: each joint and its weight rounded to `quantum`
/// (its bits when `quantum` is 0).
fn fill_key(key: &mut Vec<u64>, joints: &[u16], weights: &[f64], quantum: f64) {
    key.clear();
    for (&joint, &w) in joints.iter().zip(weights) {
        key.push(u64::from(joint));
        key.push(if quantum > 0.0 {
            (w / quantum).round() as u64
        } else {
            w.to_bits()
        });
    }
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
/// `k`: the only clusters a vertex with both joints can be similar to through that pair. One
/// exact-size array of entries, grouped by pair, each group in cluster order.
pub(super) struct PairIndex {
    /// Each pair's range of `entries`.
    pairs: HashMap<(u16, u16), Range<usize>>,
    entries: Vec<PairEntry>,
}

/// One cluster as seen through one pair of its joints.
#[derive(Clone, Copy)]
pub(super) struct PairEntry {
    weight_j: f64,
    weight_k: f64,
    area: f64,
    moment: DVec3,
}

impl PairIndex {
    pub(super) fn new(map: ClusterMap) -> Self {
        let ClusterMap {
            index,
            clusters,
            pair_entries,
            ..
        } = map;
        drop(index);
        // Count each pair's entries, then give each pair its range in order of first
        // appearance (any order would do: a vertex's sum visits pairs in its own joint order).
        let mut pairs: HashMap<(u16, u16), Range<usize>> = HashMap::new();
        let mut order: Vec<(u16, u16)> = Vec::new();
        for cluster in &clusters {
            for (x, &j) in cluster.joints.iter().enumerate() {
                for &k in &cluster.joints[x + 1..] {
                    pairs
                        .entry((j, k))
                        .or_insert_with(|| {
                            order.push((j, k));
                            0..0
                        })
                        .end += 1;
                }
            }
        }
        let mut next = 0;
        for pair in &order {
            if let Some(range) = pairs.get_mut(pair) {
                let count = range.end;
                *range = next..next;
                next += count;
            }
        }
        drop(order);
        // Fill each range in cluster order (the order of first appearance over the triangles:
        // deterministic); `end` is the fill cursor and finishes at the range's end.
        let empty = PairEntry {
            weight_j: 0.0,
            weight_k: 0.0,
            area: 0.0,
            moment: DVec3::ZERO,
        };
        let mut entries = vec![empty; next];
        for cluster in clusters {
            let mean: Vec<f64> = cluster
                .weight_moment
                .iter()
                .map(|w| w / cluster.area)
                .collect();
            for (x, &j) in cluster.joints.iter().enumerate() {
                for (y, &k) in cluster.joints.iter().enumerate().skip(x + 1) {
                    let Some(range) = pairs.get_mut(&(j, k)) else {
                        continue; // Every pair was counted above.
                    };
                    entries[range.end] = PairEntry {
                        weight_j: mean[x],
                        weight_k: mean[y],
                        area: cluster.area,
                        moment: cluster.moment,
                    };
                    range.end += 1;
                }
            }
        }
        debug_assert_eq!(next, pair_entries);
        Self { pairs, entries }
    }

    /// `p*` for a vertex with these (sorted, normalized) weights, or [`NO_ROTATION_CENTER`].
    pub(super) fn center(&self, weights: &[(u16, f64)], inverse_sigma_sq: f64) -> Vec3 {
        let mut moment = DVec3::ZERO;
        let mut total = 0.0;
        for (x, &(j, wpj)) in weights.iter().enumerate() {
            for &(k, wpk) in &weights[x + 1..] {
                let Some(range) = self.pairs.get(&(j, k)) else {
                    continue;
                };
                for entry in &self.entries[range.clone()] {
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
