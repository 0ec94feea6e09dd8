//! The contract of a per-vertex array of centers of rotation: each finite, or
//! [`NO_ROTATION_CENTER`] where a vertex has none.

use glam::Vec3;

use crate::error::SkinError;

/// The center stored for a vertex that has none (zero total similarity): all three components
/// NaN. Such a vertex is skinned by DQS under [`crate::Method::CenterOfRotation`].
pub const NO_ROTATION_CENTER: Vec3 = Vec3::NAN;

/// Whether `center` is a center of rotation rather than [`NO_ROTATION_CENTER`].
#[must_use]
pub fn has_rotation_center(center: Vec3) -> bool {
    center.is_finite()
}

/// Checks per-vertex centers: `expected` of them, each finite or [`NO_ROTATION_CENTER`].
pub(crate) fn check_rotation_centers(centers: &[Vec3], expected: usize) -> Result<(), SkinError> {
    if centers.len() != expected {
        return Err(SkinError::AttributeLength {
            attribute: "rotation_centers",
            expected,
            found: centers.len(),
        });
    }
    if let Some(vertex) = centers
        .iter()
        .position(|c| !(c.is_finite() || (c.x.is_nan() && c.y.is_nan() && c.z.is_nan())))
    {
        return Err(SkinError::NonFiniteAttribute {
            attribute: "rotation_centers",
            vertex,
        });
    }
    Ok(())
}
