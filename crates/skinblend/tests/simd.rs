//! The SIMD kernels against the scalar reference kernel, for every variant the dispatch table
//! has: methods (LBS, DQS, CoR with and without centers) × attribute sets × influence counts, rigid, non-rigid and antipodal palettes,
//! ragged vertex counts (tails and fallbacks), unweighted vertices, and the fixtures.

mod common;

use common::*;
use glam::{Mat4, Vec3, Vec4};
use skinblend::{
    fixtures, prepare, skin_into, Diagnostics, DualQuat, Influences, Method, PreparedPalette,
    RunOptions, SkinInput, SkinMesh, SkinOptions, SkinOutputs,
};

/// SIMD vs scalar: fused multiply-adds and another summation order, over up to 8 influences and
/// a normalization, on values of order one: a few ulps (1.2e-7 each), with headroom for the
/// cofactor products of the LBS normal matrix.
const SIMD_VS_SCALAR: f64 = 1e-5;

struct Result3 {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
    diagnostics: Diagnostics,
}

fn run(
    input: &SkinInput<'_>,
    prepared: &PreparedPalette,
    run_options: RunOptions,
    normals: bool,
    tangents: bool,
) -> Result3 {
    let n = input.vertex_count();
    let mut out = Result3 {
        positions: vec![Vec3::ZERO; n],
        normals: vec![Vec3::ZERO; n],
        tangents: vec![Vec4::ZERO; n],
        diagnostics: Diagnostics::default(),
    };
    out.diagnostics = skin_into(
        input,
        prepared,
        SkinOutputs {
            positions: &mut out.positions,
            normals: normals.then_some(&mut out.normals[..]),
            tangents: tangents.then_some(&mut out.tangents[..]),
        },
        run_options,
    )
    .unwrap();
    out
}

/// Every output bit, positions, normals and tangents.
fn bits(r: &Result3) -> Vec<u32> {
    r.positions
        .iter()
        .chain(&r.normals)
        .flat_map(|v| v.to_array())
        .chain(r.tangents.iter().flat_map(|t| t.to_array()))
        .map(f32::to_bits)
        .collect()
}

/// Skins with the SIMD and the scalar kernel (palettes made by `make`) and compares.
fn compare(what: &str, input: &SkinInput<'_>, make: impl Fn(&SkinOptions) -> PreparedPalette) {
    // The same input as a mesh handle reads the mesh's private blocks where a kernel can.
    let mesh = SkinMesh::from_input(input);
    let with_blocks = mesh.input();
    // CoR where the input has centers of rotation.
    let methods: &[Method] = if input.rotation_centers().is_some() {
        &[
            Method::Linear,
            Method::DualQuaternion,
            Method::CenterOfRotation,
        ]
    } else {
        &[Method::Linear, Method::DualQuaternion]
    };
    for &method in methods {
        for (normals, tangents) in [(false, false), (true, false), (true, true), (false, true)] {
            if (normals && input.normals().is_none()) || (tangents && input.tangents().is_none()) {
                continue;
            }
            let options = |simd| SkinOptions {
                method,
                simd,
                parallel: false,
                ..SkinOptions::default()
            };
            let (simd_options, scalar) = (options(true), options(false));
            let simd = run(
                input,
                &make(&simd_options),
                simd_options.run_options(),
                normals,
                tangents,
            );
            // The mesh handle's vertex blocks change where the kernels read, never a bit.
            let from_blocks = run(
                &with_blocks,
                &make(&simd_options),
                simd_options.run_options(),
                normals,
                tangents,
            );
            let scalar = run(
                input,
                &make(&scalar),
                scalar.run_options(),
                normals,
                tangents,
            );
            let what = format!("{what} {} n={normals} t={tangents}", method.name());
            assert!(
                bits(&from_blocks) == bits(&simd),
                "{what}: other bits from the vertex blocks"
            );
            assert_eq!(from_blocks.diagnostics, simd.diagnostics, "{what}: blocks");
            assert_points_close(&what, &scalar.positions, &simd.positions, SIMD_VS_SCALAR);
            assert_eq!(scalar.diagnostics, simd.diagnostics, "{what}: diagnostics");
            if normals {
                assert_points_close(&what, &scalar.normals, &simd.normals, SIMD_VS_SCALAR);
            }
            if tangents {
                let xyz = |t: &[Vec4]| t.iter().map(|t| t.truncate()).collect::<Vec<_>>();
                assert_points_close(
                    &what,
                    &xyz(&scalar.tangents),
                    &xyz(&simd.tangents),
                    SIMD_VS_SCALAR,
                );
                let w = |t: &[Vec4]| t.iter().map(|t| t.w).collect::<Vec<_>>();
                assert_eq!(w(&scalar.tangents), w(&simd.tangents), "{what}: handedness");
            }
        }
    }
}

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
        for non_rigid in [false, true] {
            let rig = random_rig(&mut rng, 1003, k, 12, non_rigid);
            // Centers near the vertices, and every seventh vertex without one (skinned by DQS).
            let centers: Vec<Vec3> = rig
                .positions
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    if i % 7 == 3 {
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
            compare(&format!("k={k} non_rigid={non_rigid}"), &input, |o| {
                prepare(&rig.palette, Some(&rig.centers), o).unwrap()
            });
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
/// skins the next block, and after the last (`linear::DeferredNormals`): unweighted vertices
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

/// [`compare`] on `rig` (four influences, eight joints) with its weights replaced by `weights`,
/// with normals, tangents and the positions as centers of rotation.
fn compare_with_weights(what: &str, rig: &RandomRig, weights: Vec<f32>) {
    let influences = Influences::new(4, rig.influences.joints().to_vec(), weights, 8).unwrap();
    compare_on_rig(what, rig, &influences, None);
}

/// [`compare`] on `rig`'s vertices with `influences` instead of its own, with normals, tangents
/// and the positions as centers of rotation, its palette prepared with `joint_centers`.
fn compare_on_rig(
    what: &str,
    rig: &RandomRig,
    influences: &Influences,
    joint_centers: Option<&[Vec3]>,
) {
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        influences,
    )
    .and_then(|input| input.with_rotation_centers(&rig.positions))
    .unwrap();
    compare(what, &input, |o| {
        prepare(&rig.palette, joint_centers, o).unwrap()
    });
}

/// Weight sums near 1. Where every vertex's sum is within 2⁻²⁰ of 1 (`UNIT_WEIGHT_SUM_BAND` in
/// `simd::linear`), LBS and CoR's center blend skip the division by it, which moves a position
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

/// The SIMD LBS kernel clears a block's singular test from a bound before computing any column
/// length: `Σw` times the palette's largest column length bounds every blended column. Here
/// the largest column belongs to the near-singular joints themselves (diag(1.5, 1, d)), and the
/// determinants sweep the threshold in steps of 1e-4 relative, single joints and pairs, with
/// weight sums from 0.5 to 2, and again with sums 1 within 2⁻²⁰ (where the bound is one
/// constant for the call, `linear::unit_singular_bound`): every block either holds a lane the
/// bound cannot clear or is decided as the exact test decides it. (Seen failing with either
/// bound halved: it then clears blocks holding singular lanes.)
#[test]
fn singular_bound_clears_only_what_the_exact_test_clears() {
    let band = 0.9 * 2f32.powi(-20);
    for (low, high, offset) in [(0.5, 2.0, 0.0), (1.0 - band, 1.0 + band, 0.5)] {
        singular_bound_with_weight_sums(low, high, offset);
    }
}

/// [`singular_bound_clears_only_what_the_exact_test_clears`] with weight sums in `low .. high`
/// and the determinants' steps `i + offset`. (With sums near 1 the offset is one half: at
/// offset 0 the single-joint vertices of step 0 sit exactly on the threshold, where f32
/// rounding alone decides, and decided one of them differently from the scalar kernel before
/// and after the bound changed.)
fn singular_bound_with_weight_sums(low: f32, high: f32, offset: f32) {
    let mut rng = Rng::new(44);
    let length = 1.5f32;
    let palette: Vec<Mat4> = (-30..=30)
        .map(|i| {
            let d = 1e-6 * length * length * (1.0 + 1e-4 * (i as f32 + offset));
            Mat4::from_scale(Vec3::new(length, 1.0, d))
        })
        .collect();
    let joint_count = palette.len();
    let vertices = 4 * joint_count + 3;
    let rig = random_rig(&mut rng, vertices, 4, 4, false);
    let joints: Vec<u16> = (0..vertices)
        .flat_map(|v| {
            let j = (v % joint_count) as u16;
            [j, (j + 1) % joint_count as u16, 0, 1]
        })
        .collect();
    let weights: Vec<f32> = (0..vertices)
        .flat_map(|v| {
            let sum = rng.range(low, high);
            // Half the vertices on one joint, half on two neighbours.
            let first = if v % 2 == 0 { 1.0 } else { rng.range(0.5, 1.0) };
            [sum * first, sum * (1.0 - first), 0.0, 0.0]
        })
        .collect();
    let influences = Influences::new(4, joints, weights, joint_count).unwrap();
    let input = SkinInput::new(&rig.positions, Some(&rig.normals), None, &influences).unwrap();
    compare(
        &format!("singular bound, sums {low} to {high}"),
        &input,
        |o| prepare(&palette, None, o).unwrap(),
    );
}

/// The SIMD kernels' fast paths (the squared singular test, the `rsqrt` normalize) hand a block
/// to the scalar kernel's exact forms wherever they could decide differently: determinants
/// swept across the singular threshold `1e-6 · (largest column length)³` in steps of 1e-7
/// relative (the squared test alone decides some of them the other way: seen failing),
/// column lengths outside its range (1e-4 and 2e3), and normals of length zero, 1e-20 and 1e20
/// (subnormal and infinite squared lengths: glam's `try_normalize` keeps the input for two of
/// them). `compare` checks the singular counts and every normal against the scalar kernel.
#[test]
fn singular_threshold_and_degenerate_normals_take_the_exact_forms() {
    let mut rng = Rng::new(43);
    // diag(L, 1, d): det = L d against 1e-6 L³, for 16 lengths L and 13 steps of d.
    let mut palette: Vec<Mat4> = (0..16)
        .flat_map(|j| {
            let length = 1.0 + j as f32 / 16.0 + 1.0 / 7.0;
            (-6..=6).map(move |i| {
                let d = 1e-6 * length * length * (1.0 + 1e-7 * i as f32);
                Mat4::from_scale(Vec3::new(length, 1.0, d))
            })
        })
        .collect();
    palette.push(Mat4::from_scale(Vec3::new(1e-4, 1e-4, 1e-4 * 1e-6)));
    palette.push(Mat4::from_scale(Vec3::new(2e3, 2e3, 2e3 * 1e-6)));
    palette.push(Mat4::from_scale(Vec3::new(1.0, 1.0, 1.0)));
    let joint_count = palette.len();
    let vertices = 2 * joint_count + 5;
    let rig = random_rig(&mut rng, vertices, 4, 4, false);
    let mut normals = rig.normals.clone();
    for (v, scale) in [(3, 0.0), (12, 1e-20), (21, 1e20), (vertices - 2, 0.0)] {
        normals[v] *= scale;
    }
    // One joint per vertex (weight 1 in slot 0), so the blended 3x3 is the joint's exactly.
    let joints: Vec<u16> = (0..vertices)
        .flat_map(|v| {
            let j = (v % joint_count) as u16;
            [j, (j + 1) % joint_count as u16, 0, 1]
        })
        .collect();
    let weights: Vec<f32> = (0..vertices).flat_map(|_| [1.0, 0.0, 0.0, 0.0]).collect();
    let influences = Influences::new(4, joints, weights, joint_count).unwrap();
    let input = SkinInput::new(&rig.positions, Some(&normals), None, &influences).unwrap();
    compare("singular threshold", &input, |o| {
        prepare(&palette, None, o).unwrap()
    });
}

/// DQS and CoR normalize a rotated normal (or tangent direction) by the input's inverse length
/// (a rotation keeps it): normals and tangents of lengths from 1e-14 to 1e14, and blocks holding
/// a zero or a 1e-20 normal (outside the fast range: the exact path on the rotated vector),
/// must come out as the scalar kernel's, unit or the input where it has no length. (Seen
/// failing with the input's inverse length left out of the rotated normal.)
#[test]
fn rotated_normals_of_any_length_come_out_unit() {
    let mut rng = Rng::new(61);
    for k in [3, 4, 8] {
        let rig = random_rig(&mut rng, 203, k, 12, false);
        let lengths = [1e-14, 1e-3, 0.37, 1.0, 6.0, 1e4, 1e14];
        let mut normals = rig.normals.clone();
        let mut tangents = rig.tangents.clone();
        for (v, (n, t)) in normals.iter_mut().zip(&mut tangents).enumerate() {
            let length = lengths[v % lengths.len()];
            *n *= length;
            *t = (t.truncate() * lengths[(v + 3) % lengths.len()]).extend(t.w);
        }
        for (v, length) in [(17, 0.0), (90, 1e-20), (150, 0.0)] {
            normals[v] *= length;
            tangents[v + 1] = (tangents[v + 1].truncate() * length).extend(tangents[v + 1].w);
        }
        let input = SkinInput::new(
            &rig.positions,
            Some(&normals),
            Some(&tangents),
            &rig.influences,
        )
        .unwrap()
        .with_rotation_centers(&rig.positions)
        .unwrap();
        compare(&format!("k={k} scaled normals"), &input, |o| {
            prepare(&rig.palette, Some(&rig.centers), o).unwrap()
        });
    }
}

/// DQS and CoR with four and eight influences count their sign flips once per call from the
/// mesh's `(pivot joint, joint)` pair counts where the mesh is large enough (here 8,195
/// vertices on 12 joints); the count must stay the scalar kernel's over parallel pieces and
/// over the vertices the SIMD blocks send to the scalar kernel: blocks on a non-rigid joint,
/// vertices without a center (CoR), light vertices (every weight subnormal), zero weights, the
/// tail, and a palette longer than the mesh's joint count (the table's rows are longer than the
/// counts'). (Seen failing with the declined blocks' tallied flips not taken back, and with the
/// table's rows read at the mesh's joint count.)
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
        let input = SkinInput::new(
            &rig.positions,
            Some(&rig.normals),
            Some(&rig.tangents),
            &influences,
        )
        .unwrap()
        .with_rotation_centers(&centers)
        .unwrap();
        for method in [Method::DualQuaternion, Method::CenterOfRotation] {
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
            }
        }
    }
}

#[test]
fn meshes_large_enough_to_prefetch() {
    // 2^18 + 3 vertices: the DQS driver prefetches on meshes of 2^18 or more
    // (`PREFETCH_MIN_VERTICES` in simd/mod.rs), up to its last block, whose prefetch addresses
    // lie past the arrays' ends.
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
        // Parallel pieces prefetch too (the whole mesh's size decides).
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

/// LBS with normals and without tangents, unit weight sums: each block's singular verdict waits
/// for the next block (`linear::DeferredNormals`), and a block the call's bound leaves unclear
/// has its normals made again by the exact test, also where it is the last block of a parallel
/// piece or of the mesh (the driver's store after its loop). Vertices blend a joint and its
/// mirror: weights (½, ½) make the 3x3 singular (planted in every other block and in the last
/// whole block), the others mirror or not. The singular count must be the planted count and
/// equal the scalar kernel's, the normals within `SIMD_VS_SCALAR` of it, and every thread count
/// give the serial bits. (Seen failing with the redo left out, in the driver loop or after it:
/// the SIMD diagnostics then lack the singular lanes the scalar kernel counts.)
#[test]
fn deferred_singular_verdict_across_pieces() {
    let mut rng = Rng::new(77);
    let vertices = 3 * 4096 + 21;
    let rig = random_rig(&mut rng, vertices, 4, 3, false);
    let rotation = Mat4::from_quat(rng.rotation());
    let palette = vec![
        rotation,
        rotation * Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)),
        Mat4::from_quat(rng.rotation()),
    ];
    let whole_blocks = vertices / 8;
    let mut planted = 0;
    let mut joints = Vec::with_capacity(4 * vertices);
    let mut weights = Vec::with_capacity(4 * vertices);
    for v in 0..vertices {
        let block = v / 8;
        let singular = v % 8 == 3 && (block % 2 == 0 || block == whole_blocks - 1);
        let a = if singular {
            planted += 1;
            0.5
        } else if rng.unit() < 0.5 {
            rng.range(0.0, 0.4)
        } else {
            rng.range(0.6, 1.0)
        };
        joints.extend([0, 1, 2, 0]);
        weights.extend([a, 1.0 - a, 0.0, 0.0]);
    }
    let influences = Influences::new(4, joints, weights, palette.len()).unwrap();
    let input = SkinInput::new(&rig.positions, Some(&rig.normals), None, &influences).unwrap();
    let mesh = SkinMesh::from_input(&input);
    let from_blocks = mesh.input();
    let skin_input = |input: &SkinInput<'_>, simd: bool, parallel: bool, threads: usize| {
        let options = SkinOptions {
            method: Method::Linear,
            simd,
            parallel,
            ..SkinOptions::default()
        };
        let prepared = prepare(&palette, None, &options).unwrap();
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| run(input, &prepared, options.run_options(), true, false))
    };
    let skin = |simd, parallel, threads| skin_input(&input, simd, parallel, threads);
    let scalar = skin(false, false, 1);
    let serial = skin(true, false, 1);
    assert_eq!(scalar.diagnostics.singular_normal_matrices, planted);
    assert_eq!(serial.diagnostics, scalar.diagnostics);
    assert_points_close(
        "deferred verdict",
        &scalar.normals,
        &serial.normals,
        SIMD_VS_SCALAR,
    );
    for threads in [1, 2, 3, 8] {
        let parallel = skin(true, true, threads);
        assert_eq!(
            parallel.diagnostics, serial.diagnostics,
            "{threads} threads"
        );
        assert!(
            bits(&parallel) == bits(&serial),
            "{threads} threads: other bits than serial"
        );
        // The vertex blocks, in pieces that start at multiples of eight: the same bits.
        let parallel_blocks = skin_input(&from_blocks, true, true, threads);
        assert_eq!(parallel_blocks.diagnostics, serial.diagnostics);
        assert!(
            bits(&parallel_blocks) == bits(&serial),
            "{threads} threads, vertex blocks: other bits than serial"
        );
    }
}
