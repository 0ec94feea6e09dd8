// skinblend WGSL: dual quaternion skinning (DQS) with the residual for scale, shear and mirror.
// Needs skinning.wgsl and a palette declared as
//     var<storage, read> skin_dual_quat_palette: array<SkinDualQuatJoint>;
// prepared on the CPU by skinblend's split (see `GpuDualQuatJoint` on the Rust side).

// A vertex's blend in progress, then finished: the sign-aligned sum of dual quaternions
// (normalized by `skin_dual_quat_finish`), the linear blend of the residual maps when any
// influencing joint is non-rigid, and how many influences were negated to agree with the pivot.
struct SkinDualQuatBlend {
    real: vec4<f32>,
    dual: vec4<f32>,
    residual: SkinAffine,
    has_residual: bool,
    sign_flips: u32,
}

fn skin_dual_quat_begin() -> SkinDualQuatBlend {
    return SkinDualQuatBlend(vec4<f32>(0.0), vec4<f32>(0.0), skin_affine_zero(), false, 0u);
}

// Adds one influence (call only for weight > 0). Its dual quaternion is negated when its real
// part has a negative dot with the pivot's (`pivot_real`, the heaviest influence's); a negation
// of any slot but the pivot's own is counted in `sign_flips`.
fn skin_dual_quat_add(blend: ptr<function, SkinDualQuatBlend>, joint: u32, weight: f32, pivot_real: vec4<f32>, is_pivot: bool) {
    let real = skin_dual_quat_palette[joint].real;
    let dual = skin_dual_quat_palette[joint].dual;
    var signed = weight;
    if dot(real, pivot_real) < 0.0 {
        signed = -weight;
        if !is_pivot {
            (*blend).sign_flips += 1u;
        }
    }
    (*blend).real += real * signed;
    (*blend).dual += dual * signed;
    if skin_dual_quat_palette[joint].rigid == 0u {
        (*blend).has_residual = true;
    }
}

// Adds one influence's residual map with its (renormalized) weight. Call for every influence
// with weight > 0, only when `has_residual` is set after all `skin_dual_quat_add` calls.
fn skin_dual_quat_add_residual(blend: ptr<function, SkinDualQuatBlend>, joint: u32, scaled_weight: f32) {
    (*blend).residual = skin_affine_add_scaled((*blend).residual, skin_dual_quat_palette[joint].residual, scaled_weight);
}

// Normalizes the sum by the length of its real part; falls back to the pivot's own dual
// quaternion if that length is zero (which rounding alone could cause).
fn skin_dual_quat_finish(blend: ptr<function, SkinDualQuatBlend>, pivot_joint: u32) {
    let len = length((*blend).real);
    if len > 0.0 && len <= SKIN_F32_MAX {
        let inverse = 1.0 / len;
        (*blend).real *= inverse;
        (*blend).dual *= inverse;
    } else {
        (*blend).real = skin_dual_quat_palette[pivot_joint].real;
        (*blend).dual = skin_dual_quat_palette[pivot_joint].dual;
    }
}

// The blend of up to four influences (glTF JOINTS_0 / WEIGHTS_0): pivot, sign alignment,
// normalization and residual, as the CPU kernel. The identity when the weights sum to zero.
fn skin_dual_quat_blend4(joints: vec4<u32>, weights: vec4<f32>) -> SkinDualQuatBlend {
    var blend = skin_dual_quat_begin();
    let sum = weights.x + weights.y + weights.z + weights.w;
    if !(sum > 0.0) {
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

// A point: the blended residual first (when any), then the blended rigid motion.
fn skin_dual_quat_blend_point(blend: SkinDualQuatBlend, p: vec3<f32>) -> vec3<f32> {
    var q = p;
    if blend.has_residual {
        q = skin_affine_point(blend.residual, p);
    }
    return skin_dual_quat_point(blend.real, blend.dual, q);
}

// The normal direction R (S^-T n), unnormalized, and whether S was singular.
struct SkinDirection {
    direction: vec3<f32>,
    singular: bool,
}

fn skin_dual_quat_blend_normal_direction(blend: SkinDualQuatBlend, n: vec3<f32>) -> SkinDirection {
    var m = n;
    var singular = false;
    if blend.has_residual {
        let normal_matrix = skin_normal_matrix(skin_affine_matrix3(blend.residual));
        m = normal_matrix.matrix * n;
        singular = normal_matrix.singular;
    }
    return SkinDirection(skin_quat_rotate(blend.real, m), singular);
}

// A unit normal: R (S^-T n) normalized; `n` itself when that direction is zero.
fn skin_dual_quat_blend_normal(blend: SkinDualQuatBlend, n: vec3<f32>) -> vec3<f32> {
    return skin_normalize_or(skin_dual_quat_blend_normal_direction(blend, n).direction, n);
}

// A tangent (xyz direction, w handedness): R (S t) normalized; w flips where S mirrors.
fn skin_dual_quat_blend_tangent(blend: SkinDualQuatBlend, t: vec4<f32>) -> vec4<f32> {
    var d = t.xyz;
    var w = t.w;
    if blend.has_residual {
        let s = skin_affine_matrix3(blend.residual);
        d = s * d;
        if skin_determinant(s) < 0.0 {
            w = -w;
        }
    }
    return vec4<f32>(skin_normalize_or(skin_quat_rotate(blend.real, d), t.xyz), w);
}
