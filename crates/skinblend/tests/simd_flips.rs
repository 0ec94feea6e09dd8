//! The SIMD kernels' sign-flip counts against the scalar kernel's, over the pieces of parallel
//! calls and the blocks given to the scalar kernel, and meshes large enough to prefetch.

mod common;

use common::simd::*;
use common::*;
use glam::{Mat4, Vec3};
use skinblend::{
    prepare, BlendValues, Influences, Method, RunOptions, SkinInput, SkinMesh, SkinOptions,
};

/// DQS and CoR with four and eight influences count their sign flips once per call from the
/// mesh's `(pivot joint, joint)` pair counts where the mesh is large enough (here 8,195
/// vertices on 12 joints); the count must stay the scalar kernel's over parallel pieces and
/// over the vertices the SIMD blocks send to the scalar kernel: blocks on a non-rigid joint,
/// vertices without a center (CoR), light vertices (every weight subnormal), zero weights, the
/// tail, and a palette longer than the mesh's joint count (the table's rows are longer than the
/// counts'). (Seen failing with the declined blocks' tallied flips not taken back, and with the
/// table's rows read at the mesh's joint count.) Blended tallies (`simd::flips`): its blocks of
/// all 1s (DQS's kernel), interior blocks and blocks mixing 1 with interior values (the scalar
/// kernel) must add up the same. With a 0 among the values, an input counts per influence and
/// a `SkinMesh` tallies the vertices above 0: blocks all at 0 (LBS's kernel, no flips) and
/// blocks mixing 0, 1 and interior values must add up the same too. (Seen failing with the
/// mesh's tally counting the 0s, and with the mixed blocks taking their 0s' flips out of it.)
#[test]
fn flip_tally_matches_the_scalar_count_over_pieces_and_fallbacks() {
    const VERTICES: usize = 8_195;
    const MESH_JOINTS: usize = 12;
    const PALETTE_JOINTS: usize = 20;
    // Only vertices 1000..1100 use joint 11, the one non-rigid joint.
    const ON_NON_RIGID: std::ops::Range<usize> = 1000..1100;
    let mut rng = Rng::new(71);
    for k in [4, 8] {
        let rig = random_rig(&mut rng, VERTICES, k, MESH_JOINTS, false);
        let mut joints = rig.influences.joints().to_vec();
        let mut weights = rig.influences.weights().to_vec();
        for v in 0..VERTICES {
            let slots = v * k..(v + 1) * k;
            if !ON_NON_RIGID.contains(&v) {
                for joint in &mut joints[slots.clone()] {
                    if usize::from(*joint) == MESH_JOINTS - 1 {
                        *joint -= 1;
                    }
                }
            }
            if v % 5 == 0 {
                weights[v * k + 1] = if v % 2 == 0 { 0.0 } else { -0.0 };
            }
            if (3000..3003).contains(&v) {
                weights[slots].fill(1e-39);
            }
        }
        let influences = Influences::new(k, joints, weights, MESH_JOINTS).unwrap();
        let mut palette: Vec<Mat4> = (0..PALETTE_JOINTS)
            .map(|_| Mat4::from_rotation_translation(rng.rotation(), rng.vec3(1.0)))
            .collect();
        palette[MESH_JOINTS - 1] *= Mat4::from_scale(Vec3::new(1.0, 1.5, 0.5));
        let joint_centers: Vec<Vec3> = (0..PALETTE_JOINTS).map(|_| rng.vec3(1.0)).collect();
        let centers: Vec<Vec3> = rig
            .positions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i % 97 == 5 {
                    skinblend::cor::NO_ROTATION_CENTER
                } else {
                    *p * 0.8
                }
            })
            .collect();
        // Blocks of eight: all 1, all interior, 1 and `low` mixed with interior, all `low`.
        let blend_values = |low: f32| -> Vec<f32> {
            (0..VERTICES)
                .map(|v| match (v / 8) % 4 {
                    0 => 1.0,
                    1 => 0.3,
                    2 if v % 8 == 3 => 1.0,
                    2 if v % 8 == 6 => low,
                    2 => 0.6,
                    _ => low,
                })
                .collect()
        };
        let (tallied, per_influence) = (blend_values(0.9), blend_values(0.0));
        let input = SkinInput::new(
            &rig.positions,
            Some(&rig.normals),
            Some(&rig.tangents),
            &influences,
        )
        .unwrap()
        .with_rotation_centers(&centers)
        .unwrap();
        let cases = [
            (Method::DualQuaternion, input),
            (Method::CenterOfRotation, input),
            (
                Method::Blended,
                input
                    .with_blend_values(BlendValues::PerVertex(&tallied))
                    .unwrap(),
            ),
            (
                Method::Blended,
                input
                    .with_blend_values(BlendValues::PerVertex(&per_influence))
                    .unwrap(),
            ),
        ];
        for (method, input) in cases {
            let options = |simd, parallel| SkinOptions {
                method,
                simd,
                parallel,
                ..SkinOptions::default()
            };
            let skin = |options: SkinOptions| {
                let prepared = prepare(&palette, Some(&joint_centers), &options).unwrap();
                run(&input, &prepared, options.run_options(), true, false)
            };
            let scalar = skin(options(false, false));
            assert!(
                scalar.diagnostics.sign_flips > 0 && scalar.diagnostics.unweighted_vertices == 3
            );
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let simd = pool.install(|| skin(options(true, true)));
                let what = format!("k={k} {} on {threads} threads", method.name());
                assert_eq!(scalar.diagnostics, simd.diagnostics, "{what}: diagnostics");
                assert_points_close(&what, &scalar.positions, &simd.positions, SIMD_VS_SCALAR);
                assert_points_close(&what, &scalar.normals, &simd.normals, SIMD_VS_SCALAR);
                // A mesh keeps blended's tally of the vertices above 0; its second call reads it.
                let mesh = SkinMesh::from_input(&input);
                let prepared = prepare(&palette, Some(&joint_centers), &options(true, true));
                for call in 0..2 {
                    let skinned = pool
                        .install(|| mesh.skin(prepared.as_ref().unwrap(), RunOptions::default()))
                        .unwrap();
                    let what = format!("{what}, mesh call {call}");
                    assert_eq!(
                        scalar.diagnostics, skinned.diagnostics,
                        "{what}: diagnostics"
                    );
                }
            }
        }
    }
}

#[test]
fn meshes_large_enough_to_prefetch() {
    // 2^18 + 3 vertices: on Intel CPUs the DQS driver prefetches on meshes of 2^18 or more
    // (`PREFETCH_MIN_VERTICES` in simd/driver.rs), up to its last block, whose prefetch addresses
    // lie past the arrays' ends; elsewhere this is a large mesh against the scalar kernel (the
    // unit test `dqs_prefetch_changes_no_bit` forces the prefetch on any CPU).
    let mut rng = Rng::new(29);
    for k in [4, 8] {
        let rig = random_rig(&mut rng, (1 << 18) + 3, k, 12, false);
        let input =
            SkinInput::new(&rig.positions, Some(&rig.normals), None, &rig.influences).unwrap();
        let options = |simd, parallel| SkinOptions {
            method: Method::DualQuaternion,
            simd,
            parallel,
            ..SkinOptions::default()
        };
        // Parallel pieces prefetch too, where the CPU does (the whole mesh's size decides).
        let [simd, parallel, scalar] =
            [(true, false), (true, true), (false, false)].map(|(simd, parallel)| {
                let options = options(simd, parallel);
                let prepared = prepare(&rig.palette, None, &options).unwrap();
                run(&input, &prepared, options.run_options(), true, false)
            });
        let what = format!("k={k} dq, 2^18 + 3 vertices");
        assert_points_close(&what, &scalar.positions, &simd.positions, SIMD_VS_SCALAR);
        assert_points_close(&what, &scalar.normals, &simd.normals, SIMD_VS_SCALAR);
        assert_eq!(scalar.diagnostics, simd.diagnostics, "{what}: diagnostics");
        assert_eq!(
            simd.positions, parallel.positions,
            "{what}: parallel positions"
        );
        assert_eq!(simd.normals, parallel.normals, "{what}: parallel normals");
        assert_eq!(
            simd.diagnostics, parallel.diagnostics,
            "{what}: parallel diagnostics"
        );
    }
}
