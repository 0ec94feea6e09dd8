//! What the precomputation is asked for: [`CorOptions`], its defaults and their checks.

use crate::error::SkinError;

/// σ of the weight similarity, the paper's value: how far apart two weight vectors' pairwise
/// products may be before the triangle stops counting for the vertex.
pub const DEFAULT_SIGMA: f32 = 0.1;

/// ε of the subdivision, the paper's value: the largest Euclidean distance between the weights
/// of an edge's two ends after subdivision.
pub const DEFAULT_SUBDIVISION_EPSILON: f32 = 0.1;

/// The smallest ε accepted: normalized weights differ by at most √2, and √2 / 2⁸ < 1/128, so no
/// triangle is split more than 8 times (65 536 sub-triangles) and the cost stays bounded.
pub const MIN_SUBDIVISION_EPSILON: f32 = 1.0 / 128.0;

/// Default rounding of sub-triangle weights when clustering them (1/1024).
///
/// A cluster uses its members' area-weighted mean weights, so its error is second order in the
/// spread; measured on the fixtures the centers move by under 1e-5 of the mesh size against
/// exact clustering (`tests/cor_precompute.rs`), while a painted 100k-vertex mesh needs it to finish in
/// seconds rather than minutes. 0 merges only bit-identical weights.
pub const DEFAULT_WEIGHT_QUANTUM: f32 = 1.0 / 1024.0;

/// Parameters of the precomputation; [`CorOptions::default`] is the paper's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CorOptions {
    /// σ of the similarity, unitless (weights are in [0, 1]); finite and positive. Default
    /// [`DEFAULT_SIGMA`] (0.1).
    pub sigma: f32,
    /// ε of the subdivision, unitless; finite and at least [`MIN_SUBDIVISION_EPSILON`]. Default
    /// [`DEFAULT_SUBDIVISION_EPSILON`] (0.1).
    pub subdivision_epsilon: f32,
    /// Sub-triangle weights are rounded to multiples of this to form clusters; finite and
    /// non-negative, 0 for exact clusters only. Default [`DEFAULT_WEIGHT_QUANTUM`].
    pub weight_quantum: f32,
    /// Run on the current rayon pool (default `true`; ignored without the `rayon` feature). The
    /// result is bit-identical either way.
    pub parallel: bool,
    /// The working-memory budget of the clusters, in bytes (see the `cor` module docs, "Memory");
    /// `None` (the default) for [`super::default_memory_budget_bytes`]. Raise it to keep the full
    /// quadrature on a large mesh whose weights vary from vertex to vertex; a budget below what
    /// the corner quadrature needs is raised to that.
    pub memory_budget_bytes: Option<usize>,
}

impl Default for CorOptions {
    fn default() -> Self {
        Self {
            sigma: DEFAULT_SIGMA,
            subdivision_epsilon: DEFAULT_SUBDIVISION_EPSILON,
            weight_quantum: DEFAULT_WEIGHT_QUANTUM,
            parallel: true,
            memory_budget_bytes: None,
        }
    }
}

/// Checks each option's range, naming the first one out of it.
pub(super) fn check_options(options: &CorOptions) -> Result<(), SkinError> {
    let invalid = |option, value| Err(SkinError::InvalidCorOption { option, value });
    if !(options.sigma.is_finite() && options.sigma > 0.0) {
        return invalid("sigma", options.sigma);
    }
    if !(options.subdivision_epsilon.is_finite()
        && options.subdivision_epsilon >= MIN_SUBDIVISION_EPSILON)
    {
        return invalid("subdivision_epsilon", options.subdivision_epsilon);
    }
    if !(options.weight_quantum.is_finite() && options.weight_quantum >= 0.0) {
        return invalid("weight_quantum", options.weight_quantum);
    }
    Ok(())
}
