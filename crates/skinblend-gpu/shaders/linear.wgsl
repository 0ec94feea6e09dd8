// skinblend WGSL: linear blend skinning (LBS). Needs skinning.wgsl and a palette declared as
//     var<storage, read> skin_linear_palette: array<SkinAffine>;
// (one skin matrix per joint, rows; see `GpuLinearJoint` on the Rust side).

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

// A normal under a blended skin matrix: the inverse transpose of its 3x3 (through the cofactor,
// so a singular blend gives no NaN), normalized; `n` itself when that direction is zero.
fn skin_linear_normal(m: SkinAffine, n: vec3<f32>) -> vec3<f32> {
    let normal_matrix = skin_normal_matrix(skin_affine_matrix3(m));
    return skin_normalize_or(normal_matrix.matrix * n, n);
}

// A tangent (xyz direction, w handedness) under a blended skin matrix: the 3x3 applied and
// normalized; w flips where the 3x3 mirrors (negative determinant).
fn skin_linear_tangent(m: SkinAffine, t: vec4<f32>) -> vec4<f32> {
    let a = skin_affine_matrix3(m);
    let direction = skin_normalize_or(a * t.xyz, t.xyz);
    var w = t.w;
    if skin_determinant(a) < 0.0 {
        w = -w;
    }
    return vec4<f32>(direction, w);
}
