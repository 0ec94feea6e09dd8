// The blended compute entry point (see compute.wgsl for the bindings; binding 9, here the
// per-vertex blend values, is declared here because only this kernel reads them as such: the
// blended kernel's bind groups put the mesh's blend values where CoR's put its centers).

@group(0) @binding(9) var<storage, read> in_blend_values: array<f32>;

fn skin_blended_vertex(v: u32) {
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
    var b = skin_blended_begin(in_blend_values[v]);
    // LBS where b < 1.
    if skin_blended_uses_linear(b) {
        var linear = skin_affine_zero();
        for (var slot = 0u; slot < k; slot += 1u) {
            let weight = in_weights[base + slot];
            if weight > 0.0 {
                linear = skin_blended_add_linear(linear, load_joint(base + slot), weight * scale);
            }
        }
        b.linear = linear;
    }
    // DQS where b > 0: pivot, sign alignment (flips counted), residual, normalization.
    if skin_blended_uses_dual_quat(b) {
        let pivot = pivot_slot(base, k);
        let pivot_joint = load_joint(base + pivot);
        let pivot_real = skin_blended_palette[pivot_joint].dual_quat.real;
        var dq = skin_dual_quat_begin();
        for (var slot = 0u; slot < k; slot += 1u) {
            let weight = in_weights[base + slot];
            if weight > 0.0 {
                skin_blended_add(&dq, load_joint(base + slot), weight, pivot_real, slot == pivot);
            }
        }
        if dq.has_residual {
            for (var slot = 0u; slot < k; slot += 1u) {
                let weight = in_weights[base + slot];
                if weight > 0.0 {
                    skin_blended_add_residual(&dq, load_joint(base + slot), weight * scale);
                }
            }
        }
        skin_blended_finish(&dq, pivot_joint);
        if dq.sign_flips > 0u {
            atomicAdd(&group_sign_flips, dq.sign_flips);
        }
        b.dual_quat = dq;
    }
    let p = skin_blended_point(b, load_position(v));
    var n = vec3<f32>(0.0);
    if has_flag(SKIN_FLAG_NORMALS) {
        let source = load_normal(v);
        let normal = skin_blended_normal_direction(b, source);
        // Each blend evaluated counts its own singular normal matrix, as on the CPU.
        let singular = u32(normal.linear_singular) + u32(normal.dual_quat_singular);
        if singular > 0u {
            atomicAdd(&group_singular, singular);
        }
        n = skin_normalize_or(normal.direction, source);
    }
    var t = vec4<f32>(0.0);
    if has_flag(SKIN_FLAG_TANGENTS) {
        t = skin_blended_tangent(b, in_tangents[v]);
    }
    store_vertex(v, p, n, t);
}

@compute @workgroup_size(64)
fn skin_blended_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local_index: u32) {
    if id.x < params.vertex_count {
        skin_blended_vertex(id.x);
    }
    flush_counters(local_index);
}
