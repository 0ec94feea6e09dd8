//! A call's inputs: [`SkinInput`] over borrowed slices, checked when made, and the checks of
//! vertex attributes it and [`crate::SkinMesh`] share.

use std::cell::Cell;

use glam::{Vec3, Vec4};

use crate::blend_values::{BlendValues, CheckedBlend};
use crate::error::SkinError;
use crate::influences::Influences;
use crate::types::VertexInput;
use crate::vertex_blocks::VertexBlocks;

thread_local! {
    /// Full checks of a mesh's attributes made on this thread (see [`full_validations`]).
    static FULL_VALIDATIONS: Cell<u64> = const { Cell::new(0) };
}

/// How many times this thread has checked a mesh's attributes in full (every position for
/// finiteness): once per [`crate::SkinMesh::new`] and per [`SkinInput::new`]. For tests of the
/// front doors, which must check a mesh once and not once per frame.
#[must_use]
pub fn full_validations() -> u64 {
    FULL_VALIDATIONS.with(Cell::get)
}

/// Counts one full check of a mesh's attributes ([`full_validations`]).
pub(crate) fn count_full_validation() {
    FULL_VALIDATIONS.with(|count| count.set(count.get() + 1));
}

/// A mesh's skinning inputs over borrowed slices, checked when made: for one-off calls of
/// [`crate::skin_into`]. A mesh skinned every frame is a [`crate::SkinMesh`], checked once.
///
/// Positions and normals are `Vec3`, tangents `Vec4` with `w` the handedness (±1), all in the
/// bind pose (the space the inverse bind matrices map from), one per vertex of `influences`.
#[derive(Debug, Clone, Copy)]
pub struct SkinInput<'a> {
    positions: &'a [Vec3],
    normals: Option<&'a [Vec3]>,
    tangents: Option<&'a [Vec4]>,
    influences: &'a Influences,
    rotation_centers: Option<&'a [Vec3]>,
    blend: Option<CheckedBlend<'a>>,
    vertex_blocks: Option<&'a VertexBlocks>,
}

impl<'a> SkinInput<'a> {
    /// Checks lengths against `influences.vertex_count()` and that every value is finite.
    ///
    /// O(vertices) once; allocates nothing.
    ///
    /// # Errors
    /// [`SkinError::AttributeLength`] and [`SkinError::NonFiniteAttribute`] (naming the vertex).
    pub fn new(
        positions: &'a [Vec3],
        normals: Option<&'a [Vec3]>,
        tangents: Option<&'a [Vec4]>,
        influences: &'a Influences,
    ) -> Result<Self, SkinError> {
        count_full_validation();
        let expected = influences.vertex_count();
        check_attribute("positions", expected, positions)?;
        if let Some(normals) = normals {
            check_attribute("normals", expected, normals)?;
        }
        if let Some(tangents) = tangents {
            check_attribute("tangents", expected, tangents)?;
        }
        Ok(Self {
            positions,
            normals,
            tangents,
            influences,
            rotation_centers: None,
            blend: None,
            vertex_blocks: None,
        })
    }

    /// Adds per-vertex centers of rotation, which [`crate::Method::CenterOfRotation`] needs (other
    /// methods ignore them): one per vertex, in the bind-pose space of the positions, each
    /// finite or [`crate::cor::NO_ROTATION_CENTER`] (NaN: no center, skinned by DQS). Usually
    /// [`crate::cor::RotationCenters::centers`]. O(vertices) once; allocates nothing.
    ///
    /// # Errors
    /// [`SkinError::AttributeLength`] (`"rotation_centers"`) for a count other than the vertex
    /// count, [`SkinError::NonFiniteAttribute`] for a center with an infinity or NaN in only
    /// some components.
    pub fn with_rotation_centers(self, rotation_centers: &'a [Vec3]) -> Result<Self, SkinError> {
        crate::cor::check_rotation_centers(rotation_centers, self.vertex_count())?;
        Ok(Self {
            rotation_centers: Some(rotation_centers),
            ..self
        })
    }

    /// Adds the blend values [`crate::Method::Blended`] needs (other methods ignore them): one
    /// per vertex ([`BlendValues::PerVertex`]) or one for the mesh ([`BlendValues::Uniform`]),
    /// each in `[0, 1]` (0 = LBS, 1 = DQS). O(vertices) once; allocates nothing.
    ///
    /// # Errors
    /// [`SkinError::AttributeLength`] (`"blend_values"`) for a count other than the vertex
    /// count, [`SkinError::InvalidBlendValue`] naming the first vertex whose value is NaN or
    /// outside `[0, 1]`.
    pub fn with_blend_values(self, values: BlendValues<'a>) -> Result<Self, SkinError> {
        let blend = CheckedBlend::new(values, self.vertex_count())?;
        Ok(Self {
            blend: Some(blend),
            ..self
        })
    }

    /// An input over attributes a [`crate::SkinMesh`] has already checked, with the mesh's
    /// blocks: no check here.
    pub(crate) fn checked(
        positions: &'a [Vec3],
        normals: Option<&'a [Vec3]>,
        tangents: Option<&'a [Vec4]>,
        influences: &'a Influences,
        (rotation_centers, blend): (Option<&'a [Vec3]>, Option<CheckedBlend<'a>>),
        vertex_blocks: Option<&'a VertexBlocks>,
    ) -> Self {
        Self {
            positions,
            normals,
            tangents,
            influences,
            rotation_centers,
            blend,
            vertex_blocks,
        }
    }

    /// The checked blend values, if given.
    pub(crate) fn checked_blend(&self) -> Option<CheckedBlend<'a>> {
        self.blend
    }

    /// Whether this input carries `vertex_input` (a method's per-vertex input,
    /// [`crate::Method::vertex_input`]).
    #[must_use]
    pub fn has_vertex_input(&self, vertex_input: VertexInput) -> bool {
        match vertex_input {
            VertexInput::RotationCenters => self.rotation_centers.is_some(),
            VertexInput::BlendValues => self.blend.is_some(),
        }
    }

    /// The mesh's blocks, where the input comes from a [`crate::SkinMesh`].
    pub(crate) fn vertex_blocks(&self) -> Option<&'a VertexBlocks> {
        self.vertex_blocks
    }

    /// Bind-pose positions.
    #[must_use]
    pub fn positions(&self) -> &'a [Vec3] {
        self.positions
    }

    /// Bind-pose normals, if any.
    #[must_use]
    pub fn normals(&self) -> Option<&'a [Vec3]> {
        self.normals
    }

    /// Bind-pose tangents (`w` = handedness), if any.
    #[must_use]
    pub fn tangents(&self) -> Option<&'a [Vec4]> {
        self.tangents
    }

    /// The influences.
    #[must_use]
    pub fn influences(&self) -> &'a Influences {
        self.influences
    }

    /// Per-vertex centers of rotation, if given (NaN where a vertex has none).
    #[must_use]
    pub fn rotation_centers(&self) -> Option<&'a [Vec3]> {
        self.rotation_centers
    }

    /// The blend values of [`crate::Method::Blended`], if given.
    #[must_use]
    pub fn blend_values(&self) -> Option<BlendValues<'a>> {
        self.blend.map(|b| b.values)
    }

    /// Number of vertices.
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }
}

/// A vertex attribute whose values can be checked for finiteness.
pub(crate) trait FiniteValue: Sized {
    /// Every component finite.
    fn is_finite_value(&self) -> bool;

    /// The components of `values`, in order.
    fn components(values: &[Self]) -> &[f32];
}

impl FiniteValue for Vec3 {
    fn is_finite_value(&self) -> bool {
        self.is_finite()
    }

    fn components(values: &[Self]) -> &[f32] {
        // SAFETY: `Vec3` is `#[repr(C)]` with three `f32` fields and no padding (size 12,
        // align 4), so `len` of them are `3 len` consecutive, initialized `f32`s, borrowed
        // for as long as `values`.
        unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<f32>(), values.len() * 3) }
    }
}

impl FiniteValue for Vec4 {
    fn is_finite_value(&self) -> bool {
        self.is_finite()
    }

    fn components(values: &[Self]) -> &[f32] {
        // SAFETY: `Vec4` is four `f32`s and nothing else (size 16: glam's SIMD `Vec4` is
        // one `__m128`, its scalar one `#[repr(C)]` x, y, z, w), so `len` of them are
        // `4 len` consecutive, initialized `f32`s, borrowed for as long as `values`.
        unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<f32>(), values.len() * 4) }
    }
}

/// `values` has `expected` elements, all finite; errors name the attribute and the vertex.
pub(crate) fn check_attribute<T: FiniteValue>(
    attribute: &'static str,
    expected: usize,
    values: &[T],
) -> Result<(), SkinError> {
    check_length(attribute, expected, values.len())?;
    // One pass over the components' bits without an early exit (a finite `f32`'s exponent
    // bits are not all ones), which vectorizes; the vertex at fault is found only then.
    let exponent = f32::INFINITY.to_bits();
    let all_finite = crate::vectorize::vectorized(
        #[inline(always)]
        || {
            T::components(values)
                .iter()
                .fold(true, |all, c| all & (c.to_bits() & exponent != exponent))
        },
    );
    if all_finite {
        return Ok(());
    }
    match values.iter().position(|v| !v.is_finite_value()) {
        Some(vertex) => Err(SkinError::NonFiniteAttribute { attribute, vertex }),
        None => Ok(()),
    }
}

pub(crate) fn check_length(
    attribute: &'static str,
    expected: usize,
    found: usize,
) -> Result<(), SkinError> {
    if expected != found {
        return Err(SkinError::AttributeLength {
            attribute,
            expected,
            found,
        });
    }
    Ok(())
}
