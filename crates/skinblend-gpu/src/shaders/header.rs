//! The comment every exported shader starts with: the version, the conventions, the bindings
//! and the data layout per method and language, the inputs and outputs by name.

use std::fmt::Write as _;

use skinblend::Method;

use crate::methods::GpuVertexInput;

use super::interface::ShaderInterface;
use super::language::ShaderLanguage;
use super::translate::{
    GLSL_CLIP_BINDING, GLSL_PALETTE_BINDING, MSL_CLIP_BUFFER, MSL_PALETTE_BUFFER, MSL_SIZES_BUFFER,
    NAGA_VERSION,
};

/// The header of `method`'s shader in `language` (`uniform_joints`: the palette block's
/// entries, GLSL ES only), naming what `interface` and `entry_point` say.
pub(super) fn header(
    language: ShaderLanguage,
    method: Method,
    uniform_joints: Option<usize>,
    interface: &ShaderInterface,
    entry_point: &str,
) -> String {
    let kernel = crate::methods::method_kernel(method);
    let mut h = String::new();
    let mut line = |text: &str| {
        let _ = writeln!(h, "// {text}");
    };
    line(&format!(
        "skinblend {} {} skinning: the skinning functions and an example vertex shader,",
        env!("CARGO_PKG_VERSION"),
        kernel.description
    ));
    line(&format!(
        "translated to {} by naga {} from skinblend's WGSL source (do not edit; regenerate with",
        language.name(),
        NAGA_VERSION
    ));
    line(&format!(
        "`skinblend shaders --lang {} --method {}`). Entry point: {entry_point} (vertex).",
        language.name(),
        method.name()
    ));
    line("");
    line("Conventions: column vectors (v' = M v), right-handed, glTF units; a 3x4 affine map is");
    line("stored as its three ROWS (row i = (M[i][0], M[i][1], M[i][2], t[i])); quaternions");
    line("(x, y, z, w); dual quaternion (real, dual) with dual = 1/2 (0, t) real.");
    line("");
    match uniform_joints {
        Some(n) => line(&format!(
            "Binding 0, palette `{}`: a uniform block (std140) of exactly {n} entries, {} bytes",
            interface.palette, kernel.palette_entry_bytes
        )),
        None => line(&format!(
            "group 0 binding 0, palette `{}`: a read-only storage buffer, one entry of {} bytes",
            interface.palette, kernel.palette_entry_bytes
        )),
    }
    line("per joint (upload the bytes of skinblend_gpu::GpuPalette::from_prepared):");
    for text in kernel.header_entry_lines {
        line(text);
    }
    match language {
        ShaderLanguage::Hlsl => line("(HLSL: palette register(t0), clip_from_world register(b1), space 0)"),
        ShaderLanguage::Msl => line(&format!(
            "(MSL: palette [[buffer({MSL_PALETTE_BUFFER})]], clip_from_world [[buffer({MSL_CLIP_BUFFER})]], \
             [[buffer({MSL_SIZES_BUFFER})]] a uint: the palette's size in bytes)"
        )),
        ShaderLanguage::Glsl => {
            line(&format!(
                "(GLSL 4.50: palette layout(binding = {GLSL_PALETTE_BINDING}), clip_from_world \
                 layout(binding = {GLSL_CLIP_BINDING}),"
            ));
            line("no set qualifier: descriptor set 0 in Vulkan. One file for both APIs: Vulkan");
            line("(SPIR-V: `glslangValidator -V`, shaderc; Godot's RenderingDevice) and OpenGL 4.5");
            line("(`glslangValidator -G`, or the driver's compiler).)");
        }
        ShaderLanguage::GlslEs => line(
            "(GLSL ES 3.00 has no binding qualifier: bind both blocks by name, uniformBlockBinding.)",
        ),
        _ => {}
    }
    line(&format!(
        "Binding 1, `{}`: uniform mat4 clip_from_world (column-major), applied as is.",
        interface.clip_from_world
    ));
    line("Inputs: location 0 position (vec3, bind pose), 1 normal (vec3), 2 joints (uvec4,");
    line("glTF JOINTS_0), 3 weights (vec4, WEIGHTS_0; divided by their sum, unweighted if ~0)");
    for text in kernel
        .vertex_input
        .map_or(&[][..], |input| input.header_lines())
    {
        line(text);
    }
    let names: Vec<String> = interface
        .inputs
        .iter()
        .map(|i| format!("{} {}", i.location, i.name))
        .collect();
    line(&format!("Input names: {}.", names.join(", ")));
    line(&format!(
        "Outputs: clip position; location 0 `{}` skinned position, location 1 `{}` skinned",
        interface.position_output, interface.normal_output
    ));
    line("unit normal (world space).");
    line("Check an engine's port against `skinblend conformance -o DIR` (expected positions and");
    line("normals per method from skinblend's CPU reference).");
    h.push('\n');
    h
}
