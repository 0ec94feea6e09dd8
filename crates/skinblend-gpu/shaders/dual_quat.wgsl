// skinblend WGSL: dual quaternion skinning (DQS) with the residual for scale, shear and mirror.
// Needs skinning.wgsl (which holds `SkinDualQuatBlend` and the functions that apply it) and a
// palette declared as
//     var<storage, read> skin_dual_quat_palette: array<SkinDualQuatJoint>;
// prepared on the CPU by skinblend's split (see `GpuDualQuatJoint` on the Rust side).

// Adds one influence (call only for weight > 0). Its dual quaternion is negated when its real
// part has a negative dot with the pivot's (`pivot_real`, the heaviest influence's); a negation
// of any slot but the pivot's own is counted in `sign_flips`.
fn skin_dual_quat_add(blend: ptr<function, SkinDualQuatBlend>, joint: u32, weight: f32, pivot_real: vec4<f32>, is_pivot: bool) {
    let real = skin_dual_quat_palette[joint].real;
    let dual = skin_dual_quat_palette[joint].dual;
    let rigid = skin_dual_quat_palette[joint].rigid;
    skin_dual_quat_accumulate(blend, real, dual, rigid, weight, pivot_real, is_pivot);
}

// Adds one influence's residual map with its (renormalized) weight. Call for every influence
// with weight > 0, only when `has_residual` is set after all `skin_dual_quat_add` calls.
fn skin_dual_quat_add_residual(blend: ptr<function, SkinDualQuatBlend>, joint: u32, scaled_weight: f32) {
    (*blend).residual = skin_affine_add_scaled((*blend).residual, skin_dual_quat_palette[joint].residual, scaled_weight);
}

// Normalizes the sum by the length of its real part; falls back to the pivot's own dual
// quaternion if that length is zero (which rounding alone could cause).
fn skin_dual_quat_finish(blend: ptr<function, SkinDualQuatBlend>, pivot_joint: u32) {
    skin_dual_quat_normalize(blend, skin_dual_quat_palette[pivot_joint].real, skin_dual_quat_palette[pivot_joint].dual);
}

// The blend of up to four influences (glTF JOINTS_0 / WEIGHTS_0): pivot, sign alignment,
// normalization and residual, as the CPU kernel. The identity when the weights sum to zero.
fn skin_dual_quat_blend4(joints: vec4<u32>, weights: vec4<f32>) -> SkinDualQuatBlend {
    var blend = skin_dual_quat_begin();
    let sum = weights.x + weights.y + weights.z + weights.w;
    // Below the smallest normal f32 the vertex is unweighted, as on the CPU (1 / sum would
    // overflow; GPUs may flush such sums to zero).
    if !(sum >= 1.17549435e-38) {
        blend.real = vec4<f32>(0.0, 0.0, 0.0, 1.0);
        return blend;
    }
    let pivot = skin_pivot4(weights);
    let pivot_real = skin_dual_quat_palette[joints[pivot]].real;
    for (var slot = 0u; slot < 4u; slot += 1u) {
        if weights[slot] > 0.0 {
            skin_dual_quat_add(&blend, joints[slot], weights[slot], pivot_real, slot == pivot);
        }
    }
    if blend.has_residual {
        let scale = 1.0 / sum;
        for (var slot = 0u; slot < 4u; slot += 1u) {
            if weights[slot] > 0.0 {
                skin_dual_quat_add_residual(&blend, joints[slot], weights[slot] * scale);
            }
        }
    }
    skin_dual_quat_finish(&blend, joints[pivot]);
    return blend;
}
