// skinblend-bevy: the vertex shader of `SkinblendMaterial` in every pass: the main pass (Bevy's
// forward and deferred-lighting inputs, `forward_io::VertexOutput`) and, under Bevy's
// `PREPASS_PIPELINE` def, the prepass, which Bevy also runs for shadow maps
// (`prepass_io::VertexOutput`): depth, normals, motion vectors and shadows see the mesh where
// the main pass draws it. Bevy's attribute locations as its mesh and prepass pipelines declare
// them; skinblend's at 10-15 (`SkinblendAttributes`, in `skin_vertex.wgsl`; `mesh_data.rs`
// names them). The mesh pipeline sees a mesh without JOINT_INDEX / JOINT_WEIGHT, so Bevy's own
// skinning stays off and `world_from_local` is the mesh entity's transform.
//
// In the prepass VERTEX_NORMALS and VERTEX_TANGENTS are only defined for a normal or deferred
// prepass, where `world_normal` and `world_tangent` exist.
//
// Motion vectors: the previous position is this frame's skinned position under last frame's
// mesh transform (the previous palette is not kept), so skinning itself adds no motion vector.

#ifdef PREPASS_PIPELINE
#import bevy_pbr::prepass_io::VertexOutput
#else
#import bevy_pbr::forward_io::VertexOutput
#endif
#import bevy_pbr::{
    mesh_functions,
    view_transformations::position_world_to_clip,
}

struct SkinblendVertex {
    @builtin(instance_index) instance_index: u32,
    @location(0) position: vec3<f32>,
#ifdef PREPASS_PIPELINE
#ifdef VERTEX_UVS_A
    @location(1) uv: vec2<f32>,
#endif
#ifdef VERTEX_UVS_B
    @location(2) uv_b: vec2<f32>,
#endif
#ifdef VERTEX_NORMALS
    @location(3) normal: vec3<f32>,
#endif
#ifdef VERTEX_COLORS
    @location(7) color: vec4<f32>,
#endif
#else // the main pass
#ifdef VERTEX_NORMALS
    @location(1) normal: vec3<f32>,
#endif
#ifdef VERTEX_UVS_A
    @location(2) uv: vec2<f32>,
#endif
#ifdef VERTEX_UVS_B
    @location(3) uv_b: vec2<f32>,
#endif
#ifdef VERTEX_COLORS
    @location(5) color: vec4<f32>,
#endif
#endif
#ifdef VERTEX_TANGENTS
    @location(4) tangent: vec4<f32>,
#endif
}

@vertex
fn vertex(vertex: SkinblendVertex, attributes: SkinblendAttributes) -> VertexOutput {
    var out: VertexOutput;
    var normal = vec3<f32>(0.0, 0.0, 1.0);
#ifdef VERTEX_NORMALS
    normal = vertex.normal;
#endif
    var tangent = vec4<f32>(1.0, 0.0, 0.0, 1.0);
#ifdef VERTEX_TANGENTS
    tangent = vertex.tangent;
#endif
    let skinned = skinblend_skin(skinblend_influences(attributes, mesh_functions::get_tag(vertex.instance_index)), vertex.position, normal, tangent);
    let world_from_local = mesh_functions::get_world_from_local(vertex.instance_index);

    out.world_position = mesh_functions::mesh_position_local_to_world(world_from_local, vec4<f32>(skinned.position, 1.0));
    out.position = position_world_to_clip(out.world_position.xyz);
#ifdef UNCLIPPED_DEPTH_ORTHO_EMULATION
    out.unclipped_depth = out.position.z;
    out.position.z = min(out.position.z, 1.0);
#endif
#ifdef VERTEX_NORMALS
    out.world_normal = mesh_functions::mesh_normal_local_to_world(skinned.normal, vertex.instance_index);
#endif
#ifdef VERTEX_TANGENTS
    out.world_tangent = mesh_functions::mesh_tangent_local_to_world(world_from_local, skinned.tangent, vertex.instance_index);
#endif
#ifdef VERTEX_UVS_A
    out.uv = vertex.uv;
#endif
#ifdef VERTEX_UVS_B
    out.uv_b = vertex.uv_b;
#endif
#ifdef VERTEX_COLORS
    out.color = vertex.color;
#endif
#ifdef PREPASS_PIPELINE
#ifdef MOTION_VECTOR_PREPASS
    let previous_world_from_local = mesh_functions::get_previous_world_from_local(vertex.instance_index);
    out.previous_world_position = mesh_functions::mesh_position_local_to_world(previous_world_from_local, vec4<f32>(skinned.position, 1.0));
#endif
#endif
#ifdef VERTEX_OUTPUT_INSTANCE_INDEX
    out.instance_index = vertex.instance_index;
#endif
#ifdef VISIBILITY_RANGE_DITHER
    out.visibility_range_dither = mesh_functions::get_visibility_range_dither_level(vertex.instance_index, world_from_local[3]);
#endif
    return out;
}
