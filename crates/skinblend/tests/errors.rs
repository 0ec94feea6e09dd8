//! One test per error variant: each names the place and the value, none panics.

use glam::{Mat4, Vec3, Vec4};
use skinblend::{
    metrics, prepare, skin, skin_into, split, DualQuat, Influences, Method, PreparedPalette,
    RunOptions, SkinError, SkinInput, SkinOptions, SkinOutputs,
};

fn two_vertices() -> Influences {
    Influences::new(2, vec![0, 1, 1, 0], vec![0.5, 0.5, 1.0, 0.0], 2).unwrap()
}

const POSITIONS: [Vec3; 2] = [Vec3::ZERO, Vec3::ONE];

#[test]
fn zero_influences_per_vertex() {
    assert_eq!(
        Influences::new(0, vec![], vec![], 1),
        Err(SkinError::ZeroInfluencesPerVertex)
    );
    let lists: [&[(u16, f32)]; 0] = [];
    assert_eq!(
        Influences::from_lists(lists, 0, 1).unwrap_err(),
        SkinError::ZeroInfluencesPerVertex
    );
}

#[test]
fn influence_array_lengths() {
    assert_eq!(
        Influences::new(2, vec![0, 0], vec![1.0], 1),
        Err(SkinError::InfluenceArrayLengths {
            joints: 2,
            weights: 1
        })
    );
}

#[test]
fn influence_array_not_whole() {
    assert_eq!(
        Influences::new(4, vec![0; 6], vec![0.0; 6], 1),
        Err(SkinError::InfluenceArrayNotWhole {
            len: 6,
            influences_per_vertex: 4
        })
    );
}

#[test]
fn too_many_joints() {
    assert_eq!(
        Influences::new(1, vec![0], vec![1.0], 70_000),
        Err(SkinError::TooManyJoints {
            joint_count: 70_000,
            max: 65_536
        })
    );
}

#[test]
fn joint_out_of_range_names_vertex_and_slot() {
    let err = Influences::new(2, vec![0, 1, 0, 5], vec![0.5; 4], 3).unwrap_err();
    assert_eq!(
        err,
        SkinError::JointOutOfRange {
            vertex: 1,
            slot: 1,
            joint: 5,
            joint_count: 3
        }
    );
    assert_eq!(
        err.to_string(),
        "vertex 1, influence slot 1: joint index 5 is out of range (joint count 3)"
    );
    let lists: [&[(u16, f32)]; 2] = [&[(0, 1.0)], &[(0, 0.5), (2, 0.5)]];
    assert_eq!(
        Influences::from_lists(lists, 2, 2).unwrap_err(),
        SkinError::JointOutOfRange {
            vertex: 1,
            slot: 1,
            joint: 2,
            joint_count: 2
        }
    );
}

/// `Influences::from_slices` (copied and checked in one pass, into a spare that holds stale
/// data) accepts what `Influences::new` accepts, with the same arrays, and refuses what it
/// refuses, with the same error: every shape and value fault above, at the first, a middle and
/// the last slot of meshes long enough for the vectorized pass (83 vertices × 4 slots).
#[test]
fn from_slices_decides_as_new() {
    let k = 4;
    let joints: Vec<u16> = (0..332).map(|i| (i * 7 % 5) as u16).collect();
    let weights: Vec<f32> = (0..332).map(|i| 0.25 + (i % 3) as f32 * 0.125).collect();
    let mut cases: Vec<(usize, Vec<u16>, Vec<f32>, usize)> = vec![
        (k, joints.clone(), weights.clone(), 5),
        (0, vec![], vec![], 1),
        (2, vec![0, 0], vec![1.0], 1),
        (4, vec![0; 6], vec![0.0; 6], 1),
        (1, vec![0], vec![1.0], 70_000),
        (k, joints.clone(), weights.clone(), 4),
        (k, joints.clone(), weights.clone(), 0),
    ];
    for slot in [0, 165, 331] {
        let mut bad_joint = joints.clone();
        bad_joint[slot] = 9;
        cases.push((k, bad_joint, weights.clone(), 5));
        for weight in [f32::NAN, f32::INFINITY, -0.25, -0.0] {
            let mut bad_weight = weights.clone();
            bad_weight[slot] = weight;
            cases.push((k, joints.clone(), bad_weight, 5));
        }
    }
    for (case, (k, joints, weights, joint_count)) in cases.into_iter().enumerate() {
        let spare = (vec![3u16; 17], vec![f32::NAN; 1000]);
        let copied = Influences::from_slices(k, &joints, &weights, joint_count, spare);
        let given = Influences::new(k, joints, weights, joint_count);
        match (copied, given) {
            (Ok(copied), Ok(given)) => {
                assert_eq!(copied.joints(), given.joints(), "case {case}");
                assert_eq!(
                    copied
                        .weights()
                        .iter()
                        .map(|w| w.to_bits())
                        .collect::<Vec<_>>(),
                    given
                        .weights()
                        .iter()
                        .map(|w| w.to_bits())
                        .collect::<Vec<_>>(),
                    "case {case}"
                );
                assert_eq!(copied.joint_count(), given.joint_count(), "case {case}");
            }
            (Err(copied), Err(given)) => {
                assert_eq!(format!("{copied:?}"), format!("{given:?}"), "case {case}")
            }
            (copied, given) => panic!("case {case}: from_slices {copied:?}, new {given:?}"),
        }
    }
}

#[test]
fn invalid_weight_nan_infinite_negative() {
    for weight in [f32::NAN, f32::INFINITY, -0.25] {
        let err = Influences::new(1, vec![0, 0], vec![1.0, weight], 1).unwrap_err();
        match err {
            SkinError::InvalidWeight {
                vertex: 1,
                slot: 0,
                weight: w,
            } => {
                assert!(w.is_nan() == weight.is_nan() && (w.is_nan() || w == weight));
            }
            other => panic!("expected InvalidWeight, got {other:?}"),
        }
    }
}

#[test]
fn attribute_length() {
    let influences = two_vertices();
    assert_eq!(
        SkinInput::new(&POSITIONS[..1], None, None, &influences).unwrap_err(),
        SkinError::AttributeLength {
            attribute: "positions",
            expected: 2,
            found: 1
        }
    );
    let normals = [Vec3::Y; 3];
    assert_eq!(
        SkinInput::new(&POSITIONS, Some(&normals), None, &influences).unwrap_err(),
        SkinError::AttributeLength {
            attribute: "normals",
            expected: 2,
            found: 3
        }
    );
    let tangents = [Vec4::X; 1];
    assert_eq!(
        SkinInput::new(&POSITIONS, None, Some(&tangents), &influences).unwrap_err(),
        SkinError::AttributeLength {
            attribute: "tangents",
            expected: 2,
            found: 1
        }
    );
    // Output buffers too.
    let input = SkinInput::new(&POSITIONS, None, None, &influences).unwrap();
    let prepared = prepare(&[Mat4::IDENTITY; 2], None, &SkinOptions::default()).unwrap();
    let mut short = [Vec3::ZERO; 1];
    assert_eq!(
        skin_into(
            &input,
            &prepared,
            SkinOutputs::positions(&mut short),
            RunOptions::default()
        )
        .unwrap_err(),
        SkinError::AttributeLength {
            attribute: "output positions",
            expected: 2,
            found: 1
        }
    );
}

#[test]
fn non_finite_attribute_names_the_vertex() {
    let influences = two_vertices();
    let positions = [Vec3::ZERO, Vec3::new(0.0, f32::NAN, 0.0)];
    assert_eq!(
        SkinInput::new(&positions, None, None, &influences).unwrap_err(),
        SkinError::NonFiniteAttribute {
            attribute: "positions",
            vertex: 1
        }
    );
    let normals = [Vec3::new(f32::INFINITY, 0.0, 0.0), Vec3::Y];
    assert_eq!(
        SkinInput::new(&POSITIONS, Some(&normals), None, &influences).unwrap_err(),
        SkinError::NonFiniteAttribute {
            attribute: "normals",
            vertex: 0
        }
    );
    let tangents = [Vec4::X, Vec4::new(1.0, 0.0, 0.0, f32::NAN)];
    assert_eq!(
        SkinInput::new(&POSITIONS, None, Some(&tangents), &influences).unwrap_err(),
        SkinError::NonFiniteAttribute {
            attribute: "tangents",
            vertex: 1
        }
    );
}

#[test]
fn missing_input_attribute() {
    let influences = two_vertices();
    let input = SkinInput::new(&POSITIONS, None, None, &influences).unwrap();
    let prepared = prepare(&[Mat4::IDENTITY; 2], None, &SkinOptions::default()).unwrap();
    let (mut p, mut n) = ([Vec3::ZERO; 2], [Vec3::ZERO; 2]);
    let outputs = SkinOutputs {
        positions: &mut p,
        normals: Some(&mut n),
        tangents: None,
    };
    assert_eq!(
        skin_into(&input, &prepared, outputs, RunOptions::default()).unwrap_err(),
        SkinError::MissingInputAttribute {
            attribute: "normals"
        }
    );
    let mut t = [Vec4::ZERO; 2];
    let outputs = SkinOutputs {
        positions: &mut p,
        normals: None,
        tangents: Some(&mut t),
    };
    assert_eq!(
        skin_into(&input, &prepared, outputs, RunOptions::default()).unwrap_err(),
        SkinError::MissingInputAttribute {
            attribute: "tangents"
        }
    );
}

#[test]
fn palette_length() {
    let influences = two_vertices();
    let input = SkinInput::new(&POSITIONS, None, None, &influences).unwrap();
    assert_eq!(
        skin(&input, &[Mat4::IDENTITY], None, &SkinOptions::default()).unwrap_err(),
        SkinError::PaletteLength {
            expected: 2,
            found: 1
        }
    );
}

#[test]
fn non_finite_matrix_names_the_joint() {
    let mut bad = Mat4::IDENTITY;
    bad.w_axis.y = f32::NAN;
    assert_eq!(
        prepare(&[Mat4::IDENTITY, bad], None, &SkinOptions::default()).unwrap_err(),
        SkinError::NonFiniteMatrix { joint: 1 }
    );
    assert_eq!(
        split(bad, Vec3::ZERO, 1e-4).unwrap_err(),
        SkinError::NonFiniteMatrix { joint: 0 }
    );
    // An update with a bad frame leaves an empty palette, not a stale one.
    let mut prepared = prepare(&[Mat4::IDENTITY; 2], None, &SkinOptions::default()).unwrap();
    assert!(prepared.update(&[bad, Mat4::IDENTITY]).is_err());
    assert_eq!(prepared.joint_count(), 0);
}

#[test]
fn non_affine_matrix() {
    let mut projective = Mat4::IDENTITY;
    projective.x_axis.w = 0.5;
    assert_eq!(
        prepare(&[projective], None, &SkinOptions::default()).unwrap_err(),
        SkinError::NonAffineMatrix {
            joint: 0,
            row: [0.5, 0.0, 0.0, 1.0]
        }
    );
}

#[test]
fn center_count() {
    assert_eq!(
        prepare(
            &[Mat4::IDENTITY; 2],
            Some(&[Vec3::ZERO]),
            &SkinOptions::default()
        )
        .unwrap_err(),
        SkinError::CenterCount {
            expected: 2,
            found: 1
        }
    );
    let mut prepared = prepare(
        &[Mat4::IDENTITY; 2],
        Some(&[Vec3::ZERO; 2]),
        &SkinOptions::default(),
    )
    .unwrap();
    assert_eq!(
        prepared.update(&[Mat4::IDENTITY; 3]).unwrap_err(),
        SkinError::CenterCount {
            expected: 3,
            found: 2
        }
    );
}

#[test]
fn non_finite_center() {
    assert_eq!(
        prepare(
            &[Mat4::IDENTITY; 2],
            Some(&[Vec3::ZERO, Vec3::splat(f32::NAN)]),
            &SkinOptions::default()
        )
        .unwrap_err(),
        SkinError::NonFiniteCenter { joint: 1 }
    );
}

#[test]
fn invalid_tolerance() {
    for tolerance in [f32::NAN, -1.0, f32::INFINITY] {
        let options = SkinOptions {
            rigid_tolerance: tolerance,
            ..SkinOptions::default()
        };
        assert!(matches!(
            prepare(&[Mat4::IDENTITY], None, &options),
            Err(SkinError::InvalidTolerance { .. })
        ));
    }
}

#[test]
fn invalid_dual_quat() {
    let zero = DualQuat {
        real: glam::Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        dual: glam::Quat::IDENTITY,
    };
    let nan = DualQuat {
        real: glam::Quat::IDENTITY,
        dual: glam::Quat::from_xyzw(f32::NAN, 0.0, 0.0, 0.0),
    };
    let options = SkinOptions::default();
    assert_eq!(
        PreparedPalette::from_dual_quats(&[DualQuat::IDENTITY, zero], &options).unwrap_err(),
        SkinError::InvalidDualQuat { joint: 1 }
    );
    assert_eq!(
        PreparedPalette::from_dual_quats(&[nan], &options).unwrap_err(),
        SkinError::InvalidDualQuat { joint: 0 }
    );
}

#[test]
fn vertex_index_out_of_range() {
    let triangles = [[0, 1, 0], [0, 1, 7]];
    assert_eq!(
        metrics::signed_volume(&POSITIONS, &triangles).unwrap_err(),
        SkinError::VertexIndexOutOfRange {
            element: "triangles",
            index: 1,
            vertex: 7,
            vertex_count: 2
        }
    );
    assert_eq!(
        metrics::pair_distance_ratios(&POSITIONS, &POSITIONS, &[0, 2]).unwrap_err(),
        SkinError::VertexIndexOutOfRange {
            element: "vertices",
            index: 1,
            vertex: 2,
            vertex_count: 2
        }
    );
}

#[test]
fn an_unknown_method_name_is_an_error_listing_every_name() {
    let error = "quaternion".parse::<Method>().unwrap_err();
    assert_eq!(
        error,
        SkinError::UnknownMethod {
            name: "quaternion".into()
        }
    );
    let message = error.to_string();
    for name in Method::names() {
        assert!(message.contains(name), "{message:?} does not list {name}");
    }
    for method in Method::ALL {
        assert_eq!(method.to_string().parse::<Method>(), Ok(method));
    }
}
