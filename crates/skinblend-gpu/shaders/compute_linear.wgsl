// The LBS compute entry point (see compute.wgsl for the bindings).

fn skin_linear_vertex(v: u32) {
    let k = params.influences_per_vertex;
    let base = v * k;
    let sum = weight_sum(base, k);
    // Below the smallest normal f32 the vertex is unweighted, as on the CPU (1 / sum would
    // overflow; GPUs may flush such sums to zero).
    if !(sum >= 1.17549435e-38) {
        pass_through(v);
        return;
    }
    let scale = weight_scale(sum);
    var m = skin_affine_zero();
    for (var slot = 0u; slot < k; slot += 1u) {
        let weight = in_weights[base + slot];
        if weight > 0.0 {
            m = skin_linear_add(m, load_joint(base + slot), weight * scale);
        }
    }
    let p = skin_affine_point(m, load_position(v));
    var n = vec3<f32>(0.0);
    if has_flag(SKIN_FLAG_NORMALS) {
        let normal_matrix = skin_normal_matrix(skin_affine_matrix3(m));
        if normal_matrix.singular {
            atomicAdd(&group_singular, 1u);
        }
        let source = load_normal(v);
        n = skin_normalize_or(normal_matrix.matrix * source, source);
    }
    var t = vec4<f32>(0.0);
    if has_flag(SKIN_FLAG_TANGENTS) {
        t = skin_linear_tangent(m, in_tangents[v]);
    }
    store_vertex(v, p, n, t);
}

@compute @workgroup_size(64)
fn skin_linear_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local_index: u32) {
    if id.x < params.vertex_count {
        skin_linear_vertex(id.x);
    }
    flush_counters(local_index);
}
