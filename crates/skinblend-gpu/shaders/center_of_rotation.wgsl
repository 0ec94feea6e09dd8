// skinblend WGSL: skinning with optimized centers of rotation (CoR, Le & Hodgins 2016).
// Needs skinning.wgsl and a palette declared as
//     var<storage, read> skin_cor_palette: array<SkinCorJoint>;
// (per joint the DQS entry and the LBS skin matrix; see `GpuCorJoint` on the Rust side), and a
// center per vertex as vec4: xyz the center of rotation p* in bind space, w = 1 when the vertex
// has one, 0 when it has none (the Rust side's `gpu_rotation_centers` writes them; never NaN).
//
// A vertex turns by the DQS blend's rotation R (pivot = heaviest influence, sign alignment,
// normalization) after the blended residual S, about its center, which goes where LBS sends
// it: v' = R S(v) + LBS(p*) - R S(p*). The result is a `SkinDualQuatBlend` whose dual part
// carries that translation, so `skin_dual_quat_blend_point`, `_normal` and `_tangent` apply it
// (normals R S^-T n, tangents R S t). A vertex without a center is skinned by DQS.

// As `skin_dual_quat_add`, from the CoR palette.
fn skin_cor_add(blend: ptr<function, SkinDualQuatBlend>, joint: u32, weight: f32, pivot_real: vec4<f32>, is_pivot: bool) {
    let real = skin_cor_palette[joint].dual_quat.real;
    let dual = skin_cor_palette[joint].dual_quat.dual;
    let rigid = skin_cor_palette[joint].dual_quat.rigid;
    skin_dual_quat_accumulate(blend, real, dual, rigid, weight, pivot_real, is_pivot);
}

// As `skin_dual_quat_add_residual`, from the CoR palette.
fn skin_cor_add_residual(blend: ptr<function, SkinDualQuatBlend>, joint: u32, scaled_weight: f32) {
    (*blend).residual = skin_affine_add_scaled((*blend).residual, skin_cor_palette[joint].dual_quat.residual, scaled_weight);
}

// As `skin_dual_quat_finish`, from the CoR palette.
fn skin_cor_finish(blend: ptr<function, SkinDualQuatBlend>, pivot_joint: u32) {
    skin_dual_quat_normalize(blend, skin_cor_palette[pivot_joint].dual_quat.real, skin_cor_palette[pivot_joint].dual_quat.dual);
}

// sum + weight * (joint's skin matrix): the LBS blend that places the center.
fn skin_cor_add_linear(sum: SkinAffine, joint: u32, scaled_weight: f32) -> SkinAffine {
    return skin_affine_add_scaled(sum, skin_cor_palette[joint].linear, scaled_weight);
}

// Replaces the finished blend's translation so that `center` goes where `linear` (the LBS blend
// of the same influences, with the same renormalized weights) sends it:
// t = LBS(p*) - R S(p*), S the blended residual when the blend has one.
fn skin_cor_place(blend: ptr<function, SkinDualQuatBlend>, linear: SkinAffine, center: vec3<f32>) {
    var residual_center = center;
    if (*blend).has_residual {
        residual_center = skin_affine_point((*blend).residual, center);
    }
    let t = skin_affine_point(linear, center) - skin_quat_rotate((*blend).real, residual_center);
    (*blend).dual = skin_dual_quat_dual_part((*blend).real, t);
}

// The CoR blend of up to four influences (glTF JOINTS_0 / WEIGHTS_0) and the vertex's center
// (w = 1: has one; 0: skinned by DQS), weights divided by their sum, as the CPU kernel. The
// identity when the weights sum to zero. Apply it with `skin_dual_quat_blend_point`,
// `skin_dual_quat_blend_normal` and `skin_dual_quat_blend_tangent`.
fn skin_cor_blend4(joints: vec4<u32>, weights: vec4<f32>, center: vec4<f32>) -> SkinDualQuatBlend {
    var blend = skin_dual_quat_begin();
    let sum = weights.x + weights.y + weights.z + weights.w;
    // Below the smallest normal f32 the vertex is unweighted, as on the CPU (1 / sum would
    // overflow; GPUs may flush such sums to zero).
    if !(sum >= 1.17549435e-38) {
        blend.real = vec4<f32>(0.0, 0.0, 0.0, 1.0);
        return blend;
    }
    let pivot = skin_pivot4(weights);
    let pivot_real = skin_cor_palette[joints[pivot]].dual_quat.real;
    for (var slot = 0u; slot < 4u; slot += 1u) {
        if weights[slot] > 0.0 {
            skin_cor_add(&blend, joints[slot], weights[slot], pivot_real, slot == pivot);
        }
    }
    let scale = 1.0 / sum;
    if blend.has_residual {
        for (var slot = 0u; slot < 4u; slot += 1u) {
            if weights[slot] > 0.0 {
                skin_cor_add_residual(&blend, joints[slot], weights[slot] * scale);
            }
        }
    }
    skin_cor_finish(&blend, joints[pivot]);
    if center.w != 0.0 {
        var linear = skin_affine_zero();
        for (var slot = 0u; slot < 4u; slot += 1u) {
            if weights[slot] > 0.0 {
                linear = skin_cor_add_linear(linear, joints[slot], weights[slot] * scale);
            }
        }
        skin_cor_place(&blend, linear, center.xyz);
    }
    return blend;
}
