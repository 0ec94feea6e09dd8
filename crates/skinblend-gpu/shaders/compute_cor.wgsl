// The CoR compute entry point (see compute.wgsl for the bindings; binding 9, the centers of
// rotation, is declared here because only this kernel reads it).

@group(0) @binding(9) var<storage, read> in_centers: array<vec4<f32>>;

fn skin_cor_vertex(v: u32) {
    let k = params.influences_per_vertex;
    let base = v * k;
    let sum = weight_sum(base, k);
    // Below the smallest normal f32 the vertex is unweighted, as on the CPU (1 / sum would
    // overflow; GPUs may flush such sums to zero).
    if !(sum >= 1.17549435e-38) {
        pass_through(v);
        return;
    }
    let pivot = pivot_slot(base, k);
    let pivot_joint = load_joint(base + pivot);
    let pivot_real = skin_cor_palette[pivot_joint].dual_quat.real;
    var blend = skin_dual_quat_begin();
    for (var slot = 0u; slot < k; slot += 1u) {
        let weight = in_weights[base + slot];
        if weight > 0.0 {
            skin_cor_add(&blend, load_joint(base + slot), weight, pivot_real, slot == pivot);
        }
    }
    let scale = weight_scale(sum);
    if blend.has_residual {
        for (var slot = 0u; slot < k; slot += 1u) {
            let weight = in_weights[base + slot];
            if weight > 0.0 {
                skin_cor_add_residual(&blend, load_joint(base + slot), weight * scale);
            }
        }
    }
    skin_cor_finish(&blend, pivot_joint);
    // Without a center (w = 0) the vertex keeps the DQS blend.
    let center = in_centers[v];
    if center.w != 0.0 {
        var linear = skin_affine_zero();
        for (var slot = 0u; slot < k; slot += 1u) {
            let weight = in_weights[base + slot];
            if weight > 0.0 {
                linear = skin_cor_add_linear(linear, load_joint(base + slot), weight * scale);
            }
        }
        skin_cor_place(&blend, linear, center.xyz);
    }
    store_dual_quat_blend(v, blend);
}

@compute @workgroup_size(64)
fn skin_cor_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local_index: u32) {
    if id.x < params.vertex_count {
        skin_cor_vertex(id.x);
    }
    flush_counters(local_index);
}
