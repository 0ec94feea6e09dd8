//! The example vertex shader appended to each method's WGSL library (the one source every
//! language is translated from), and its vertex inputs.

use skinblend::Method;

use crate::methods::GpuVertexInput;

/// The example vertex shader appended to a method's library (`EXTRA_FIELD`, the method's own
/// vertex input, and `BODY` filled in).
const EXAMPLE_VERTEX: &str = r"
// ---- example vertex shader (skinblend) ----
@group(0) @binding(1) var<uniform> skin_clip_from_world: mat4x4<f32>;

struct SkinVertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) joints: vec4<u32>,
    @location(3) weights: vec4<f32>,
EXTRA_FIELD}

struct SkinVertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world_position: vec3<f32>,
    @location(1) world_normal: vec3<f32>,
}

@vertex
fn skin_vertex_main(v: SkinVertexIn) -> SkinVertexOut {
BODY    return SkinVertexOut(skin_clip_from_world * vec4<f32>(world, 1.0), world, normal);
}
";

/// The one WGSL source of `method`'s library and example vertex shader, with the palette as a
/// storage buffer (`uniform_joints: None`) or a fixed-size uniform array.
#[must_use]
pub fn example_vertex_wgsl(method: Method, uniform_joints: Option<usize>) -> String {
    let kernel = crate::methods::method_kernel(method);
    let (palette_name, entry_type) = (kernel.palette_name, kernel.entry_type);
    let declaration = match uniform_joints {
        None => {
            format!("@group(0) @binding(0) var<storage, read> {palette_name}: array<{entry_type}>;")
        }
        Some(n) => {
            format!("@group(0) @binding(0) var<uniform> {palette_name}: array<{entry_type}, {n}>;")
        }
    };
    let extra_field = kernel.vertex_input.map_or("", |input| input.wgsl_field().0);
    let example = EXAMPLE_VERTEX
        .replace("EXTRA_FIELD", extra_field)
        .replace("BODY", kernel.example_body);
    format!(
        "{declaration}\n{}\n{}\n{example}",
        crate::wgsl::SKINNING_WGSL,
        kernel.library
    )
}

/// The vertex inputs of `method`'s example shader: role and location (the method's own
/// per-vertex input at 4).
pub(super) fn input_roles(method: Method) -> Vec<(&'static str, u32)> {
    let mut roles = vec![
        ("position", 0),
        ("normal", 1),
        ("joints", 2),
        ("weights", 3),
    ];
    if let Some(input) = crate::methods::method_kernel(method).vertex_input {
        roles.push((input.wgsl_field().1, 4));
    }
    roles
}
