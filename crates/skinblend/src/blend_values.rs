//! The blend values of [`crate::Method::Blended`]: how much of DQS each vertex takes (0 = LBS,
//! 1 = DQS), their check, and the rule that derives them from chosen joints.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::error::SkinError;
use crate::influences::Influences;
use crate::types::Method;

/// The blend values of a mesh under [`Method::Blended`]: one for the whole mesh or one per
/// vertex, each in `[0, 1]` (0 = LBS, 1 = DQS).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BlendValues<'a> {
    /// One value for every vertex.
    Uniform(f32),
    /// One value per vertex, in vertex order.
    PerVertex(&'a [f32]),
}

impl BlendValues<'_> {
    /// The value of vertex `vertex` (in range: the values were checked against the mesh).
    #[inline]
    #[must_use]
    pub fn value(&self, vertex: usize) -> f32 {
        match self {
            BlendValues::Uniform(value) => *value,
            BlendValues::PerVertex(values) => values[vertex],
        }
    }
}

/// Checked blend values with their lowest and highest value, which let a call whose values
/// are all 0 or all 1 run LBS's or DQS's kernel ([`CheckedBlend::uniform_method`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CheckedBlend<'a> {
    pub(crate) values: BlendValues<'a>,
    lowest: f32,
    highest: f32,
    /// Where the mesh that holds the values keeps [`CheckedBlend::dq_pivot_pair_counts`] (a
    /// `SkinMesh`'s), or `None` (an input's own values, checked per call: no counts).
    dq_pair_counts: Option<&'a OnceLock<Vec<u32>>>,
}

impl<'a> CheckedBlend<'a> {
    /// Checks `values` for a mesh of `vertex_count` vertices: a per-vertex slice of that length,
    /// every value in `[0, 1]`. O(vertices) once, one vectorized pass.
    ///
    /// # Errors
    /// [`SkinError::AttributeLength`] (`"blend_values"`), [`SkinError::InvalidBlendValue`]
    /// naming the first vertex at fault (NaN included).
    pub(crate) fn new(values: BlendValues<'a>, vertex_count: usize) -> Result<Self, SkinError> {
        let (lowest, highest) = match values {
            BlendValues::Uniform(value) => {
                if !(0.0..=1.0).contains(&value) {
                    return Err(SkinError::InvalidBlendValue { vertex: 0, value });
                }
                (value, value)
            }
            BlendValues::PerVertex(slice) => {
                if slice.len() != vertex_count {
                    return Err(SkinError::AttributeLength {
                        attribute: "blend_values",
                        expected: vertex_count,
                        found: slice.len(),
                    });
                }
                // One pass without an early exit, which vectorizes; NaN fails both compares.
                let (all_in_range, lowest, highest) = crate::vectorize::vectorized(
                    #[inline(always)]
                    || {
                        slice.iter().fold(
                            (true, f32::INFINITY, f32::NEG_INFINITY),
                            |(ok, lo, hi), &v| {
                                (ok & (0.0..=1.0).contains(&v), lo.min(v), hi.max(v))
                            },
                        )
                    },
                );
                if !all_in_range {
                    let vertex = slice
                        .iter()
                        .position(|v| !(0.0..=1.0).contains(v))
                        .unwrap_or_default();
                    return Err(SkinError::InvalidBlendValue {
                        vertex,
                        value: slice[vertex],
                    });
                }
                (lowest, highest)
            }
        };
        Ok(Self {
            values,
            lowest,
            highest,
            dq_pair_counts: None,
        })
    }

    /// Whether no vertex has the value 0: then every vertex's sign flips count, and the
    /// influences' own pivot pair counts are blended's ([`CheckedBlend::dq_pivot_pair_counts`]).
    pub(crate) fn every_vertex_takes_dqs(&self) -> bool {
        self.lowest > 0.0
    }

    /// The pivot pair counts (`Influences::pivot_pair_counts`) of the vertices that take some
    /// DQS (value above 0), from which blended's SIMD kernel counts its sign flips once per
    /// call (`simd::flips`): the influences' own where every vertex does; else built once for
    /// the mesh that holds the values (a `SkinMesh`) and kept there; else empty, as where the
    /// influences' are.
    pub(crate) fn dq_pivot_pair_counts(&self, influences: &'a Influences) -> &'a [u32] {
        if self.every_vertex_takes_dqs() {
            return influences.pivot_pair_counts();
        }
        let (BlendValues::PerVertex(values), Some(counts)) = (self.values, self.dq_pair_counts)
        else {
            return &[];
        };
        counts.get_or_init(|| {
            crate::influence_tables::pivot_pair_counts(
                influences.influences_per_vertex(),
                influences.joint_count(),
                influences.joints(),
                influences.weights(),
                Some(values),
            )
        })
    }

    /// LBS where every value is 0, DQS where every value is 1 (a mesh with no vertex: LBS),
    /// else `None`: the method whose kernel a call may run instead, to the same bits.
    pub(crate) fn uniform_method(&self) -> Option<Method> {
        if self.highest <= 0.0 {
            Some(Method::Linear)
        } else if self.lowest >= 1.0 {
            Some(Method::DualQuaternion)
        } else {
            None
        }
    }
}

/// Blend values a [`crate::SkinMesh`] owns or borrows, checked.
#[derive(Debug, Clone)]
pub(crate) struct StoredBlend<'a> {
    per_vertex: Option<Cow<'a, [f32]>>,
    uniform: f32,
    lowest: f32,
    highest: f32,
    /// [`CheckedBlend::dq_pivot_pair_counts`], built on first use.
    dq_pair_counts: OnceLock<Vec<u32>>,
}

impl<'a> StoredBlend<'a> {
    /// Checks and keeps per-vertex values (`Some`) or one value for the mesh.
    pub(crate) fn new(
        per_vertex: Option<Cow<'a, [f32]>>,
        uniform: f32,
        vertex_count: usize,
    ) -> Result<Self, SkinError> {
        let values = match &per_vertex {
            Some(values) => BlendValues::PerVertex(values),
            None => BlendValues::Uniform(uniform),
        };
        let CheckedBlend {
            lowest, highest, ..
        } = CheckedBlend::new(values, vertex_count)?;
        Ok(Self {
            per_vertex,
            uniform,
            lowest,
            highest,
            dq_pair_counts: OnceLock::new(),
        })
    }

    /// Keeps the values of a checked input, borrowed (no second check).
    pub(crate) fn from_checked(checked: CheckedBlend<'a>) -> Self {
        let (per_vertex, uniform) = match checked.values {
            BlendValues::PerVertex(values) => (Some(Cow::Borrowed(values)), 0.0),
            BlendValues::Uniform(value) => (None, value),
        };
        Self {
            per_vertex,
            uniform,
            lowest: checked.lowest,
            highest: checked.highest,
            dq_pair_counts: OnceLock::new(),
        }
    }

    /// The same values, owned.
    pub(crate) fn into_owned(self) -> StoredBlend<'static> {
        StoredBlend {
            per_vertex: self.per_vertex.map(|v| Cow::Owned(v.into_owned())),
            uniform: self.uniform,
            lowest: self.lowest,
            highest: self.highest,
            dq_pair_counts: self.dq_pair_counts,
        }
    }

    /// The checked values, borrowed.
    pub(crate) fn checked(&self) -> CheckedBlend<'_> {
        CheckedBlend {
            values: match &self.per_vertex {
                Some(values) => BlendValues::PerVertex(values),
                None => BlendValues::Uniform(self.uniform),
            },
            lowest: self.lowest,
            highest: self.highest,
            dq_pair_counts: Some(&self.dq_pair_counts),
        }
    }
}

/// Blend values from a rule an artist can state: each vertex takes as much DQS as its
/// (normalized) weights put on the joints flagged in `dq_joints` (indexed by joint; joints past
/// its end are not flagged). A vertex entirely on those joints is DQS (1), one off them LBS
/// (0), one across the boundary in between, so the blend fades where the weights do. An
/// unweighted vertex gets 0. Values are clamped to `[0, 1]` against rounding.
#[must_use]
pub fn blend_values_from_joints(influences: &Influences, dq_joints: &[bool]) -> Vec<f32> {
    let k = influences.influences_per_vertex();
    influences
        .joints()
        .chunks_exact(k.max(1))
        .zip(influences.weights().chunks_exact(k.max(1)))
        .map(|(joints, weights)| {
            let (mut on, mut all) = (0.0f32, 0.0f32);
            for (&joint, &weight) in joints.iter().zip(weights) {
                all += weight;
                if dq_joints.get(usize::from(joint)).copied().unwrap_or(false) {
                    on += weight;
                }
            }
            if all > 0.0 {
                (on / all).clamp(0.0, 1.0)
            } else {
                0.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_outside_the_unit_interval_name_their_vertex() {
        let err = CheckedBlend::new(BlendValues::PerVertex(&[0.0, 0.5, f32::NAN]), 3);
        assert!(matches!(
            err,
            Err(SkinError::InvalidBlendValue { vertex: 2, value }) if value.is_nan()
        ));
        let err = CheckedBlend::new(BlendValues::PerVertex(&[0.0, 1.5]), 2);
        assert_eq!(
            err,
            Err(SkinError::InvalidBlendValue {
                vertex: 1,
                value: 1.5
            })
        );
        let err = CheckedBlend::new(BlendValues::Uniform(-0.25), 2);
        assert_eq!(
            err,
            Err(SkinError::InvalidBlendValue {
                vertex: 0,
                value: -0.25
            })
        );
        let err = CheckedBlend::new(BlendValues::PerVertex(&[0.0]), 2);
        assert!(matches!(
            err,
            Err(SkinError::AttributeLength {
                attribute: "blend_values",
                expected: 2,
                found: 1
            })
        ));
    }

    #[test]
    fn all_zero_or_all_one_runs_one_method() {
        let all = |v: &[f32]| {
            CheckedBlend::new(BlendValues::PerVertex(v), v.len())
                .unwrap()
                .uniform_method()
        };
        assert_eq!(all(&[0.0; 9]), Some(Method::Linear));
        assert_eq!(all(&[1.0; 9]), Some(Method::DualQuaternion));
        assert_eq!(all(&[0.0, 1.0]), None);
        assert_eq!(all(&[0.5]), None);
    }

    #[test]
    fn the_joint_rule_takes_the_weights_on_the_chosen_joints() {
        let influences = Influences::new(
            2,
            vec![0, 1, 1, 2, 0, 2],
            vec![0.25, 0.75, 1.0, 0.0, 0.0, 0.0],
            3,
        )
        .unwrap();
        let values = blend_values_from_joints(&influences, &[false, true]);
        assert_eq!(values, vec![0.75, 1.0, 0.0]);
    }
}
