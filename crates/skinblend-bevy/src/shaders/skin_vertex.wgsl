// skinblend-bevy: one vertex skinned in mesh space by the method the pipeline was specialized
// for, with skinblend's WGSL library (`skinning.wgsl`, `linear.wgsl`, `dual_quat.wgsl`,
// `center_of_rotation.wgsl`, `blended.wgsl`, included before this file with the palettes and
// the blend constant declared in the material's bind group), used by `vertex.wgsl` in every pass.
//
// Shader defs (set by `SkinblendExtension::specialize`):
//   SKINBLEND_LINEAR | SKINBLEND_DUAL_QUATERNION | SKINBLEND_CENTER_OF_ROTATION |
//   SKINBLEND_BLENDED           the method;
//   SKINBLEND_LINEAR_BLEND      the method evaluates the LBS blend (LBS, blended);
//   SKINBLEND_DUAL_QUAT_BLEND   the method evaluates the DQS blend (DQS, blended);
//   SKINBLEND_COR_PALETTE       its entries are in the CoR palette (CoR, and blended, whose
//                               entries have CoR's layout: the DQS entry beside the LBS matrix);
//   SKINBLEND_SLOT_LOOP         blend slot by slot over eight influences (a second set, or
//                               blended: the library's four-influence functions read the LBS
//                               and DQS palettes);
//   SKINBLEND_EIGHT_INFLUENCES  the mesh has a second set of joints and weights (JOINTS_1);
//   SKINBLEND_ROTATION_CENTERS  the mesh has its centers of rotation (CoR without: DQS, as the
//                               library skins a vertex whose center has w = 0);
//   SKINBLEND_DQ_BLEND_VALUES   blended, and the mesh has the file's blend values
//                               (_SKINBLEND_DQ_BLEND); without them every vertex takes the
//                               material's constant `skin_dq_blend_constant.x`.
//
// The entity's joints start at `mesh_functions::get_tag(instance_index)` in its method's palette
// (the plugin writes that offset into the entity's `MeshTag`): joint j of the skin is entry
// `tag + j`.

// A vertex's influences, joints already offset into the palette.
struct SkinblendInfluences {
    joints0: vec4<u32>,
    weights0: vec4<f32>,
    joints1: vec4<u32>,
    weights1: vec4<f32>,
    center: vec4<f32>,
    // Blended's value (0 = LBS, 1 = DQS); unused by the other methods.
    blend: f32,
}

// skinblend's vertex attributes (locations 10 to 15, laid out by
// `SkinblendExtension::specialize`): the second parameter of both vertex entry points.
struct SkinblendAttributes {
    @location(10) joints0: vec4<u32>,
    @location(11) weights0: vec4<f32>,
#ifdef SKINBLEND_EIGHT_INFLUENCES
    @location(12) joints1: vec4<u32>,
    @location(13) weights1: vec4<f32>,
#endif
#ifdef SKINBLEND_ROTATION_CENTERS
    @location(14) center: vec4<f32>,
#endif
#ifdef SKINBLEND_DQ_BLEND_VALUES
    @location(15) dq_blend: f32,
#endif
}

// The vertex's influences, its joints offset by `base` (the entity's `MeshTag`) into the
// palette; without a second set its weights are 0, without a center its w is 0 (DQS), without
// blend values its blend is the material's constant.
fn skinblend_influences(attributes: SkinblendAttributes, base: u32) -> SkinblendInfluences {
    let offset = vec4<u32>(base);
    var influences = SkinblendInfluences(attributes.joints0 + offset, attributes.weights0, offset, vec4<f32>(0.0), vec4<f32>(0.0), skin_dq_blend_constant.x);
#ifdef SKINBLEND_EIGHT_INFLUENCES
    influences.joints1 = attributes.joints1 + offset;
    influences.weights1 = attributes.weights1;
#endif
#ifdef SKINBLEND_ROTATION_CENTERS
    influences.center = attributes.center;
#endif
#ifdef SKINBLEND_DQ_BLEND_VALUES
    influences.blend = attributes.dq_blend;
#endif
    return influences;
}

// The smallest normal f32: a weight sum below it is an unweighted vertex, as on the CPU.
const SKINBLEND_MIN_WEIGHT_SUM: f32 = 1.17549435e-38;

// Slot `slot` (0-7) of the eight influences.
fn skinblend_joint(influences: SkinblendInfluences, slot: u32) -> u32 {
    if slot < 4u {
        return influences.joints0[slot];
    }
    return influences.joints1[slot - 4u];
}

fn skinblend_weight(influences: SkinblendInfluences, slot: u32) -> f32 {
    if slot < 4u {
        return influences.weights0[slot];
    }
    return influences.weights1[slot - 4u];
}

// The sum of all eight weights and the heaviest slot (ties: the lowest slot), as the CPU pivot.
struct SkinblendWeightSummary {
    sum: f32,
    pivot: u32,
}

fn skinblend_summary8(influences: SkinblendInfluences) -> SkinblendWeightSummary {
    var sum = 0.0;
    var pivot = 0u;
    for (var slot = 0u; slot < 8u; slot += 1u) {
        let weight = skinblend_weight(influences, slot);
        sum += weight;
        if weight > skinblend_weight(influences, pivot) {
            pivot = slot;
        }
    }
    return SkinblendWeightSummary(sum, pivot);
}

#ifdef SKINBLEND_LINEAR_BLEND
// sum + weight * (joint's skin matrix), from the method's palette.
fn skinblend_linear_add(sum: SkinAffine, joint: u32, scaled_weight: f32) -> SkinAffine {
#ifdef SKINBLEND_COR_PALETTE
    return skin_cor_add_linear(sum, joint, scaled_weight);
#else
    return skin_linear_add(sum, joint, scaled_weight);
#endif
}

// LBS (and blended's LBS half): the blended skin matrix.
fn skinblend_linear_blend(influences: SkinblendInfluences) -> SkinAffine {
#ifdef SKINBLEND_SLOT_LOOP
    let summary = skinblend_summary8(influences);
    if !(summary.sum >= SKINBLEND_MIN_WEIGHT_SUM) {
        return skin_affine_identity();
    }
    let scale = 1.0 / summary.sum;
    var m = skin_affine_zero();
    for (var slot = 0u; slot < 8u; slot += 1u) {
        let weight = skinblend_weight(influences, slot);
        if weight > 0.0 {
            m = skinblend_linear_add(m, skinblend_joint(influences, slot), weight * scale);
        }
    }
    return m;
#else
    return skin_linear_blend4(influences.joints0, influences.weights0);
#endif
}
#endif

// DQS, CoR and blended's DQS half over eight influences: the blended dual quaternion and
// residual of the method's palette entries (CoR's caller then places the blend about the
// vertex's center). An unweighted vertex (sum below the smallest normal f32) gets the identity.
fn skinblend_dual_quat_blend8(influences: SkinblendInfluences, summary: SkinblendWeightSummary) -> SkinDualQuatBlend {
    var blend = skin_dual_quat_begin();
    if !(summary.sum >= SKINBLEND_MIN_WEIGHT_SUM) {
        blend.real = vec4<f32>(0.0, 0.0, 0.0, 1.0);
        return blend;
    }
    let pivot_joint = skinblend_joint(influences, summary.pivot);
#ifdef SKINBLEND_COR_PALETTE
    let pivot_real = skin_cor_palette[pivot_joint].dual_quat.real;
#else
    let pivot_real = skin_dual_quat_palette[pivot_joint].real;
#endif
    for (var slot = 0u; slot < 8u; slot += 1u) {
        let weight = skinblend_weight(influences, slot);
        if weight > 0.0 {
#ifdef SKINBLEND_COR_PALETTE
            skin_cor_add(&blend, skinblend_joint(influences, slot), weight, pivot_real, slot == summary.pivot);
#else
            skin_dual_quat_add(&blend, skinblend_joint(influences, slot), weight, pivot_real, slot == summary.pivot);
#endif
        }
    }
    if blend.has_residual {
        let scale = 1.0 / summary.sum;
        for (var slot = 0u; slot < 8u; slot += 1u) {
            let weight = skinblend_weight(influences, slot);
            if weight > 0.0 {
#ifdef SKINBLEND_COR_PALETTE
                skin_cor_add_residual(&blend, skinblend_joint(influences, slot), weight * scale);
#else
                skin_dual_quat_add_residual(&blend, skinblend_joint(influences, slot), weight * scale);
#endif
            }
        }
    }
#ifdef SKINBLEND_COR_PALETTE
    skin_cor_finish(&blend, pivot_joint);
#else
    skin_dual_quat_finish(&blend, pivot_joint);
#endif
    return blend;
}

#ifdef SKINBLEND_DUAL_QUAT_BLEND
// DQS (and blended's DQS half): the blended dual quaternion and residual.
fn skinblend_dual_quat_blend(influences: SkinblendInfluences) -> SkinDualQuatBlend {
#ifdef SKINBLEND_SLOT_LOOP
    return skinblend_dual_quat_blend8(influences, skinblend_summary8(influences));
#else
    return skin_dual_quat_blend4(influences.joints0, influences.weights0);
#endif
}
#endif

#ifdef SKINBLEND_CENTER_OF_ROTATION
// CoR: the DQS rotation about the vertex's center, placed where LBS sends the center.
fn skinblend_cor_blend(influences: SkinblendInfluences) -> SkinDualQuatBlend {
#ifdef SKINBLEND_EIGHT_INFLUENCES
    let summary = skinblend_summary8(influences);
    var blend = skinblend_dual_quat_blend8(influences, summary);
    if summary.sum >= SKINBLEND_MIN_WEIGHT_SUM && influences.center.w != 0.0 {
        let scale = 1.0 / summary.sum;
        var linear = skin_affine_zero();
        for (var slot = 0u; slot < 8u; slot += 1u) {
            let weight = skinblend_weight(influences, slot);
            if weight > 0.0 {
                linear = skin_cor_add_linear(linear, skinblend_joint(influences, slot), weight * scale);
            }
        }
        skin_cor_place(&blend, linear, influences.center.xyz);
    }
    return blend;
#else
    return skin_cor_blend4(influences.joints0, influences.weights0, influences.center);
#endif
}
#endif

#ifdef SKINBLEND_BLENDED
// Blended: LBS's blend where b < 1 and DQS's where b > 0 (the two functions above, from the CoR
// palette), as the library's `SkinBlended`, which `skin_blended_point`, `_normal` and `_tangent`
// apply as the core does: (1 - b) LBS + b DQS, unit normals and tangents interpolated and
// renormalized, LBS's handedness where b < 0.5.
fn skinblend_blended_blend(influences: SkinblendInfluences) -> SkinBlended {
    var blend = skin_blended_begin(influences.blend);
    if skin_blended_uses_linear(blend) {
        blend.linear = skinblend_linear_blend(influences);
    }
    if skin_blended_uses_dual_quat(blend) {
        blend.dual_quat = skinblend_dual_quat_blend(influences);
    }
    return blend;
}
#endif

// A vertex in mesh space after skinning.
struct SkinblendSkinned {
    position: vec3<f32>,
    normal: vec3<f32>,
    tangent: vec4<f32>,
}

// Skins a position, normal and tangent (pass any value for an attribute the mesh lacks).
fn skinblend_skin(influences: SkinblendInfluences, position: vec3<f32>, normal: vec3<f32>, tangent: vec4<f32>) -> SkinblendSkinned {
#ifdef SKINBLEND_BLENDED
    let blend = skinblend_blended_blend(influences);
    return SkinblendSkinned(
        skin_blended_point(blend, position),
        skin_blended_normal(blend, normal),
        skin_blended_tangent(blend, tangent),
    );
#else
#ifdef SKINBLEND_LINEAR
    let m = skinblend_linear_blend(influences);
    return SkinblendSkinned(
        skin_affine_point(m, position),
        skin_linear_normal(m, normal),
        skin_linear_tangent(m, tangent),
    );
#else
#ifdef SKINBLEND_CENTER_OF_ROTATION
    let blend = skinblend_cor_blend(influences);
#else
    let blend = skinblend_dual_quat_blend(influences);
#endif
    return SkinblendSkinned(
        skin_dual_quat_blend_point(blend, position),
        skin_dual_quat_blend_normal(blend, normal),
        skin_dual_quat_blend_tangent(blend, tangent),
    );
#endif
#endif
}
