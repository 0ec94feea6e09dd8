//! The SIMD kernels against the scalar reference kernel, for every variant the dispatch table
//! has: methods (LBS, DQS, CoR with and without centers) × attribute sets × influence counts,
//! rigid, non-rigid and antipodal palettes, ragged vertex counts (tails and fallbacks),
//! unweighted vertices, weight sums, and the fixtures.

mod common;

use common::simd::*;
use common::*;
use glam::{Mat4, Vec3};
use skinblend::{
    fixtures, prepare, DualQuat, Influences, Method, PreparedPalette, RunOptions, SkinInput,
    SkinOptions,
};

#[test]
fn simd_backend_is_reported() {
    match skinblend::simd_backend() {
        Some(name) => println!("SIMD kernels in use: {name}"),
        None => println!("no SIMD kernels on this CPU: the comparisons below test scalar = scalar"),
    }
}

#[test]
fn random_rigs_every_influence_count() {
    let mut rng = Rng::new(17);
    // 1003 vertices: 125 full blocks of 8 and a tail of 3.
    for k in [1, 2, 3, 4, 5, 8, 12] {
        for (non_rigid, holes) in [(false, true), (true, true), (true, false)] {
            let rig = random_rig(&mut rng, 1003, k, 12, non_rigid);
            // Centers near the vertices, and with `holes` every seventh vertex without one
            // (skinned by DQS; every block then has one, and CoR's blocks go to the scalar
            // kernel: without holes CoR's SIMD blocks are compared, residuals included).
            let centers: Vec<Vec3> = rig
                .positions
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    if holes && i % 7 == 3 {
                        skinblend::cor::NO_ROTATION_CENTER
                    } else {
                        *p * 0.8 + rng.vec3(0.2)
                    }
                })
                .collect();
            let input = SkinInput::new(
                &rig.positions,
                Some(&rig.normals),
                Some(&rig.tangents),
                &rig.influences,
            )
            .unwrap()
            .with_rotation_centers(&centers)
            .unwrap();
            compare(
                &format!("k={k} non_rigid={non_rigid} holes={holes}"),
                &input,
                |o| prepare(&rig.palette, Some(&rig.centers), o).unwrap(),
            );
        }
    }
}

#[test]
fn antipodal_dual_quaternion_palettes() {
    let mut rng = Rng::new(23);
    let rig = random_rig(&mut rng, 517, 4, 8, false);
    let dual_quats: Vec<DualQuat> = (0..8)
        .map(|j| {
            let dq = DualQuat::from_rotation_translation(rng.rotation(), rng.vec3(1.0));
            if j % 3 == 0 {
                dq.negated()
            } else {
                dq
            }
        })
        .collect();
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &rig.influences,
    )
    .unwrap();
    compare("antipodal", &input, |o| {
        PreparedPalette::from_dual_quats(&dual_quats, o).unwrap()
    });
}

/// Weights that do not sum to 1 (0.3 to 1.7 per vertex, as files the loader did not repair can
/// hold): every kernel, the positions-only LBS one included, divides by the sum like the scalar
/// kernel. (Fails when a SIMD kernel skips the division: the other tests' weights sum to 1.)
#[test]
fn weights_not_summing_to_one() {
    let mut rng = Rng::new(41);
    for k in [1, 2, 4, 8] {
        let rig = random_rig(&mut rng, 203, k, 12, false);
        let mut weights = rig.influences.weights().to_vec();
        for (v, vertex) in weights.chunks_mut(k).enumerate() {
            let sum_wanted = 0.3 + 1.4 * (v % 11) as f32 / 10.0;
            for w in vertex {
                *w *= sum_wanted;
            }
        }
        let influences = Influences::new(k, rig.influences.joints().to_vec(), weights, 12).unwrap();
        let input = SkinInput::new(
            &rig.positions,
            Some(&rig.normals),
            Some(&rig.tangents),
            &influences,
        )
        .unwrap();
        compare(&format!("k={k} weights summing to 0.3-1.7"), &input, |o| {
            prepare(&rig.palette, Some(&rig.centers), o).unwrap()
        });
    }
}

/// Zero weights among four and eight influences, with palettes of 12 joints (the SIMD DQS
/// blend reads each influence's sign from the palette's pivot sign table) and of 200 (no
/// table: each influence is dotted with the pivot): a zero weight never counts as a flip,
/// though its joint may lie in the other hemisphere from the pivot, and `-0.0` is a zero
/// weight too. (Seen failing with the table kernel's zero-weight correction left out: the
/// flip counts differ.)
#[test]
fn zero_weights_and_large_palettes_keep_the_flip_count() {
    let mut rng = Rng::new(53);
    for k in [4, 8] {
        for joints in [12, 200] {
            let rig = random_rig(&mut rng, 203, k, joints, false);
            let mut weights = rig.influences.weights().to_vec();
            for (v, vertex) in weights.chunks_mut(k).enumerate() {
                if v % 3 == 0 {
                    // One to k − 1 trailing zeros, the last of them −0.0 on even vertices.
                    let zeros = 1 + v % (k - 1);
                    vertex[k - zeros..].fill(0.0);
                    if v % 2 == 0 {
                        vertex[k - 1] = -0.0;
                    }
                }
            }
            let influences =
                Influences::new(k, rig.influences.joints().to_vec(), weights, joints).unwrap();
            compare_on_rig(
                &format!("k={k} joints={joints} zero weights"),
                &rig,
                &influences,
                Some(&rig.centers),
            );
        }
    }
}

/// Palettes with more joints than the mesh uses (12 of 40: the pivot sign table has a row per
/// palette joint, and each vertex's pivot word points at its pivot joint's row), and the
/// largest joint count that has the table (128: the highest row, joint 127, in the pivot word's
/// high byte), with four and eight influences, small meshes (flips counted per influence) and
/// large ones (counted once per call from the pivot pair counts). (Fails when the kernels'
/// rows and the table's disagree on the row length: the flip counts and the normals differ.)
#[test]
fn palettes_larger_than_the_mesh_and_the_largest_table() {
    let mut rng = Rng::new(61);
    for k in [4, 8] {
        for (mesh_joints, palette_joints, vertices) in
            [(12, 40, 203), (12, 40, 2003), (128, 128, 1003)]
        {
            let rig = random_rig(&mut rng, vertices, k, palette_joints, false);
            let joints: Vec<u16> = rig
                .influences
                .joints()
                .iter()
                .map(|&j| j % mesh_joints as u16)
                .collect();
            let influences =
                Influences::new(k, joints, rig.influences.weights().to_vec(), mesh_joints).unwrap();
            compare_on_rig(
                &format!("k={k} {mesh_joints} of {palette_joints} joints, {vertices} vertices"),
                &rig,
                &influences,
                Some(&rig.centers),
            );
        }
    }
}

/// LBS addresses its palette entries by the byte offsets `Influences` stores (`joint · 64` in a
/// `u16`) up to 1,024 joints, and by shifted joints above. Both sides of that limit, with the
/// highest joints in use (joint 1,023's offset is 65,472, the largest that fits; 1,024 is the
/// first joint past it), for every LBS variant (one to eight influences, and three for the
/// any-`k` one; weights summing to 1 and not). Fails when either way of addressing reads
/// another joint's entry: the positions differ by the whole motion.
#[test]
fn linear_entries_by_offsets_and_by_joints() {
    let mut rng = Rng::new(67);
    for joint_count in [1024, 1025] {
        for k in [1, 2, 3, 4, 8] {
            let rig = random_rig(&mut rng, 203, k, joint_count, false);
            // Every eighth slot one of the three highest joints.
            let joints: Vec<u16> = rig
                .influences
                .joints()
                .iter()
                .enumerate()
                .map(|(slot, &joint)| {
                    if slot % 8 == 0 {
                        (joint_count - 1 - slot / 8 % 3) as u16
                    } else {
                        joint
                    }
                })
                .collect();
            for scale in [1.0, 0.75] {
                let weights = rig.influences.weights().iter().map(|w| w * scale).collect();
                let influences = Influences::new(k, joints.clone(), weights, joint_count).unwrap();
                compare_on_rig(
                    &format!("k={k} {joint_count} joints, weights times {scale}"),
                    &rig,
                    &influences,
                    None,
                );
            }
        }
    }
}

#[test]
fn unweighted_vertices_inside_blocks_and_tails() {
    let mut rng = Rng::new(29);
    let rig = random_rig(&mut rng, 37, 2, 4, false);
    let mut weights = rig.influences.weights().to_vec();
    for v in [0, 9, 17, 36] {
        weights[v * 2] = 0.0;
        weights[v * 2 + 1] = 0.0;
    }
    let influences = Influences::new(2, rig.influences.joints().to_vec(), weights, 4).unwrap();
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &influences,
    )
    .unwrap();
    compare("unweighted", &input, |o| {
        prepare(&rig.palette, None, o).unwrap()
    });
    let out = run(
        &input,
        &prepare(&rig.palette, None, &SkinOptions::default()).unwrap(),
        RunOptions::default(),
        true,
        true,
    );
    assert_eq!(out.diagnostics.unweighted_vertices, 4);
    assert_eq!(out.positions[9], rig.positions[9]);
}

/// LBS with normals and without tangents normalizes and stores each block's normals while it
/// skins the next block, and after the last (`simd::lbs::DeferredNormals`): unweighted vertices
/// send the blocks between and the last block to the scalar kernel, so that normals held back
/// wait across them (four influences, the `K = 4` kernel; 8-vertex blocks 0, 2, 3 SIMD, 1 and 4
/// scalar, a tail of 3).
#[test]
fn normals_held_across_scalar_blocks() {
    let mut rng = Rng::new(31);
    let rig = random_rig(&mut rng, 43, 4, 9, true);
    let mut weights = rig.influences.weights().to_vec();
    for v in [11, 39] {
        weights[v * 4..v * 4 + 4].fill(0.0);
    }
    let influences = Influences::new(4, rig.influences.joints().to_vec(), weights, 9).unwrap();
    let input = SkinInput::new(&rig.positions, Some(&rig.normals), None, &influences).unwrap();
    compare("held normals", &input, |o| {
        prepare(&rig.palette, None, o).unwrap()
    });
}

/// Weight sums far from one, renormalized (the default): the SIMD kernels blend the stored
/// weights and divide afterwards, the scalar kernel blends normalized ones, so the SIMD LBS
/// blend's cofactors (`Σw²`), determinant (`Σw³`) and normal lengths (`Σw⁴`) must not underflow
/// or overflow. Seen failing: every LBS normal the input's or reversed at sums of 2⁻⁴⁰ and 2⁴⁰
/// (right at 2⁻³⁰ and 2³⁰) until the columns were divided by `Σw` for such meshes. LBS, DQS and
/// CoR, normals and tangents.
#[test]
fn tiny_and_huge_weight_sums() {
    let mut rng = Rng::new(71);
    let rig = random_rig(&mut rng, 203, 4, 8, false);
    for exponent in [-120, -40, 40, 100] {
        let scale = 2f32.powi(exponent);
        let weights: Vec<f32> = rig.influences.weights().iter().map(|w| w * scale).collect();
        compare_with_weights(&format!("weights × 2^{exponent}"), &rig, weights);
    }
}

/// Weight sums near 1. Where every vertex's sum is within 2⁻²⁰ of 1 (`UNIT_WEIGHT_SUM_BAND` in
/// `simd::policy`), LBS and CoR's center blend skip the division by it, which moves a position
/// by at most 2⁻²⁰ of its length; everywhere else they divide as the scalar kernel does. Seen
/// failing with the division skipped regardless: the sums 64 × 2⁻²⁰ above 1 moved positions by
/// 6e-5 of the mesh's extent, and the one vertex with a sum of 1.5 by a third of its position.
#[test]
fn weight_sums_near_one() {
    let band = 2f32.powi(-20);
    let mut rng = Rng::new(73);
    let rig = random_rig(&mut rng, 203, 4, 8, false);
    // Every vertex's weights times the first factor, vertex 100's times the second.
    for (what, every, vertex_100) in [
        ("inside the band", 1.0 + 0.9 * band, 1.0 - 0.9 * band),
        ("64 bands above", 1.0 + 64.0 * band, 1.0 + 64.0 * band),
        ("64 bands below", 1.0 - 64.0 * band, 1.0 - 64.0 * band),
        ("one vertex at 1.5", 1.0, 1.5),
    ] {
        let weights: Vec<f32> = rig
            .influences
            .weights()
            .iter()
            .enumerate()
            .map(|(i, w)| w * if i / 4 == 100 { vertex_100 } else { every })
            .collect();
        compare_with_weights(&format!("weight sums {what}"), &rig, weights);
    }
}

#[test]
fn fixtures_at_every_evidence_angle() {
    for f in fixtures::all() {
        let input = SkinInput::new(
            &f.positions,
            Some(&f.normals),
            Some(&f.tangents),
            &f.influences,
        )
        .unwrap();
        for &angle_deg in skinblend::evidence::angles_deg(&f) {
            let palette: Vec<Mat4> = f.palette(angle_deg);
            compare(&format!("{} {angle_deg}°", f.name), &input, |o| {
                prepare(&palette, Some(&f.joint_centers), o).unwrap()
            });
        }
    }
}

/// Four equal weights: the pivot is the lowest slot (the scalar rule), which the flip count
/// shows. Slot 0's joint is stored with the other sign from the three others, so pivoting on
/// slot 0 flips three influences and pivoting on any other slot flips one: a SIMD pivot that
/// broke ties differently would change the diagnostics (and `compare` checks they are equal).
#[test]
fn tied_weights_pivot_on_the_lowest_slot() {
    let mut rng = Rng::new(31);
    let vertices = 45; // five blocks and a tail of five
    let rig = random_rig(&mut rng, vertices, 4, 4, false);
    let dual_quats: Vec<DualQuat> = (0..4)
        .map(|j| {
            let near_identity = glam::Quat::from_axis_angle(Vec3::Y, 0.1 * j as f32);
            let dq = DualQuat::from_rotation_translation(near_identity, rng.vec3(1.0));
            if j == 0 {
                dq.negated()
            } else {
                dq
            }
        })
        .collect();
    let influences = Influences::new(
        4,
        (0..vertices).flat_map(|_| [0, 1, 2, 3]).collect(),
        vec![0.25; 4 * vertices],
        4,
    )
    .unwrap();
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &influences,
    )
    .unwrap();
    compare("tied weights", &input, |o| {
        PreparedPalette::from_dual_quats(&dual_quats, o).unwrap()
    });
    let options = SkinOptions {
        method: Method::DualQuaternion,
        parallel: false,
        ..SkinOptions::default()
    };
    let prepared = PreparedPalette::from_dual_quats(&dual_quats, &options).unwrap();
    let out = run(&input, &prepared, options.run_options(), true, false);
    assert_eq!(out.diagnostics.sign_flips, 3 * vertices, "pivot on slot 0");
}
