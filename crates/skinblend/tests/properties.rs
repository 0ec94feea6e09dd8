//! Property tests over random rigs (proptest): what must hold for every mesh, weight set and
//! palette, not just the fixtures. Each property runs every method and both kernels (scalar
//! and SIMD, which process blocks of 8 vertices plus a tail, so 1 to 40 vertices cover both).
//!
//! Tolerances are relative to the size of the coordinates involved (`1 + |p| + |t|`), because
//! f32 rounding grows with magnitude; each is named below with the reason for its size.

use glam::{Mat4, Quat, Vec3, Vec4};
use proptest::prelude::*;
use skinblend::{
    skin, BlendValues, DualQuat, Influences, Method, PreparedPalette, SkinInput, SkinOptions,
    SkinOutputs,
};

/// A shared rigid motion or a single rigid influence: every method computes the same motion
/// through different f32 arithmetic (3x4 rows, a dual quaternion normalized and turned back
/// into a rotation, CoR's `LBS(p*) − R p*`). A few dozen roundings of ε = 1.2e-7 at most:
/// 1e-5 leaves room without hiding a wrong rotation (which is off by 1e-2 and more).
const SAME_MOTION_REL: f32 = 1e-5;
/// Identity palettes: every blend is of identities, so only the renormalization and one
/// multiply-add per weight round. 1e-6 relative is a handful of ulps.
const IDENTITY_REL: f32 = 1e-6;
/// Reordering a vertex's influences only reorders sums of k ≤ 8 terms: each reordered sum
/// moves by a few ulps of its largest term. 1e-5 relative, as above.
const REORDER_REL: f32 = 1e-5;

/// A mesh with `k` influences per vertex over `joints` joints, and per-vertex centers of
/// rotation for CoR (arbitrary points: every property here must hold for any center).
#[derive(Debug, Clone)]
struct Rig {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
    centers: Vec<Vec3>,
    k: usize,
    joint_count: usize,
    joints: Vec<u16>,
    weights: Vec<f32>,
}

impl Rig {
    fn influences(&self) -> Influences {
        Influences::new(
            self.k,
            self.joints.clone(),
            self.weights.clone(),
            self.joint_count,
        )
        .expect("generated influences are valid")
    }
}

fn vec3(half_extent: f32) -> impl Strategy<Value = Vec3> {
    prop::array::uniform3(-half_extent..half_extent).prop_map(Vec3::from_array)
}

fn unit_vector() -> impl Strategy<Value = Vec3> {
    vec3(1.0).prop_map(|v| v.try_normalize().unwrap_or(Vec3::Z))
}

fn rotation() -> impl Strategy<Value = Quat> {
    prop::array::uniform4(-1.0f32..1.0).prop_map(|q| {
        Vec4::from_array(q)
            .try_normalize()
            .map_or(Quat::IDENTITY, Quat::from_vec4)
    })
}

fn rigid() -> impl Strategy<Value = Mat4> {
    (rotation(), vec3(5.0)).prop_map(|(r, t)| Mat4::from_rotation_translation(r, t))
}

/// Finite affine matrices of every kind the residual path must survive: rigid, scaled
/// (including mirrored and flattened to zero on an axis), sheared, arbitrary 3x3s, all-zero.
fn any_affine() -> impl Strategy<Value = Mat4> {
    let scaled = (rigid(), prop::array::uniform3(-2.0f32..2.0), -1.0f32..1.0).prop_map(
        |(rigid, scale, shear)| {
            let mut sheared = Mat4::IDENTITY;
            sheared.y_axis.x = shear;
            rigid * sheared * Mat4::from_scale(Vec3::from_array(scale))
        },
    );
    let flattened = (rigid(), 0usize..3).prop_map(|(rigid, axis)| {
        let mut scale = Vec3::ONE;
        scale[axis] = 0.0;
        rigid * Mat4::from_scale(scale)
    });
    let arbitrary = (prop::array::uniform9(-3.0f32..3.0), vec3(5.0))
        .prop_map(|(m, t)| Mat4::from_mat3_translation(glam::Mat3::from_cols_array(&m), t));
    prop_oneof![
        rigid(),
        scaled,
        flattened,
        arbitrary,
        Just(Mat4::from_cols(Vec4::ZERO, Vec4::ZERO, Vec4::ZERO, Vec4::W)),
    ]
}

/// Weights in [0, 1] with exact zeros common. With `weighted`, slot 0 of every vertex is at
/// least 0.05, so no vertex is unweighted (unweighted vertices pass through unmoved).
fn rig(weighted: bool) -> impl Strategy<Value = Rig> {
    (1usize..=6, 1usize..=8, 1usize..=40).prop_flat_map(move |(joint_count, k, vertices)| {
        let weight = prop_oneof![Just(0.0f32), 0.0f32..1.0];
        (
            prop::collection::vec(vec3(3.0), vertices),
            prop::collection::vec(unit_vector(), vertices),
            prop::collection::vec((unit_vector(), prop::bool::ANY), vertices),
            prop::collection::vec(vec3(3.0), vertices),
            prop::collection::vec(0..joint_count as u16, vertices * k),
            prop::collection::vec(weight, vertices * k),
        )
            .prop_map(
                move |(positions, normals, tangents, centers, joints, mut weights)| {
                    if weighted {
                        for v in 0..vertices {
                            weights[v * k] = weights[v * k].max(0.05);
                        }
                    }
                    let tangents = tangents
                        .into_iter()
                        .map(|(t, right)| t.extend(if right { 1.0 } else { -1.0 }))
                        .collect();
                    Rig {
                        positions,
                        normals,
                        tangents,
                        centers,
                        k,
                        joint_count,
                        joints,
                        weights,
                    }
                },
            )
    })
}

struct Output {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
}

/// Skins `rig` with the palette matrices (CoR with the rig's centers).
fn skin_rig(rig: &Rig, palette: &[Mat4], options: &SkinOptions) -> Output {
    let influences = rig.influences();
    let mut input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &influences,
    )
    .unwrap();
    if options.method == Method::CenterOfRotation {
        input = input.with_rotation_centers(&rig.centers).unwrap();
    }
    let blend_values = blend_values(rig.positions.len());
    input = input
        .with_blend_values(BlendValues::PerVertex(&blend_values))
        .unwrap();
    let skinned = skin(&input, palette, None, options).unwrap();
    Output {
        positions: skinned.positions,
        normals: skinned.normals.unwrap(),
        tangents: skinned.tangents.unwrap(),
    }
}

/// Skins `rig` with a palette given as dual quaternions (DQS and CoR only).
fn skin_rig_dual_quats(rig: &Rig, dual_quats: &[DualQuat], options: &SkinOptions) -> Output {
    let influences = rig.influences();
    let mut input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &influences,
    )
    .unwrap();
    if options.method == Method::CenterOfRotation {
        input = input.with_rotation_centers(&rig.centers).unwrap();
    }
    let blend_values = blend_values(rig.positions.len());
    input = input
        .with_blend_values(BlendValues::PerVertex(&blend_values))
        .unwrap();
    let prepared = PreparedPalette::from_dual_quats(dual_quats, options).unwrap();
    let n = rig.positions.len();
    let mut out = Output {
        positions: vec![Vec3::ZERO; n],
        normals: vec![Vec3::ZERO; n],
        tangents: vec![Vec4::ZERO; n],
    };
    let outputs = SkinOutputs {
        positions: &mut out.positions,
        normals: Some(&mut out.normals),
        tangents: Some(&mut out.tangents),
    };
    skinblend::skin_into(&input, &prepared, outputs, options.run_options()).unwrap();
    out
}

fn options(method: Method, simd: bool) -> SkinOptions {
    SkinOptions {
        method,
        simd,
        ..SkinOptions::default()
    }
}

fn every_option() -> impl Iterator<Item = SkinOptions> {
    Method::ALL
        .into_iter()
        .flat_map(|m| [false, true].map(|simd| options(m, simd)))
}

/// `|a − b| ≤ rel · (1 + scale)`, as a proptest failure naming what and where.
fn close3(
    what: &str,
    v: usize,
    a: Vec3,
    b: Vec3,
    rel: f32,
    scale: f32,
) -> Result<(), TestCaseError> {
    let error = (a - b).length();
    prop_assert!(
        error <= rel * (1.0 + scale),
        "{what} of vertex {v}: {a} vs {b} (error {error:e}, allowed {:e})",
        rel * (1.0 + scale)
    );
    Ok(())
}

fn same_output(
    what: &str,
    a: &Output,
    b: &Output,
    rig: &Rig,
    rel: f32,
    t: f32,
) -> Result<(), TestCaseError> {
    for v in 0..rig.positions.len() {
        let scale = rig.positions[v].length() + t;
        close3(
            &format!("{what}: position"),
            v,
            a.positions[v],
            b.positions[v],
            rel,
            scale,
        )?;
        close3(
            &format!("{what}: normal"),
            v,
            a.normals[v],
            b.normals[v],
            rel,
            1.0,
        )?;
        close3(
            &format!("{what}: tangent"),
            v,
            a.tangents[v].truncate(),
            b.tangents[v].truncate(),
            rel,
            1.0,
        )?;
        prop_assert_eq!(
            a.tangents[v].w,
            b.tangents[v].w,
            "{}: handedness of vertex {}",
            what,
            v
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// All joints under one rigid motion: every method moves the mesh rigidly by it, so all
    /// distances between vertices are kept and normals and tangents turn with it.
    #[test]
    fn a_shared_rigid_motion_moves_the_mesh_rigidly(rig in rig(true), motion in rigid()) {
        let palette = vec![motion; rig.joint_count];
        let t = motion.w_axis.truncate().length();
        for options in every_option() {
            let out = skin_rig(&rig, &palette, &options);
            let what = format!("{} simd={}", options.method.name(), options.simd);
            for (v, &p) in rig.positions.iter().enumerate() {
                let scale = p.length() + t;
                close3(&what, v, out.positions[v], motion.transform_point3(p), SAME_MOTION_REL, scale)?;
                close3(&what, v, out.normals[v], motion.transform_vector3(rig.normals[v]), SAME_MOTION_REL, 1.0)?;
            }
            for v in 1..rig.positions.len() {
                let rest = rig.positions[v].distance(rig.positions[v - 1]);
                let posed = out.positions[v].distance(out.positions[v - 1]);
                let scale = rig.positions[v].length() + rig.positions[v - 1].length() + 2.0 * t;
                prop_assert!((posed - rest).abs() <= SAME_MOTION_REL * (1.0 + scale),
                    "{what}: distance of vertices {} and {v}: rest {rest}, posed {posed}", v - 1);
            }
        }
    }

    /// Negating any joint's stored dual quaternion changes nothing under DQS and CoR (both
    /// align signs to the vertex's heaviest influence).
    #[test]
    fn dqs_ignores_the_sign_of_each_stored_rotation(
        rig in rig(true),
        motions in prop::collection::vec((rotation(), vec3(5.0)), 6),
        negate in prop::collection::vec(prop::bool::ANY, 6),
    ) {
        let dual_quats: Vec<DualQuat> = motions[..rig.joint_count]
            .iter()
            .map(|&(r, t)| DualQuat::from_rotation_translation(r, t))
            .collect();
        let negated: Vec<DualQuat> = dual_quats
            .iter()
            .zip(&negate)
            .map(|(dq, &flip)| if flip { dq.negated() } else { *dq })
            .collect();
        for method in [Method::DualQuaternion, Method::CenterOfRotation] {
            for simd in [false, true] {
                let options = options(method, simd);
                let a = skin_rig_dual_quats(&rig, &dual_quats, &options);
                let b = skin_rig_dual_quats(&rig, &negated, &options);
                same_output(&format!("{} simd={simd}", method.name()), &a, &b, &rig, SAME_MOTION_REL, 5.0)?;
            }
        }
    }

    /// The order of a vertex's influence slots does not matter, for any palette.
    #[test]
    fn influence_order_does_not_matter(
        rig in rig(false),
        palette in prop::collection::vec(any_affine(), 6),
        order_seed in any::<u64>(),
    ) {
        let mut shuffled = rig.clone();
        let mut state = order_seed;
        for v in 0..rig.positions.len() {
            // Fisher–Yates with a splitmix step: any permutation of the k slots.
            for s in (1..rig.k).rev() {
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                let r = ((z ^ (z >> 31)) % (s as u64 + 1)) as usize;
                shuffled.joints.swap(v * rig.k + s, v * rig.k + r);
                shuffled.weights.swap(v * rig.k + s, v * rig.k + r);
            }
        }
        let palette = &palette[..rig.joint_count];
        let t = palette.iter().map(|m| m.w_axis.truncate().length()).fold(0.0, f32::max);
        let magnitude = palette.iter().map(|m| m.abs().to_cols_array().into_iter().fold(0.0, f32::max)).fold(1.0, f32::max);
        for options in every_option() {
            let a = skin_rig(&rig, palette, &options);
            let b = skin_rig(&shuffled, palette, &options);
            let what = format!("{} simd={}", options.method.name(), options.simd);
            for v in 0..rig.positions.len() {
                let scale = magnitude * (rig.positions[v].length() + t);
                close3(&what, v, a.positions[v], b.positions[v], REORDER_REL, scale)?;
            }
        }
    }

    /// Identity palettes return the input, for every method, weighted or not.
    #[test]
    fn an_identity_palette_returns_the_input(rig in rig(false)) {
        let palette = vec![Mat4::IDENTITY; rig.joint_count];
        for options in every_option() {
            let out = skin_rig(&rig, &palette, &options);
            let what = format!("{} simd={}", options.method.name(), options.simd);
            for v in 0..rig.positions.len() {
                close3(&what, v, out.positions[v], rig.positions[v], IDENTITY_REL, rig.positions[v].length())?;
                close3(&what, v, out.normals[v], rig.normals[v], IDENTITY_REL, 1.0)?;
                close3(&what, v, out.tangents[v].truncate(), rig.tangents[v].truncate(), IDENTITY_REL, 1.0)?;
                prop_assert_eq!(out.tangents[v].w, rig.tangents[v].w);
            }
        }
    }

    /// With one rigid influence per vertex, LBS, DQS and CoR are the same rigid motion.
    #[test]
    fn single_rigid_influences_skin_alike_in_every_method(
        rig in rig(true),
        palette in prop::collection::vec(rigid(), 6),
    ) {
        let mut single = rig.clone();
        for v in 0..rig.positions.len() {
            single.weights[v * rig.k] = 1.0;
            for s in 1..rig.k {
                single.weights[v * rig.k + s] = 0.0;
            }
        }
        let palette = &palette[..rig.joint_count];
        let linear = skin_rig(&single, palette, &options(Method::Linear, false));
        for options in every_option() {
            let out = skin_rig(&single, palette, &options);
            same_output(&format!("{} simd={} vs scalar linear", options.method.name(), options.simd), &out, &linear, &single, SAME_MOTION_REL, 5.0)?;
        }
    }

    /// Finite inputs give finite outputs, whatever the palette: degenerate, flattened,
    /// mirrored or sheared joints, zero weights, with and without renormalization.
    #[test]
    fn finite_inputs_give_finite_outputs(
        rig in rig(false),
        palette in prop::collection::vec(any_affine(), 6),
        renormalize in prop::bool::ANY,
    ) {
        let palette = &palette[..rig.joint_count];
        for options in every_option() {
            let options = SkinOptions { renormalize, ..options };
            let out = skin_rig(&rig, palette, &options);
            for v in 0..rig.positions.len() {
                prop_assert!(out.positions[v].is_finite() && out.normals[v].is_finite() && out.tangents[v].is_finite(),
                    "{} simd={} renormalize={renormalize}: vertex {v} is {} / {} / {}",
                    options.method.name(), options.simd, out.positions[v], out.normals[v], out.tangents[v]);
            }
        }
    }
}

/// Blend values for [`Method::Blended`]: 0, 0.25, 0.5, 0.75 and 1 in turn, so every property
/// holds for LBS's and DQS's vertices of a blended mesh and for those between.
fn blend_values(count: usize) -> Vec<f32> {
    (0..count).map(|i| (i % 5) as f32 / 4.0).collect()
}
