//! The loaded document: scene graph, skins, meshes and animations, validated once.

mod input_files;
mod load_animation;
mod load_graph;
mod load_mesh;
mod types;
mod validate;

use std::path::{Path, PathBuf};

use glam::Mat4;
use gltf::json::validation::Validate;
use gltf::json::Root;
use serde_json::Value;
use skinblend::{InfluenceBuildReport, Influences};

use crate::accessor::{self, AccessorData};
use crate::container;
use crate::error::{GltfError, Result};
use crate::spec_rules;

use load_animation::load_animations;
use load_graph::{load_nodes, load_skins, nodes_rotation_repairs};
use load_mesh::load_meshes;
pub use types::*;
use validate::{
    affine_from_cols, check_scene_roots, check_shared_vertex_views, check_skin_hierarchy,
    check_skinned_nodes, check_views_inside_buffers, prevalidate, validation_message,
};

/// A loaded glTF 2.0 document, validated, with its buffers.
///
/// Built only by the loaders ([`Model::open`], [`Model::from_bytes`]) and read through
/// accessors, so it stays as validated: every index in it is in range (a skin's joints, a
/// primitive's joint indices below every skin it is used with, a node's mesh and skin). The
/// only changes from outside go through methods that check them again
/// ([`Model::set_node_transform`], [`Model::set_influences`]). Its fields cannot be assigned:
///
/// ```compile_fail
/// # fn f(mut model: skinblend_gltf::Model) {
/// model.skins[0].joints.clear(); // error: field `skins` is private
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Model {
    pub(crate) root: Root,
    pub(crate) json: Value,
    pub(crate) buffers: Vec<Vec<u8>>,
    pub(crate) base_dir: Option<PathBuf>,
    /// The files it was read from, absolute: see [`Model::input_files`].
    pub(crate) input_files: Vec<PathBuf>,
    /// Nodes in file order.
    pub(crate) nodes: Vec<Node>,
    /// Node indices in parent-first order (every parent before its children).
    pub(crate) order: Vec<usize>,
    /// Skins in file order.
    pub(crate) skins: Vec<Skin>,
    /// Meshes in file order.
    pub(crate) meshes: Vec<Mesh>,
    /// Animations in file order.
    pub(crate) animations: Vec<Animation>,
    /// What the loader repaired.
    pub(crate) repairs: Repairs,
}

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
        let mut model = Self::from_bytes(&bytes, path.parent())?;
        model.input_files.insert(0, input_files::absolute(path));
        Ok(model)
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
        let input_files =
            base_dir.map_or_else(Vec::new, |base| input_files::referenced_files(&json, base));

        Ok(Self {
            root,
            json,
            buffers,
            base_dir: base_dir.map(Path::to_owned),
            input_files,
            nodes,
            order,
            skins,
            meshes,
            animations,
            repairs,
        })
    }

    /// The nodes in file order.
    #[must_use]
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Node indices in parent-first order (every parent before its children).
    #[must_use]
    pub fn order(&self) -> &[usize] {
        &self.order
    }

    /// The skins in file order.
    #[must_use]
    pub fn skins(&self) -> &[Skin] {
        &self.skins
    }

    /// The meshes in file order.
    #[must_use]
    pub fn meshes(&self) -> &[Mesh] {
        &self.meshes
    }

    /// The animations in file order.
    #[must_use]
    pub fn animations(&self) -> &[Animation] {
        &self.animations
    }

    /// What the loader repaired.
    #[must_use]
    pub fn repairs(&self) -> Repairs {
        self.repairs
    }

    /// Replaces node `node`'s local transform (`parent_from_node`) by `parent_from_node`, as if
    /// the file gave it as the node's `matrix`: animations still override the TRS parts they
    /// target.
    ///
    /// # Errors
    /// [`GltfError::Invalid`] at `nodes[node]` when there is no such node, or at
    /// `nodes[node].matrix` when the matrix is not finite or its last row is not `[0, 0, 0, 1]`;
    /// the model is unchanged then.
    pub fn set_node_transform(&mut self, node: usize, parent_from_node: Mat4) -> Result<()> {
        let count = self.nodes.len();
        let Some(target) = self.nodes.get_mut(node) else {
            return Err(GltfError::invalid(
                format!("nodes[{node}]"),
                format!("no such node (the model has {count})"),
            ));
        };
        let columns = parent_from_node.to_cols_array().map(f64::from);
        let matrix = affine_from_cols(&format!("nodes[{node}].matrix"), &columns)?;
        let (scale, rotation, translation) = matrix.to_scale_rotation_translation();
        target.matrix = Some(matrix);
        target.trs = Trs {
            translation,
            rotation,
            scale,
        };
        Ok(())
    }

    /// Replaces the influences of primitive `primitive` of mesh `mesh` (e.g. to rebind it),
    /// with one influence set. The file's centers of rotation of that primitive are dropped
    /// (they were computed from the old weights; CoR computes them again).
    ///
    /// # Errors
    /// [`GltfError::Invalid`] at `meshes[mesh].primitives[primitive]` when there is no such
    /// primitive, when `influences` has another vertex count than its POSITION, or when it
    /// names more joints than a skin the mesh is used with has; the model is unchanged then.
    pub fn set_influences(
        &mut self,
        mesh: usize,
        primitive: usize,
        influences: Influences,
    ) -> Result<()> {
        let path = format!("meshes[{mesh}].primitives[{primitive}]");
        let Some(target) = self
            .meshes
            .get(mesh)
            .and_then(|m| m.primitives.get(primitive))
        else {
            return Err(GltfError::invalid(path, "no such primitive"));
        };
        if influences.vertex_count() != target.positions.len() {
            return Err(GltfError::invalid(
                path,
                format!(
                    "{} vertices of influences for {} positions",
                    influences.vertex_count(),
                    target.positions.len()
                ),
            ));
        }
        for (n, node) in self.nodes.iter().enumerate() {
            let (Some(m), Some(s)) = (node.mesh, node.skin) else {
                continue;
            };
            let joints = self.skins[s].joints.len();
            if m == mesh && influences.joint_count() > joints {
                return Err(GltfError::invalid(
                    path,
                    format!(
                        "the influences name {} joints, but skins[{s}] (used by nodes[{n}]) has {joints}",
                        influences.joint_count()
                    ),
                ));
            }
        }
        let max_joint_index = influences
            .joints()
            .iter()
            .enumerate()
            .max_by_key(|&(i, &joint)| (joint, std::cmp::Reverse(i)))
            .map(|(i, &joint)| {
                (
                    usize::from(joint),
                    i / influences.influences_per_vertex(),
                    0,
                )
            });
        let target = &mut self.meshes[mesh].primitives[primitive];
        target.influence_sets = influences.influences_per_vertex().div_ceil(4);
        target.influence_report = InfluenceBuildReport::default();
        target.max_joint_index = max_joint_index;
        target.influences = Some(influences);
        target.rotation_centers = None;
        Ok(())
    }

    /// The files the model was read from, made absolute when it was loaded: the `.gltf` or
    /// `.glb` file [`Model::open`] read (first), then the external buffer and image files its
    /// document names (resolved against the folder it was loaded with). Empty for a model from
    /// bytes without a folder. Its writers refuse to write over any of them
    /// ([`crate::export::refuse_input`]).
    #[must_use]
    pub fn input_files(&self) -> &[PathBuf] {
        &self.input_files
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
