//! The one error type of the glTF crate.

use std::path::PathBuf;

use thiserror::Error;

/// Everything that can be wrong with a glTF file, a request about it, or writing the result.
///
/// Each variant names the place: a file, a byte offset in a GLB container, or a JSON path in the
/// style of the glTF validator (`meshes[0].primitives[1].attributes["JOINTS_0"]`), often followed
/// by the accessor and the element. No public function of this crate panics on file data.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GltfError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },

    /// The GLB container is malformed.
    #[error("GLB byte {offset}: {what}")]
    Glb {
        /// Byte offset in the container where the problem is.
        offset: usize,
        /// What is wrong.
        what: String,
    },

    /// The bytes are neither glTF JSON nor a GLB container (a text file, a PNG, an `.obj`):
    /// they do not start with `{` (after whitespace) nor with the GLB magic `glTF`.
    #[error("not glTF 2.0 (a .gltf JSON file or a .glb): {what}")]
    NotGltf {
        /// What the bytes are instead (empty, or how they start).
        what: String,
    },

    /// The JSON does not parse as glTF.
    #[error("JSON: {message}")]
    Json {
        /// The parser's message, with line and column.
        message: String,
    },

    /// The document breaks a rule of the glTF 2.0 specification or of this crate.
    #[error("{path}: {what}")]
    Invalid {
        /// JSON path of the offending value, e.g. `skins[0].inverseBindMatrices`.
        path: String,
        /// What is wrong, with the value where it helps.
        what: String,
    },

    /// The document needs something this crate does not implement.
    #[error("{path}: unsupported: {what}")]
    Unsupported {
        /// JSON path of the feature.
        path: String,
        /// What is not supported.
        what: String,
    },

    /// The skinning core rejected data built from the document.
    #[error("{path}: {source}")]
    Skin {
        /// JSON path of the node or primitive being skinned.
        path: String,
        /// The core's error (names the vertex or joint).
        source: skinblend::SkinError,
    },

    /// A skinning backend other than the CPU kernels (a GPU) failed.
    #[error("{path}: {source}")]
    Backend {
        /// JSON path of the primitive being skinned.
        path: String,
        /// The backend's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The requested animation does not exist.
    #[error("no animation {requested:?}: the file has {available}")]
    NoSuchAnimation {
        /// The name or index asked for.
        requested: String,
        /// The animations there are, as `0 "name", 1 "name"` (or `none`).
        available: String,
    },

    /// An output path that is one of the model's input files (the `.gltf`/`.glb` it was opened
    /// from, or an external buffer or image it refers to): refused before anything is written,
    /// so the input is left untouched ([`crate::export::refuse_input`]).
    #[error(
        "{}: the output is the input file {}; write to another path (the input is left \
         untouched)",
        output.display(),
        input.display()
    )]
    OutputIsInput {
        /// The output asked for.
        output: PathBuf,
        /// The input file it is.
        input: PathBuf,
    },

    /// A request that is not about the file's data (a time that is not finite, an unknown output
    /// extension).
    #[error("{what}")]
    Request {
        /// What is wrong with the request.
        what: String,
    },
}

impl GltfError {
    /// Shorthand for [`GltfError::Invalid`].
    pub(crate) fn invalid(path: impl Into<String>, what: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.into(),
            what: what.into(),
        }
    }
}

/// Result with [`GltfError`].
pub type Result<T> = std::result::Result<T, GltfError>;
