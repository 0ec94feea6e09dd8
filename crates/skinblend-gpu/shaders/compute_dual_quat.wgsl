// The DQS compute entry point (see compute.wgsl for the bindings).

fn skin_dual_quat_vertex(v: u32) {
    let k = params.influences_per_vertex;
    let base = v * k;
    let sum = weight_sum(base, k);
    if !(sum > 0.0) {
        pass_through(v);
        return;
    }
    // Pivot: the heaviest influence; `>` keeps the lowest slot on ties.
    var pivot = 0u;
    var pivot_weight = in_weights[base];
    for (var slot = 1u; slot < k; slot += 1u) {
        let weight = in_weights[base + slot];
        if weight > pivot_weight {
            pivot = slot;
            pivot_weight = weight;
        }
    }
    let pivot_joint = load_joint(base + pivot);
    let pivot_real = skin_dual_quat_palette[pivot_joint].real;
    var blend = skin_dual_quat_begin();
    for (var slot = 0u; slot < k; slot += 1u) {
        let weight = in_weights[base + slot];
        if weight > 0.0 {
            skin_dual_quat_add(&blend, load_joint(base + slot), weight, pivot_real, slot == pivot);
        }
    }
    if blend.has_residual {
        let scale = weight_scale(sum);
        for (var slot = 0u; slot < k; slot += 1u) {
            let weight = in_weights[base + slot];
            if weight > 0.0 {
                skin_dual_quat_add_residual(&blend, load_joint(base + slot), weight * scale);
            }
        }
    }
    skin_dual_quat_finish(&blend, pivot_joint);
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

@compute @workgroup_size(64)
fn skin_dual_quat_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local_index: u32) {
    if id.x < params.vertex_count {
        skin_dual_quat_vertex(id.x);
    }
    flush_counters(local_index);
}
