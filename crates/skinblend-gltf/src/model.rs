//! The loaded document: scene graph, skins, meshes and animations, validated once.

use std::path::{Path, PathBuf};

use glam::{Mat4, Quat, Vec3, Vec4};
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::animation::{Interpolation, Property};
use gltf::json::mesh::{Mode, Semantic};
use gltf::json::validation::{Checked, Validate};
use gltf::json::Root;
use serde_json::Value;
use skinblend::{InfluenceBuildReport, Influences};

use crate::accessor::{self, AccessorData};
use crate::container;
use crate::error::{GltfError, Result};
use crate::spec_rules::{self, UNIT_QUATERNION_TOLERANCE, UNIT_VECTOR_TOLERANCE};

/// A node deeper than this below its scene root is rejected: no real rig comes near it, and it
/// bounds the work on a hostile file (world matrices are one forward pass, never recursion).
pub const MAX_NODE_DEPTH: usize = 4096;

/// Extensions this crate reads when a file lists them as required.
pub const SUPPORTED_REQUIRED_EXTENSIONS: &[&str] = &["KHR_mesh_quantization"];

/// Tolerance on the last row `[0, 0, 0, 1]` of inverse bind and node matrices: f32 writers
/// sometimes leave round-off of order 1e-7 there; anything larger is a projective matrix.
const AFFINE_ROW_TOLERANCE: f32 = 1e-6;

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
}

/// The custom vertex attribute that carries precomputed centers of rotation: a float VEC4
/// accessor, `xyz` the center in bind space and `w` 1 for a vertex with a center, 0 for one
/// without (it is skinned by DQS). glTF requires custom attributes to start with `_`.
pub const ROTATION_CENTER_ATTRIBUTE: &str = "_SKINBLEND_COR";

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

/// A loaded glTF 2.0 document, validated, with its buffers.
#[derive(Debug, Clone)]
pub struct Model {
    pub(crate) root: Root,
    pub(crate) json: Value,
    pub(crate) buffers: Vec<Vec<u8>>,
    pub(crate) base_dir: Option<PathBuf>,
    /// Nodes in file order.
    pub nodes: Vec<Node>,
    /// Node indices in parent-first order (every parent before its children).
    pub order: Vec<usize>,
    /// Skins in file order.
    pub skins: Vec<Skin>,
    /// Meshes in file order.
    pub meshes: Vec<Mesh>,
    /// Animations in file order.
    pub animations: Vec<Animation>,
    /// What the loader repaired.
    pub repairs: Repairs,
}

fn validation_message(error: gltf::json::validation::Error) -> &'static str {
    use gltf::json::validation::Error as E;
    match error {
        E::IndexOutOfBounds => "index out of range",
        E::Invalid => "invalid value",
        E::Missing => "required value missing",
        E::Oversize => "size exceeds system limits",
        E::Unsupported => "required extension not supported",
    }
}

/// Checks what `gltf` 1.4.1 would index without checking (a primitive attribute or morph target
/// naming a nonexistent accessor panics in its validation), so it only ever sees safe input.
fn prevalidate(json: &Value) -> Result<()> {
    let accessor_count = json
        .get("accessors")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let Some(meshes) = json.get("meshes").and_then(Value::as_array) else {
        return Ok(());
    };
    let check = |path: String, value: &Value| -> Result<()> {
        match value.as_u64() {
            Some(index) if (index as usize) < accessor_count && index <= u32::MAX as u64 => Ok(()),
            _ => Err(GltfError::invalid(
                path,
                format!(
                    "{value} is not an accessor index (the file has {accessor_count} accessors)"
                ),
            )),
        }
    };
    for (m, mesh) in meshes.iter().enumerate() {
        let Some(primitives) = mesh.get("primitives").and_then(Value::as_array) else {
            continue;
        };
        for (p, primitive) in primitives.iter().enumerate() {
            let base = format!("meshes[{m}].primitives[{p}]");
            if let Some(attributes) = primitive.get("attributes").and_then(Value::as_object) {
                for (name, value) in attributes {
                    check(format!("{base}.attributes[\"{name}\"]"), value)?;
                }
            }
            if let Some(targets) = primitive.get("targets").and_then(Value::as_array) {
                for (t, target) in targets.iter().enumerate() {
                    if let Some(target) = target.as_object() {
                        for (name, value) in target {
                            check(format!("{base}.targets[{t}][\"{name}\"]"), value)?;
                        }
                    }
                }
            }
            if let Some(value) = primitive.get("indices") {
                check(format!("{base}.indices"), value)?;
            }
        }
    }
    Ok(())
}

fn finite_or(path: &str, values: &[f32]) -> Result<()> {
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(GltfError::invalid(
            path,
            format!("component {i} is {} (not finite)", values[i]),
        ));
    }
    Ok(())
}

/// A 4x4 from 16 column-major values with the last row checked and made exact.
fn affine_from_cols(path: &str, values: &[f64]) -> Result<Mat4> {
    let mut cols = [0f32; 16];
    for (dst, src) in cols.iter_mut().zip(values) {
        *dst = *src as f32;
    }
    finite_or(path, &cols)?;
    let row = [cols[3], cols[7], cols[11], cols[15]];
    let expected = [0.0, 0.0, 0.0, 1.0];
    if row
        .iter()
        .zip(expected)
        .any(|(a, b)| (a - b).abs() > AFFINE_ROW_TOLERANCE)
    {
        return Err(GltfError::invalid(
            path,
            format!("last row is {row:?}, expected [0, 0, 0, 1] (not an affine matrix)"),
        ));
    }
    cols[3] = 0.0;
    cols[7] = 0.0;
    cols[11] = 0.0;
    cols[15] = 1.0;
    Ok(Mat4::from_cols_array(&cols))
}

fn vec3s(data: &AccessorData) -> Vec<Vec3> {
    data.values
        .chunks_exact(3)
        .map(|c| Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32))
        .collect()
}

const FLOAT: (ComponentType, bool) = (ComponentType::F32, false);
/// Every component type KHR_mesh_quantization allows for POSITION and morph deltas, plus float.
const QUANTIZED_ANY: &[(ComponentType, bool)] = &[
    FLOAT,
    (ComponentType::I8, false),
    (ComponentType::I8, true),
    (ComponentType::U8, false),
    (ComponentType::U8, true),
    (ComponentType::I16, false),
    (ComponentType::I16, true),
    (ComponentType::U16, false),
    (ComponentType::U16, true),
];
/// Float or signed normalized (NORMAL, TANGENT under KHR_mesh_quantization).
const SIGNED_NORMALIZED: &[(ComponentType, bool)] =
    &[FLOAT, (ComponentType::I8, true), (ComponentType::I16, true)];
const WEIGHT_TYPES: &[(ComponentType, bool)] =
    &[FLOAT, (ComponentType::U8, true), (ComponentType::U16, true)];
const JOINT_TYPES: &[(ComponentType, bool)] =
    &[(ComponentType::U8, false), (ComponentType::U16, false)];
const INDEX_TYPES: &[(ComponentType, bool)] = &[
    (ComponentType::U8, false),
    (ComponentType::U16, false),
    (ComponentType::U32, false),
];
const ROTATION_TYPES: &[(ComponentType, bool)] = &[
    FLOAT,
    (ComponentType::I8, true),
    (ComponentType::U8, true),
    (ComponentType::I16, true),
    (ComponentType::U16, true),
];

impl Model {
    /// Loads a `.gltf` or `.glb` file; external buffers resolve relative to its directory and
    /// must lie inside it.
    ///
    /// # Errors
    /// [`GltfError::Io`] when the file cannot be read or is larger than [`MAX_FILE_BYTES`](crate::MAX_FILE_BYTES)
    /// (checked before reading), else as [`Model::from_bytes`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = container::read_file(path)?;
        Self::from_bytes(&bytes, path.parent())
    }

    /// Loads a document from `.gltf` JSON or `.glb` bytes. `base_dir` resolves relative buffer
    /// URIs, which must stay inside it: absolute paths and paths that lead out of it (by `..` or
    /// a symbolic link) are errors, as are files over [`MAX_FILE_BYTES`](crate::MAX_FILE_BYTES). With `None` only
    /// data: URIs and the GLB BIN chunk can be read.
    ///
    /// Checks, in order: the GLB container; what `gltf` 1.4.1 would index unchecked; rules of
    /// the specification that the Khronos glTF-Validator enforces and the schema does not
    /// (empty arrays, extension declarations, asset version, matrix with TRS, unit rotations,
    /// attribute sets, animation targets); the JSON against the glTF schema (via `gltf`);
    /// buffers (views inside each buffer's declared length); the scene graph (one parent per
    /// node, no cycles, depth at most [`MAX_NODE_DEPTH`], scenes list roots, a skin's skeleton
    /// above its joints); skins (inverse bind matrices affine, finite, invertible, exactly one
    /// per joint); primitives (every attribute in range, finite, of an allowed type, with
    /// POSITION's count and 4-byte alignment; accessor min/max exact; unit normals; joint
    /// indices below every skin the mesh is used with; weights finite and non-negative; no
    /// primitive restart index); animations (key times non-negative and strictly increasing,
    /// with min/max; output counts; unit rotations; targets). Channels without a target node
    /// are ignored, as the specification says.
    ///
    /// # Errors
    /// A [`GltfError`] naming the JSON path (or GLB byte) of the first problem found.
    pub fn from_bytes(bytes: &[u8], base_dir: Option<&Path>) -> Result<Self> {
        let container = container::split(bytes)?;
        let json: Value = serde_json::from_slice(&container.json).map_err(|e| GltfError::Json {
            message: e.to_string(),
        })?;
        prevalidate(&json)?;
        spec_rules::check(&json)?;
        let (readable, channel_numbers) = spec_rules::without_untargeted_channels(&json);
        let root: Root =
            serde_json::from_value(readable.unwrap_or_else(|| json.clone())).map_err(|e| {
                GltfError::Json {
                    message: e.to_string(),
                }
            })?;
        let mut problems = Vec::new();
        root.validate(&root, gltf::json::Path::new, &mut |path, error| {
            problems.push((path().as_str().to_owned(), error));
        });
        let problems: Vec<_> = problems
            .into_iter()
            .filter(|(path, error)| {
                !(*error == gltf::json::validation::Error::Unsupported
                    && SUPPORTED_REQUIRED_EXTENSIONS
                        .iter()
                        .any(|ext| path.starts_with("extensionsRequired") && path.contains(ext)))
            })
            .collect();
        if let Some((path, error)) = problems.into_iter().next() {
            return Err(GltfError::invalid(path, validation_message(error)));
        }

        let mut buffers = Vec::with_capacity(root.buffers.len());
        for (i, buffer) in root.buffers.iter().enumerate() {
            let length = usize::try_from(buffer.byte_length.0).unwrap_or(usize::MAX);
            buffers.push(container::load_buffer(
                i,
                buffer.uri.as_deref(),
                length,
                container.bin.as_deref(),
                base_dir,
            )?);
        }

        check_views_inside_buffers(&root, &buffers)?;
        let (nodes, order) = load_nodes(&root)?;
        check_scene_roots(&root, &nodes)?;
        let skins = load_skins(&root, &buffers)?;
        check_skin_hierarchy(&root, &nodes)?;
        let mut repairs = Repairs::default();
        check_shared_vertex_views(&root)?;
        let meshes = load_meshes(&root, &buffers, &mut repairs)?;
        check_skinned_nodes(&nodes, &skins, &meshes)?;
        let animations = load_animations(
            &root,
            &buffers,
            &nodes,
            &meshes,
            &channel_numbers,
            &mut repairs,
        )?;
        repairs.rotations_normalized += nodes_rotation_repairs(&root);

        Ok(Self {
            root,
            json,
            buffers,
            base_dir: base_dir.map(Path::to_owned),
            nodes,
            order,
            skins,
            meshes,
            animations,
            repairs,
        })
    }

    /// The raw JSON of the document as loaded (unknown extensions and extras included).
    #[must_use]
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The `gltf` crate's typed JSON model of the document.
    #[must_use]
    pub fn root(&self) -> &Root {
        &self.root
    }

    /// Decodes accessor `index` (for tests and tools that compare attributes).
    ///
    /// # Errors
    /// As [`accessor::read`].
    pub fn read_accessor(&self, index: usize) -> Result<AccessorData> {
        accessor::read(
            &self.root,
            &self.buffers,
            index,
            &format!("accessors[{index}]"),
        )
    }

    /// Finds an animation by index (`"0"`) or name.
    ///
    /// # Errors
    /// [`GltfError::NoSuchAnimation`] listing the animations there are.
    pub fn find_animation(&self, name_or_index: &str) -> Result<usize> {
        if let Some(i) = self
            .animations
            .iter()
            .position(|a| a.name.as_deref() == Some(name_or_index))
        {
            return Ok(i);
        }
        if let Ok(i) = name_or_index.parse::<usize>() {
            if i < self.animations.len() {
                return Ok(i);
            }
        }
        let available = if self.animations.is_empty() {
            "none".to_owned()
        } else {
            self.animations
                .iter()
                .enumerate()
                .map(|(i, a)| match &a.name {
                    Some(name) => format!("{i} {name:?}"),
                    None => format!("{i} (unnamed)"),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        Err(GltfError::NoSuchAnimation {
            requested: name_or_index.to_owned(),
            available,
        })
    }

    /// Indices of nodes that have both a mesh and a skin.
    #[must_use]
    pub fn skinned_nodes(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&n| self.nodes[n].mesh.is_some() && self.nodes[n].skin.is_some())
            .collect()
    }
}

fn nodes_rotation_repairs(root: &Root) -> usize {
    root.nodes
        .iter()
        .filter(|n| {
            n.rotation
                .as_ref()
                .is_some_and(|q| (Quat::from_array(q.0).length() - 1.0).abs() > 1e-3)
        })
        .count()
}

fn load_nodes(root: &Root) -> Result<(Vec<Node>, Vec<usize>)> {
    let count = root.nodes.len();
    let mut parents: Vec<Option<usize>> = vec![None; count];
    let mut nodes = Vec::with_capacity(count);
    for (i, node) in root.nodes.iter().enumerate() {
        let path = format!("nodes[{i}]");
        let children: Vec<usize> = node
            .children
            .as_ref()
            .map(|c| c.iter().map(|c| c.value()).collect())
            .unwrap_or_default();
        for (k, &child) in children.iter().enumerate() {
            let child_path = format!("{path}.children[{k}]");
            if child >= count {
                return Err(GltfError::invalid(
                    child_path,
                    format!("node {child} does not exist"),
                ));
            }
            if child == i {
                return Err(GltfError::invalid(
                    child_path,
                    "a node cannot be its own child (cycle)",
                ));
            }
            if let Some(other) = parents[child] {
                return Err(GltfError::invalid(
                    child_path,
                    format!("node {child} already has parent nodes[{other}]: a node has at most one parent"),
                ));
            }
            parents[child] = Some(i);
        }
        let (matrix, trs) = match node.matrix {
            Some(m) => {
                let values: Vec<f64> = m.iter().map(|&v| f64::from(v)).collect();
                let matrix = affine_from_cols(&format!("{path}.matrix"), &values)?;
                let (scale, rotation, translation) = matrix.to_scale_rotation_translation();
                (
                    Some(matrix),
                    Trs {
                        translation,
                        rotation,
                        scale,
                    },
                )
            }
            None => {
                let translation = node.translation.unwrap_or([0.0; 3]);
                let rotation = node.rotation.as_ref().map_or([0.0, 0.0, 0.0, 1.0], |q| q.0);
                let scale = node.scale.unwrap_or([1.0; 3]);
                finite_or(&format!("{path}.translation"), &translation)?;
                finite_or(&format!("{path}.rotation"), &rotation)?;
                finite_or(&format!("{path}.scale"), &scale)?;
                let q = Quat::from_array(rotation);
                if q.length() <= f32::EPSILON {
                    return Err(GltfError::invalid(
                        format!("{path}.rotation"),
                        "zero quaternion is not a rotation",
                    ));
                }
                (
                    None,
                    Trs {
                        translation: Vec3::from_array(translation),
                        rotation: q.normalize(),
                        scale: Vec3::from_array(scale),
                    },
                )
            }
        };
        if let Some(weights) = &node.weights {
            finite_or(&format!("{path}.weights"), weights)?;
        }
        nodes.push(Node {
            name: node.name.clone(),
            parent: None,
            children,
            matrix,
            trs,
            mesh: node.mesh.map(|m| m.value()),
            skin: node.skin.map(|s| s.value()),
            weights: node.weights.clone(),
        });
    }
    for (node, parent) in nodes.iter_mut().zip(&parents) {
        node.parent = *parent;
    }
    // Parent-first order by a queue from the roots: no recursion, and anything never reached
    // lies on a cycle (every node of a cycle has a parent, so none of it is a root).
    let mut order: Vec<usize> = (0..count).filter(|&i| parents[i].is_none()).collect();
    let mut depth = vec![0usize; count];
    let mut head = 0;
    while head < order.len() {
        let node = order[head];
        head += 1;
        for &child in &nodes[node].children {
            depth[child] = depth[node] + 1;
            if depth[child] > MAX_NODE_DEPTH {
                return Err(GltfError::invalid(
                    format!("nodes[{child}]"),
                    format!("lies deeper than {MAX_NODE_DEPTH} levels below its root"),
                ));
            }
            order.push(child);
        }
    }
    if order.len() < count {
        let mut reached = vec![false; count];
        for &n in &order {
            reached[n] = true;
        }
        let first = reached.iter().position(|r| !r).unwrap_or(0);
        return Err(GltfError::invalid(
            format!("nodes[{first}]"),
            "lies on a cycle of children (no root above it)",
        ));
    }
    Ok((nodes, order))
}

/// Every buffer view lies inside its buffer's declared bytes, used by an accessor or not (an
/// image's view, for one).
fn check_views_inside_buffers(root: &Root, buffers: &[Vec<u8>]) -> Result<()> {
    for (v, view) in root.buffer_views.iter().enumerate() {
        let length = buffers.get(view.buffer.value()).map_or(0, Vec::len) as u64;
        let offset = view.byte_offset.map_or(0, |o| o.0);
        if offset
            .checked_add(view.byte_length.0)
            .is_none_or(|end| end > length)
        {
            return Err(GltfError::invalid(
                format!("bufferViews[{v}].byteLength"),
                format!(
                    "bytes {offset}..{offset}+{} run past the end of buffers[{}] ({length} bytes)",
                    view.byte_length.0,
                    view.buffer.value()
                ),
            ));
        }
    }
    Ok(())
}

/// A buffer view that holds more than one vertex attribute accessor (interleaved or one after
/// the other) must give its byteStride.
fn check_shared_vertex_views(root: &Root) -> Result<()> {
    // Per view: the first vertex accessor seen on it.
    let mut first: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let targets = primitive
                .targets
                .iter()
                .flatten()
                .enumerate()
                .flat_map(|(t, target)| {
                    [
                        ("POSITION", target.positions),
                        ("NORMAL", target.normals),
                        ("TANGENT", target.tangents),
                    ]
                    .into_iter()
                    .filter_map(move |(name, index)| {
                        Some((format!("targets[{t}][\"{name}\"]"), index?.value()))
                    })
                });
            let uses = primitive
                .attributes
                .iter()
                .map(|(semantic, index)| {
                    let name = match semantic {
                        Checked::Valid(s) => s.to_string(),
                        Checked::Invalid => "?".to_owned(),
                    };
                    (format!("attributes[\"{name}\"]"), index.value())
                })
                .chain(targets);
            for (place, accessor) in uses {
                let Some(view) = root.accessors.get(accessor).and_then(|a| a.buffer_view) else {
                    continue;
                };
                let view = view.value();
                let other = *first.entry(view).or_insert(accessor);
                let has_stride = root
                    .buffer_views
                    .get(view)
                    .is_some_and(|v| v.byte_stride.is_some());
                if other != accessor && !has_stride {
                    return Err(GltfError::invalid(
                        format!("meshes[{m}].primitives[{p}].{place} -> accessors[{accessor}]"),
                        format!(
                            "shares bufferViews[{view}] with accessors[{other}], but the view has no byteStride (required when vertex accessors share a view)"
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Every node a scene lists must be a root (no parent).
fn check_scene_roots(root: &Root, nodes: &[Node]) -> Result<()> {
    for (s, scene) in root.scenes.iter().enumerate() {
        for (k, node) in scene.nodes.iter().enumerate() {
            if let Some(parent) = nodes.get(node.value()).and_then(|n| n.parent) {
                return Err(GltfError::invalid(
                    format!("scenes[{s}].nodes[{k}]"),
                    format!(
                        "node {} is not a root (its parent is nodes[{parent}])",
                        node.value()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Whether `ancestor` is `node` or lies above it.
fn is_ancestor_or_self(nodes: &[Node], ancestor: usize, node: usize) -> bool {
    let mut at = Some(node);
    while let Some(n) = at {
        if n == ancestor {
            return true;
        }
        at = nodes[n].parent;
    }
    false
}

/// A skin's `skeleton`, if given, lies above (or is) every joint.
fn check_skin_hierarchy(root: &Root, nodes: &[Node]) -> Result<()> {
    for (s, skin) in root.skins.iter().enumerate() {
        let Some(skeleton) = skin.skeleton.map(|n| n.value()) else {
            continue;
        };
        for (k, joint) in skin.joints.iter().enumerate() {
            if skeleton < nodes.len() && !is_ancestor_or_self(nodes, skeleton, joint.value()) {
                return Err(GltfError::invalid(
                    format!("skins[{s}].skeleton"),
                    format!(
                        "node {skeleton} is not an ancestor of joint {k} (nodes[{}])",
                        joint.value()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Accessors used by animations, skins and indices must be tightly packed (their buffer
/// views carry no `byteStride`).
fn check_no_stride(root: &Root, accessor: usize, context: &str) -> Result<()> {
    let view = root
        .accessors
        .get(accessor)
        .and_then(|a| a.buffer_view)
        .and_then(|v| {
            root.buffer_views
                .get(v.value())
                .map(|view| (v.value(), view))
        });
    if let Some((v, view)) = view {
        if view.byte_stride.is_some() {
            return Err(GltfError::invalid(
                format!("{context} -> accessors[{accessor}]"),
                format!("its bufferViews[{v}] has a byteStride, which this use does not allow"),
            ));
        }
    }
    Ok(())
}

fn load_skins(root: &Root, buffers: &[Vec<u8>]) -> Result<Vec<Skin>> {
    let mut skins = Vec::with_capacity(root.skins.len());
    for (s, skin) in root.skins.iter().enumerate() {
        let path = format!("skins[{s}]");
        let joints: Vec<usize> = skin.joints.iter().map(|j| j.value()).collect();
        if joints.is_empty() {
            return Err(GltfError::invalid(format!("{path}.joints"), "is empty"));
        }
        for (k, &joint) in joints.iter().enumerate() {
            if joint >= root.nodes.len() {
                return Err(GltfError::invalid(
                    format!("{path}.joints[{k}]"),
                    format!("node {joint} does not exist"),
                ));
            }
        }
        let joint_from_bind = match skin.inverse_bind_matrices {
            None => vec![Mat4::IDENTITY; joints.len()],
            Some(index) => {
                let context = format!("{path}.inverseBindMatrices");
                check_no_stride(root, index.value(), &context)?;
                let data = accessor::read_typed(
                    root,
                    buffers,
                    index.value(),
                    &context,
                    Type::Mat4,
                    &[FLOAT],
                )?;
                if data.count() != joints.len() {
                    return Err(GltfError::invalid(
                        context,
                        format!(
                            "{} matrices for {} joints (one per joint is required)",
                            data.count(),
                            joints.len()
                        ),
                    ));
                }
                let mut matrices = Vec::with_capacity(joints.len());
                for j in 0..joints.len() {
                    let element = data.element(j).unwrap_or(&[]);
                    matrices.push(affine_from_cols(
                        &format!("{context} -> accessors[{}] element {j}", index.value()),
                        element,
                    )?);
                }
                matrices
            }
        };
        let mut joint_centers = Vec::with_capacity(joints.len());
        for (j, m) in joint_from_bind.iter().enumerate() {
            let determinant = m.determinant();
            let center = m.inverse().w_axis.truncate();
            if determinant == 0.0 || !determinant.is_finite() || !center.is_finite() {
                return Err(GltfError::invalid(
                    format!("{path}.inverseBindMatrices element {j}"),
                    format!("is not invertible (determinant {determinant})"),
                ));
            }
            joint_centers.push(center);
        }
        skins.push(Skin {
            name: skin.name.clone(),
            joints,
            joint_from_bind,
            joint_centers,
        });
    }
    Ok(skins)
}

fn attribute(primitive: &gltf::json::mesh::Primitive, semantic: Semantic) -> Option<usize> {
    primitive
        .attributes
        .get(&Checked::Valid(semantic))
        .map(|i| i.value())
}

fn load_meshes(root: &Root, buffers: &[Vec<u8>], repairs: &mut Repairs) -> Result<Vec<Mesh>> {
    let mut meshes = Vec::with_capacity(root.meshes.len());
    for (m, mesh) in root.meshes.iter().enumerate() {
        let mut primitives = Vec::with_capacity(mesh.primitives.len());
        let mut target_count = None;
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let path = format!("meshes[{m}].primitives[{p}]");
            let loaded = load_primitive(root, buffers, primitive, &path)?;
            repairs.vertices_renormalized += loaded.influence_report.vertices_renormalized;
            repairs.vertices_with_repeated_joints +=
                loaded.influence_report.vertices_with_repeated_joints;
            repairs.vertices_unweighted += loaded.influence_report.vertices_unweighted;
            match target_count {
                None => target_count = Some(loaded.targets.len()),
                Some(n) if n != loaded.targets.len() => {
                    return Err(GltfError::invalid(
                        format!("{path}.targets"),
                        format!(
                            "{} morph targets, but primitive 0 has {n} (all primitives of a mesh must have the same number)",
                            loaded.targets.len()
                        ),
                    ))
                }
                Some(_) => {}
            }
            primitives.push(loaded);
        }
        let target_count = target_count.unwrap_or(0);
        let weights = match &mesh.weights {
            Some(w) => {
                finite_or(&format!("meshes[{m}].weights"), w)?;
                if w.len() != target_count {
                    return Err(GltfError::invalid(
                        format!("meshes[{m}].weights"),
                        format!("{} weights for {target_count} morph targets", w.len()),
                    ));
                }
                w.clone()
            }
            None => vec![0.0; target_count],
        };
        meshes.push(Mesh {
            name: mesh.name.clone(),
            primitives,
            weights,
        });
    }
    Ok(meshes)
}

fn checked_count(path: &str, what: &str, data: &AccessorData, expected: usize) -> Result<()> {
    if data.count() != expected {
        return Err(GltfError::invalid(
            path,
            format!(
                "{what} has {} elements, POSITION has {expected}",
                data.count()
            ),
        ));
    }
    Ok(())
}

/// Each unit vector (NORMAL; TANGENT's xyz, whose w must be 1 or −1) within the validator's
/// tolerance of length 1.
fn check_unit(path: &str, index: usize, data: &AccessorData, width: usize) -> Result<()> {
    for (v, c) in data.values.chunks_exact(width).enumerate() {
        let length = Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32).length();
        let place = || format!("{path} -> accessors[{index}] element {v}");
        if (length - 1.0).abs() > UNIT_VECTOR_TOLERANCE {
            return Err(GltfError::invalid(
                place(),
                format!("has length {length}, not a unit vector"),
            ));
        }
        if width == 4 && c[3].abs() != 1.0 {
            return Err(GltfError::invalid(
                place(),
                format!("w is {}, not 1 or -1", c[3]),
            ));
        }
    }
    Ok(())
}

/// Every attribute of a primitive: as many elements as POSITION, vertex-buffer alignment
/// (accessor byteOffset and view byteStride multiples of 4), and TEXCOORD_n and COLOR_n of the types the specification
/// allows.
fn check_vertex_attributes(
    root: &Root,
    primitive: &gltf::json::mesh::Primitive,
    path: &str,
    vertex_count: usize,
    quantized: bool,
) -> Result<()> {
    for (semantic, index) in &primitive.attributes {
        let Checked::Valid(semantic) = semantic else {
            continue;
        };
        let index = index.value();
        let name = semantic.to_string();
        let place = format!("{path}.attributes[\"{name}\"] -> accessors[{index}]");
        let Some(accessor) = root.accessors.get(index) else {
            continue;
        };
        if accessor.count.0 != vertex_count as u64 {
            return Err(GltfError::invalid(
                place,
                format!(
                    "has {} elements, POSITION has {vertex_count}",
                    accessor.count.0
                ),
            ));
        }
        // "Aligned to 4-byte boundaries inside a bufferView": the accessor's offset and the
        // view's stride (the view's own offset only needs the component size, checked on read).
        let start = accessor.byte_offset.map_or(0, |o| o.0);
        let stride = accessor
            .buffer_view
            .and_then(|v| root.buffer_views.get(v.value()))
            .and_then(|v| v.byte_stride)
            .map_or(0, |s| s.0);
        if !start.is_multiple_of(4) || !stride.is_multiple_of(4) {
            return Err(GltfError::invalid(
                place,
                format!(
                    "byteOffset {start} with stride {stride}: vertex attributes must be aligned to 4 bytes in their buffer view"
                ),
            ));
        }
        let allowed: &[(ComponentType, bool)] = match semantic {
            Semantic::TexCoords(_) if quantized => QUANTIZED_ANY,
            Semantic::TexCoords(_) | Semantic::Colors(_) => WEIGHT_TYPES,
            _ => continue,
        };
        let types: &[Type] = match semantic {
            Semantic::TexCoords(_) => &[Type::Vec2],
            _ => &[Type::Vec3, Type::Vec4],
        };
        let (Checked::Valid(ty), Checked::Valid(ct)) = (accessor.type_, accessor.component_type)
        else {
            continue;
        };
        if !types.contains(&ty) || !allowed.contains(&(ct.0, accessor.normalized)) {
            return Err(GltfError::invalid(
                place,
                format!(
                    "{ty:?} of {}{} is not allowed for {name}",
                    accessor::component_name(ct.0),
                    if accessor.normalized {
                        " normalized"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    Ok(())
}

fn load_primitive(
    root: &Root,
    buffers: &[Vec<u8>],
    primitive: &gltf::json::mesh::Primitive,
    path: &str,
) -> Result<Primitive> {
    let attr_path = |name: &str| format!("{path}.attributes[\"{name}\"]");
    let mode = match primitive.mode {
        Checked::Valid(mode) => mode,
        Checked::Invalid => return Err(GltfError::invalid(format!("{path}.mode"), "invalid mode")),
    };
    let position_index = attribute(primitive, Semantic::Positions)
        .ok_or_else(|| GltfError::invalid(attr_path("POSITION"), "missing"))?;
    // Quantized attributes need KHR_mesh_quantization declared.
    let quantized = root
        .extensions_used
        .iter()
        .any(|e| e == "KHR_mesh_quantization");
    let position_types = if quantized {
        QUANTIZED_ANY
    } else {
        &[FLOAT][..]
    };
    let signed_normalized = if quantized {
        SIGNED_NORMALIZED
    } else {
        &[FLOAT][..]
    };
    if root
        .accessors
        .get(position_index)
        .is_some_and(|a| a.min.is_none() || a.max.is_none())
    {
        return Err(GltfError::invalid(
            format!("{} -> accessors[{position_index}]", attr_path("POSITION")),
            "has no min and max (POSITION accessors must declare them)",
        ));
    }
    let positions_data = accessor::read_typed(
        root,
        buffers,
        position_index,
        &attr_path("POSITION"),
        Type::Vec3,
        position_types,
    )?;
    let vertex_count = positions_data.count();
    check_vertex_attributes(root, primitive, path, vertex_count, quantized)?;
    let positions = vec3s(&positions_data);

    let normals = match attribute(primitive, Semantic::Normals) {
        None => None,
        Some(index) => {
            let data = accessor::read_typed(
                root,
                buffers,
                index,
                &attr_path("NORMAL"),
                Type::Vec3,
                signed_normalized,
            )?;
            checked_count(&attr_path("NORMAL"), "NORMAL", &data, vertex_count)?;
            check_unit(&attr_path("NORMAL"), index, &data, 3)?;
            Some(vec3s(&data))
        }
    };
    let tangents = match attribute(primitive, Semantic::Tangents) {
        None => None,
        Some(index) => {
            let data = accessor::read_typed(
                root,
                buffers,
                index,
                &attr_path("TANGENT"),
                Type::Vec4,
                signed_normalized,
            )?;
            checked_count(&attr_path("TANGENT"), "TANGENT", &data, vertex_count)?;
            check_unit(&attr_path("TANGENT"), index, &data, 4)?;
            Some(
                data.values
                    .chunks_exact(4)
                    .map(|c| Vec4::new(c[0] as f32, c[1] as f32, c[2] as f32, c[3] as f32))
                    .collect(),
            )
        }
    };
    let texcoords = match attribute(primitive, Semantic::TexCoords(0)) {
        None => None,
        Some(index) => {
            let data = accessor::read(root, buffers, index, &attr_path("TEXCOORD_0"))?;
            if data.components != 2 {
                return Err(GltfError::invalid(attr_path("TEXCOORD_0"), "is not VEC2"));
            }
            checked_count(&attr_path("TEXCOORD_0"), "TEXCOORD_0", &data, vertex_count)?;
            Some(
                data.values
                    .chunks_exact(2)
                    .map(|c| [c[0] as f32, c[1] as f32])
                    .collect(),
            )
        }
    };
    let indices = match primitive.indices {
        None => None,
        Some(index) => {
            let context = format!("{path}.indices");
            check_no_stride(root, index.value(), &context)?;
            let data = accessor::read_typed(
                root,
                buffers,
                index.value(),
                &context,
                Type::Scalar,
                INDEX_TYPES,
            )?;
            let indices: Vec<u32> = data.values.iter().map(|&v| v as u32).collect();
            // The largest value of the type means "restart the strip" in some APIs: the
            // specification forbids it.
            let restart = match data.component_type {
                ComponentType::U8 => u32::from(u8::MAX),
                ComponentType::U16 => u32::from(u16::MAX),
                _ => u32::MAX,
            };
            if let Some(i) = indices.iter().position(|&v| v == restart) {
                return Err(GltfError::invalid(
                    format!("{context} -> accessors[{}] element {i}", index.value()),
                    format!("index {restart} is the primitive restart value, which glTF forbids"),
                ));
            }
            if let Some(i) = indices.iter().position(|&v| v as usize >= vertex_count) {
                return Err(GltfError::invalid(
                    format!("{context} -> accessors[{}] element {i}", index.value()),
                    format!(
                        "vertex {} is out of range ({vertex_count} vertices)",
                        indices[i]
                    ),
                ));
            }
            Some(indices)
        }
    };

    let rotation_centers = match attribute(
        primitive,
        Semantic::Extras(ROTATION_CENTER_ATTRIBUTE[1..].to_owned()),
    ) {
        None => None,
        Some(index) => {
            let name = ROTATION_CENTER_ATTRIBUTE;
            let data = accessor::read_typed(
                root,
                buffers,
                index,
                &attr_path(name),
                Type::Vec4,
                &[(ComponentType::F32, false)],
            )?;
            checked_count(&attr_path(name), name, &data, vertex_count)?;
            let mut centers = Vec::with_capacity(vertex_count);
            for (vertex, c) in data.values.chunks_exact(4).enumerate() {
                centers.push(match c[3] {
                    1.0 => Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32),
                    0.0 => skinblend::cor::NO_ROTATION_CENTER,
                    w => {
                        return Err(GltfError::invalid(
                            attr_path(name),
                            format!(
                                "vertex {vertex}: w is {w}; it must be 1 (a center) or 0 (none)"
                            ),
                        ))
                    }
                });
            }
            Some(centers)
        }
    };

    // Influences: every JOINTS_n with its WEIGHTS_n.
    let mut sets = 0usize;
    let mut lists: Vec<Vec<(u16, f32)>> = Vec::new();
    // Every joint index must address the skin, even under a zero weight (as the spec says).
    let mut max_joint = 0usize;
    let mut max_joint_index: Option<(usize, usize, usize)> = None;
    loop {
        let set = sets as u32;
        let joints_index = attribute(primitive, Semantic::Joints(set));
        let weights_index = attribute(primitive, Semantic::Weights(set));
        let (joints_index, weights_index) = match (joints_index, weights_index) {
            (None, None) => break,
            (Some(j), Some(w)) => (j, w),
            (Some(_), None) => {
                return Err(GltfError::invalid(
                    attr_path(&format!("WEIGHTS_{set}")),
                    format!("missing (JOINTS_{set} has no weights)"),
                ))
            }
            (None, Some(_)) => {
                return Err(GltfError::invalid(
                    attr_path(&format!("JOINTS_{set}")),
                    format!("missing (WEIGHTS_{set} has no joints)"),
                ))
            }
        };
        let joints_path = attr_path(&format!("JOINTS_{set}"));
        let weights_path = attr_path(&format!("WEIGHTS_{set}"));
        let joints = accessor::read_typed(
            root,
            buffers,
            joints_index,
            &joints_path,
            Type::Vec4,
            JOINT_TYPES,
        )?;
        let weights = accessor::read_typed(
            root,
            buffers,
            weights_index,
            &weights_path,
            Type::Vec4,
            WEIGHT_TYPES,
        )?;
        checked_count(
            &joints_path,
            &format!("JOINTS_{set}"),
            &joints,
            vertex_count,
        )?;
        checked_count(
            &weights_path,
            &format!("WEIGHTS_{set}"),
            &weights,
            vertex_count,
        )?;
        if sets == 0 {
            lists = vec![Vec::with_capacity(4); vertex_count];
        }
        for (v, list) in lists.iter_mut().enumerate() {
            for slot in 0..4 {
                let joint = joints.values[v * 4 + slot];
                let weight = weights.values[v * 4 + slot];
                if weight < 0.0 {
                    return Err(GltfError::invalid(
                        format!("{weights_path} -> accessors[{weights_index}] element {v}"),
                        format!("weight {slot} is {weight} (negative)"),
                    ));
                }
                // Zero weights carry no influence; files pad unused slots with joint 0, which
                // is not a repeated joint worth reporting.
                if max_joint_index.is_none() || joint as usize > max_joint {
                    max_joint = joint as usize;
                    max_joint_index = Some((max_joint, v, sets));
                }
                if weight > 0.0 {
                    list.push((joint as u16, weight as f32));
                }
            }
        }
        sets += 1;
    }
    let (influences, influence_report) = if sets == 0 {
        (None, InfluenceBuildReport::default())
    } else {
        let (influences, report) = Influences::from_lists(&lists, 4 * sets, max_joint + 1)
            .map_err(|source| GltfError::Skin {
                path: attr_path("JOINTS_0"),
                source,
            })?;
        (Some(influences), report)
    };

    let mut targets = Vec::new();
    for (t, target) in primitive.targets.iter().flatten().enumerate() {
        let target_path = |name: &str| format!("{path}.targets[{t}][\"{name}\"]");
        let read_delta = |index: Option<gltf::json::Index<gltf::json::Accessor>>,
                          name: &str|
         -> Result<Option<Vec<Vec3>>> {
            match index {
                None => Ok(None),
                Some(index) => {
                    let data = accessor::read_typed(
                        root,
                        buffers,
                        index.value(),
                        &target_path(name),
                        Type::Vec3,
                        QUANTIZED_ANY,
                    )?;
                    checked_count(&target_path(name), name, &data, vertex_count)?;
                    Ok(Some(vec3s(&data)))
                }
            }
        };
        targets.push(MorphTarget {
            positions: read_delta(target.positions, "POSITION")?,
            normals: read_delta(target.normals, "NORMAL")?,
            tangents: read_delta(target.tangents, "TANGENT")?,
        });
    }

    Ok(Primitive {
        mode,
        positions,
        normals,
        tangents,
        indices,
        texcoords,
        influences,
        influence_report,
        influence_sets: sets,
        max_joint_index,
        targets,
        rotation_centers,
    })
}

fn check_skinned_nodes(nodes: &[Node], skins: &[Skin], meshes: &[Mesh]) -> Result<()> {
    for (n, node) in nodes.iter().enumerate() {
        let (Some(m), Some(s)) = (node.mesh, node.skin) else {
            continue;
        };
        let (Some(mesh), Some(skin)) = (meshes.get(m), skins.get(s)) else {
            return Err(GltfError::invalid(
                format!("nodes[{n}]"),
                "mesh or skin out of range",
            ));
        };
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let Some(influences) = &primitive.influences else {
                return Err(GltfError::invalid(
                    format!("meshes[{m}].primitives[{p}].attributes[\"JOINTS_0\"]"),
                    format!("missing, but nodes[{n}] skins this mesh with skins[{s}]"),
                ));
            };
            if let Some((joint, vertex, set)) = primitive.max_joint_index {
                if joint >= skin.joints.len() || influences.joint_count() > skin.joints.len() {
                    return Err(GltfError::invalid(
                        format!("meshes[{m}].primitives[{p}].attributes[\"JOINTS_{set}\"]"),
                        format!(
                            "vertex {vertex} names joint {joint}, but skins[{s}] (used by nodes[{n}]) has {} joints",
                            skin.joints.len()
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

fn load_animations(
    root: &Root,
    buffers: &[Vec<u8>],
    nodes: &[Node],
    meshes: &[Mesh],
    channel_numbers: &[Vec<usize>],
    repairs: &mut Repairs,
) -> Result<Vec<Animation>> {
    let mut animations = Vec::with_capacity(root.animations.len());
    for (a, animation) in root.animations.iter().enumerate() {
        let mut samplers = Vec::with_capacity(animation.samplers.len());
        // Each sampler's width depends on the channel that uses it; read per channel, cache.
        let mut widths: Vec<Option<(usize, ChannelPath)>> = vec![None; animation.samplers.len()];
        let mut channels = Vec::with_capacity(animation.channels.len());
        for (c, channel) in animation.channels.iter().enumerate() {
            // The channel's index in the file (channels without a target node were left out).
            let number = channel_numbers
                .get(a)
                .and_then(|n| n.get(c))
                .copied()
                .unwrap_or(c);
            let path = format!("animations[{a}].channels[{number}]");
            let node = channel.target.node.value();
            if node >= nodes.len() {
                return Err(GltfError::invalid(
                    format!("{path}.target.node"),
                    format!("node {node} does not exist"),
                ));
            }
            let property = match channel.target.path {
                Checked::Valid(Property::Translation) => ChannelPath::Translation,
                Checked::Valid(Property::Rotation) => ChannelPath::Rotation,
                Checked::Valid(Property::Scale) => ChannelPath::Scale,
                Checked::Valid(Property::MorphTargetWeights) => ChannelPath::Weights,
                Checked::Invalid => {
                    return Err(GltfError::invalid(format!("{path}.target.path"), "invalid"))
                }
            };
            let width = match property {
                ChannelPath::Translation | ChannelPath::Scale => 3,
                ChannelPath::Rotation => 4,
                ChannelPath::Weights => {
                    let targets = nodes[node]
                        .mesh
                        .and_then(|m| meshes.get(m))
                        .map_or(0, |m| m.weights.len());
                    if targets == 0 {
                        return Err(GltfError::invalid(
                            format!("{path}.target.node"),
                            format!("animates weights of nodes[{node}], which has no mesh with morph targets"),
                        ));
                    }
                    targets
                }
            };
            let sampler = channel.sampler.value();
            if sampler >= animation.samplers.len() {
                return Err(GltfError::invalid(
                    format!("{path}.sampler"),
                    format!("sampler {sampler} does not exist"),
                ));
            }
            match widths[sampler] {
                Some((w, _)) if w != width => {
                    return Err(GltfError::invalid(
                        format!("{path}.sampler"),
                        "sampler shared by channels of different widths",
                    ))
                }
                _ => widths[sampler] = Some((width, property)),
            }
            channels.push(Channel {
                node,
                path: property,
                sampler,
            });
        }
        for (s, sampler) in animation.samplers.iter().enumerate() {
            let path = format!("animations[{a}].samplers[{s}]");
            let interpolation = match sampler.interpolation {
                Checked::Valid(Interpolation::Step) => Interp::Step,
                Checked::Valid(Interpolation::Linear) => Interp::Linear,
                Checked::Valid(Interpolation::CubicSpline) => Interp::CubicSpline,
                Checked::Invalid => {
                    return Err(GltfError::invalid(
                        format!("{path}.interpolation"),
                        "invalid",
                    ))
                }
            };
            let input_path = format!("{path}.input");
            check_no_stride(root, sampler.input.value(), &input_path)?;
            check_no_stride(root, sampler.output.value(), &format!("{path}.output"))?;
            if root
                .accessors
                .get(sampler.input.value())
                .is_some_and(|a| a.min.is_none() || a.max.is_none())
            {
                return Err(GltfError::invalid(
                    format!("{input_path} -> accessors[{}]", sampler.input.value()),
                    "has no min and max (key time accessors must declare them)",
                ));
            }
            let input = accessor::read_typed(
                root,
                buffers,
                sampler.input.value(),
                &input_path,
                Type::Scalar,
                &[FLOAT],
            )?;
            let times_s: Vec<f32> = input.values.iter().map(|&v| v as f32).collect();
            if times_s.is_empty() {
                return Err(GltfError::invalid(input_path, "has no keys"));
            }
            if times_s[0] < 0.0 {
                return Err(GltfError::invalid(
                    format!(
                        "{input_path} -> accessors[{}] element 0",
                        sampler.input.value()
                    ),
                    format!("key time {} s is negative", times_s[0]),
                ));
            }
            for k in 1..times_s.len() {
                if times_s[k] <= times_s[k - 1] {
                    return Err(GltfError::invalid(
                        format!("{input_path} -> accessors[{}] element {k}", sampler.input.value()),
                        format!(
                            "key time {} s is not after the previous key's {} s (times must increase strictly)",
                            times_s[k],
                            times_s[k - 1]
                        ),
                    ));
                }
            }
            let (width, property) = widths[s].unwrap_or((1, ChannelPath::Weights));
            let output_path = format!("{path}.output");
            let (ty, allowed) = match property {
                ChannelPath::Translation | ChannelPath::Scale => (Type::Vec3, &[FLOAT][..]),
                ChannelPath::Rotation => (Type::Vec4, ROTATION_TYPES),
                ChannelPath::Weights => (Type::Scalar, QUANTIZED_ANY),
            };
            let output = if widths[s].is_some() {
                accessor::read_typed(
                    root,
                    buffers,
                    sampler.output.value(),
                    &output_path,
                    ty,
                    allowed,
                )?
            } else {
                // Unused sampler: still must be readable.
                accessor::read(root, buffers, sampler.output.value(), &output_path)?
            };
            let per_key = if interpolation == Interp::CubicSpline {
                3
            } else {
                1
            };
            let mut values: Vec<f32> = output.values.iter().map(|&v| v as f32).collect();
            if widths[s].is_some() && values.len() != times_s.len() * per_key * width {
                return Err(GltfError::invalid(
                    output_path,
                    format!(
                        "{} values, expected {} keys × {per_key} × {width}",
                        values.len(),
                        times_s.len()
                    ),
                ));
            }
            if property == ChannelPath::Rotation && widths[s].is_some() {
                for (k, q) in values.chunks_exact_mut(4).enumerate() {
                    // CUBICSPLINE tangents are not unit quaternions; only values are checked.
                    if per_key == 3 && k % 3 != 1 {
                        continue;
                    }
                    let quat = Quat::from_array([q[0], q[1], q[2], q[3]]);
                    let length = quat.length();
                    if length <= f32::EPSILON {
                        return Err(GltfError::invalid(
                            format!(
                                "{output_path} -> accessors[{}] element {k}",
                                sampler.output.value()
                            ),
                            "zero quaternion is not a rotation",
                        ));
                    }
                    if (length - 1.0).abs() > UNIT_QUATERNION_TOLERANCE {
                        return Err(GltfError::invalid(
                            format!(
                                "{output_path} -> accessors[{}] element {k}",
                                sampler.output.value()
                            ),
                            format!("rotation has length {length}, not a unit quaternion"),
                        ));
                    }
                    if (length - 1.0).abs() > 1e-3 {
                        repairs.rotations_normalized += 1;
                    }
                }
            }
            samplers.push(Sampler {
                interpolation,
                times_s,
                values,
                width,
            });
        }
        let start_s = samplers
            .iter()
            .filter_map(|s| s.times_s.first().copied())
            .fold(f32::INFINITY, f32::min);
        let end_s = samplers
            .iter()
            .filter_map(|s| s.times_s.last().copied())
            .fold(f32::NEG_INFINITY, f32::max);
        let (start_s, end_s) = if start_s.is_finite() {
            (start_s, end_s)
        } else {
            (0.0, 0.0)
        };
        animations.push(Animation {
            name: animation.name.clone(),
            channels,
            samplers,
            start_s,
            end_s,
        });
    }
    Ok(animations)
}
