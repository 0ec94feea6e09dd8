//! The value types of a loaded document: nodes, skins, meshes, primitives, animations.

use glam::{Mat4, Quat, Vec3, Vec4};
use gltf::json::mesh::Mode;
use skinblend::{InfluenceBuildReport, Influences};

/// A node deeper than this below its scene root is rejected: no real rig comes near it, and it
/// bounds the work on a hostile file (world matrices are one forward pass, never recursion).
pub const MAX_NODE_DEPTH: usize = 4096;

/// Extensions this crate reads when a file lists them as required.
pub const SUPPORTED_REQUIRED_EXTENSIONS: &[&str] = &["KHR_mesh_quantization"];

/// A node's local transform: translation, rotation (unit quaternion, x y z w), scale.
///
/// The local matrix is `T · R · S` (glTF's order). A node given by `matrix` keeps that matrix
/// exactly unless an animation targets it (then it is decomposed into TRS first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trs {
    /// Translation in the parent's space (metres).
    pub translation: Vec3,
    /// Rotation, a unit quaternion.
    pub rotation: Quat,
    /// Scale per axis (may be negative or non-uniform).
    pub scale: Vec3,
}

impl Trs {
    /// The local matrix `T · R · S`.
    #[must_use]
    pub fn matrix(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }
}

/// One node of the scene graph.
#[derive(Debug, Clone)]
pub struct Node {
    /// The node's name, if any.
    pub name: Option<String>,
    /// The parent, `None` for a root.
    pub parent: Option<usize>,
    /// The children in file order.
    pub children: Vec<usize>,
    /// The local transform from the file (`matrix` or TRS).
    pub matrix: Option<Mat4>,
    /// The local TRS from the file (identity parts where absent; decomposed from `matrix`).
    pub trs: Trs,
    /// The mesh, if any.
    pub mesh: Option<usize>,
    /// The skin, if any (then the node's own transform does not move the mesh).
    pub skin: Option<usize>,
    /// Morph target weights of this node (overrides the mesh's), if any.
    pub weights: Option<Vec<f32>>,
}

/// A skin: joints and their inverse bind matrices.
#[derive(Debug, Clone)]
pub struct Skin {
    /// The skin's name, if any.
    pub name: Option<String>,
    /// Joint `j` is node `joints[j]`.
    pub joints: Vec<usize>,
    /// `joint_from_bind[j]`, the inverse bind matrix of joint `j` (identity when the file has
    /// none). Last row exactly `[0, 0, 0, 1]`.
    pub joint_from_bind: Vec<Mat4>,
    /// Joint `j`'s origin in the bind pose: the translation of `joint_from_bind[j]⁻¹`. The DQS
    /// residual of a non-rigid joint acts about it.
    pub joint_centers: Vec<Vec3>,
}

/// Morph target deltas of one primitive (each `None` when the target lacks the attribute).
#[derive(Debug, Clone, Default)]
pub struct MorphTarget {
    /// POSITION deltas.
    pub positions: Option<Vec<Vec3>>,
    /// NORMAL deltas.
    pub normals: Option<Vec<Vec3>>,
    /// TANGENT deltas (xyz; the handedness is not morphed).
    pub tangents: Option<Vec<Vec3>>,
}

/// One mesh primitive, decoded (dequantized only as the accessor says: quantized positions stay
/// in their integer space; the inverse bind matrices or node transform carry the scale).
#[derive(Debug, Clone)]
pub struct Primitive {
    /// Topology (`mode`), triangles by default.
    pub mode: Mode,
    /// Bind-space positions.
    pub positions: Vec<Vec3>,
    /// Normals, if any.
    pub normals: Option<Vec<Vec3>>,
    /// Tangents with handedness in `w`, if any.
    pub tangents: Option<Vec<Vec4>>,
    /// Vertex indices, if indexed.
    pub indices: Option<Vec<u32>>,
    /// TEXCOORD_0, if any (for OBJ export).
    pub texcoords: Option<Vec<[f32; 2]>>,
    /// Influences from every JOINTS_n/WEIGHTS_n set (4 slots per set), merged, renormalized;
    /// `None` when the primitive has no JOINTS_0. Joint indices index the skin's joint list.
    pub influences: Option<Influences>,
    /// What building the influences changed.
    pub influence_report: InfluenceBuildReport,
    /// Number of JOINTS_n/WEIGHTS_n sets.
    pub influence_sets: usize,
    /// The largest joint index any JOINTS_n names (zero weights included), as
    /// `(joint, vertex, set)` of its first occurrence; `None` without JOINTS_0.
    pub max_joint_index: Option<(usize, usize, usize)>,
    /// Morph targets.
    pub targets: Vec<MorphTarget>,
    /// Precomputed centers of rotation from the custom attribute [`ROTATION_CENTER_ATTRIBUTE`]
    /// (bind space, before morph targets), with [`skinblend::cor::NO_ROTATION_CENTER`] for a
    /// vertex that falls back to DQS; `None` when the file does not carry them.
    pub rotation_centers: Option<Vec<Vec3>>,
    /// Per-vertex blend values of [`skinblend::Method::Blended`] (0 = LBS, 1 = DQS) from the
    /// custom attribute [`DQ_BLEND_ATTRIBUTE`]; `None` when the file does not carry them.
    pub dq_blend: Option<Vec<f32>>,
}

/// The custom vertex attribute that carries precomputed centers of rotation: a float VEC4
/// accessor, `xyz` the center in bind space and `w` 1 for a vertex with a center, 0 for one
/// without (it is skinned by DQS). glTF requires custom attributes to start with `_`.
pub const ROTATION_CENTER_ATTRIBUTE: &str = "_SKINBLEND_COR";

/// The custom vertex attribute that carries the blend values of [`skinblend::Method::Blended`]:
/// a SCALAR accessor, FLOAT or normalized UNSIGNED_BYTE or UNSIGNED_SHORT, each value in
/// `[0, 1]` (0 = LBS, 1 = DQS). Written by `skinblend dq-blend`.
pub const DQ_BLEND_ATTRIBUTE: &str = "_SKINBLEND_DQ_BLEND";

/// A mesh: primitives and default morph weights.
#[derive(Debug, Clone)]
pub struct Mesh {
    /// The mesh's name, if any.
    pub name: Option<String>,
    /// The primitives in file order.
    pub primitives: Vec<Primitive>,
    /// Default morph target weights (zeros where the file gives none); one per target.
    pub weights: Vec<f32>,
}

/// Which property a channel animates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelPath {
    /// Translation (VEC3).
    Translation,
    /// Rotation (VEC4 quaternion).
    Rotation,
    /// Scale (VEC3).
    Scale,
    /// Morph target weights (one scalar per target).
    Weights,
}

/// How a sampler interpolates between keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interp {
    /// Hold the previous key's value.
    Step,
    /// Linear (rotations: shortest-path slerp).
    Linear,
    /// Cubic Hermite with in/out tangents scaled by the key interval.
    CubicSpline,
}

impl Interp {
    /// The specification's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Interp::Step => "STEP",
            Interp::Linear => "LINEAR",
            Interp::CubicSpline => "CUBICSPLINE",
        }
    }
}

/// An animation sampler: key times and values.
#[derive(Debug, Clone)]
pub struct Sampler {
    /// Interpolation.
    pub interpolation: Interp,
    /// Key times in seconds, strictly increasing.
    pub times_s: Vec<f32>,
    /// Values: per key `width` floats (×3 for CUBICSPLINE: in-tangent, value, out-tangent).
    pub values: Vec<f32>,
    /// Floats per value (3, 4, or the morph target count).
    pub width: usize,
}

/// A channel: which node property which sampler drives.
#[derive(Debug, Clone)]
pub struct Channel {
    /// The target node.
    pub node: usize,
    /// The property.
    pub path: ChannelPath,
    /// Index into the animation's samplers.
    pub sampler: usize,
}

/// An animation.
#[derive(Debug, Clone)]
pub struct Animation {
    /// The name, if any.
    pub name: Option<String>,
    /// Channels in file order.
    pub channels: Vec<Channel>,
    /// Samplers in file order.
    pub samplers: Vec<Sampler>,
    /// Earliest key time over all samplers (s).
    pub start_s: f32,
    /// Latest key time over all samplers (s).
    pub end_s: f32,
}

/// Data the loader had to repair, with counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Repairs {
    /// Vertices whose weights did not sum to 1 (within 1e-6) and were renormalized.
    pub vertices_renormalized: usize,
    /// Vertices that listed a joint more than once (weights merged).
    pub vertices_with_repeated_joints: usize,
    /// Vertices with no non-zero weight (passed through unchanged when skinned).
    pub vertices_unweighted: usize,
    /// Rotation keys or node rotations that were not unit length and were normalized.
    pub rotations_normalized: usize,
}
