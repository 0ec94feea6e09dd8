// skinblend compute kernels: one invocation skins one vertex of a dispatch chunk (any number k
// of influences), writing an interleaved vertex buffer. Included after skinning.wgsl, the
// method's file, and the method's palette declaration at @group(0) @binding(8).
//
// Binding layout (@group(0)), all ranges starting at the chunk's first vertex:
//   0 uniform  SkinParams
//   1 storage  positions, 3 f32 per vertex (tightly packed)
//   2 storage  normals, 3 f32 per vertex (a 16-byte dummy when the mesh has none)
//   3 storage  tangents, vec4 per vertex, w = handedness (a dummy when the mesh has none)
//   4 storage  joint indices, u16, two per u32 word (low half first), k per vertex
//   5 storage  weights, f32, k per vertex
//   6 storage  read_write output: per vertex `output_stride` f32: position (3), then normal (3)
//              when the mesh has normals, then tangent (4) when it has tangents
//   7 storage  read_write counters (atomics, the whole frame)
//   8 storage  the palette (array<SkinAffine>, array<SkinDualQuatJoint> or, for CoR and
//              blended, array<SkinCorJoint>)
//   9 storage  the method's per-vertex extra (in the layout only where the device has 9 storage
//              buffers per stage; declared by the kernel that reads it):
//              CoR (compute_cor.wgsl): the centers of rotation, vec4 per vertex (xyz the
//              center, w = 1 has one / 0 none; a dummy when the mesh has none);
//              blended (compute_blended.wgsl, its own bind groups): the blend values, f32 per
//              vertex (a uniform value repeated)

struct SkinParams {
    vertex_count: u32,
    influences_per_vertex: u32,
    flags: u32,
    output_stride: u32,
}

const SKIN_FLAG_NORMALS: u32 = 1u;
const SKIN_FLAG_TANGENTS: u32 = 2u;
const SKIN_FLAG_RENORMALIZE: u32 = 4u;

struct SkinCounters {
    singular_normal_matrices: atomic<u32>,
    sign_flips: atomic<u32>,
    unweighted_vertices: atomic<u32>,
}

@group(0) @binding(0) var<uniform> params: SkinParams;
@group(0) @binding(1) var<storage, read> in_positions: array<f32>;
@group(0) @binding(2) var<storage, read> in_normals: array<f32>;
@group(0) @binding(3) var<storage, read> in_tangents: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> in_joints: array<u32>;
@group(0) @binding(5) var<storage, read> in_weights: array<f32>;
@group(0) @binding(6) var<storage, read_write> out_vertices: array<f32>;
@group(0) @binding(7) var<storage, read_write> counters: SkinCounters;

// Per-workgroup partial counts, added to `counters` once per workgroup (zero-initialized).
var<workgroup> group_singular: atomic<u32>;
var<workgroup> group_sign_flips: atomic<u32>;
var<workgroup> group_unweighted: atomic<u32>;

fn has_flag(flag: u32) -> bool {
    return (params.flags & flag) != 0u;
}

fn load_position(v: u32) -> vec3<f32> {
    return vec3<f32>(in_positions[3u * v], in_positions[3u * v + 1u], in_positions[3u * v + 2u]);
}

fn load_normal(v: u32) -> vec3<f32> {
    return vec3<f32>(in_normals[3u * v], in_normals[3u * v + 1u], in_normals[3u * v + 2u]);
}

// Joint index of flat influence slot `i` (vertex * k + slot).
fn load_joint(i: u32) -> u32 {
    let word = in_joints[i >> 1u];
    return (word >> ((i & 1u) * 16u)) & 0xffffu;
}

fn store_vertex(v: u32, p: vec3<f32>, n: vec3<f32>, t: vec4<f32>) {
    var o = v * params.output_stride;
    out_vertices[o] = p.x;
    out_vertices[o + 1u] = p.y;
    out_vertices[o + 2u] = p.z;
    o += 3u;
    if has_flag(SKIN_FLAG_NORMALS) {
        out_vertices[o] = n.x;
        out_vertices[o + 1u] = n.y;
        out_vertices[o + 2u] = n.z;
        o += 3u;
    }
    if has_flag(SKIN_FLAG_TANGENTS) {
        out_vertices[o] = t.x;
        out_vertices[o + 1u] = t.y;
        out_vertices[o + 2u] = t.z;
        out_vertices[o + 3u] = t.w;
    }
}

fn load_normal_or_zero(v: u32) -> vec3<f32> {
    if has_flag(SKIN_FLAG_NORMALS) {
        return load_normal(v);
    }
    return vec3<f32>(0.0);
}

fn load_tangent_or_zero(v: u32) -> vec4<f32> {
    if has_flag(SKIN_FLAG_TANGENTS) {
        return in_tangents[v];
    }
    return vec4<f32>(0.0);
}

// The weights' sum in slot order, as the CPU sums them; a vertex whose sum is zero is passed
// through unchanged and counted.
fn weight_sum(base: u32, k: u32) -> f32 {
    var sum = 0.0;
    for (var slot = 0u; slot < k; slot += 1u) {
        sum += in_weights[base + slot];
    }
    return sum;
}

fn pass_through(v: u32) {
    atomicAdd(&group_unweighted, 1u);
    store_vertex(v, load_position(v), load_normal_or_zero(v), load_tangent_or_zero(v));
}

// The factor that renormalizes the weights (1 when the option is off).
fn weight_scale(sum: f32) -> f32 {
    if has_flag(SKIN_FLAG_RENORMALIZE) {
        return 1.0 / sum;
    }
    return 1.0;
}

fn flush_counters(local_index: u32) {
    workgroupBarrier();
    if local_index == 0u {
        let singular = atomicLoad(&group_singular);
        if singular > 0u {
            atomicAdd(&counters.singular_normal_matrices, singular);
        }
        let flips = atomicLoad(&group_sign_flips);
        if flips > 0u {
            atomicAdd(&counters.sign_flips, flips);
        }
        let unweighted = atomicLoad(&group_unweighted);
        if unweighted > 0u {
            atomicAdd(&counters.unweighted_vertices, unweighted);
        }
    }
}

// The slot of the heaviest influence of the vertex at `base`; `>` keeps the lowest slot on ties.
fn pivot_slot(base: u32, k: u32) -> u32 {
    var pivot = 0u;
    var pivot_weight = in_weights[base];
    for (var slot = 1u; slot < k; slot += 1u) {
        let weight = in_weights[base + slot];
        if weight > pivot_weight {
            pivot = slot;
            pivot_weight = weight;
        }
    }
    return pivot;
}

// Counts the blend's sign flips, applies it to vertex `v` (point, normal with its singular
// count, tangent) and stores the result: the common tail of DQS and CoR.
fn store_dual_quat_blend(v: u32, blend: SkinDualQuatBlend) {
    if blend.sign_flips > 0u {
        atomicAdd(&group_sign_flips, blend.sign_flips);
    }
    let p = skin_dual_quat_blend_point(blend, load_position(v));
    var n = vec3<f32>(0.0);
    if has_flag(SKIN_FLAG_NORMALS) {
        let source = load_normal(v);
        let normal = skin_dual_quat_blend_normal_direction(blend, source);
        if normal.singular {
            atomicAdd(&group_singular, 1u);
        }
        n = skin_normalize_or(normal.direction, source);
    }
    var t = vec4<f32>(0.0);
    if has_flag(SKIN_FLAG_TANGENTS) {
        t = skin_dual_quat_blend_tangent(blend, in_tangents[v]);
    }
    store_vertex(v, p, n, t);
}
