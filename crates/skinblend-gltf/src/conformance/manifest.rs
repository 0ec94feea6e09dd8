//! The manifest's text: the conventions of the array files, the tolerance and its reason, and
//! every rule a port must follow to reproduce the expected outputs.

use serde_json::{json, Value};
use skinblend::Method;

use super::format::{
    FORMAT, FORMAT_VERSION, NORMAL_TOLERANCE, POSITION_TOLERANCE, SINGULAR_RELATIVE,
    UNDEFINED_NORMAL_RELATIVE,
};

/// The manifest: the format, the conventions, the tolerance with its reason, the rules, the
/// methods and the cases' `entries`.
pub(super) fn manifest(entries: Vec<Value>) -> Value {
    json!({
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "generator": format!("skinblend {}", env!("CARGO_PKG_VERSION")),
        "conventions": "Arrays: raw little-endian f32 (.f32) or u32 (.u32), row after row, no header. \
            Column vectors (v' = M v), right-handed, glTF units. palette.f32: per joint the skin matrix \
            world_from_joint * joint_from_bind, 16 floats column-major. dual_quats.f32: per joint real (x, y, z, w) \
            then dual (x, y, z, w) with dual = 1/2 (0, t) real, the rigid part of the core's Gram-Schmidt split \
            (signs as stored; some cases store them negated on purpose). residuals.f32: per joint the rows of the \
            residual map p -> S p + (c - S c) about the joint's bind origin c (joint_centers.f32). rigid.u32: 1 when \
            that residual is skipped. centers.f32: per vertex the center of rotation (xyz, w = 1 when it has one). \
            blend_values.f32: per vertex the blend value of the blended method in [0, 1] (0 = LBS, 1 = DQS; the \
            glTF attribute _SKINBLEND_DQ_BLEND). \
            Expected outputs: the CPU scalar reference, weights divided by their sum.",
        "tolerance": {
            "position": shortest(POSITION_TOLERANCE),
            "position_is_relative_to": "the case's scale (its largest absolute expected coordinate, at least 1)",
            "normal": shortest(NORMAL_TOLERANCE),
            "reason": "the reference and an engine both compute in f32 with other operation orders and fused \
                multiply-adds: tens of ulps (skinblend's WGSL kernel is within 1.3e-6 relative of the CPU); \
                normals pass through a cofactor matrix and a normalization and lose a few digits more. A real \
                error (a sign, a missing residual or inverse transpose, unnormalized weights) is 1e-2 or more."
        },
        "rules": rules(),
        "methods": Method::names(),
        "cases": entries,
    })
}

/// `value` as the shortest decimal that reads back as it (1e-5, not 9.999999747378752e-6).
fn shortest(value: f32) -> f64 {
    value.to_string().parse().unwrap_or(f64::from(value))
}

/// Every rule a port must follow to reproduce the expected outputs, as the manifest's `rules`:
/// per step a text and, where the rule has one, its number. The same rules as skinblend's CPU
/// reference (`skinblend::reference`) and its WGSL shaders.
fn rules() -> Value {
    json!({
        "weights": {
            "rule": "use the four JOINTS_0/WEIGHTS_0 slots; a slot with weight <= 0 contributes \
                nothing; divide each weight by the sum of the four",
            "unweighted_below": shortest(f32::MIN_POSITIVE),
            "unweighted": "a vertex whose weight sum is below unweighted_below (the smallest \
                normal f32; 0 included) is passed through: its position and normal are the input's",
        },
        (Method::Linear.name()): "blend the skin matrices: M = sum of w_i * palette_i (3x4); position M p; \
            normal: normal_matrix(M's 3x3) n, then normalized",
        (Method::DualQuaternion.name()): {
            "pivot": "the slot with the largest weight, the lowest slot on ties (strictly greater \
                replaces)",
            "sign_alignment": "an influence whose real part has a negative 4D dot product with the \
                pivot's real part enters the sum negated (real and dual); the pivot itself never",
            "blend": "sum of w_i * (real_i, dual_i) over the signed influences (weights as given or \
                divided by their sum: the normalization cancels it)",
            "normalization": "divide real and dual by the length of the summed real part; if that \
                length is 0 or not finite, use the pivot's own dual quaternion",
            "residual": "when any influence (weight > 0) has rigid = 0, blend the residual rows \
                with the weights divided by their sum: S = sum of w_i * residual_i; otherwise S is \
                the identity and is skipped",
            "order": "residual first, then the rigid motion: position = DQ(S p); normal = \
                R (normal_matrix(S's 3x3) n), then normalized (R n when S is skipped)",
        },
        (Method::CenterOfRotation.name()): "the dq blend (pivot, signs, normalization, residual) gives the rotation R and S; \
            for a vertex with a center c (centers.f32 w = 1): position = R S p + t with \
            t = L c - R S c, L the linear blend of the skin matrices (palette.f32) with the \
            weights divided by their sum; the normal as dq. A vertex without a center (w = 0) is \
            skinned by dq",
        (Method::Blended.name()): "per vertex with blend value b (blend_values.f32): position = \
            (1 - b) * (the linear position) + b * (the dq position); normal = normalize((1 - b) * \
            (the unit linear normal) + b * (the unit dq normal)), the input normal when that is \
            zero. At b = 0 exactly the linear result, at b = 1 exactly the dq result (only that \
            method is evaluated). Tangents (not in the vectors): directions as normals, the \
            handedness linear's where b < 0.5, else dq's",
        "normal_matrix": {
            "rule": "for a 3x3 A with columns c0, c1, c2: the cofactor matrix C with columns \
                (c1 x c2, c2 x c0, c0 x c1), det = c0 . (c1 x c2), largest = the largest column \
                length. Singular when |det| <= singular_relative * largest^3: then C itself, \
                unsigned (the limit direction of det * A^-T; its sign is unknowable), else \
                C * sign(det), which is A^-T times |det|",
            "singular_relative": shortest(SINGULAR_RELATIVE),
            "note": "a port that multiplies by sign(det) also in the singular case, where the \
                sign is rounding noise, differs on the 50/50 ring of bend_coarse_mirrored_joint \
                under dq and cor by 1.85 when det rounds negative",
        },
        "normalize": "a direction v becomes v / |v|; when |v| is 0 or not finite the input \
            normal is kept (as for an unweighted vertex)",
        "undefined_normals": {
            "rule": "expected[method].undefined_normals lists the vertices whose exact normal \
                direction before normalization is zero: |C n| <= relative * largest^2 * |n| in \
                exact arithmetic on the f32 inputs (C, largest from normal_matrix's A); under \
                blended a vertex undefined under a method it evaluates, or one whose interpolated \
                unit normals have length <= relative. There the \
                expected normal is f32 rounding noise normalized, or the input normal where f32 \
                happens to give exactly zero: a checker skips these vertices' normals (their \
                positions are checked) and counts them",
            "relative": UNDEFINED_NORMAL_RELATIVE,
        },
        "inputs": "the palette in palette.f32 (LBS, the CoR translation) and the prepared \
            dual_quats.f32, residuals.f32, rigid.u32 (DQS, CoR): a port may compute the latter \
            from the palette with its own split, then it must match these within the tolerance",
    })
}
