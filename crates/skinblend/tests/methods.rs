//! The methods' contracts: sign immunity, order independence, residuals, centers, degenerate
//! input, normals and tangents, the f64 reference, and parallel = serial.

mod common;

use common::*;
use glam::{Mat4, Quat, Vec3, Vec4};
use skinblend::{
    fixtures, prepare, skin, skin_into, DualQuat, Influences, Method, PreparedPalette, RunOptions,
    SkinInput, SkinOptions, SkinOutputs,
};

fn options(method: Method) -> SkinOptions {
    SkinOptions {
        method,
        ..SkinOptions::default()
    }
}

fn dq_options() -> SkinOptions {
    options(Method::DualQuaternion)
}

/// Dual quaternions of a rig of rigid motions, for palettes given as dual quaternions.
fn rigid_dual_quats(rng: &mut Rng, joints: usize) -> Vec<DualQuat> {
    (0..joints)
        .map(|_| DualQuat::from_rotation_translation(rng.rotation(), rng.vec3(1.0)))
        .collect()
}

fn skin_with(
    prepared: &PreparedPalette,
    input: &SkinInput<'_>,
) -> (Vec<Vec3>, skinblend::Diagnostics) {
    let mut out = vec![Vec3::ZERO; input.vertex_count()];
    let diagnostics = skin_into(
        input,
        prepared,
        SkinOutputs::positions(&mut out),
        RunOptions::default(),
    )
    .unwrap();
    (out, diagnostics)
}

#[test]
fn dqs_is_immune_to_the_sign_of_stored_rotations() {
    let mut rng = Rng::new(7);
    let rig = random_rig(&mut rng, 500, 4, 6, false);
    let input = SkinInput::new(&rig.positions, None, None, &rig.influences).unwrap();
    let dual_quats = rigid_dual_quats(&mut rng, 6);
    let all_negated: Vec<DualQuat> = dual_quats.iter().map(DualQuat::negated).collect();
    let mixed: Vec<DualQuat> = dual_quats
        .iter()
        .enumerate()
        .map(|(j, dq)| if j % 2 == 1 { dq.negated() } else { *dq })
        .collect();
    let prepared = |dqs: &[DualQuat]| PreparedPalette::from_dual_quats(dqs, &dq_options()).unwrap();
    let (base, _) = skin_with(&prepared(&dual_quats), &input);
    let (negated, _) = skin_with(&prepared(&all_negated), &input);
    let (mixed_out, mixed_diag) = skin_with(&prepared(&mixed), &input);
    // Negation flips signs exactly, so the aligned sums agree up to the order of rounding.
    assert_points_close("all negated", &base, &negated, REL_F32);
    assert_points_close("mixed signs", &base, &mixed_out, REL_F32);
    assert!(
        mixed_diag.sign_flips > 0,
        "mixed signs must be counted as flips"
    );
}

#[test]
fn blending_without_the_pivot_flip_would_fail_the_sign_test() {
    // The reference takes its quaternions from `DQuat::from_mat3`, whose sign varies from one
    // random rotation to the next, so random rigs mix signs by themselves. With sign alignment
    // the reference agrees with the library; without it, opposite signs cancel instead of
    // averaging and the result moves by far more than any tolerance above.
    let mut rng = Rng::new(11);
    let rig = random_rig(&mut rng, 200, 2, 4, false);
    let naive = ReferenceDqs {
        pivot_flip: false,
        residual: true,
    };
    let reference = |options| {
        let vertices = reference_mesh(
            &rig.positions,
            &rig.normals,
            &rig.tangents,
            &rig.influences,
            &rig.palette,
            None,
            Some(options),
        );
        positions_of(&vertices)
    };
    let input = SkinInput::new(&rig.positions, None, None, &rig.influences).unwrap();
    let library = skin(&input, &rig.palette, None, &dq_options()).unwrap();
    assert_points_close(
        "library vs reference",
        &reference(FULL_DQS),
        &library.positions,
        REF_F64_VS_F32,
    );
    assert!(
        max_relative_difference(&reference(FULL_DQS), &reference(naive)) > 1e3 * REF_F64_VS_F32,
        "a blend without the pivot flip should differ on random rotations"
    );
}

#[test]
fn permuting_influence_slots_leaves_the_result_unchanged() {
    let mut rng = Rng::new(3);
    let rig = random_rig(&mut rng, 400, 4, 8, true);
    let k = 4;
    let (joints, weights) = (rig.influences.joints(), rig.influences.weights());
    let mut permuted_joints = Vec::new();
    let mut permuted_weights = Vec::new();
    for v in 0..rig.positions.len() {
        // Reverse the slots of every vertex.
        for s in (0..k).rev() {
            permuted_joints.push(joints[v * k + s]);
            permuted_weights.push(weights[v * k + s]);
        }
    }
    let permuted = Influences::new(k, permuted_joints, permuted_weights, 8).unwrap();
    for method in [Method::Linear, Method::DualQuaternion] {
        let a = SkinInput::new(&rig.positions, Some(&rig.normals), None, &rig.influences).unwrap();
        let b = SkinInput::new(&rig.positions, Some(&rig.normals), None, &permuted).unwrap();
        let out_a = skin(&a, &rig.palette, Some(&rig.centers), &options(method)).unwrap();
        let out_b = skin(&b, &rig.palette, Some(&rig.centers), &options(method)).unwrap();
        // Not bit-identical: the sums are taken in a different order, so they round
        // differently. Random weights make ties (and so a different pivot) impossible.
        assert_points_close(
            method.name(),
            &out_a.positions,
            &out_b.positions,
            REL_F32 * 10.0,
        );
        assert_eq!(out_a.diagnostics, out_b.diagnostics);
    }
}

#[test]
fn pivot_ties_go_to_the_lowest_slot() {
    // Two influences of equal weight whose rotations are 180° + ε apart in sign: the pivot is
    // slot 0, so the flip is counted on slot 1 whatever the joints are.
    let q = Quat::from_rotation_y(1.0);
    let dqs = [
        DualQuat::from_rotation_translation(q, Vec3::ZERO),
        DualQuat::from_rotation_translation(-Quat::from_rotation_y(1.5), Vec3::ZERO),
    ];
    let prepared = PreparedPalette::from_dual_quats(&dqs, &dq_options()).unwrap();
    let positions = [Vec3::X];
    for joints in [vec![0, 1], vec![1, 0]] {
        let influences = Influences::new(2, joints, vec![0.5, 0.5], 2).unwrap();
        let input = SkinInput::new(&positions, None, None, &influences).unwrap();
        let (out, diagnostics) = skin_with(&prepared, &input);
        assert_eq!(diagnostics.sign_flips, 1);
        // Either way the blend is the rotation by 1.25 rad about Y.
        let expected = Quat::from_rotation_y(1.25) * Vec3::X;
        assert_points_close("tie", &[expected], &out, REL_F32);
    }
}

#[test]
fn non_rigid_single_influences_keep_their_scale_under_dqs() {
    let f = fixtures::twist_coarse();
    let n = f.positions.len();
    let influences = Influences::new(1, vec![1; n], vec![1.0; n], 2).unwrap();
    let input = SkinInput::new(
        &f.positions,
        Some(&f.normals),
        Some(&f.tangents),
        &influences,
    )
    .unwrap();
    let motion =
        Mat4::from_rotation_translation(Quat::from_rotation_z(0.7), Vec3::new(0.3, 0.2, 0.1));
    let mut shear = Mat4::IDENTITY;
    shear.y_axis.x = 0.6;
    shear.z_axis.y = -0.4;
    let cases = [
        ("uniform scale 2", Mat4::from_scale(Vec3::splat(2.0))),
        (
            "scale (1, 2, 3)",
            Mat4::from_scale(Vec3::new(1.0, 2.0, 3.0)),
        ),
        ("shear", shear),
        ("mirror", Mat4::from_scale(Vec3::new(1.0, 1.0, -1.0))),
    ];
    let rigid_only = ReferenceDqs {
        pivot_flip: true,
        residual: false,
    };
    for (name, deformation) in cases {
        let palette = [Mat4::IDENTITY, motion * deformation];
        let lbs = skin(&input, &palette, None, &options(Method::Linear)).unwrap();
        let dq = skin(&input, &palette, None, &dq_options()).unwrap();
        assert_points_close(name, &lbs.positions, &dq.positions, NON_RIGID_REL);
        assert_points_close(
            name,
            lbs.normals.as_ref().unwrap(),
            dq.normals.as_ref().unwrap(),
            NON_RIGID_REL,
        );
        let (lt, dt) = (
            lbs.tangents.as_ref().unwrap(),
            dq.tangents.as_ref().unwrap(),
        );
        let xyz = |t: &[Vec4]| t.iter().map(|t| t.truncate()).collect::<Vec<_>>();
        assert_points_close(name, &xyz(lt), &xyz(dt), NON_RIGID_REL);
        assert!(
            lt.iter().zip(dt).all(|(a, b)| a.w == b.w),
            "{name}: handedness"
        );
        assert_eq!(dq.diagnostics.non_rigid_joints, 1, "{name}");
        assert_eq!(lbs.diagnostics.non_rigid_joints, 1, "{name}");
        // A DQS that drops the residual loses the deformation: the check above can fail.
        let dropped = reference_mesh(
            &f.positions,
            &f.normals,
            &f.tangents,
            &influences,
            &palette,
            None,
            Some(rigid_only),
        );
        assert!(
            max_relative_difference(&lbs.positions, &positions_of(&dropped))
                > 100.0 * NON_RIGID_REL,
            "{name}: a rigid-only DQS should lose the deformation"
        );
    }
}

#[test]
fn residual_centers_scale_about_the_joint_not_the_origin() {
    // Joint 1 sits at c = (0, 1, 0) in the bind pose and, posed, turns 90° about +Z and scales
    // by 2, both about c: M1 = T(c) R 2 T(−c). Joint 0 stays put. The vertex p = (1, 1, 0) is
    // weighted 50/50.
    //
    // With centers: the blended residual is ½ p + ½ (c + 2 (p − c)) = 1.5 p − 0.5 c =
    // (1.5, 1, 0); the rigid parts are the identity and the 90° turn about c, whose blend is the
    // 45° turn about c, taking (1.5, 1, 0) = c + (1.5, 0, 0) to c + 1.5 (cos 45°, sin 45°, 0)
    // = (1.06066, 2.06066, 0).
    //
    // Without centers (c = 0, the seed's form): the residual is 2 p about the origin, the
    // blended residual 1.5 p = (1.5, 1.5, 0); joint 1's rigid part is the 90° turn followed by
    // t = c − 2 R c = (2, 1, 0), which is the 90° turn about (0.5, 1.5, 0); half of it takes
    // (1.5, 1.5, 0) = (0.5, 1.5, 0) + (1, 0, 0) to (0.5 + cos 45°, 1.5 + sin 45°, 0) =
    // (1.20711, 2.20711, 0): the vertex swims.
    let c = Vec3::Y;
    let m1 = Mat4::from_translation(c)
        * Mat4::from_rotation_z(std::f32::consts::FRAC_PI_2)
        * Mat4::from_scale(Vec3::splat(2.0))
        * Mat4::from_translation(-c);
    let palette = [Mat4::IDENTITY, m1];
    let positions = [Vec3::new(1.0, 1.0, 0.0)];
    let influences = Influences::new(2, vec![0, 1], vec![0.5, 0.5], 2).unwrap();
    let input = SkinInput::new(&positions, None, None, &influences).unwrap();
    let half = std::f32::consts::FRAC_1_SQRT_2;
    let with = skin(&input, &palette, Some(&[Vec3::ZERO, c]), &dq_options()).unwrap();
    assert_points_close(
        "with centers",
        &[Vec3::new(1.5 * half, 1.0 + 1.5 * half, 0.0)],
        &with.positions,
        REL_F32,
    );
    let without = skin(&input, &palette, None, &dq_options()).unwrap();
    assert_points_close(
        "without centers",
        &[Vec3::new(0.5 + half, 1.5 + half, 0.0)],
        &without.positions,
        REL_F32,
    );
    assert_eq!(with.diagnostics.non_rigid_joints, 1);
}

#[test]
fn degenerate_joint_and_unweighted_vertex_give_finite_counted_output() {
    let mut collapsed = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
    collapsed.y_axis = Vec4::ZERO; // a joint scaled to zero along y
    let palette = [Mat4::IDENTITY, collapsed];
    let positions = [
        Vec3::new(0.2, 0.5, 0.1),
        Vec3::new(1.0, 1.0, 1.0),
        Vec3::new(-1.0, 0.0, 2.0),
    ];
    let normals = [Vec3::Y, Vec3::X, Vec3::Z];
    let tangents = [Vec4::new(1.0, 0.0, 0.0, 1.0); 3];
    // Vertex 0 fully on the collapsed joint, vertex 1 blended, vertex 2 with zero weights.
    let influences = Influences::new(
        2,
        vec![1, 0, 0, 1, 0, 1],
        vec![1.0, 0.0, 0.5, 0.5, 0.0, 0.0],
        2,
    )
    .unwrap();
    let input = SkinInput::new(&positions, Some(&normals), Some(&tangents), &influences).unwrap();
    for method in [Method::Linear, Method::DualQuaternion] {
        let out = skin(&input, &palette, None, &options(method)).unwrap();
        let normals = out.normals.as_ref().unwrap();
        let tangents = out.tangents.as_ref().unwrap();
        assert!(
            out.positions.iter().all(|p| p.is_finite()),
            "{}",
            method.name()
        );
        assert!(normals.iter().all(|n| n.is_finite()), "{}", method.name());
        assert!(tangents.iter().all(|t| t.is_finite()), "{}", method.name());
        assert_eq!(out.diagnostics.unweighted_vertices, 1);
        assert_eq!(out.diagnostics.non_rigid_joints, 1);
        // Vertex 0's normal matrix is the collapsed 3x3: singular for both methods.
        assert!(
            out.diagnostics.singular_normal_matrices >= 1,
            "{}",
            method.name()
        );
        // The unweighted vertex passes through unchanged, bit for bit.
        assert_eq!(out.positions[2], positions[2]);
        assert_eq!(normals[2], Vec3::Z);
        // The collapsed joint still moves vertex 0 exactly as its matrix does.
        assert_points_close(
            "collapsed",
            &[collapsed.transform_point3(positions[0])],
            &out.positions[..1],
            REL_F32,
        );
    }
}

#[test]
fn normals_stay_unit_and_mirrors_flip_handedness() {
    let mut rng = Rng::new(5);
    let rig = random_rig(&mut rng, 300, 3, 6, true);
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &rig.influences,
    )
    .unwrap();
    for method in [Method::Linear, Method::DualQuaternion] {
        let out = skin(&input, &rig.palette, Some(&rig.centers), &options(method)).unwrap();
        for (v, n) in out.normals.as_ref().unwrap().iter().enumerate() {
            // Unit to f32 round-off of one normalization.
            assert!(
                (n.length() - 1.0).abs() < 1e-6,
                "{} normal {v} has length {}",
                method.name(),
                n.length()
            );
        }
        for t in out.tangents.as_ref().unwrap() {
            assert!((t.truncate().length() - 1.0).abs() < 1e-6);
            assert!(t.w == 1.0 || t.w == -1.0);
        }
    }
    // A single mirrored joint flips every tangent's handedness; a rotation keeps it.
    let f = fixtures::twist_coarse();
    let n = f.positions.len();
    let influences = Influences::new(1, vec![0; n], vec![1.0; n], 1).unwrap();
    let input = SkinInput::new(
        &f.positions,
        Some(&f.normals),
        Some(&f.tangents),
        &influences,
    )
    .unwrap();
    for method in [Method::Linear, Method::DualQuaternion] {
        let mirrored = skin(
            &input,
            &[Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0))],
            None,
            &options(method),
        )
        .unwrap();
        assert!(
            mirrored.tangents.unwrap().iter().all(|t| t.w == -1.0),
            "{}",
            method.name()
        );
        let turned = skin(
            &input,
            &[Mat4::from_rotation_x(2.0)],
            None,
            &options(method),
        )
        .unwrap();
        assert!(
            turned.tangents.unwrap().iter().all(|t| t.w == 1.0),
            "{}",
            method.name()
        );
        // A mirrored normal is the mirror of the normal: (−x, y, z).
        let normals = mirrored.normals.unwrap();
        let expected: Vec<Vec3> = f
            .normals
            .iter()
            .map(|n| Vec3::new(-n.x, n.y, n.z))
            .collect();
        assert_points_close("mirrored normals", &expected, &normals, REL_F32);
    }
}

#[test]
fn library_agrees_with_the_f64_reference() {
    // On every fixture at every evidence angle, and on random rigs with 1, 2, 4 and 8
    // influences, rigid and non-rigid palettes.
    let check = |what: &str,
                 positions: &[Vec3],
                 normals: &[Vec3],
                 tangents: &[Vec4],
                 influences: &Influences,
                 palette: &[Mat4],
                 centers: &[Vec3]| {
        for method in [Method::Linear, Method::DualQuaternion] {
            let input =
                SkinInput::new(positions, Some(normals), Some(tangents), influences).unwrap();
            let out = skin(&input, palette, Some(centers), &options(method)).unwrap();
            let dq = (method == Method::DualQuaternion).then_some(FULL_DQS);
            let reference = reference_mesh(
                positions,
                normals,
                tangents,
                influences,
                palette,
                Some(centers),
                dq,
            );
            let what = format!("{what} {}", method.name());
            assert_points_close(
                &what,
                &positions_of(&reference),
                &out.positions,
                REF_F64_VS_F32,
            );
            // Normals where the normal matrix is well conditioned (the reference inverts it).
            let ref_normals: Vec<Vec3> = reference.iter().map(|r| r.normal.as_vec3()).collect();
            if out.diagnostics.singular_normal_matrices == 0 {
                assert_points_close(
                    &format!("{what} normals"),
                    &ref_normals,
                    out.normals.as_ref().unwrap(),
                    REF_F64_VS_F32 * 10.0,
                );
            }
            let handedness: Vec<f32> = reference.iter().map(|r| r.handedness as f32).collect();
            let ours: Vec<f32> = out.tangents.as_ref().unwrap().iter().map(|t| t.w).collect();
            if out.diagnostics.singular_normal_matrices == 0 {
                assert_eq!(handedness, ours, "{what} handedness");
            }
        }
    };
    for f in fixtures::all() {
        for &angle_deg in skinblend::evidence::angles_deg(&f) {
            check(
                &format!("{} {angle_deg}°", f.name),
                &f.positions,
                &f.normals,
                &f.tangents,
                &f.influences,
                &f.palette(angle_deg),
                &f.joint_centers,
            );
        }
    }
    let mut rng = Rng::new(42);
    for k in [1, 2, 4, 8] {
        for non_rigid in [false, true] {
            let rig = random_rig(&mut rng, 300, k, 10, non_rigid);
            check(
                &format!("random k={k} non_rigid={non_rigid}"),
                &rig.positions,
                &rig.normals,
                &rig.tangents,
                &rig.influences,
                &rig.palette,
                &rig.centers,
            );
        }
    }
}

#[test]
fn parallel_result_is_bit_identical_to_serial() {
    let mut rng = Rng::new(9);
    // Large enough that two threads cut it into pieces of the 4,096-vertex cap (40,000 / 8
    // pieces would be 5,000), three and eight threads into the count per thread.
    let rig = random_rig(&mut rng, 40_000, 4, 16, true);
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &rig.influences,
    )
    .unwrap();
    for method in [Method::Linear, Method::DualQuaternion] {
        let prepared = prepare(&rig.palette, Some(&rig.centers), &options(method)).unwrap();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut positions = vec![Vec3::ZERO; rig.positions.len()];
            let mut normals = vec![Vec3::ZERO; rig.positions.len()];
            let mut tangents = vec![Vec4::ZERO; rig.positions.len()];
            let diagnostics = pool
                .install(|| {
                    skin_into(
                        &input,
                        &prepared,
                        SkinOutputs {
                            positions: &mut positions,
                            normals: Some(&mut normals),
                            tangents: Some(&mut tangents),
                        },
                        RunOptions::default(),
                    )
                })
                .unwrap();
            (positions, normals, tangents, diagnostics)
        };
        let serial = run(1);
        for threads in [2, 3, 8] {
            assert!(
                serial == run(threads),
                "{} with {threads} threads differs from serial",
                method.name()
            );
        }
    }
}

#[test]
fn prepared_palette_updates_per_frame() {
    let f = fixtures::twist_fine();
    let input = SkinInput::new(&f.positions, None, None, &f.influences).unwrap();
    let mut prepared = prepare(&f.palette(0.0), Some(&f.joint_centers), &dq_options()).unwrap();
    prepared.update(&f.palette(90.0)).unwrap();
    let (updated, _) = skin_with(&prepared, &input);
    let fresh = skin(
        &input,
        &f.palette(90.0),
        Some(&f.joint_centers),
        &dq_options(),
    )
    .unwrap();
    assert_eq!(updated, fresh.positions);
}
