// skinblend-bevy: the main-pass vertex shader of `SkinblendMaterial` (Bevy's forward and
// deferred-lighting inputs, `bevy_pbr::forward_io::VertexOutput`). Bevy's standard attribute
// locations (0-5) as its own mesh pipeline declares them; skinblend's attributes at 10-14 (see
// `attributes.rs`). The mesh pipeline sees a mesh without JOINT_INDEX / JOINT_WEIGHT, so Bevy's
// own skinning stays off and `world_from_local` is the mesh entity's transform.

#import bevy_pbr::{
    mesh_functions,
    forward_io::VertexOutput,
    view_transformations::position_world_to_clip,
}

struct SkinblendVertex {
    @builtin(instance_index) instance_index: u32,
    @location(0) position: vec3<f32>,
#ifdef VERTEX_NORMALS
    @location(1) normal: vec3<f32>,
#endif
#ifdef VERTEX_UVS_A
    @location(2) uv: vec2<f32>,
#endif
#ifdef VERTEX_UVS_B
    @location(3) uv_b: vec2<f32>,
#endif
#ifdef VERTEX_TANGENTS
    @location(4) tangent: vec4<f32>,
#endif
#ifdef VERTEX_COLORS
    @location(5) color: vec4<f32>,
#endif
    @location(10) joints0: vec4<u32>,
    @location(11) weights0: vec4<f32>,
#ifdef SKINBLEND_EIGHT_INFLUENCES
    @location(12) joints1: vec4<u32>,
    @location(13) weights1: vec4<f32>,
#endif
#ifdef SKINBLEND_ROTATION_CENTERS
    @location(14) center: vec4<f32>,
#endif
}

fn skinblend_influences(vertex: SkinblendVertex) -> SkinblendInfluences {
    let base = vec4<u32>(mesh_functions::get_tag(vertex.instance_index));
    var influences = SkinblendInfluences(vertex.joints0 + base, vertex.weights0, base, vec4<f32>(0.0), vec4<f32>(0.0));
#ifdef SKINBLEND_EIGHT_INFLUENCES
    influences.joints1 = vertex.joints1 + base;
    influences.weights1 = vertex.weights1;
#endif
#ifdef SKINBLEND_ROTATION_CENTERS
    influences.center = vertex.center;
#endif
    return influences;
}

@vertex
fn vertex(vertex: SkinblendVertex) -> VertexOutput {
    var out: VertexOutput;
    var normal = vec3<f32>(0.0, 0.0, 1.0);
#ifdef VERTEX_NORMALS
    normal = vertex.normal;
#endif
    var tangent = vec4<f32>(1.0, 0.0, 0.0, 1.0);
#ifdef VERTEX_TANGENTS
    tangent = vertex.tangent;
#endif
    let skinned = skinblend_skin(skinblend_influences(vertex), vertex.position, normal, tangent);
    let world_from_local = mesh_functions::get_world_from_local(vertex.instance_index);

    out.world_position = mesh_functions::mesh_position_local_to_world(world_from_local, vec4<f32>(skinned.position, 1.0));
    out.position = position_world_to_clip(out.world_position.xyz);
#ifdef VERTEX_NORMALS
    out.world_normal = mesh_functions::mesh_normal_local_to_world(skinned.normal, vertex.instance_index);
#endif
#ifdef VERTEX_UVS_A
    out.uv = vertex.uv;
#endif
#ifdef VERTEX_UVS_B
    out.uv_b = vertex.uv_b;
#endif
#ifdef VERTEX_TANGENTS
    out.world_tangent = mesh_functions::mesh_tangent_local_to_world(world_from_local, skinned.tangent, vertex.instance_index);
#endif
#ifdef VERTEX_COLORS
    out.color = vertex.color;
#endif
#ifdef VERTEX_OUTPUT_INSTANCE_INDEX
    out.instance_index = vertex.instance_index;
#endif
#ifdef VISIBILITY_RANGE_DITHER
    out.visibility_range_dither = mesh_functions::get_visibility_range_dither_level(vertex.instance_index, world_from_local[3]);
#endif
    return out;
}
