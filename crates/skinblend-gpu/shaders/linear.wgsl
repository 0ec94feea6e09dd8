// skinblend WGSL: linear blend skinning (LBS). Needs skinning.wgsl and a palette declared as
//     var<storage, read> skin_linear_palette: array<SkinAffine>;
// (one skin matrix per joint, rows; see `GpuLinearJoint` on the Rust side). The functions that
// apply a blended matrix (`skin_affine_point`, `skin_linear_normal`, `skin_linear_tangent`) are in
// skinning.wgsl: blended skinning applies one too.

// sum + weight * (joint's skin matrix).
fn skin_linear_add(sum: SkinAffine, joint: u32, weight: f32) -> SkinAffine {
    return skin_affine_add_scaled(sum, skin_linear_palette[joint], weight);
}

// The blended skin matrix of up to four influences (glTF JOINTS_0 / WEIGHTS_0), weights divided
// by their sum; zero-weight slots are skipped. The identity when the weights sum to zero (the
// vertex then stays in place, as on the CPU).
fn skin_linear_blend4(joints: vec4<u32>, weights: vec4<f32>) -> SkinAffine {
    let sum = weights.x + weights.y + weights.z + weights.w;
    // Below the smallest normal f32 the vertex is unweighted, as on the CPU (1 / sum would
    // overflow; GPUs may flush such sums to zero).
    if !(sum >= 1.17549435e-38) {
        return skin_affine_identity();
    }
    let scale = 1.0 / sum;
    var m = skin_affine_zero();
    for (var slot = 0u; slot < 4u; slot += 1u) {
        if weights[slot] > 0.0 {
            m = skin_linear_add(m, joints[slot], weights[slot] * scale);
        }
    }
    return m;
}
