// The DQS compute entry point (see compute.wgsl for the bindings).

fn skin_dual_quat_vertex(v: u32) {
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
    store_dual_quat_blend(v, blend);
}

@compute @workgroup_size(64)
fn skin_dual_quat_main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(local_invocation_index) local_index: u32) {
    if id.x < params.vertex_count {
        skin_dual_quat_vertex(id.x);
    }
    flush_counters(local_index);
}
