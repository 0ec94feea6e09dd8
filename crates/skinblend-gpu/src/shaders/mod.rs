//! The skinning functions and an example vertex shader per method in WGSL, GLSL 4.50, GLSL ES
//! 3.00 (WebGL2), HLSL and MSL, translated with naga from the one WGSL source in `shaders/`
//! (the same text the compute kernels run); no second hand-written copy exists.
//!
//! [`export_shader`] parses the WGSL library of a method plus the example vertex shader below,
//! validates the module with naga and writes it in the requested language. Every output starts
//! with a comment that states the bindings, the data layout, the conventions and the skinblend
//! version (see [`ExportedShader::source`]).
//!
//! # Bindings and data layout
//! - The palette, `@group(0) @binding(0)`: one entry per joint in exactly the bytes of
//!   [`crate::GpuLinearJoint`] (48: the skin matrix's three rows), [`crate::GpuDualQuatJoint`]
//!   (96: the rigid part as a dual quaternion, the residual about the joint's bind origin as
//!   three rows, the rigid flag) or, for CoR and blended, [`crate::GpuCorJoint`] (144: the DQS
//!   entry, then the LBS rows); [`crate::GpuPalette::from_prepared`] makes them from the core's prepared palette
//!   ([`crate::GpuPalette::bytes`] is the upload). WGSL, GLSL 4.50, HLSL and MSL read it as a
//!   read-only storage buffer of any length. GLSL ES 3.00 has no storage buffers: there it is a
//!   uniform block (std140, the same bytes) of [`uniform_palette_joints`] entries, sized to fit
//!   the 16 KiB that every WebGL2 / OpenGL ES 3.0 implementation allows for one block;
//!   [`uniform_palette_bytes`] pads the palette to it. Upload
//!   that many entries (unused ones zero).
//! - `clip_from_world`, `@group(0) @binding(1)`: a uniform `mat4x4<f32>` (column-major), applied
//!   as is (`clip = clip_from_world · world`; no coordinate-space adjustment is added).
//! - GLSL 4.50 states both as `layout(binding = 0)` and `layout(binding = 1)` without a `set`
//!   (descriptor set 0 in Vulkan), so one file compiles for Vulkan (SPIR-V) and for OpenGL;
//!   GLSL ES 3.00 has no binding qualifier (bind its blocks by name).
//! - Vertex attributes: location 0 the bind-pose position (vec3), 1 the normal (vec3), 2 the
//!   joints (`uvec4`, glTF `JOINTS_0`), 3 the weights (vec4, `WEIGHTS_0`; divided by their sum),
//!   for CoR 4 the vertex's center of rotation (vec4: xyz the center, w = 1 when it has one,
//!   0 when not: glTF `_SKINBLEND_COR`, [`crate::gpu_rotation_centers`]), and for blended 4 the
//!   vertex's blend value (float in `[0, 1]`, 0 = LBS, 1 = DQS: glTF `_SKINBLEND_DQ_BLEND`).
//! - Outputs: the clip position, location 0 the skinned position and location 1 the skinned unit
//!   normal (world space), which a transform-feedback or stream-out capture can read back.

mod example;
mod header;
mod interface;
mod language;
mod translate;
mod uniform_block;

use skinblend::Method;

pub use example::example_vertex_wgsl;
pub use interface::{ShaderInput, ShaderInterface};
pub use language::{ShaderExportError, ShaderLanguage};
pub use uniform_block::{palette_entry_bytes, uniform_palette_bytes, uniform_palette_joints};

use example::input_roles;
use header::header;
use interface::input_name;
use translate::translate;

/// One translated shader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedShader {
    /// The language it is written in.
    pub language: ShaderLanguage,
    /// The skinning method.
    pub method: Method,
    /// A file name for it: `skinblend_<method name><suffix>`, e.g. `skinblend_dq.300es.vert`.
    pub file_name: String,
    /// The vertex entry point's name in `source`.
    pub entry_point: String,
    /// The names a host binds.
    pub interface: ShaderInterface,
    /// The palette's entry count in a uniform block (GLSL ES), `None` for a storage buffer.
    pub uniform_palette_joints: Option<usize>,
    /// The text: the header comment, then the translated module.
    pub source: String,
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Translates `method`'s skinning functions and example vertex shader into `language`.
///
/// # Errors
/// [`ShaderExportError`] when naga cannot parse, validate or write the module (a bug in this
/// crate or in naga, never caused by user data).
pub fn export_shader(
    language: ShaderLanguage,
    method: Method,
) -> Result<ExportedShader, ShaderExportError> {
    let fail = |message: String| ShaderExportError {
        language: language.name(),
        method: method.name(),
        message: one_line(&message),
    };
    let uniform_joints = language
        .palette_in_uniform_block()
        .then(|| uniform_palette_joints(method));
    let wgsl = example_vertex_wgsl(method, uniform_joints);
    let module = naga::front::wgsl::parse_str(&wgsl)
        .map_err(|e| fail(format!("WGSL parse: {}", e.emit_to_string(&wgsl))))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .map_err(|e| fail(format!("naga validation: {}", e.emit_to_string(&wgsl))))?;

    let wgsl_palette_name = crate::methods::method_kernel(method).palette_name;
    let mut interface = ShaderInterface {
        palette: wgsl_palette_name.to_string(),
        clip_from_world: "skin_clip_from_world".to_string(),
        position_output: "world_position".to_string(),
        normal_output: "world_normal".to_string(),
        inputs: Vec::new(),
    };
    let mut entry_point = "skin_vertex_main".to_string();
    let body = translate(
        language,
        &wgsl,
        &module,
        &info,
        &mut interface,
        &mut entry_point,
    )
    .map_err(fail)?;

    for (role, location) in input_roles(method) {
        let name = input_name(language, &body, role, location)
            .ok_or_else(|| fail(format!("no vertex input {role} at location {location}")))?;
        interface.inputs.push(ShaderInput {
            role,
            location,
            name,
        });
    }

    let header = header(language, method, uniform_joints, &interface, &entry_point);
    // GLSL wants `#version` first (comments may precede it by the spec, not by every driver).
    let source = match body.split_once('\n') {
        Some((first, rest)) if first.starts_with("#version") => {
            format!("{first}\n{header}{rest}")
        }
        _ => format!("{header}{body}"),
    };
    Ok(ExportedShader {
        language,
        method,
        file_name: format!("skinblend_{}{}", method.name(), language.file_suffix()),
        entry_point,
        interface,
        uniform_palette_joints: uniform_joints,
        source,
    })
}
