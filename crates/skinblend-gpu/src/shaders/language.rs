//! The languages [`export_shader`](super::export_shader) writes, and its error.

/// A shading language [`export_shader`](super::export_shader) writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShaderLanguage {
    /// WGSL (WebGPU, wgpu, Bevy): the source itself, validated by naga.
    Wgsl,
    /// GLSL 4.50 core (OpenGL, Vulkan GLSL toolchains).
    Glsl,
    /// GLSL ES 3.00 (WebGL2, OpenGL ES 3.0; three.js, PlayCanvas, Godot's compatibility renderer).
    GlslEs,
    /// HLSL shader model 5.1 (Direct3D, Unity).
    Hlsl,
    /// Metal Shading Language 2.0 (checked by naga only).
    Msl,
}

impl ShaderLanguage {
    /// Every language, in the order of the CLI's help.
    pub const ALL: [Self; 5] = [Self::Wgsl, Self::Glsl, Self::GlslEs, Self::Hlsl, Self::Msl];

    /// The name on the command line: `wgsl`, `glsl`, `glsl-es`, `hlsl`, `msl`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Wgsl => "wgsl",
            Self::Glsl => "glsl",
            Self::GlslEs => "glsl-es",
            Self::Hlsl => "hlsl",
            Self::Msl => "msl",
        }
    }

    /// The language named `name` (as [`ShaderLanguage::name`]), if any.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The file name ending: `.wgsl`, `.450.vert`, `.300es.vert`, `.hlsl`, `.metal`.
    #[must_use]
    pub fn file_suffix(self) -> &'static str {
        match self {
            Self::Wgsl => ".wgsl",
            Self::Glsl => ".450.vert",
            Self::GlslEs => ".300es.vert",
            Self::Hlsl => ".hlsl",
            Self::Msl => ".metal",
        }
    }

    /// Whether the palette is a uniform block (GLSL ES 3.00 has no storage buffers).
    pub(super) fn palette_in_uniform_block(self) -> bool {
        self == Self::GlslEs
    }
}

/// A shader translation failed: naga refused the module or could not write it in `language`.
#[derive(Debug, thiserror::Error)]
#[error("{language} shader for {method}: {message}")]
pub struct ShaderExportError {
    /// The target language's name.
    pub language: &'static str,
    /// The skinning method's name.
    pub method: &'static str,
    /// naga's message, on one line.
    pub message: String,
}
