//! Gradients of LBS, DQS, CoR and blended (positions and normals) for training loops: batched
//! forward passes in `f32` or `f64` and their analytic backward passes (reverse mode),
//! multi-threaded with rayon.
//!
//! The forward pass is the scalar reference (`reference.rs`) written over a generic [`Real`]:
//! the same renormalization, pivot rule, sign alignment, Gram–Schmidt split about each joint's
//! bind origin, rigid tolerance, residual blend and CoR translation, so the backward pass is the
//! derivative of what the library computes (its `f32` results agree within rounding, tested).
//! DQS over a palette without residuals runs eight vertices at a time (`lanes.rs`), the same
//! operations per vertex in the same order, so the same floats.
//!
//! # Conventions
//! - Arrays are row-major and flat. `palettes`: `P × J × 4 × 4` in the mathematical layout
//!   (`v' = M (v, 1)`, translation in `M[:3, 3]`); the last row of each matrix is not read and
//!   its gradient is zero. `vertices`: `V × N × 3`. `joints`: `N × K`. `weights`: `W × N × K`,
//!   renormalized per vertex as the library does. `P`, `V` and `W` are each 1 (shared by every
//!   batch element) or the batch size; a shared input's gradient is summed over the batch.
//! - Gradients are of `Σ grad_out · positions`.
//! - Weights: the derivative includes the renormalization; at a zero weight it is the
//!   derivative from above (weights are never negative). A vertex whose weights sum to zero is
//!   passed through: the gradient of its position is the identity, of its weights zero.
//! - DQS's sign alignment is constant between the points where a joint's quaternion is exactly
//!   orthogonal to the pivot's (a rotation of 180° between them, where the blend jumps); there,
//!   as the forward adds (a dot of exactly zero is not negative), the gradient is that of the
//!   added side. The pivot is likewise constant between ties of the heaviest weights.
//! - A joint within the rigid tolerance has no residual (`S = I`, constant): its gradient
//!   flows through the rotation and translation only, as the library's function does.
//! - CoR: the centers of rotation and the bind origins are constants (no gradient).
//! - Normals ([`forward_normals`], [`backward_normals`]: the rig's `vertices` hold the normals)
//!   are the library's: each method's normal matrix (the cofactor of the 3x3 times the sign of
//!   its determinant), renormalized. Where the 3x3 is singular the library drops the sign and
//!   the gradient is that of the unsigned cofactor (a polynomial, defined at a zero
//!   determinant); where the result has no length the input normal passes through, its
//!   gradient the identity and nothing flowing to the palette or the weights.

mod driver;
mod joints;
mod lanes;
mod normal;
mod real;
#[cfg(test)]
mod tests;
mod vertex;

pub use driver::{backward, backward_normals, forward, forward_normals, Gradients, Rig};
pub use real::Real;

/// Bad input to [`forward`] or [`backward`]; the message names the argument.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{argument}: {message}")]
pub struct GradientError {
    /// The argument at fault.
    pub argument: &'static str,
    /// What is wrong with it.
    pub message: String,
}

impl GradientError {
    pub(crate) fn new(argument: &'static str, message: impl Into<String>) -> Self {
        Self {
            argument,
            message: message.into(),
        }
    }
}
