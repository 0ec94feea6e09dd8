//! The GPU kernels against the CPU scalar reference: every core fixture at the evidence angles,
//! the antipodal (negated dual quaternion) palettes, random rigs with 1, 2, 4 and 8 influences,
//! meshes without normals or tangents, subnormal weight sums; every method (LBS, DQS, CoR,
//! blended), CoR with the fixtures' own centers of rotation and, on the random rigs, with every
//! fifth vertex without a center (NaN, skinned by DQS), blended with the fixtures' joint-rule
//! blend values (0, 1 and ½ at the ring) and, on the random rigs, 0, 1, ½ and values between;
//! blended at 0 and 1 against the GPU's own LBS and DQS. The device, dispatch and error cases
//! are in gpu_device.rs.
//!
//! Without an adapter these tests print why and pass, unless `SKINBLEND_REQUIRE_GPU=1` (CI sets
//! it, with lavapipe installed), in which case they fail.

mod common;

use common::random_rig::random_rig;
use common::{compare, cpu, gpu, max_relative, mesh_scale, GPU_VS_CPU};
use glam::{Mat4, Quat, Vec3, Vec4};
use skinblend::{
    cor, evidence, fixtures, prepare, BlendValues, DualQuat, Method, PreparedPalette, RunOptions,
    SkinInput, SkinOptions, Skinned,
};
use skinblend_gpu::GpuOptions;

/// The least CoR must move some vertex away from DQS (relative to the mesh size) on the random
/// rigs: their centers sit up to 0.5 from the vertex and their joints turn by up to 3.1 rad, so a
/// working center moves vertices by a good fraction of the mesh; 1e-2 is a thousand times
/// [`GPU_VS_CPU`], so round-off cannot pass for it.
const COR_MOVES_AT_LEAST: f32 = 1e-2;

/// The least blended skinning at in-between values must move some vertex away from LBS
/// (relative to the mesh size) on the random rigs: their joints turn by up to 3.1 rad, where LBS
/// and DQS part by a good fraction of the mesh; 1e-2 is a thousand times [`GPU_VS_CPU`], so
/// round-off cannot pass for it.
const BLEND_MOVES_AT_LEAST: f32 = 1e-2;

fn every_fixture_at_every_evidence_angle_matches_the_cpu() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let mut worst = 0f32;
    let mut worst_cor = 0f32;
    let mut worst_blended = 0f32;
    let mut cases = 0;
    let mut blend_values_seen = [false; 3];
    for fixture in fixtures::all() {
        let centers = evidence::fixture_rotation_centers(&fixture).expect("centers");
        let blend = fixture.dq_blend_values();
        for &b in &blend {
            blend_values_seen[usize::from(b > 0.0) + usize::from(b >= 1.0)] = true;
        }
        let input = SkinInput::new(
            &fixture.positions,
            Some(&fixture.normals),
            Some(&fixture.tangents),
            &fixture.influences,
        )
        .expect("fixture input")
        .with_rotation_centers(&centers)
        .expect("centers")
        .with_blend_values(BlendValues::PerVertex(&blend))
        .expect("blend values");
        for &angle_deg in evidence::angles_deg(&fixture) {
            for method in Method::ALL {
                let options = SkinOptions {
                    method,
                    ..SkinOptions::default()
                };
                let palette = prepare(
                    &fixture.palette(angle_deg),
                    Some(&fixture.joint_centers),
                    &options,
                )
                .expect("palette");
                let what = format!("{} at {angle_deg}° with {}", fixture.name, method.name());
                let difference = compare(&gpu, &input, &palette, &what);
                worst = worst.max(difference);
                match method {
                    Method::CenterOfRotation => worst_cor = worst_cor.max(difference),
                    Method::Blended => worst_blended = worst_blended.max(difference),
                    Method::Linear | Method::DualQuaternion => {}
                }
                cases += 1;
            }
        }
    }
    assert!(
        cases >= 60,
        "only {cases} cases: fixtures, angles or methods missing"
    );
    assert_eq!(
        blend_values_seen, [true; 3],
        "the fixtures' blend values must hold 0, 1 and values between"
    );
    println!(
        "fixtures: {cases} cases, max relative GPU vs CPU difference {worst:e} (CoR: \
         {worst_cor:e}, blended: {worst_blended:e})"
    );
}

fn shear_cap_has_residuals_and_singular_lbs_normals_on_both() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    // The test above would pass vacuously if the residual path never ran: make sure it does.
    let fixture = fixtures::shear_cap();
    let input = SkinInput::new(
        &fixture.positions,
        Some(&fixture.normals),
        Some(&fixture.tangents),
        &fixture.influences,
    )
    .expect("input");
    let options = SkinOptions {
        method: Method::DualQuaternion,
        ..SkinOptions::default()
    };
    let palette = prepare(
        &fixture.palette(90.0),
        Some(&fixture.joint_centers),
        &options,
    )
    .expect("palette");
    assert!(palette.non_rigid_joints() > 0);
    let mut mesh = gpu.upload(&input).expect("upload");
    let skinned = gpu
        .skin_and_read_back(&mut mesh, &palette, RunOptions::default())
        .expect("skin");
    assert!(skinned.diagnostics.non_rigid_joints > 0);
    compare(&gpu, &input, &palette, "shear_cap DQS at 90°");

    // LBS at the 180° twist: the joint ring's blended 3x3 is singular, counted on both sides.
    let twist = fixtures::twist_coarse();
    let input = SkinInput::new(
        &twist.positions,
        Some(&twist.normals),
        Some(&twist.tangents),
        &twist.influences,
    )
    .expect("input");
    let palette = prepare(&twist.palette(180.0), None, &SkinOptions::default()).expect("palette");
    let mut mesh = gpu.upload(&input).expect("upload");
    let skinned = gpu
        .skin_and_read_back(&mut mesh, &palette, RunOptions::default())
        .expect("skin");
    assert_eq!(
        skinned.diagnostics.singular_normal_matrices,
        twist.joint_ring.len()
    );
}

fn random_rigs_with_1_2_4_8_influences_match_the_cpu() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let mut worst = 0f32;
    let mut worst_cor = 0f32;
    let mut worst_blended = 0f32;
    for k in [1, 2, 4, 8] {
        for non_rigid in [false, true] {
            for renormalize in [true, false] {
                let rig = random_rig(k as u64 * 31 + 7, 3000, k, 24, non_rigid);
                let input = rig.input(true, true);
                for method in Method::ALL {
                    let options = SkinOptions {
                        method,
                        renormalize,
                        ..SkinOptions::default()
                    };
                    let palette =
                        prepare(&rig.palette, Some(&rig.centers), &options).expect("palette");
                    let what = format!(
                        "k={k}, non_rigid={non_rigid}, renormalize={renormalize}, {}",
                        method.name()
                    );
                    let difference = compare(&gpu, &input, &palette, &what);
                    worst = worst.max(difference);
                    match method {
                        Method::CenterOfRotation => worst_cor = worst_cor.max(difference),
                        Method::Blended => worst_blended = worst_blended.max(difference),
                        Method::Linear | Method::DualQuaternion => {}
                    }
                }
            }
        }
    }
    println!(
        "random rigs: max relative GPU vs CPU difference {worst:e} (CoR: {worst_cor:e}, blended: \
         {worst_blended:e})"
    );
}

fn positions_only_and_normals_only_meshes_match_the_cpu() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let rig = random_rig(5, 700, 3, 9, true);
    for (normals, tangents) in [(false, false), (true, false), (false, true)] {
        let input = rig.input(normals, tangents);
        for method in Method::ALL {
            let options = SkinOptions {
                method,
                ..SkinOptions::default()
            };
            let palette = prepare(&rig.palette, Some(&rig.centers), &options).expect("palette");
            let mut mesh = gpu.upload(&input).expect("upload");
            let layout = mesh.output_layout();
            assert_eq!(
                layout.stride_bytes,
                12 + 12 * u64::from(normals) + 16 * u64::from(tangents)
            );
            let skinned = gpu
                .skin_and_read_back(&mut mesh, &palette, RunOptions::default())
                .expect("skin");
            assert_eq!(skinned.normals.is_some(), normals);
            assert_eq!(skinned.tangents.is_some(), tangents);
            compare(
                &gpu,
                &input,
                &palette,
                &format!("normals={normals} tangents={tangents} {}", method.name()),
            );
        }
    }
}

fn antipodal_dual_quaternions_match_the_cpu_and_count_sign_flips() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let rig = random_rig(11, 2000, 4, 16, false);
    let input = rig.input(true, true);
    let motions: Vec<DualQuat> = rig
        .palette
        .iter()
        .map(|m| {
            let (_, rotation, translation) = m.to_scale_rotation_translation();
            DualQuat::from_rotation_translation(rotation, translation)
        })
        .collect();
    // The same motions with every other joint stored with the opposite sign.
    let negated: Vec<DualQuat> = motions
        .iter()
        .enumerate()
        .map(|(j, dq)| if j % 2 == 1 { dq.negated() } else { *dq })
        .collect();
    for method in [Method::DualQuaternion, Method::CenterOfRotation] {
        let options = SkinOptions {
            method,
            ..SkinOptions::default()
        };
        let plain = PreparedPalette::from_dual_quats(&motions, &options).expect("palette");
        let flipped = PreparedPalette::from_dual_quats(&negated, &options).expect("palette");
        let name = method.name();
        compare(&gpu, &input, &plain, &format!("{name}: as given"));
        compare(
            &gpu,
            &input,
            &flipped,
            &format!("{name}: every other negated"),
        );

        let mut mesh = gpu.upload(&input).expect("upload");
        let a = gpu
            .skin_and_read_back(&mut mesh, &plain, RunOptions::default())
            .expect("skin");
        let b = gpu
            .skin_and_read_back(&mut mesh, &flipped, RunOptions::default())
            .expect("skin");
        assert!(
            b.diagnostics.sign_flips > 0,
            "{name}: negation must be seen"
        );
        // Storage sign does not change the result (up to f32 round-off of the negation-free
        // sum).
        let worst = max_relative(&b, &a, mesh_scale(&rig.positions));
        assert!(
            worst <= GPU_VS_CPU,
            "{name}: sign changed the GPU result by {worst:e}"
        );
    }

    // LBS from the same dual quaternions goes through the same palette path.
    let linear = SkinOptions::default();
    let linear_palette = PreparedPalette::from_dual_quats(&negated, &linear).expect("palette");
    compare(
        &gpu,
        &input,
        &linear_palette,
        "LBS from negated dual quaternions",
    );
}

fn cor_turns_about_the_centers_and_falls_back_to_dqs_without_one() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    // The comparisons above would pass vacuously if the center were never used: CoR must differ
    // from DQS where a vertex has a center and equal it (same kernel arithmetic) where not.
    for non_rigid in [false, true] {
        let rig = random_rig(17, 1500, 4, 12, non_rigid);
        let input = rig.input(true, true);
        let mut mesh = gpu.upload(&input).expect("upload");
        assert!(mesh.has_rotation_centers());
        let prepared = |method| {
            let options = SkinOptions {
                method,
                ..SkinOptions::default()
            };
            prepare(&rig.palette, Some(&rig.centers), &options).expect("palette")
        };
        let cor_palette = prepared(Method::CenterOfRotation);
        let dq = gpu
            .skin_and_read_back(
                &mut mesh,
                &prepared(Method::DualQuaternion),
                RunOptions::default(),
            )
            .expect("DQS");
        let cor = gpu
            .skin_and_read_back(&mut mesh, &cor_palette, RunOptions::default())
            .expect("CoR");
        assert_eq!(cor.diagnostics, dq.diagnostics, "same blend, same counts");
        let scale = mesh_scale(&rig.positions);
        let mut moved = 0f32;
        for (v, center) in rig.rotation_centers.iter().enumerate() {
            let d = (cor.positions[v] - dq.positions[v]).length() / scale;
            if cor::has_rotation_center(*center) {
                moved = moved.max(d);
            } else {
                assert!(
                    d <= GPU_VS_CPU,
                    "vertex {v} has no center: CoR must be DQS, differs by {d:e}"
                );
            }
        }
        assert!(
            moved > COR_MOVES_AT_LEAST,
            "CoR never moved a vertex away from DQS (at most {moved:e})"
        );
        compare(
            &gpu,
            &input,
            &cor_palette,
            &format!("CoR with NaN centers, non_rigid={non_rigid}"),
        );

        // Every center NaN: the whole mesh is DQS, on both sides.
        let none = vec![cor::NO_ROTATION_CENTER; rig.positions.len()];
        let without = rig
            .input(true, true)
            .with_rotation_centers(&none)
            .expect("centers");
        compare(&gpu, &without, &cor_palette, "CoR, no vertex with a center");
    }
}

/// Skins `input` on the GPU under `method` (the rig's palette).
fn skin_on_gpu(
    gpu: &skinblend_gpu::GpuSkinner,
    input: &SkinInput<'_>,
    rig: &common::random_rig::RandomRig,
    method: Method,
) -> Skinned {
    let options = SkinOptions {
        method,
        ..SkinOptions::default()
    };
    let palette = prepare(&rig.palette, Some(&rig.centers), &options).expect("palette");
    let mut mesh = gpu.upload(input).expect("upload");
    gpu.skin_and_read_back(&mut mesh, &palette, RunOptions::default())
        .expect("skin")
}

fn blended_is_lbs_at_0_dqs_at_1_and_their_interpolation_between() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    // The comparisons with the CPU would pass vacuously if the GPU read no blend value (or the
    // wrong one): blended must be the GPU's own LBS at 0, its DQS at 1, and the interpolation
    // of the two positions between, per vertex and for a value given for the whole mesh.
    for non_rigid in [false, true] {
        let rig = random_rig(23, 1200, 4, 12, non_rigid);
        let input = rig.input(true, true);
        let scale = mesh_scale(&rig.positions);
        let lbs = skin_on_gpu(&gpu, &input, &rig, Method::Linear);
        let dqs = skin_on_gpu(&gpu, &input, &rig, Method::DualQuaternion);
        let uniform = |value| {
            rig.input(true, true)
                .with_blend_values(BlendValues::Uniform(value))
                .expect("blend value")
        };
        // Blend 0 and 1 for the whole mesh: the blended kernel evaluates only LBS or only DQS,
        // with their operations in their order (a shader compiler may still contract them
        // differently in another pipeline: hence the tolerance), and counts as they do.
        for (value, alone, name) in [(0.0, &lbs, "LBS"), (1.0, &dqs, "DQS")] {
            let blended = skin_on_gpu(&gpu, &uniform(value), &rig, Method::Blended);
            assert_eq!(
                blended.diagnostics, alone.diagnostics,
                "blend {value}: {name}"
            );
            let worst = max_relative(&blended, alone, scale);
            assert!(
                worst <= GPU_VS_CPU,
                "blend {value} differs from the GPU's {name} by {worst:e}"
            );
        }
        // Per vertex (0, 1, ½ and between) and 0.3 for the whole mesh: positions interpolate.
        let per_vertex = skin_on_gpu(&gpu, &input, &rig, Method::Blended);
        let third = skin_on_gpu(&gpu, &uniform(0.3), &rig, Method::Blended);
        let mut moved = 0f32;
        for v in 0..rig.positions.len() {
            for (b, skinned) in [(rig.blend_values[v], &per_vertex), (0.3, &third)] {
                let expected = lbs.positions[v].lerp(dqs.positions[v], b);
                let d = (skinned.positions[v] - expected).length() / scale;
                assert!(
                    d <= GPU_VS_CPU,
                    "vertex {v} at blend {b}: {} is not the interpolation {expected} ({d:e})",
                    skinned.positions[v]
                );
                moved = moved.max((skinned.positions[v] - lbs.positions[v]).length() / scale);
            }
        }
        assert!(
            moved > BLEND_MOVES_AT_LEAST,
            "blended never moved a vertex away from LBS (at most {moved:e})"
        );
        compare(
            &gpu,
            &uniform(0.3),
            &prepare_blended(&rig),
            "blend 0.3 for the mesh",
        );
    }
}

fn prepare_blended(rig: &common::random_rig::RandomRig) -> PreparedPalette {
    let options = SkinOptions {
        method: Method::Blended,
        ..SkinOptions::default()
    };
    prepare(&rig.palette, Some(&rig.centers), &options).expect("palette")
}

fn subnormal_weight_sums_leave_a_vertex_unweighted_as_on_the_cpu() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    // Vertex 0: weights summing to a subnormal (1/sum overflows; a GPU may flush it to zero);
    // vertex 1: the smallest normal sum, skinned; vertex 2: ordinary weights.
    let positions = [
        Vec3::new(1.0, 2.0, 3.0),
        Vec3::new(-1.0, 0.5, 2.0),
        Vec3::new(0.5, -1.0, 1.0),
    ];
    let normals = [Vec3::Y, Vec3::X, Vec3::Z];
    let tangents = [Vec4::new(1.0, 0.0, 0.0, 1.0); 3];
    let centers = [Vec3::ZERO, Vec3::new(0.0, 1.0, 0.0), Vec3::X];
    let influences = skinblend::Influences::new(
        2,
        vec![0, 1, 0, 1, 0, 1],
        vec![1e-39, 0.5e-39, f32::MIN_POSITIVE, 0.0, 0.25, 0.75],
        2,
    )
    .expect("valid influences");
    let input = SkinInput::new(&positions, Some(&normals), Some(&tangents), &influences)
        .expect("input")
        .with_rotation_centers(&centers)
        .expect("centers")
        .with_blend_values(BlendValues::PerVertex(&[0.5, 0.25, 0.75]))
        .expect("blend values");
    let palette = [
        Mat4::from_scale_rotation_translation(
            Vec3::new(1.0, 2.0, 1.0),
            Quat::from_rotation_y(0.5),
            Vec3::X,
        ),
        Mat4::from_rotation_translation(Quat::from_rotation_z(1.0), Vec3::Y),
    ];
    for method in Method::ALL {
        let options = SkinOptions {
            method,
            ..SkinOptions::default()
        };
        let prepared = prepare(&palette, None, &options).expect("palette");
        compare(
            &gpu,
            &input,
            &prepared,
            &format!("subnormal sums {}", method.name()),
        );
        let on_cpu = cpu(&input, &prepared);
        assert_eq!(
            on_cpu.diagnostics.unweighted_vertices,
            1,
            "{}",
            method.name()
        );
        assert_eq!(on_cpu.positions[0], positions[0], "{}", method.name());
    }
}

skinblend_testkit::test_main!(
    every_fixture_at_every_evidence_angle_matches_the_cpu,
    shear_cap_has_residuals_and_singular_lbs_normals_on_both,
    random_rigs_with_1_2_4_8_influences_match_the_cpu,
    positions_only_and_normals_only_meshes_match_the_cpu,
    antipodal_dual_quaternions_match_the_cpu_and_count_sign_flips,
    cor_turns_about_the_centers_and_falls_back_to_dqs_without_one,
    blended_is_lbs_at_0_dqs_at_1_and_their_interpolation_between,
    subnormal_weight_sums_leave_a_vertex_unweighted_as_on_the_cpu,
);
