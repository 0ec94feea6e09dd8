//! Regression tests for what the fuzz targets in `fuzz/` found (`influences`, `skin`), replayed
//! without cargo-fuzz. Each names the fuzz input it came from (bytes in the encoding of
//! `fuzz/src/lib.rs`) and states the decoded case directly.

use glam::{Mat4, Quat, Vec3, Vec4};
use skinblend::{skin, Influences, Method, SkinError, SkinInput, SkinOptions};

/// Fuzz input `influences` `[45, 0, 0, 0, 0, 45]`: `from_lists` with a joint count of 0 and
/// empty lists filled the unused slots with joint 0, which is not below the joint count, so the
/// result broke the invariant every kernel trusts (the SIMD kernels load matrices by joint index
/// without bounds checks). It is an error now, as `Influences::new` says for the same arrays.
#[test]
fn from_lists_with_no_joints_is_an_error() {
    let lists: Vec<Vec<(u16, f32)>> = vec![Vec::new(); 45];
    assert_eq!(
        Influences::from_lists(&lists, 5, 0).unwrap_err(),
        SkinError::JointOutOfRange {
            vertex: 0,
            slot: 0,
            joint: 0,
            joint_count: 0
        }
    );
    assert!(Influences::new(5, vec![0; 5], vec![0.0; 5], 0).is_err());
    // No vertices need no joints.
    let none: Vec<Vec<(u16, f32)>> = Vec::new();
    let (influences, _) = Influences::from_lists(&none, 5, 0).unwrap();
    assert_eq!(influences.vertex_count(), 0);
}

/// Fuzz input `influences` (34 bytes, `f32::MAX` weights through the `0xF3` tag): weights near
/// `f32::MAX` for a repeated joint merged to infinity and renormalized to NaN; two such weights
/// on different joints summed to infinity and renormalized to zero. Merging and summing are in
/// f64 now: the result is finite and sums to one.
#[test]
fn from_lists_weights_near_f32_max_stay_finite() {
    let max = f32::MAX;
    let (influences, report) = Influences::from_lists([[(0, max), (0, max)]], 1, 1).unwrap();
    assert_eq!(influences.weights(), &[1.0]);
    assert_eq!(report.vertices_with_repeated_joints, 1);

    let (influences, _) = Influences::from_lists([[(0, max), (1, max)]], 2, 2).unwrap();
    assert_eq!(influences.weights(), &[0.5, 0.5]);
    assert_eq!(influences.joints(), &[0, 1]);

    // Joint 1 merges to 2·MAX and is kept; joint 0 (MAX) is dropped and reported as is.
    let (influences, report) =
        Influences::from_lists([[(0, max), (1, max), (1, max)]], 1, 2).unwrap();
    assert_eq!(
        (influences.joints(), influences.weights()),
        (&[1u16][..], &[1.0f32][..])
    );
    assert_eq!(report.max_weight_dropped, max);
    assert_eq!(report.influences_dropped, 1);
}

/// A one-vertex rig whose single vertex is weighted `w` to joint 0 and `w / 2` to joint 1.
fn tiny_weights_skinned(w: f32, method: Method, palette: &[Mat4]) -> Vec<Vec3> {
    let positions = [Vec3::new(1.0, 2.0, 3.0)];
    let normals = [Vec3::Y];
    let tangents = [Vec4::new(1.0, 0.0, 0.0, 1.0)];
    let centers = [Vec3::ZERO];
    let influences = Influences::new(2, vec![0, 1], vec![w, w * 0.5], 2).unwrap();
    let mut input =
        SkinInput::new(&positions, Some(&normals), Some(&tangents), &influences).unwrap();
    if method == Method::CenterOfRotation {
        input = input.with_rotation_centers(&centers).unwrap();
    }
    let mut out = Vec::new();
    for simd in [false, true] {
        let options = SkinOptions {
            method,
            simd,
            ..SkinOptions::default()
        };
        let skinned = skin(&input, palette, None, &options).unwrap();
        out.extend(skinned.positions);
    }
    out
}

/// Found by the `skin` target (input `ff00fad2d12c40d20500c4cfffffffff`, hex): renormalizing
/// kernels multiplied each weight by `1 / sum`, which overflows to infinity when a vertex's
/// weights sum to a subnormal (valid weights: finite and non-negative), and the skinned
/// position was NaN under LBS, CoR, and DQS's residual path. Such a vertex is now unweighted
/// (the sum is below the smallest normal f32) on every backend: passed through and counted.
#[test]
fn subnormal_weight_sum_gives_finite_output() {
    let rigid = [
        Mat4::IDENTITY,
        Mat4::from_rotation_translation(Quat::from_rotation_z(1.0), Vec3::X),
    ];
    let scaled = [
        Mat4::IDENTITY,
        Mat4::from_scale_rotation_translation(Vec3::splat(2.0), Quat::IDENTITY, Vec3::X),
    ];
    for w in [f32::from_bits(1), 9.2e-41, 1e-39] {
        for (method, palette) in [
            (Method::Linear, &rigid),
            (Method::CenterOfRotation, &rigid),
            (Method::DualQuaternion, &scaled),
        ] {
            for p in tiny_weights_skinned(w, method, palette) {
                assert_eq!(
                    p,
                    Vec3::new(1.0, 2.0, 3.0),
                    "{method:?}, weights {w:e}: passed through"
                );
            }
        }
    }
}
