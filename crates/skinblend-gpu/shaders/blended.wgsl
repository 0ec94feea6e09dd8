// skinblend WGSL: blended skinning, the per-vertex blend of the LBS and DQS results (Maya's
// "weight blended", Houdini's Bone Deform with a blend attribute). Needs skinning.wgsl and a
// palette declared as
//     var<storage, read> skin_blended_palette: array<SkinCorJoint>;
// (per joint the DQS entry and the LBS skin matrix, the layout CoR uses; see `GpuCorJoint` on
// the Rust side), and a blend value per vertex: a f32 in [0, 1], 0 = LBS, 1 = DQS (glTF
// attribute _SKINBLEND_DQ_BLEND).
//
// A vertex with blend value b goes to (1 - b) LBS(v) + b DQS(v). Its normal and tangent
// direction interpolate the two methods' unit results and are renormalized; the tangent's
// handedness is LBS's where b < 0.5, else DQS's. At b = 0 only LBS is evaluated and at b = 1
// only DQS, so such a vertex is that method's result exactly.

// A vertex's two blends and its blend value: `linear` is the LBS blend (unused when b = 1),
// `dual_quat` the DQS blend (unused when b = 0).
struct SkinBlended {
    linear: SkinAffine,
    dual_quat: SkinDualQuatBlend,
    blend: f32,
}

// sum + weight * (joint's skin matrix): the LBS blend.
fn skin_blended_add_linear(sum: SkinAffine, joint: u32, scaled_weight: f32) -> SkinAffine {
    return skin_affine_add_scaled(sum, skin_blended_palette[joint].linear, scaled_weight);
}

// As `skin_dual_quat_add`, from the blended palette.
fn skin_blended_add(blend: ptr<function, SkinDualQuatBlend>, joint: u32, weight: f32, pivot_real: vec4<f32>, is_pivot: bool) {
    let real = skin_blended_palette[joint].dual_quat.real;
    let dual = skin_blended_palette[joint].dual_quat.dual;
    let rigid = skin_blended_palette[joint].dual_quat.rigid;
    skin_dual_quat_accumulate(blend, real, dual, rigid, weight, pivot_real, is_pivot);
}

// As `skin_dual_quat_add_residual`, from the blended palette.
fn skin_blended_add_residual(blend: ptr<function, SkinDualQuatBlend>, joint: u32, scaled_weight: f32) {
    (*blend).residual = skin_affine_add_scaled((*blend).residual, skin_blended_palette[joint].dual_quat.residual, scaled_weight);
}

// As `skin_dual_quat_finish`, from the blended palette.
fn skin_blended_finish(blend: ptr<function, SkinDualQuatBlend>, pivot_joint: u32) {
    skin_dual_quat_normalize(blend, skin_blended_palette[pivot_joint].dual_quat.real, skin_blended_palette[pivot_joint].dual_quat.dual);
}

// The start of a vertex's blended skinning with blend value `blend`: both blends empty (the
// DQS one's real part the identity, for a vertex that never adds to it).
fn skin_blended_begin(blend: f32) -> SkinBlended {
    var b = SkinBlended(skin_affine_zero(), skin_dual_quat_begin(), blend);
    b.dual_quat.real = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    return b;
}

// Whether the vertex needs the LBS blend (b < 1) and the DQS blend (b > 0).
fn skin_blended_uses_linear(b: SkinBlended) -> bool {
    return b.blend < 1.0;
}

fn skin_blended_uses_dual_quat(b: SkinBlended) -> bool {
    return b.blend > 0.0;
}

// The blends of up to four influences (glTF JOINTS_0 / WEIGHTS_0) for blend value `blend`,
// weights divided by their sum, as the CPU kernel: LBS where b < 1, DQS (pivot, sign
// alignment, normalization, residual) where b > 0. The identity when the weights sum to zero.
// Apply it with `skin_blended_point`, `skin_blended_normal` and `skin_blended_tangent`.
fn skin_blended_blend4(joints: vec4<u32>, weights: vec4<f32>, blend: f32) -> SkinBlended {
    var b = skin_blended_begin(blend);
    let sum = weights.x + weights.y + weights.z + weights.w;
    // Below the smallest normal f32 the vertex is unweighted, as on the CPU (1 / sum would
    // overflow; GPUs may flush such sums to zero).
    if !(sum >= 1.17549435e-38) {
        b.linear = skin_affine_identity();
        return b;
    }
    let scale = 1.0 / sum;
    if skin_blended_uses_linear(b) {
        for (var slot = 0u; slot < 4u; slot += 1u) {
            if weights[slot] > 0.0 {
                b.linear = skin_blended_add_linear(b.linear, joints[slot], weights[slot] * scale);
            }
        }
    }
    if skin_blended_uses_dual_quat(b) {
        var dq = skin_dual_quat_begin();
        let pivot = skin_pivot4(weights);
        let pivot_real = skin_blended_palette[joints[pivot]].dual_quat.real;
        for (var slot = 0u; slot < 4u; slot += 1u) {
            if weights[slot] > 0.0 {
                skin_blended_add(&dq, joints[slot], weights[slot], pivot_real, slot == pivot);
            }
        }
        if dq.has_residual {
            for (var slot = 0u; slot < 4u; slot += 1u) {
                if weights[slot] > 0.0 {
                    skin_blended_add_residual(&dq, joints[slot], weights[slot] * scale);
                }
            }
        }
        skin_blended_finish(&dq, joints[pivot]);
        b.dual_quat = dq;
    }
    return b;
}

// A point: LBS's where b = 0, DQS's where b = 1, else (1 - b) LBS(p) + b DQS(p).
fn skin_blended_point(b: SkinBlended, p: vec3<f32>) -> vec3<f32> {
    if !skin_blended_uses_dual_quat(b) {
        return skin_affine_point(b.linear, p);
    }
    let from_dual_quat = skin_dual_quat_blend_point(b.dual_quat, p);
    if !skin_blended_uses_linear(b) {
        return from_dual_quat;
    }
    return mix(skin_affine_point(b.linear, p), from_dual_quat, b.blend);
}

// The normal direction before the final normalization, and whether a normal matrix was
// singular (LBS's blended 3x3, DQS's blended residual; both where b is strictly between).
struct SkinBlendedNormal {
    direction: vec3<f32>,
    linear_singular: bool,
    dual_quat_singular: bool,
}

fn skin_blended_normal_direction(b: SkinBlended, n: vec3<f32>) -> SkinBlendedNormal {
    var out = SkinBlendedNormal(n, false, false);
    var from_linear = n;
    if skin_blended_uses_linear(b) {
        let normal_matrix = skin_normal_matrix(skin_affine_matrix3(b.linear));
        out.linear_singular = normal_matrix.singular;
        from_linear = normal_matrix.matrix * n;
        out.direction = from_linear;
    }
    if skin_blended_uses_dual_quat(b) {
        let normal = skin_dual_quat_blend_normal_direction(b.dual_quat, n);
        out.dual_quat_singular = normal.singular;
        out.direction = normal.direction;
        if skin_blended_uses_linear(b) {
            out.direction = mix(skin_normalize_or(from_linear, n), skin_normalize_or(normal.direction, n), b.blend);
        }
    }
    return out;
}

// A unit normal: each method's unit normal, interpolated and renormalized; `n` itself when that
// direction is zero.
fn skin_blended_normal(b: SkinBlended, n: vec3<f32>) -> vec3<f32> {
    return skin_normalize_or(skin_blended_normal_direction(b, n).direction, n);
}

// A tangent (xyz direction, w handedness): each method's unit tangent direction, interpolated
// and renormalized; w is LBS's where b < 0.5, else DQS's.
fn skin_blended_tangent(b: SkinBlended, t: vec4<f32>) -> vec4<f32> {
    if !skin_blended_uses_dual_quat(b) {
        return skin_linear_tangent(b.linear, t);
    }
    let from_dual_quat = skin_dual_quat_blend_tangent(b.dual_quat, t);
    if !skin_blended_uses_linear(b) {
        return from_dual_quat;
    }
    let from_linear = skin_linear_tangent(b.linear, t);
    var w = from_dual_quat.w;
    if b.blend < 0.5 {
        w = from_linear.w;
    }
    let direction = mix(from_linear.xyz, from_dual_quat.xyz, b.blend);
    return vec4<f32>(skin_normalize_or(direction, t.xyz), w);
}
