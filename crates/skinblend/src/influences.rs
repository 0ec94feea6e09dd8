//! Per-vertex joint influences: validated once, trusted by every kernel after.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::error::SkinError;
use crate::influence_tables::{linear_offsets, pivot_pair_counts, vertex_pivots, weight_sum_range};

/// The largest joint count a `u16` joint index can address.
const MAX_JOINTS: usize = u16::MAX as usize + 1;

/// `k` joint influences per vertex, stored flat: slot `s` of vertex `v` is at `v * k + s`.
///
/// Any `k ≥ 1` is supported (glTF's `JOINTS_0` gives 4, `JOINTS_0` + `JOINTS_1` give 8).
/// Construction validates everything once: the arrays are whole vertices, every joint index is
/// below the joint count, every weight is finite and non-negative. Weights need not sum to one:
/// the skinning options decide whether to renormalize, and a vertex whose weights sum to zero is
/// passed through unchanged and counted. A zero-weight slot is ignored, but its joint index must
/// still be in range. With two to eight slots per vertex, the first SIMD DQS or CoR skinning
/// also records each vertex's DQS pivot (its heaviest slot, and its joint's row of the
/// palette's pivot sign table) in two bytes per vertex, which the kernels read from then on
/// instead of comparing the weights every frame. Everything the kernels derive from the arrays
/// is computed on first use, so a mesh skinned once by one method pays only for what that
/// method reads; what saves a little per call (LBS's palette byte offsets, two bytes per slot;
/// DQS's and CoR's pair counts for the sign-flip tally) is built by the second SIMD call, so
/// a mesh skinned once never builds it.
#[derive(Debug, Clone)]
pub struct Influences {
    influences_per_vertex: usize,
    joint_count: usize,
    joints: Vec<u16>,
    weights: Vec<f32>,
    /// One word per vertex for two to eight influences per vertex (else empty), derived from
    /// `joints` and `weights` (`influence_tables::vertex_pivots`): the vertex's DQS pivot slot (`pivot_slot`),
    /// two flags and its pivot joint's row of the pivot sign table, read by the SIMD DQS and CoR
    /// kernels instead of comparing weights every frame.
    pivots: OnceLock<Vec<u16>>,
    /// Four or eight influences per vertex on a large enough mesh (else empty), derived from
    /// the above (`influence_tables::pivot_pair_counts`): how often each `(pivot joint, joint)` pair occurs,
    /// from which the SIMD DQS and CoR kernels count their sign flips once per call instead of
    /// once per influence.
    pivot_pair_counts: OnceLock<Vec<u32>>,
    /// The smallest and the largest weight sum of a vertex, each summed in f32 in slot order
    /// (as the scalar kernel and the SIMD 3x4 blends sum them; the SIMD kernels' pairwise sums
    /// decide the unweighted test alike, see `simd::blend3x4::weight_sums4`); `(∞, 0)` for no
    /// vertex. The SIMD kernels decide from it once per call what they would otherwise test per block (every
    /// vertex weighted; the singular test's bound in range).
    weight_sum_range: OnceLock<(f32, f32)>,
    /// Each slot's joint as the byte offset of its entry in a prepared LBS palette (`joint ·
    /// LINEAR_ENTRY_BYTES`), where the joint count is at most `LINEAR_OFFSET_MAX_JOINTS`
    /// (else empty), derived from `joints`: the SIMD LBS kernels add it to the palette's
    /// address instead of shifting each joint (a `shl` per influence less,
    /// `influence_tables::linear_offsets`).
    linear_offsets: OnceLock<Vec<u16>>,
    /// Set by the first SIMD skinning call (`Influences::mark_skinned`): the tables only a
    /// reused mesh pays for (`linear_offsets`, `pivot_pair_counts`) are built from the second
    /// call on, so a mesh skinned once (a one-shot call) does not build them.
    skinned: SkinnedBefore,
}

/// Whether a SIMD call has skinned these influences before; a copy keeps the state.
#[derive(Debug, Default)]
struct SkinnedBefore(AtomicBool);

impl Clone for SkinnedBefore {
    fn clone(&self) -> Self {
        Self(AtomicBool::new(self.0.load(Ordering::Relaxed)))
    }
}

/// Equal arrays (what the rest is derived from), whatever has been derived so far.
impl PartialEq for Influences {
    fn eq(&self, other: &Self) -> bool {
        self.influences_per_vertex == other.influences_per_vertex
            && self.joint_count == other.joint_count
            && self.joints == other.joints
            && self.weights == other.weights
    }
}

/// What [`Influences::from_lists`] changed to make per-vertex lists fit `k` slots.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct InfluenceBuildReport {
    /// Vertices that listed the same joint more than once (their weights were added).
    pub vertices_with_repeated_joints: usize,
    /// Vertices that had more than `k` non-zero influences (the lightest were dropped).
    pub vertices_truncated: usize,
    /// Influences dropped in all, over every vertex.
    pub influences_dropped: usize,
    /// The largest weight dropped from one vertex, before renormalization (0 when none).
    pub max_weight_dropped: f32,
    /// Vertices whose kept weights did not already sum to 1 within 1e-6 and were renormalized.
    pub vertices_renormalized: usize,
    /// Vertices with no non-zero weight (left all zero: passed through unchanged when skinned).
    pub vertices_unweighted: usize,
}

impl Influences {
    /// Validates and wraps flat arrays of `influences_per_vertex` slots per vertex.
    ///
    /// `joints[v * k + s]` and `weights[v * k + s]` are slot `s` of vertex `v`. Does not change
    /// any value (use [`Influences::from_lists`] to merge, truncate and renormalize).
    ///
    /// # Errors
    /// [`SkinError::ZeroInfluencesPerVertex`], [`SkinError::InfluenceArrayLengths`],
    /// [`SkinError::InfluenceArrayNotWhole`], [`SkinError::TooManyJoints`],
    /// [`SkinError::JointOutOfRange`] (naming vertex and slot) and [`SkinError::InvalidWeight`].
    pub fn new(
        influences_per_vertex: usize,
        joints: Vec<u16>,
        weights: Vec<f32>,
        joint_count: usize,
    ) -> Result<Self, SkinError> {
        let k = influences_per_vertex;
        check_shape(k, &joints, &weights, joint_count)?;
        if let Some(error) = first_bad_slot(k, &joints, &weights, joint_count) {
            return Err(error);
        }
        Ok(Self::from_checked(k, joints, weights, joint_count))
    }

    /// [`Influences::new`] of copies of `joints` and `weights`, made in `spare` (cleared first;
    /// it allocates only to grow), checked as they are copied: one pass over each array where
    /// copying and then checking make two (a one-shot call from borrowed arrays, such as
    /// Python's `skinblend.skin()`, which keeps `spare` between calls).
    ///
    /// # Errors
    /// As [`Influences::new`].
    pub fn from_slices(
        influences_per_vertex: usize,
        joints: &[u16],
        weights: &[f32],
        joint_count: usize,
        spare: (Vec<u16>, Vec<f32>),
    ) -> Result<Self, SkinError> {
        let k = influences_per_vertex;
        check_shape(k, joints, weights, joint_count)?;
        let (mut joint_copy, mut weight_copy) = spare;
        joint_copy.clear();
        weight_copy.clear();
        let (largest_joint, weights_ok) = crate::vectorize::vectorized(
            #[inline(always)]
            || {
                let mut largest = 0u16;
                joint_copy.extend(joints.iter().map(|&joint| {
                    largest = largest.max(joint);
                    joint
                }));
                let mut ok = true;
                weight_copy.extend(weights.iter().map(|&weight| {
                    ok &= finite_non_negative(weight);
                    weight
                }));
                (largest, ok)
            },
        );
        if !(joints_below(largest_joint, joint_count) && weights_ok) {
            if let Some(error) = first_bad_slot(k, joints, weights, joint_count) {
                return Err(error);
            }
        }
        Ok(Self::from_checked(k, joint_copy, weight_copy, joint_count))
    }

    /// Wraps arrays already checked (whole vertices, joints in range, weights finite and
    /// non-negative) with what is derived from them.
    fn from_checked(k: usize, joints: Vec<u16>, weights: Vec<f32>, joint_count: usize) -> Self {
        Self {
            influences_per_vertex: k,
            joint_count,
            pivots: OnceLock::new(),
            pivot_pair_counts: OnceLock::new(),
            weight_sum_range: OnceLock::new(),
            linear_offsets: OnceLock::new(),
            skinned: SkinnedBefore::default(),
            joints,
            weights,
        }
    }

    /// Builds `k` slots per vertex from per-vertex `(joint, weight)` lists of any length.
    ///
    /// Per vertex: repeated joints are merged (weights added), zero weights dropped, the `k`
    /// heaviest kept (ties: the lower joint index), the kept weights renormalized to sum to 1,
    /// and unused slots filled with `(0, 0.0)`. The report says what was changed. Allocates the
    /// result and one small scratch list.
    ///
    /// # Errors
    /// As [`Influences::new`]; `slot` in an error is the position in the vertex's input list.
    /// A joint count of 0 with any vertex is [`SkinError::JointOutOfRange`] (vertex 0, slot 0,
    /// joint 0): even an unused slot needs a joint index in range.
    pub fn from_lists<L>(
        lists: impl IntoIterator<Item = L>,
        influences_per_vertex: usize,
        joint_count: usize,
    ) -> Result<(Self, InfluenceBuildReport), SkinError>
    where
        L: AsRef<[(u16, f32)]>,
    {
        let k = influences_per_vertex;
        if k == 0 {
            return Err(SkinError::ZeroInfluencesPerVertex);
        }
        check_joint_count(joint_count)?;
        let mut report = InfluenceBuildReport::default();
        let mut joints = Vec::new();
        let mut weights = Vec::new();
        // Merged weights and their sum in f64: finite f32 weights near f32::MAX would overflow
        // to infinity when added in f32 (and renormalize to NaN or to zero).
        let mut merged: Vec<(u16, f64)> = Vec::new();
        for (vertex, list) in lists.into_iter().enumerate() {
            merged.clear();
            let mut repeated = false;
            for (slot, &(joint, weight)) in list.as_ref().iter().enumerate() {
                if usize::from(joint) >= joint_count {
                    return Err(SkinError::JointOutOfRange {
                        vertex,
                        slot,
                        joint: u32::from(joint),
                        joint_count,
                    });
                }
                if !finite_non_negative(weight) {
                    return Err(SkinError::InvalidWeight {
                        vertex,
                        slot,
                        weight,
                    });
                }
                match merged.iter_mut().find(|(j, _)| *j == joint) {
                    Some(entry) => {
                        entry.1 += f64::from(weight);
                        repeated = true;
                    }
                    None => merged.push((joint, f64::from(weight))),
                }
            }
            report.vertices_with_repeated_joints += usize::from(repeated);
            merged.retain(|&(_, w)| w > 0.0);
            // Heaviest first; equal weights keep the lower joint index, so the result does not
            // depend on the order the list arrived in.
            merged.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            if merged.len() > k {
                report.vertices_truncated += 1;
                report.influences_dropped += merged.len() - k;
                let dropped = merged[k].1.min(f64::from(f32::MAX)) as f32;
                report.max_weight_dropped = report.max_weight_dropped.max(dropped);
                merged.truncate(k);
            }
            if joint_count == 0 {
                // No joint index is in range, not even the one an unused slot is filled with.
                return Err(SkinError::JointOutOfRange {
                    vertex,
                    slot: 0,
                    joint: 0,
                    joint_count,
                });
            }
            let sum: f64 = merged.iter().map(|&(_, w)| w).sum();
            if merged.is_empty() {
                report.vertices_unweighted += 1;
            } else if (sum - 1.0).abs() > 1e-6 {
                report.vertices_renormalized += 1;
            }
            for slot in 0..k {
                match merged.get(slot) {
                    Some(&(joint, weight)) => {
                        joints.push(joint);
                        weights.push(if sum > 0.0 {
                            (weight / sum) as f32
                        } else {
                            0.0
                        });
                    }
                    None => {
                        joints.push(0);
                        weights.push(0.0);
                    }
                }
            }
        }
        Ok((Self::from_checked(k, joints, weights, joint_count), report))
    }

    /// Number of vertices.
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.joints.len() / self.influences_per_vertex
    }

    /// Slots per vertex (`k`).
    #[must_use]
    pub fn influences_per_vertex(&self) -> usize {
        self.influences_per_vertex
    }

    /// Number of joints the indices address; a palette must have at least this many matrices.
    #[must_use]
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// All joint indices, `k` per vertex.
    #[must_use]
    pub fn joints(&self) -> &[u16] {
        &self.joints
    }

    /// All weights, `k` per vertex.
    #[must_use]
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// The joint and weight arrays back, for a caller that refills them for its next mesh
    /// (no new allocation where their capacity suffices).
    #[must_use]
    pub fn into_arrays(self) -> (Vec<u16>, Vec<f32>) {
        (self.joints, self.weights)
    }

    /// One word per vertex (two to eight influences per vertex, else empty): the DQS pivot slot
    /// (`& PIVOT_SLOT_BITS`), the flags `PIVOT_HAS_ZERO_WEIGHT` and `PIVOT_LIGHT`, and the
    /// pivot joint's row offset in the pivot sign table (`PIVOT_ROW_BITS`; `simd::layout` has
    /// them all).
    pub(crate) fn pivots(&self) -> &[u16] {
        self.pivots.get_or_init(|| {
            let k = self.influences_per_vertex;
            vertex_pivots(k, &self.joints, &self.weights, self.joint_count)
        })
    }

    /// How often each `(pivot joint, joint)` pair occurs among the positively weighted
    /// influences of the whole eight-vertex blocks (entry `pivot_joint * joint_count + joint`;
    /// `influence_tables::pivot_pair_counts`), or empty.
    pub(crate) fn pivot_pair_counts(&self) -> &[u32] {
        self.pivot_pair_counts.get_or_init(|| {
            let (k, joints) = (self.influences_per_vertex, self.joint_count);
            pivot_pair_counts(k, joints, &self.joints, &self.weights, None)
        })
    }

    /// Each slot's joint as its LBS palette entry's byte offset, `k` per vertex, or empty
    /// where the joint count exceeds `LINEAR_OFFSET_MAX_JOINTS`.
    pub(crate) fn linear_offsets(&self) -> &[u16] {
        self.linear_offsets
            .get_or_init(|| linear_offsets(&self.joints, self.joint_count))
    }

    /// Records a SIMD skinning call; returns whether one came before (then the call may build
    /// and read the tables a reused mesh pays for). Called once per call, before its split.
    pub(crate) fn mark_skinned(&self) -> bool {
        self.skinned.0.swap(true, Ordering::Relaxed)
    }

    /// The smallest and the largest weight sum of a vertex (f32, slot order); `(∞, 0)` for a
    /// mesh without vertices.
    pub(crate) fn weight_sum_range(&self) -> (f32, f32) {
        *self
            .weight_sum_range
            .get_or_init(|| weight_sum_range(self.influences_per_vertex, &self.weights))
    }

    /// The `k` joint indices and weights of one vertex, or `None` past the end.
    #[must_use]
    pub fn vertex(&self, vertex: usize) -> Option<(&[u16], &[f32])> {
        let k = self.influences_per_vertex;
        let range = vertex.checked_mul(k)?..vertex.checked_add(1)?.checked_mul(k)?;
        Some((self.joints.get(range.clone())?, self.weights.get(range)?))
    }
}

/// The error of the first slot (in vertex order) whose joint is out of range or whose weight is
/// not finite and non-negative, if any. Two passes without an early exit first (they
/// vectorize); the slot at fault is looked up only when one fails.
fn first_bad_slot(
    k: usize,
    joints: &[u16],
    weights: &[f32],
    joint_count: usize,
) -> Option<SkinError> {
    let (largest_joint, weights_ok) = crate::vectorize::vectorized(
        #[inline(always)]
        || {
            (
                joints.iter().fold(0u16, |max, &joint| max.max(joint)),
                weights
                    .iter()
                    .fold(true, |ok, &w| ok & finite_non_negative(w)),
            )
        },
    );
    if joints_below(largest_joint, joint_count) && weights_ok {
        return None;
    }
    for (i, (&joint, &weight)) in joints.iter().zip(weights).enumerate() {
        let (vertex, slot) = (i / k, i % k);
        if usize::from(joint) >= joint_count {
            return Some(SkinError::JointOutOfRange {
                vertex,
                slot,
                joint: u32::from(joint),
                joint_count,
            });
        }
        if !finite_non_negative(weight) {
            return Some(SkinError::InvalidWeight {
                vertex,
                slot,
                weight,
            });
        }
    }
    None
}

/// `weight` is finite and not below zero (`-0.0` included), decided on its bits: below the
/// exponent of infinity with the sign clear, or exactly `-0.0` (integer compares, which
/// vectorize; the float form compiled to twice the instructions).
#[inline]
fn finite_non_negative(weight: f32) -> bool {
    let bits = weight.to_bits();
    (bits < f32::INFINITY.to_bits()) | (bits == (-0.0f32).to_bits())
}

/// Whether every joint up to `largest_joint` is below `joint_count` (every u16 is below a joint
/// count above `u16::MAX`).
fn joints_below(largest_joint: u16, joint_count: usize) -> bool {
    u16::try_from(joint_count).map_or(true, |limit| largest_joint < limit)
}

/// The checks of [`Influences::new`] that need no pass over the arrays: `k` slots per vertex
/// (at least one), as many joints as weights, whole vertices, and the joint count.
fn check_shape(
    k: usize,
    joints: &[u16],
    weights: &[f32],
    joint_count: usize,
) -> Result<(), SkinError> {
    if k == 0 {
        return Err(SkinError::ZeroInfluencesPerVertex);
    }
    if joints.len() != weights.len() {
        return Err(SkinError::InfluenceArrayLengths {
            joints: joints.len(),
            weights: weights.len(),
        });
    }
    if !joints.len().is_multiple_of(k) {
        return Err(SkinError::InfluenceArrayNotWhole {
            len: joints.len(),
            influences_per_vertex: k,
        });
    }
    check_joint_count(joint_count)
}

fn check_joint_count(joint_count: usize) -> Result<(), SkinError> {
    if joint_count > MAX_JOINTS {
        return Err(SkinError::TooManyJoints {
            joint_count,
            max: MAX_JOINTS,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::influence_tables::pivot_slot;
    use crate::simd::layout::{PIVOT_HAS_ZERO_WEIGHT, PIVOT_LIGHT, PIVOT_SIGN_TABLE_MAX_JOINTS};

    /// LBS offsets are each joint times an entry's bytes up to `LINEAR_OFFSET_MAX_JOINTS`
    /// joints (the highest, 1,023, at 65,472), and absent above (1,024 · 64 overflows a `u16`).
    #[test]
    fn linear_offsets_up_to_the_largest_joint_count() {
        let joints = vec![0, 1, 1022, 1023];
        let at_limit = Influences::new(2, joints.clone(), vec![0.5; 4], 1024).unwrap();
        assert_eq!(at_limit.linear_offsets(), [0, 64, 65_408, 65_472]);
        let above = Influences::new(2, joints, vec![0.5; 4], 1025).unwrap();
        assert!(above.linear_offsets().is_empty());
    }

    /// The weight-sum range is the smallest and largest f32 slot-order sum (not the f64 sum:
    /// `1 + 2⁻²⁴ + 2⁻²⁴` is 1 in slot order), and `(∞, 0)` without vertices.
    #[test]
    fn weight_sum_range_is_over_slot_order_sums() {
        let half_ulp = f32::EPSILON / 2.0;
        let weights = vec![1.0, half_ulp, half_ulp, 0.25, 0.25, 0.0, 3.0, 0.5, 0.5];
        let influences = Influences::new(3, vec![0; 9], weights, 1).unwrap();
        assert_eq!(influences.weight_sum_range(), (0.5, 4.0));
        let slot_order = Influences::new(3, vec![0; 3], vec![1.0, half_ulp, half_ulp], 1).unwrap();
        assert_eq!(slot_order.weight_sum_range(), (1.0, 1.0));
        let empty = Influences::new(4, Vec::new(), Vec::new(), 1).unwrap();
        assert_eq!(empty.weight_sum_range(), (f32::INFINITY, 0.0));
    }

    /// Each vertex's pivot word: the slot `pivot_slot` picks, a zero weight (`+0` or `-0`)
    /// flagged, a largest weight below `MIN_WEIGHT_SUM` flagged (subnormal weights whose sum is
    /// normal included: the scalar kernel decides those), the pivot joint's row offset in the
    /// high byte where the joint count allows a pivot sign table (0 where it does not), and no
    /// words outside two to eight influences per vertex, where no SIMD kernel reads them.
    #[test]
    fn pivot_words_hold_slot_flags_and_row() {
        let tiny = f32::MIN_POSITIVE / 2.0;
        let weights = [
            0.2, 0.5, 0.5, 0.1, //
            0.0, 0.3, 0.2, 0.3, //
            0.4, 0.3, 0.3, -0.0, //
            tiny, tiny, tiny, tiny, //
            0.0, 0.0, 0.0, 0.0, //
        ];
        let influences = Influences::new(4, vec![0; weights.len()], weights.to_vec(), 1).unwrap();
        assert_eq!(
            influences.pivots(),
            [
                1,
                1 | PIVOT_HAS_ZERO_WEIGHT,
                PIVOT_HAS_ZERO_WEIGHT,
                PIVOT_LIGHT,
                PIVOT_HAS_ZERO_WEIGHT | PIVOT_LIGHT,
            ]
        );
        let (lists, _) =
            Influences::from_lists([vec![(0, 0.25), (1, 0.75)], vec![]], 2, 2).unwrap();
        // `from_lists` puts the heaviest first: joint 1, whose row is at 1 << 8.
        assert_eq!(
            lists.pivots(),
            [1 << 8, PIVOT_HAS_ZERO_WEIGHT | PIVOT_LIGHT]
        );
        for k in [1, 9] {
            let influences = Influences::new(k, vec![0; 2 * k], vec![0.5; 2 * k], 1).unwrap();
            assert!(influences.pivots().is_empty(), "k = {k}");
        }
        // The pivot joint's row where the joint count allows a table, else none.
        let max = PIVOT_SIGN_TABLE_MAX_JOINTS;
        let (joints, weights) = (vec![3, 127, 5, 0], vec![0.1, 0.6, 0.2, 0.1]);
        let table = Influences::new(4, joints.clone(), weights.clone(), max).unwrap();
        assert_eq!(table.pivots(), [1 | (127 << 8)]);
        let none = Influences::new(4, joints, weights, max + 1).unwrap();
        assert_eq!(none.pivots(), [1]);
    }

    /// The heaviest slot, the lowest one on ties, whatever the slots before and after it hold.
    #[test]
    fn pivot_is_the_heaviest_slot_and_the_lowest_on_ties() {
        for (weights, pivot) in [
            (&[][..], 0),
            (&[0.7][..], 0),
            (&[0.1, 0.1][..], 0),
            (&[0.2, 0.5, 0.5, 0.1][..], 1),
            (&[0.0, 0.3, 0.2, 0.3][..], 1),
            (&[0.1, 0.2, 0.3, 0.4][..], 3),
            (&[0.4, 0.3, 0.2, 0.1][..], 0),
            (&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1e-30][..], 7),
            (&[0.25, 0.25, 0.25, 0.25, 0.0, 0.0, 0.0][..], 0),
        ] {
            assert_eq!(pivot_slot(weights), pivot, "{weights:?}");
        }
    }

    /// The pair counts: per `(pivot joint, joint)` the positively weighted influences of the
    /// whole eight-vertex blocks (the tail, zero weights and `-0.0` left out), and none where
    /// the kernels would not read them: counts other than 4 and 8, more joints than the pivot
    /// sign table takes, too few influences per entry.
    #[test]
    fn pivot_pair_counts_cover_whole_blocks_and_positive_weights() {
        // Two joints: 8 · 2² = 32 influences are needed; 9 vertices of 4 give one block of 8
        // (32 influences) and a tail of 1.
        let mut joints = Vec::new();
        let mut weights = Vec::new();
        for v in 0..9u16 {
            // Pivot on slot 1 (joint v % 2); slot 3 has a zero weight on odd vertices.
            joints.extend([1 - v % 2, v % 2, 1, 0]);
            let zero = if v % 2 == 1 { -0.0 } else { 0.1 };
            weights.extend([0.2, 0.5, 0.2, zero]);
        }
        let influences = Influences::new(4, joints.clone(), weights.clone(), 2).unwrap();
        // Even vertices (0, 2, 4, 6) pivot on joint 0: joints 1, 0, 1, 0 → (0, 0) twice, (0, 1)
        // twice; odd ones (1, 3, 5, 7) on joint 1: joints 0, 1, 1 (slot 3 zero) → (1, 0) once,
        // (1, 1) twice. Vertex 8 is the tail.
        assert_eq!(influences.pivot_pair_counts(), [8, 8, 4, 8]);
        assert!(
            Influences::new(4, joints[..28].to_vec(), weights[..28].to_vec(), 2)
                .unwrap()
                .pivot_pair_counts()
                .is_empty()
        );
        let three = Influences::new(3, vec![0; 96], vec![0.5; 96], 1).unwrap();
        assert!(three.pivot_pair_counts().is_empty());
        let joint_count = PIVOT_SIGN_TABLE_MAX_JOINTS + 1;
        let slots = 8 * joint_count * joint_count;
        let many = Influences::new(4, vec![0; slots], vec![0.5; slots], joint_count).unwrap();
        assert!(many.pivot_pair_counts().is_empty());
        let table = Influences::new(4, vec![0; slots], vec![0.5; slots], joint_count - 1).unwrap();
        // Every slot of the whole blocks of 8 vertices (32 slots) pairs joint 0 with itself.
        assert_eq!(table.pivot_pair_counts()[0] as usize, slots / 32 * 32);
    }
}
