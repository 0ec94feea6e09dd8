//! Export of a posed scene to `.glb`, `.gltf` or `.obj`.
//!
//! glTF output is the input document with every skinned node turned into a static mesh in the
//! space of the scene: its primitives keep their order, vertex order, indices, materials and
//! every other attribute; POSITION, NORMAL and TANGENT point at new float accessors with the
//! posed values; JOINTS_n, WEIGHTS_n, `_SKINBLEND_COR`, `_SKINBLEND_DQ_BLEND` and morph targets are removed (they
//! are already applied); the node loses its skin and transform and becomes a scene root, its children keeping their
//! world placement. Joints of the posed skins take the sampled pose, and animation channels
//! that target them (or the posed nodes) are dropped. All buffers are merged into one (the GLB
//! BIN chunk, or a base64 data: URI for `.gltf`); external images are embedded. Nodes keep
//! their indices and names; materials, textures, images, cameras, extensions and extras are
//! kept as they were in the JSON. [`write_skinning_attributes`] writes the unposed model with
//! precomputed centers of rotation instead.
//!
//! Files are written to a temporary name beside the target and renamed, so a failure never
//! leaves a half-written file in place of a good one. The writers of a model refuse an output
//! that is one of its input files ([`Model::input_files`]) before anything is written
//! ([`refuse_input`], the one such rule of the workspace).

mod document;
mod guard;
mod obj;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::container;
use crate::error::{GltfError, Result};
use crate::model::{Model, DQ_BLEND_ATTRIBUTE, ROTATION_CENTER_ATTRIBUTE};
use crate::pose::Pose;
use crate::scene::PosedNode;

use document::{merged_document, posed_document, push_float_accessor};
pub use guard::{is_same_file, refuse_input, resolved};
pub use obj::to_obj;

/// The output formats, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Binary glTF (one file, BIN chunk).
    Glb,
    /// JSON glTF with the buffer as a base64 data: URI (one file).
    Gltf,
    /// Wavefront OBJ: positions, UVs, normals and triangles of every mesh in scene space.
    Obj,
}

impl Format {
    /// The format for a path's extension (case-insensitive).
    ///
    /// # Errors
    /// [`GltfError::Request`] for another extension.
    pub fn from_path(path: &Path) -> Result<Self> {
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("glb") => Ok(Format::Glb),
            Some("gltf") => Ok(Format::Gltf),
            Some("obj") => Ok(Format::Obj),
            _ => Err(GltfError::Request {
                what: format!(
                    "{}: unknown output extension (expected .glb, .gltf or .obj)",
                    path.display()
                ),
            }),
        }
    }
}

/// Writes the posed scene to `path` in the format its extension names (see the module docs).
///
/// `posed` is the result of [`Model::skin_scene`] at `pose`.
///
/// # Errors
/// [`GltfError::OutputIsInput`] when `path` is one of the model's input files (nothing is
/// written), [`GltfError::Request`] for an unknown extension, [`GltfError::Io`] when writing
/// fails, [`GltfError::Invalid`] when an external image cannot be embedded.
pub fn write(
    model: &Model,
    pose: &Pose,
    posed: &[PosedNode],
    path: impl AsRef<Path>,
) -> Result<()> {
    let path = path.as_ref();
    refuse_input(model.input_files(), path)?;
    let bytes = match Format::from_path(path)? {
        Format::Glb => to_glb(model, pose, posed)?,
        Format::Gltf => to_gltf(model, pose, posed)?,
        Format::Obj => to_obj(model, pose, posed).into_bytes(),
    };
    write_atomically(path, &bytes)
}

/// Creates the folder `path` goes in, with its parents, when it is missing, so that every
/// writer behaves alike (`pose -o out/sub/x.glb` as `rigs -o out/sub`).
///
/// # Errors
/// [`GltfError::Io`] naming the folder (a file in the way, no permission).
pub fn create_parent_folder(path: &Path) -> Result<()> {
    match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => {
            std::fs::create_dir_all(folder).map_err(|source| GltfError::Io {
                path: folder.to_owned(),
                source,
            })
        }
        _ => Ok(()),
    }
}

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk, then renames it over
/// `path`: a reader sees the old file or the whole new one, never a part, even after a crash.
/// The one atomic writer of the workspace (the report and the CLI write through it too).
/// A missing folder is created first ([`create_parent_folder`]).
///
/// # Errors
/// [`GltfError::Io`] naming the file, or the folder that cannot be created; the temporary file
/// is removed on failure.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    create_parent_folder(path)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_owned());
    let temporary: PathBuf =
        path.with_file_name(format!(".{file_name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    result.map_err(|source| {
        // Best effort: the temporary may not exist if creating it failed.
        let _ = std::fs::remove_file(&temporary);
        GltfError::Io {
            path: path.to_owned(),
            source,
        }
    })
}

/// The model as loaded (bind pose, skins, animations and everything else kept), with each
/// primitive's [`crate::Primitive::rotation_centers`] written as the vertex attribute
/// [`ROTATION_CENTER_ATTRIBUTE`] and its [`crate::Primitive::dq_blend`] as
/// [`DQ_BLEND_ATTRIBUTE`] (FLOAT; each replacing one the file had), to `path` (`.glb` or
/// `.gltf`). Loading the result gives the same values, so CoR skinning needs no
/// precomputation and blended skinning no rule.
///
/// # Errors
/// [`GltfError::OutputIsInput`] when `path` is one of the model's input files (nothing is
/// written), [`GltfError::Request`] for another extension, [`GltfError::Io`] when writing
/// fails, [`GltfError::Invalid`] when an external image cannot be embedded.
pub fn write_skinning_attributes(model: &Model, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    refuse_input(model.input_files(), path)?;
    let format = Format::from_path(path)?;
    if format == Format::Obj {
        return Err(GltfError::Request {
            what: format!(
                "{}: centers of rotation and blend values are written to .glb or .gltf, not .obj",
                path.display()
            ),
        });
    }
    let (mut document, mut bin) = merged_document(model)?;
    for (m, mesh) in model.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            if let Some(values) = &primitive.dq_blend {
                let accessor = push_float_accessor(&mut document, &mut bin, values, 1, false);
                document["meshes"][m]["primitives"][p]["attributes"][DQ_BLEND_ATTRIBUTE] =
                    json!(accessor);
            }
            let Some(centers) = &primitive.rotation_centers else {
                continue;
            };
            let values: Vec<f32> = centers
                .iter()
                .flat_map(|&c| {
                    if skinblend::cor::has_rotation_center(c) {
                        [c.x, c.y, c.z, 1.0]
                    } else {
                        [0.0; 4]
                    }
                })
                .collect();
            let accessor = push_float_accessor(&mut document, &mut bin, &values, 4, false);
            document["meshes"][m]["primitives"][p]["attributes"][ROTATION_CENTER_ATTRIBUTE] =
                json!(accessor);
        }
    }
    let bytes = match format {
        Format::Gltf => gltf_bytes(document, &bin)?,
        _ => glb_bytes(document, &bin)?,
    };
    write_atomically(path, &bytes)
}

/// Writes `bytes` made from `model` (e.g. baked frames) to `path` with [`write_atomically`],
/// after refusing a `path` that is one of the model's input files.
///
/// # Errors
/// [`GltfError::OutputIsInput`] when `path` is one of the model's input files (nothing is
/// written), else as [`write_atomically`].
pub fn write_derived(model: &Model, path: &Path, bytes: &[u8]) -> Result<()> {
    refuse_input(model.input_files(), path)?;
    write_atomically(path, bytes)
}

fn glb_bytes(mut document: Value, bin: &[u8]) -> Result<Vec<u8>> {
    if !bin.is_empty() {
        document["buffers"] = json!([{ "byteLength": bin.len() }]);
    }
    let text = serde_json::to_vec(&document).map_err(|e| GltfError::Json {
        message: e.to_string(),
    })?;
    Ok(container::assemble_glb(&text, bin))
}

fn gltf_bytes(mut document: Value, bin: &[u8]) -> Result<Vec<u8>> {
    if !bin.is_empty() {
        document["buffers"] = json!([{
            "byteLength": bin.len(),
            "uri": format!("data:application/octet-stream;base64,{}", container::base64_encode(bin)),
        }]);
    }
    serde_json::to_vec_pretty(&document).map_err(|e| GltfError::Json {
        message: e.to_string(),
    })
}

/// The posed scene as GLB bytes.
///
/// # Errors
/// As [`write()`].
pub fn to_glb(model: &Model, pose: &Pose, posed: &[PosedNode]) -> Result<Vec<u8>> {
    let (document, bin) = posed_document(model, pose, posed)?;
    glb_bytes(document, &bin)
}

/// The posed scene as `.gltf` JSON bytes with an embedded buffer.
///
/// # Errors
/// As [`write()`].
pub fn to_gltf(model: &Model, pose: &Pose, posed: &[PosedNode]) -> Result<Vec<u8>> {
    let (document, bin) = posed_document(model, pose, posed)?;
    gltf_bytes(document, &bin)
}
