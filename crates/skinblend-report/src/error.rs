//! The one error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong while rendering, plotting or writing a report. Each variant
/// names the place (file, figure, vertex, JSON path) and the value.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Reading or writing a file failed (the cause is the error's source).
    #[error("{}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The PNG encoder refused an image.
    #[error("encoding {what} as PNG: {message}")]
    Png {
        /// Which image.
        what: String,
        /// The encoder's message.
        message: String,
    },
    /// Plotters failed to draw a figure.
    #[error("drawing {figure}: {message}")]
    Draw {
        /// Which figure.
        figure: String,
        /// Plotters' message.
        message: String,
    },
    /// An image size of zero or too large (see [`crate::MAX_IMAGE_SIDE`]).
    #[error("image size {width}x{height} is not within 1..={max} pixels per side")]
    ImageSize {
        /// Requested width, pixels.
        width: u32,
        /// Requested height, pixels.
        height: u32,
        /// The largest side allowed.
        max: u32,
    },
    /// A triangle names a vertex that does not exist.
    #[error("{mesh}: triangle {triangle} names vertex {vertex}, but there are {vertex_count}")]
    VertexIndexOutOfRange {
        /// Which mesh.
        mesh: String,
        /// The triangle's index.
        triangle: usize,
        /// The vertex it names.
        vertex: u32,
        /// How many vertices there are.
        vertex_count: usize,
    },
    /// A per-vertex attribute has the wrong length.
    #[error("{mesh}: {attribute} has {found} values for {expected} vertices")]
    AttributeLength {
        /// Which mesh.
        mesh: String,
        /// Which attribute.
        attribute: &'static str,
        /// The vertex count.
        expected: usize,
        /// The attribute's length.
        found: usize,
    },
    /// A position is NaN or infinite.
    #[error("{mesh}: position of vertex {vertex} is not finite ({value})")]
    NonFinite {
        /// Which mesh.
        mesh: String,
        /// The vertex.
        vertex: usize,
        /// The value, printed.
        value: String,
    },
    /// The core rejected a skinning or a measurement (the cause is the error's source).
    #[error("{what}")]
    Skin {
        /// What was being skinned or measured.
        what: String,
        /// The core's error.
        #[source]
        source: skinblend::SkinError,
    },
    /// The glTF crate rejected the file or a request on it (the cause is the error's source).
    #[error("{what}")]
    Gltf {
        /// The file and what was being done.
        what: String,
        /// The glTF crate's error.
        #[source]
        source: skinblend_gltf::GltfError,
    },
    /// A request that cannot be met (a model without animation or skinned triangles, zero frames).
    #[error("{what}")]
    Request {
        /// What is wrong with it.
        what: String,
    },
    /// The embedded font could not be registered with plotters.
    #[error("the embedded font assets/DejaVuSans.ttf could not be parsed")]
    Font,
}

/// Shorthand for this crate's results.
pub type Result<T> = std::result::Result<T, ReportError>;

impl ReportError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn skin(what: impl Into<String>) -> impl FnOnce(skinblend::SkinError) -> Self {
        let what = what.into();
        move |source| Self::Skin { what, source }
    }

    pub(crate) fn draw<E: std::fmt::Display>(figure: &str) -> impl FnOnce(E) -> Self + '_ {
        move |error| Self::Draw {
            figure: figure.to_owned(),
            message: error.to_string(),
        }
    }
}
