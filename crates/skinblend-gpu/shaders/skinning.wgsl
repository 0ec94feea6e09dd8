// skinblend WGSL skinning library: the functions the compute kernels run, for your own shaders.
//
// Conventions (the same as the Rust crates): column vectors, v' = M v. A 3x4 affine map is a
// `SkinAffine` holding its three ROWS, so p' = (dot(row0, (p, 1)), dot(row1, (p, 1)),
// dot(row2, (p, 1))). Quaternions are (x, y, z, w). A dual quaternion is (real, dual) with
// dual = 1/2 (0, t) real: rotate by `real`, then translate by t.
//
// This file declares no bindings. `linear.wgsl`, `dual_quat.wgsl`, `center_of_rotation.wgsl`
// and `blended.wgsl` read a palette global that the including shader declares (the Rust
// functions `linear_skinning_wgsl(group, binding)`, `dual_quat_skinning_wgsl(group, binding)`,
// `cor_skinning_wgsl(group, binding)` and `blended_skinning_wgsl(group, binding)` emit the
// declaration and the files for you). The functions that apply a blended skin matrix and the
// blend of dual quaternions below read no palette: LBS and blended apply the one, DQS, CoR and
// blended finish with the other.

// A 3x4 affine map stored as its three rows: 48 bytes, 16-byte aligned. The LBS palette is an
// array of these (one skin matrix world_from_joint * joint_from_bind per joint).
struct SkinAffine {
    row0: vec4<f32>,
    row1: vec4<f32>,
    row2: vec4<f32>,
}

// One joint of a DQS palette: 96 bytes (80 used, the struct rounds up to its 16-byte alignment).
// `real`, `dual`: the rigid part of the joint's Gram-Schmidt split, a unit dual quaternion.
// `residual`: the residual affine map p -> S p + (c - S c) about the joint's center c (the
// identity for a rigid joint). `rigid`: 1 when the residual is the identity within the rigid
// tolerance (it is then skipped exactly as on the CPU), 0 otherwise.
struct SkinDualQuatJoint {
    real: vec4<f32>,
    dual: vec4<f32>,
    residual: SkinAffine,
    rigid: u32,
}

// One joint of a CoR or blended palette: 144 bytes. `dual_quat`: the joint's DQS entry (its
// split, as above); `linear`: its full skin matrix as rows, the LBS entry, which places each
// vertex's center of rotation (CoR) or is blended into the LBS result (blended).
struct SkinCorJoint {
    dual_quat: SkinDualQuatJoint,
    linear: SkinAffine,
}

// A 3x3 whose determinant is at most this fraction of (largest column length)^3 is singular for
// the normal transform (the same threshold as the CPU kernels' SINGULAR_RELATIVE).
const SKIN_SINGULAR_RELATIVE: f32 = 1e-6;

// The largest finite f32: a length above it (infinity) cannot be normalized.
const SKIN_F32_MAX: f32 = 3.40282347e38;

// The all-zero map, the start of a blend.
fn skin_affine_zero() -> SkinAffine {
    return SkinAffine(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
}

// The identity map.
fn skin_affine_identity() -> SkinAffine {
    return SkinAffine(
        vec4<f32>(1.0, 0.0, 0.0, 0.0),
        vec4<f32>(0.0, 1.0, 0.0, 0.0),
        vec4<f32>(0.0, 0.0, 1.0, 0.0),
    );
}

// sum + weight * m, entry by entry (a linear blend step).
fn skin_affine_add_scaled(sum: SkinAffine, m: SkinAffine, weight: f32) -> SkinAffine {
    return SkinAffine(sum.row0 + m.row0 * weight, sum.row1 + m.row1 * weight, sum.row2 + m.row2 * weight);
}

// Applies the map to a point.
fn skin_affine_point(m: SkinAffine, p: vec3<f32>) -> vec3<f32> {
    let h = vec4<f32>(p, 1.0);
    return vec3<f32>(dot(m.row0, h), dot(m.row1, h), dot(m.row2, h));
}

// The 3x3 linear part as a WGSL matrix (WGSL matrices are column-major).
fn skin_affine_matrix3(m: SkinAffine) -> mat3x3<f32> {
    return transpose(mat3x3<f32>(m.row0.xyz, m.row1.xyz, m.row2.xyz));
}

// det(a) as z . (x cross y), the same expression as glam's.
fn skin_determinant(a: mat3x3<f32>) -> f32 {
    return dot(a[2], cross(a[0], a[1]));
}

// The normal matrix of `a`: its inverse transpose up to a positive factor (the cofactor matrix
// times the sign of the determinant), and whether `a` is singular (then the cofactor itself, the
// limit direction of det * a^-T, whose sign is unknowable).
struct SkinNormalMatrix {
    matrix: mat3x3<f32>,
    singular: bool,
}

fn skin_normal_matrix(a: mat3x3<f32>) -> SkinNormalMatrix {
    let c0 = a[0];
    let c1 = a[1];
    let c2 = a[2];
    let cofactor = mat3x3<f32>(cross(c1, c2), cross(c2, c0), cross(c0, c1));
    let det = dot(c0, cofactor[0]);
    let largest = max(length(c0), max(length(c1), length(c2)));
    if abs(det) <= SKIN_SINGULAR_RELATIVE * largest * largest * largest {
        return SkinNormalMatrix(cofactor, true);
    }
    if det < 0.0 {
        return SkinNormalMatrix(cofactor * -1.0, false);
    }
    return SkinNormalMatrix(cofactor, false);
}

// `v` normalized, or `fallback` when its length is zero or not finite (glam's try_normalize).
fn skin_normalize_or(v: vec3<f32>, fallback: vec3<f32>) -> vec3<f32> {
    let len = length(v);
    if len > 0.0 && len <= SKIN_F32_MAX {
        return v * (1.0 / len);
    }
    return fallback;
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

// Applies a dual quaternion (unit real part) to a point: Kavan et al.'s form
// p + 2 v x (v x p + w p) + 2 (w ve - we v + v x ve), with real = (v, w), dual = (ve, we).
fn skin_dual_quat_point(real: vec4<f32>, dual: vec4<f32>, p: vec3<f32>) -> vec3<f32> {
    let v = real.xyz;
    let w = real.w;
    let ve = dual.xyz;
    let we = dual.w;
    let rotated = p + 2.0 * cross(v, cross(v, p) + w * p);
    return rotated + 2.0 * (w * ve - we * v + cross(v, ve));
}

// Rotates a direction by a unit quaternion.
fn skin_quat_rotate(real: vec4<f32>, d: vec3<f32>) -> vec3<f32> {
    let v = real.xyz;
    return d + 2.0 * cross(v, cross(v, d) + real.w * d);
}

// The index (0-3) of the heaviest of four weights; ties keep the lowest slot.
fn skin_pivot4(weights: vec4<f32>) -> u32 {
    var pivot = 0u;
    for (var slot = 1u; slot < 4u; slot += 1u) {
        if weights[slot] > weights[pivot] {
            pivot = slot;
        }
    }
    return pivot;
}

// A vertex's blend of dual quaternions in progress, then finished: the sign-aligned sum
// (normalized by `skin_dual_quat_normalize`), the linear blend of the residual maps when any
// influencing joint is non-rigid, and how many influences were negated to agree with the pivot.
// DQS and CoR both build one; `skin_dual_quat_blend_point`, `_normal` and `_tangent` apply it.
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

// Adds one influence's dual quaternion (`real`, `dual`) with `weight` (call only for
// weight > 0), negated when its real part has a negative dot with the pivot's (`pivot_real`,
// the heaviest influence's); a negation of any slot but the pivot's own is counted in
// `sign_flips`. `rigid` is the joint's flag (0: it has a residual).
fn skin_dual_quat_accumulate(blend: ptr<function, SkinDualQuatBlend>, real: vec4<f32>, dual: vec4<f32>, rigid: u32, weight: f32, pivot_real: vec4<f32>, is_pivot: bool) {
    var signed = weight;
    if dot(real, pivot_real) < 0.0 {
        signed = -weight;
        if !is_pivot {
            (*blend).sign_flips += 1u;
        }
    }
    (*blend).real += real * signed;
    (*blend).dual += dual * signed;
    if rigid == 0u {
        (*blend).has_residual = true;
    }
}

// Normalizes the sum by the length of its real part; takes `fallback_real`, `fallback_dual`
// (the pivot's own dual quaternion) if that length is zero (which rounding alone could cause)
// or not finite.
fn skin_dual_quat_normalize(blend: ptr<function, SkinDualQuatBlend>, fallback_real: vec4<f32>, fallback_dual: vec4<f32>) {
    let len = length((*blend).real);
    if len > 0.0 && len <= SKIN_F32_MAX {
        let inverse = 1.0 / len;
        (*blend).real *= inverse;
        (*blend).dual *= inverse;
    } else {
        (*blend).real = fallback_real;
        (*blend).dual = fallback_dual;
    }
}

// The dual part 1/2 (0, t) real of the motion that rotates by `real`, then translates by `t`.
fn skin_dual_quat_dual_part(real: vec4<f32>, t: vec3<f32>) -> vec4<f32> {
    return 0.5 * vec4<f32>(real.w * t + cross(t, real.xyz), -dot(t, real.xyz));
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
