//! The example vertex shader appended to each method's WGSL library (the one source every
//! language is translated from), and its vertex inputs.

use skinblend::Method;

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

const LINEAR_BODY: &str = "    let m = skin_linear_blend4(v.joints, v.weights);
    let world = skin_affine_point(m, v.position);
    let normal = skin_linear_normal(m, v.normal);
";
const DUAL_QUAT_BODY: &str = "    let b = skin_dual_quat_blend4(v.joints, v.weights);
    let world = skin_dual_quat_blend_point(b, v.position);
    let normal = skin_dual_quat_blend_normal(b, v.normal);
";
const COR_BODY: &str = "    let b = skin_cor_blend4(v.joints, v.weights, v.center);
    let world = skin_dual_quat_blend_point(b, v.position);
    let normal = skin_dual_quat_blend_normal(b, v.normal);
";
const BLENDED_BODY: &str = "    let b = skin_blended_blend4(v.joints, v.weights, v.blend);
    let world = skin_blended_point(b, v.position);
    let normal = skin_blended_normal(b, v.normal);
";

/// The one WGSL source of `method`'s library and example vertex shader, with the palette as a
/// storage buffer (`uniform_joints: None`) or a fixed-size uniform array.
#[must_use]
pub fn example_vertex_wgsl(method: Method, uniform_joints: Option<usize>) -> String {
    let (palette_name, entry_type, library, body) = match method {
        Method::Linear => (
            "skin_linear_palette",
            "SkinAffine",
            crate::wgsl::LINEAR_WGSL,
            LINEAR_BODY,
        ),
        Method::DualQuaternion => (
            "skin_dual_quat_palette",
            "SkinDualQuatJoint",
            crate::wgsl::DUAL_QUAT_WGSL,
            DUAL_QUAT_BODY,
        ),
        Method::CenterOfRotation => (
            "skin_cor_palette",
            "SkinCorJoint",
            crate::wgsl::COR_WGSL,
            COR_BODY,
        ),
        Method::Blended => (
            "skin_blended_palette",
            "SkinCorJoint",
            crate::wgsl::BLENDED_WGSL,
            BLENDED_BODY,
        ),
    };
    let declaration = match uniform_joints {
        None => {
            format!("@group(0) @binding(0) var<storage, read> {palette_name}: array<{entry_type}>;")
        }
        Some(n) => {
            format!("@group(0) @binding(0) var<uniform> {palette_name}: array<{entry_type}, {n}>;")
        }
    };
    let extra_field = match method {
        Method::CenterOfRotation => "    @location(4) center: vec4<f32>,\n",
        Method::Blended => "    @location(4) blend: f32,\n",
        Method::Linear | Method::DualQuaternion => "",
    };
    let example = EXAMPLE_VERTEX
        .replace("EXTRA_FIELD", extra_field)
        .replace("BODY", body);
    format!(
        "{declaration}\n{}\n{library}\n{example}",
        crate::wgsl::SKINNING_WGSL
    )
}

/// The vertex inputs of `method`'s example shader: role and location.
pub(super) fn input_roles(method: Method) -> &'static [(&'static str, u32)] {
    const BASE: [(&str, u32); 4] = [
        ("position", 0),
        ("normal", 1),
        ("joints", 2),
        ("weights", 3),
    ];
    const COR: [(&str, u32); 5] = [
        ("position", 0),
        ("normal", 1),
        ("joints", 2),
        ("weights", 3),
        ("center", 4),
    ];
    const BLENDED: [(&str, u32); 5] = [
        ("position", 0),
        ("normal", 1),
        ("joints", 2),
        ("weights", 3),
        ("blend", 4),
    ];
    match method {
        Method::CenterOfRotation => &COR,
        Method::Blended => &BLENDED,
        Method::Linear | Method::DualQuaternion => &BASE,
    }
}
