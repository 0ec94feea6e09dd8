//! The one error type of the core crate.

use thiserror::Error;

use crate::types::{Method, VertexInput};

/// Everything that can be wrong with the data handed to `skinblend`.
///
/// Each variant names the place (vertex, slot, joint, attribute) and the value, so a caller can
/// report it without guessing. No public function of this crate panics on data instead.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SkinError {
    /// A method name that is not one of [`crate::Method::names`].
    #[error("unknown method {name:?} (expected one of {expected})", expected = Method::names().join(", "))]
    UnknownMethod {
        /// The name given.
        name: String,
    },

    /// `influences_per_vertex` was zero: every vertex needs at least one slot.
    #[error("influences per vertex must be at least 1, got 0")]
    ZeroInfluencesPerVertex,

    /// The joint-index and weight arrays differ in length.
    #[error("influence arrays differ in length: {joints} joint indices, {weights} weights")]
    InfluenceArrayLengths {
        /// Length of the joint-index array.
        joints: usize,
        /// Length of the weight array.
        weights: usize,
    },

    /// The influence arrays are not a whole number of vertices.
    #[error("influence arrays hold {len} entries, not a multiple of {influences_per_vertex} influences per vertex")]
    InfluenceArrayNotWhole {
        /// Length of each influence array.
        len: usize,
        /// The declared number of slots per vertex.
        influences_per_vertex: usize,
    },

    /// More joints than a `u16` joint index can address.
    #[error("joint count {joint_count} exceeds the {max} joints a u16 index can address")]
    TooManyJoints {
        /// The joint count given.
        joint_count: usize,
        /// The largest supported joint count (65 536).
        max: usize,
    },

    /// A joint index is not below the joint count.
    #[error("vertex {vertex}, influence slot {slot}: joint index {joint} is out of range (joint count {joint_count})")]
    JointOutOfRange {
        /// The vertex.
        vertex: usize,
        /// The influence slot within the vertex.
        slot: usize,
        /// The offending joint index.
        joint: u32,
        /// The number of joints.
        joint_count: usize,
    },

    /// A weight is NaN, infinite or negative.
    #[error(
        "vertex {vertex}, influence slot {slot}: weight {weight} is not finite and non-negative"
    )]
    InvalidWeight {
        /// The vertex.
        vertex: usize,
        /// The influence slot within the vertex.
        slot: usize,
        /// The offending weight.
        weight: f32,
    },

    /// A vertex attribute has the wrong number of elements.
    #[error("{attribute} has {found} elements, expected {expected} (one per vertex)")]
    AttributeLength {
        /// Which attribute: `"positions"`, `"normals"`, `"tangents"`, or an output's name.
        attribute: &'static str,
        /// The expected element count.
        expected: usize,
        /// The element count given.
        found: usize,
    },

    /// A vertex attribute holds NaN or infinity.
    #[error("{attribute}[{vertex}] is not finite")]
    NonFiniteAttribute {
        /// Which attribute.
        attribute: &'static str,
        /// The vertex.
        vertex: usize,
    },

    /// One mesh of a [`crate::skin_batch`] call is wrong; nothing was skinned.
    #[error("batch job {job}: {source}")]
    BatchJob {
        /// The job's index in the batch.
        job: usize,
        /// What is wrong with it.
        source: Box<SkinError>,
    },

    /// An output asks for an attribute the input does not have.
    #[error("output {attribute} requested, but the input has no {attribute}")]
    MissingInputAttribute {
        /// Which attribute.
        attribute: &'static str,
    },

    /// The palette has fewer matrices than the influences' joint count.
    #[error("palette has {found} matrices, but the influences address {expected} joints")]
    PaletteLength {
        /// The joint count the influences were built for.
        expected: usize,
        /// The palette length given.
        found: usize,
    },

    /// A palette matrix holds NaN or infinity.
    #[error("palette matrix of joint {joint} is not finite")]
    NonFiniteMatrix {
        /// The joint.
        joint: usize,
    },

    /// A dual quaternion of a palette is not finite or has a zero real part.
    #[error("dual quaternion of joint {joint} is not finite or has a zero real part")]
    InvalidDualQuat {
        /// The joint.
        joint: usize,
    },

    /// A palette matrix is not affine: its last row is not `[0, 0, 0, 1]`.
    #[error(
        "palette matrix of joint {joint} is not affine: last row is {row:?}, expected [0, 0, 0, 1]"
    )]
    NonAffineMatrix {
        /// The joint.
        joint: usize,
        /// The last row found.
        row: [f32; 4],
    },

    /// The residual centers do not match the palette in length.
    #[error("{found} joint centers given for a palette of {expected} joints")]
    CenterCount {
        /// The palette length.
        expected: usize,
        /// The number of centers given.
        found: usize,
    },

    /// A residual center holds NaN or infinity.
    #[error("center of joint {joint} is not finite")]
    NonFiniteCenter {
        /// The joint.
        joint: usize,
    },

    /// A metric's element (triangle, ring entry) names a vertex that does not exist.
    #[error(
        "{element}[{index}] references vertex {vertex}, but there are {vertex_count} vertices"
    )]
    VertexIndexOutOfRange {
        /// What refers to the vertex: `"triangles"`, `"vertices"`.
        element: &'static str,
        /// Position of the element in its list (triangle number, list index).
        index: usize,
        /// The vertex index found.
        vertex: u32,
        /// The number of vertices.
        vertex_count: usize,
    },

    /// The rigid tolerance is NaN, infinite or negative.
    #[error("rigid tolerance {tolerance} must be finite and non-negative")]
    InvalidTolerance {
        /// The tolerance given.
        tolerance: f32,
    },

    /// [`crate::Method::CenterOfRotation`] was asked for, but the input has no per-vertex
    /// centers of rotation (see [`crate::SkinInput::with_rotation_centers`]).
    #[error("method \"cor\" needs per-vertex rotation centers for all {vertex_count} vertices; the input has none (SkinInput::with_rotation_centers)")]
    MissingRotationCenters {
        /// The input's vertex count.
        vertex_count: usize,
    },

    /// [`crate::Method::Blended`] was asked for, but the input has no blend values (see
    /// [`crate::SkinInput::with_blend_values`]).
    #[error("method \"blended\" needs a blend value between LBS (0) and DQS (1) for all {vertex_count} vertices, or one for the whole mesh; the input has none (SkinInput::with_blend_values)")]
    MissingBlendValues {
        /// The input's vertex count.
        vertex_count: usize,
    },

    /// A blend value of [`crate::Method::Blended`] is NaN or outside `[0, 1]`.
    #[error("blend value {value} of vertex {vertex} is not in [0, 1] (0 = LBS, 1 = DQS)")]
    InvalidBlendValue {
        /// The vertex (0 for a value given for the whole mesh).
        vertex: usize,
        /// The value found.
        value: f32,
    },

    /// A center-of-rotation precomputation option is out of range.
    #[error("center-of-rotation option {option} = {value} is out of range")]
    InvalidCorOption {
        /// Which option: `"sigma"`, `"subdivision_epsilon"` or `"weight_quantum"`.
        option: &'static str,
        /// The value given.
        value: f32,
    },

    /// Saved rotation centers do not start with the format's magic bytes.
    #[error("rotation-center data starts with {found:?}, not the magic b\"SKBLCOR\\0\"")]
    CorDataMagic {
        /// The first eight bytes found.
        found: [u8; 8],
    },

    /// Saved rotation centers are of a format version this library does not read.
    #[error(
        "rotation-center data has format version {found}; this library reads version {supported}"
    )]
    CorDataVersion {
        /// The version in the data.
        found: u32,
        /// The version this library reads.
        supported: u32,
    },

    /// Saved rotation centers are truncated or have trailing bytes.
    #[error("rotation-center data is {found} bytes long; its header calls for {expected}")]
    CorDataLength {
        /// The length the header implies (the header and checksum alone when the header itself
        /// is cut short).
        expected: usize,
        /// The length given.
        found: usize,
    },

    /// Saved rotation centers do not match their checksum (corrupted).
    #[error(
        "rotation-center data checksum mismatch: stored {stored:#018x}, computed {computed:#018x}"
    )]
    CorDataChecksum {
        /// The checksum stored in the data.
        stored: u64,
        /// The FNV-1a 64 checksum of the bytes before it.
        computed: u64,
    },
}

/// `Method`'s parser lives here, beside the error it returns (so that `types` needs no error).
impl std::str::FromStr for Method {
    type Err = SkinError;

    /// Parses a [`Method::name`].
    ///
    /// # Errors
    /// [`SkinError::UnknownMethod`] listing the names there are.
    fn from_str(name: &str) -> Result<Self, SkinError> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| SkinError::UnknownMethod {
                name: name.to_owned(),
            })
    }
}

impl SkinError {
    /// The error for a mesh of `vertex_count` vertices given to a method that needs
    /// `vertex_input` ([`Method::vertex_input`]) without it.
    #[must_use]
    pub fn missing_vertex_input(vertex_input: VertexInput, vertex_count: usize) -> Self {
        match vertex_input {
            VertexInput::RotationCenters => SkinError::MissingRotationCenters { vertex_count },
            VertexInput::BlendValues => SkinError::MissingBlendValues { vertex_count },
        }
    }
}
