//! The comment every exported shader starts with: the version, the conventions, the bindings
//! and the data layout per method and language, the inputs and outputs by name.

use std::fmt::Write as _;

use skinblend::Method;

use super::interface::ShaderInterface;
use super::language::ShaderLanguage;
use super::translate::{
    GLSL_CLIP_BINDING, GLSL_PALETTE_BINDING, MSL_CLIP_BUFFER, MSL_PALETTE_BUFFER, MSL_SIZES_BUFFER,
    NAGA_VERSION,
};
use super::uniform_block::palette_entry_bytes;

/// The header of `method`'s shader in `language` (`uniform_joints`: the palette block's
/// entries, GLSL ES only), naming what `interface` and `entry_point` say.
pub(super) fn header(
    language: ShaderLanguage,
    method: Method,
    uniform_joints: Option<usize>,
    interface: &ShaderInterface,
    entry_point: &str,
) -> String {
    let mut h = String::new();
    let mut line = |text: &str| {
        let _ = writeln!(h, "// {text}");
    };
    line(&format!(
        "skinblend {} {} skinning: the skinning functions and an example vertex shader,",
        env!("CARGO_PKG_VERSION"),
        match method {
            Method::Linear => "linear blend (LBS)",
            Method::DualQuaternion => "dual quaternion (DQS)",
            Method::CenterOfRotation => "centers-of-rotation (CoR)",
            Method::Blended => "blended LBS/DQS",
        }
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
            interface.palette,
            palette_entry_bytes(method)
        )),
        None => line(&format!(
            "group 0 binding 0, palette `{}`: a read-only storage buffer, one entry of {} bytes",
            interface.palette,
            palette_entry_bytes(method)
        )),
    }
    line("per joint (upload the bytes of skinblend_gpu::GpuPalette::from_prepared):");
    match method {
        Method::Linear => {
            line(
                "  rows: 3 x vec4 f32, the skin matrix world_from_joint * joint_from_bind as rows.",
            );
        }
        Method::DualQuaternion | Method::CenterOfRotation | Method::Blended => {
            line(
                "  real: vec4 f32, the rotation quaternion of the joint's rigid part (Gram-Schmidt",
            );
            line(
                "        split of the skin matrix's 3x3; any sign: the shader aligns signs to the",
            );
            line("        heaviest influence, the pivot);");
            line("  dual: vec4 f32, 1/2 (0, t) real;");
            line("  residual: 3 x vec4 f32, rows of p -> S p + (c - S c), the scale/shear/mirror");
            line("        left after the split, about the joint's bind origin c (identity if rigid);");
            line("  rigid: u32, 1 when the residual is the identity (skipped), else 0; 12 bytes pad.");
            if method == Method::CenterOfRotation {
                line("  linear: 3 x vec4 f32 at byte 96, the full skin matrix as rows (places the");
                line("        vertex's center of rotation as LBS does).");
            }
            if method == Method::Blended {
                line("  linear: 3 x vec4 f32 at byte 96, the full skin matrix as rows (the LBS");
                line("        entry, blended into the LBS result).");
            }
        }
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
    if method == Method::CenterOfRotation {
        line("4 center of rotation (vec4, glTF attribute _SKINBLEND_COR: xyz the center in bind");
        line("space, w = 1 when the vertex has one, 0 when not: then it is skinned by DQS).");
    }
    if method == Method::Blended {
        line(
            "4 blend value (float, glTF attribute _SKINBLEND_DQ_BLEND, in [0, 1]): the vertex goes",
        );
        line("to (1 - b) LBS + b DQS, 0 = LBS, 1 = DQS exactly; normals and tangent directions");
        line("interpolate the two unit results, renormalized; the tangent's handedness is LBS's");
        line("where b < 0.5, else DQS's. A value for the whole mesh: the same value at every vertex.");
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
