//! `Method::Blended`: its ends are LBS and DQS to the bit, its middle the interpolation of the two
//! results, and a call without blend values is refused.

mod common;

use common::assert_points_close;
use glam::{Vec3, Vec4};
use skinblend::fixtures::{self, Fixture};
use skinblend::{
    blend_values_from_joints, prepare, skin_into, BlendValues, Diagnostics, Method, SkinError,
    SkinInput, SkinOptions, SkinOutputs,
};

struct Out {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
    diagnostics: Diagnostics,
}

impl Out {
    fn bits(&self) -> Vec<u32> {
        self.positions
            .iter()
            .chain(&self.normals)
            .flat_map(|v| v.to_array())
            .chain(self.tangents.iter().flat_map(|t| t.to_array()))
            .map(f32::to_bits)
            .collect()
    }
}

fn skin_fixture(
    fixture: &Fixture,
    angle_deg: f32,
    method: Method,
    simd: bool,
    values: Option<BlendValues<'_>>,
) -> Out {
    let mut input = SkinInput::new(
        &fixture.positions,
        Some(&fixture.normals),
        Some(&fixture.tangents),
        &fixture.influences,
    )
    .unwrap();
    if let Some(values) = values {
        input = input.with_blend_values(values).unwrap();
    }
    let options = SkinOptions {
        method,
        simd,
        ..SkinOptions::default()
    };
    let palette = prepare(
        &fixture.palette(angle_deg),
        Some(&fixture.joint_centers),
        &options,
    )
    .unwrap();
    let n = fixture.positions.len();
    let mut out = Out {
        positions: vec![Vec3::ZERO; n],
        normals: vec![Vec3::ZERO; n],
        tangents: vec![Vec4::ZERO; n],
        diagnostics: Diagnostics::default(),
    };
    out.diagnostics = skin_into(
        &input,
        &palette,
        SkinOutputs {
            positions: &mut out.positions,
            normals: Some(&mut out.normals),
            tangents: Some(&mut out.tangents),
        },
        options.run_options(),
    )
    .unwrap();
    out
}

#[test]
fn blend_zero_is_lbs_and_blend_one_is_dqs_to_the_bit() {
    for fixture in fixtures::all() {
        let n = fixture.positions.len();
        let (zeros, ones) = (vec![0.0; n], vec![1.0; n]);
        for angle_deg in [45.0, 180.0] {
            for simd in [true, false] {
                let linear = skin_fixture(&fixture, angle_deg, Method::Linear, simd, None);
                let dq = skin_fixture(&fixture, angle_deg, Method::DualQuaternion, simd, None);
                for (values, expected, what) in [
                    (BlendValues::Uniform(0.0), &linear, "uniform 0"),
                    (BlendValues::PerVertex(&zeros), &linear, "every vertex 0"),
                    (BlendValues::Uniform(1.0), &dq, "uniform 1"),
                    (BlendValues::PerVertex(&ones), &dq, "every vertex 1"),
                ] {
                    let blended =
                        skin_fixture(&fixture, angle_deg, Method::Blended, simd, Some(values));
                    let what = format!("{} {angle_deg}° simd={simd} {what}", fixture.name);
                    assert!(blended.bits() == expected.bits(), "{what}: other bits");
                    assert_eq!(blended.diagnostics, expected.diagnostics, "{what}");
                }
            }
        }
    }
}

/// The blended result against `(1 − b)·LBS + b·DQS` computed from the two methods' own calls:
/// the same values up to the interpolation's rounding (one multiply-add, or a multiply and an
/// add, on values of order one: a few ulps) and the SIMD kernels' own difference from the
/// scalar ones (`common::simd::SIMD_VS_SCALAR`); 2e-5 covers both with headroom.
const BLEND_VS_SEPARATE: f64 = 2e-5;

#[test]
fn the_joint_rule_interpolates_the_two_results() {
    for fixture in fixtures::all() {
        let values = fixture.dq_blend_values();
        assert!(values.contains(&0.0) && values.contains(&1.0) && values.contains(&0.5));
        for simd in [true, false] {
            let angle_deg = 150.0;
            let linear = skin_fixture(&fixture, angle_deg, Method::Linear, simd, None);
            let dq = skin_fixture(&fixture, angle_deg, Method::DualQuaternion, simd, None);
            let blended = skin_fixture(
                &fixture,
                angle_deg,
                Method::Blended,
                simd,
                Some(BlendValues::PerVertex(&values)),
            );
            let lerp = |a: &[Vec3], b: &[Vec3], unit: bool| -> Vec<Vec3> {
                a.iter()
                    .zip(b)
                    .zip(&values)
                    .map(|((a, b), &t)| {
                        let v = a.lerp(*b, t);
                        if unit {
                            v.normalize()
                        } else {
                            v
                        }
                    })
                    .collect()
            };
            let what = format!("{} simd={simd}", fixture.name);
            let positions = lerp(&linear.positions, &dq.positions, false);
            assert_points_close(&what, &positions, &blended.positions, BLEND_VS_SEPARATE);
            let normals = lerp(&linear.normals, &dq.normals, true);
            assert_points_close(&what, &normals, &blended.normals, BLEND_VS_SEPARATE);
            let xyz = |t: &[Vec4]| t.iter().map(|t| t.truncate()).collect::<Vec<_>>();
            let tangents = lerp(&xyz(&linear.tangents), &xyz(&dq.tangents), true);
            assert_points_close(&what, &tangents, &xyz(&blended.tangents), BLEND_VS_SEPARATE);
            // The ring where the joints meet lies between the two methods' rings.
            let radius = |p: &[Vec3]| -> f32 {
                let (point, axis) = fixture.ring_axis(angle_deg);
                let ring = &fixture.joint_ring;
                ring.iter()
                    .map(|&v| (p[v as usize] - point).reject_from(axis).length())
                    .sum::<f32>()
                    / ring.len() as f32
            };
            let (l, d, b) = (
                radius(&linear.positions),
                radius(&dq.positions),
                radius(&blended.positions),
            );
            assert!(
                l.min(d) <= b && b <= l.max(d),
                "{what}: ring radius {b} not in [{l}, {d}]"
            );
        }
    }
}

#[test]
fn the_joint_rule_follows_the_weights() {
    let fixture = fixtures::twist_coarse();
    let mut dq_joints = vec![false; fixture.influences.joint_count()];
    dq_joints[fixture.ring_joint] = true;
    let values = blend_values_from_joints(&fixture.influences, &dq_joints);
    // Each vertex's value is its weight on the moving joint.
    let k = fixture.influences.influences_per_vertex();
    for (v, value) in values.iter().enumerate() {
        let on: f32 = (0..k)
            .filter(|&s| usize::from(fixture.influences.joints()[v * k + s]) == fixture.ring_joint)
            .map(|s| fixture.influences.weights()[v * k + s])
            .sum();
        assert!(
            (value - on).abs() <= 1e-6,
            "vertex {v}: {value} against {on}"
        );
    }
}

#[test]
fn blended_without_values_is_refused() {
    let fixture = fixtures::twist_coarse();
    let input = SkinInput::new(&fixture.positions, None, None, &fixture.influences).unwrap();
    let palette = prepare(&fixture.palette(90.0), None, Method::Blended).unwrap();
    let mut out = vec![Vec3::ZERO; fixture.positions.len()];
    let err = skin_into(
        &input,
        &palette,
        SkinOutputs::positions(&mut out),
        Default::default(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        SkinError::MissingBlendValues {
            vertex_count: fixture.positions.len()
        }
    );
    assert!(err.to_string().contains("blend value"), "{err}");
    let err = input
        .with_blend_values(BlendValues::PerVertex(&[0.5; 3]))
        .unwrap_err();
    assert!(matches!(
        err,
        SkinError::AttributeLength {
            attribute: "blend_values",
            ..
        }
    ));
}

/// In a mesh whose values mix, each vertex at 0 is LBS's call to the bit and each at 1 DQS's,
/// whatever its block holds besides. Runs of blocks all at 0 run LBS's driver loop and runs all
/// at 1 DQS's (`simd::driver::blended_runs`); a block that mixes takes its end vertices' results
/// from its own two blends, rounded as those calls round them (LBS's normals once by the fast
/// inverse length without tangents, in two steps with them). On the mesh's first call, and on
/// later ones, which read the mesh's palette byte offsets and its tally of sign flips (LBS's
/// unit-sum variant with offsets, as LBS's own call runs on this rig); with normals, and with
/// normals and tangents. Runs of every kind and length 1 to 3, blocks between 0 and 1 and blocks
/// mixing them, a tail of three vertices. (A debug build also asserts that no run is skinned
/// past its end: LBS's hand-written loop takes a whole range only.)
#[test]
fn vertices_at_0_and_1_are_lbs_and_dqs_to_the_bit() {
    use common::{random_rig, Rng};
    use skinblend::{RunOptions, SkinMesh, Skinned};
    const BLOCKS: usize = 300;
    // Block `b`'s kind by a pattern of runs of one to three blocks.
    let kind = |b: usize| [0, 0, 1, 2, 1, 1, 0, 3, 0, 0, 0, 1, 3, 3, 2][b % 15];
    // Rigid joints, and joints with scale, shear and mirroring (DQS's residual blocks).
    for non_rigid in [false, true] {
        let rig = random_rig(&mut Rng::new(48), BLOCKS * 8 + 3, 4, 24, non_rigid);
        let values: Vec<f32> = (0..rig.positions.len())
            .map(|v| match kind(v / 8) {
                0 => 0.0,
                1 => 1.0,
                2 => 0.375,
                _ => [0.0, 1.0, 0.625][v % 3],
            })
            .collect();
        let run = RunOptions {
            parallel: false,
            ..RunOptions::default()
        };
        let bits = |v: Vec4| v.to_array().map(f32::to_bits);
        let all = |s: &Skinned, v: usize| {
            let normal = s.normals.as_ref().map(|n| bits(n[v].extend(0.0)));
            [
                Some(bits(s.positions[v].extend(0.0))),
                normal,
                s.tangents.as_ref().map(|t| bits(t[v])),
            ]
        };
        for tangents in [false, true] {
            let mut mesh = SkinMesh::new(&rig.positions[..], &rig.influences)
                .and_then(|mesh| mesh.with_normals(&rig.normals[..]))
                .unwrap();
            if tangents {
                mesh = mesh.with_tangents(&rig.tangents[..]).unwrap();
            }
            let blended_mesh = mesh.clone().with_blend_values(&values[..]).unwrap();
            let skin = |mesh: &SkinMesh<'_>, method| {
                let palette = prepare(&rig.palette, None, method).unwrap();
                mesh.skin(&palette, run).unwrap()
            };
            // Blended first: its first call is the mesh's first.
            let blended: Vec<_> = (0..2)
                .map(|_| skin(&blended_mesh, Method::Blended))
                .collect();
            let linear = skin(&mesh, Method::Linear);
            let dq = skin(&mesh, Method::DualQuaternion);
            let mut mixed_ends = 0;
            for (call, blended) in blended.iter().enumerate() {
                for (v, &value) in values.iter().enumerate().take(BLOCKS * 8) {
                    let expected = match value {
                        0.0 => &linear,
                        1.0 => &dq,
                        _ => continue,
                    };
                    mixed_ends += usize::from(kind(v / 8) == 3);
                    assert_eq!(
                    all(blended, v),
                    all(expected, v),
                    "non-rigid {non_rigid}, tangents {tangents}, call {call}, vertex {v} at {value} \
                     (block kind {})",
                    kind(v / 8)
                );
                }
            }
            assert!(
                mixed_ends > 100,
                "{mixed_ends} end vertices in blocks that mix"
            );
        }
    }
}
