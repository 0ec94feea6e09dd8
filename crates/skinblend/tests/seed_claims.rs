//! Every claim of DESIGN.md "What the seed demands", on the seed's own fixture.

mod common;

use common::*;
use glam::{Mat4, Quat, Vec3};
use skinblend::fixtures::{self, REST_RADIUS};
use skinblend::{metrics, skin, Method, SkinInput, SkinOptions, Skinned};

fn options(method: Method) -> SkinOptions {
    SkinOptions {
        method,
        ..SkinOptions::default()
    }
}

fn skin_fixture(fixture: &fixtures::Fixture, angle_deg: f32, method: Method) -> Skinned {
    let input = SkinInput::new(
        &fixture.positions,
        Some(&fixture.normals),
        Some(&fixture.tangents),
        &fixture.influences,
    )
    .unwrap();
    skin(
        &input,
        &fixture.palette(angle_deg),
        Some(&fixture.joint_centers),
        &options(method),
    )
    .unwrap()
}

#[test]
fn coarse_fixture_has_the_seeds_counts() {
    let f = fixtures::twist_coarse();
    assert_eq!(f.positions.len(), 60, "5 rings of 12");
    assert_eq!(f.triangles.len(), 96);
    assert_eq!(f.joint_ring.len(), 12);
    let pairs = metrics::pair_distance_ratios(&f.positions, &f.positions, &f.joint_ring)
        .unwrap()
        .unwrap();
    assert_eq!(pairs.count, 66);
    let edges = metrics::triangle_edge_ratios(&f.positions, &f.positions, &f.triangles)
        .unwrap()
        .unwrap();
    assert_eq!(edges.count, 288);
}

#[test]
fn one_rigid_influence_gives_dqs_equal_to_lbs() {
    // Every vertex fully on joint 1, which rotates and translates: both methods reduce to
    // applying that matrix, in a different float operation order (hence REL_F32, not bits).
    let f = fixtures::twist_coarse();
    let n = f.positions.len();
    let influences = skinblend::Influences::new(1, vec![1; n], vec![1.0; n], 2).unwrap();
    let input = SkinInput::new(&f.positions, Some(&f.normals), None, &influences).unwrap();
    let motion = Mat4::from_rotation_translation(
        Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 2.0),
        Vec3::new(0.5, -1.0, 2.0),
    );
    let palette = [Mat4::IDENTITY, motion];
    let lbs = skin(&input, &palette, None, &options(Method::Linear)).unwrap();
    let dq = skin(&input, &palette, None, &options(Method::DualQuaternion)).unwrap();
    assert_points_close("positions", &lbs.positions, &dq.positions, REL_F32);
    assert_points_close(
        "normals",
        lbs.normals.as_ref().unwrap(),
        dq.normals.as_ref().unwrap(),
        REL_F32,
    );
    assert_ne!(lbs.positions, dq.positions, "the seed says: not to the bit");
}

#[test]
fn bind_pose_returns_the_input_under_both_methods() {
    // An identity palette: nothing for either blend to get wrong. DQS of identity dual
    // quaternions is exact, LBS of identity matrices with weights summing to one is exact up
    // to the rounding of the weight sum, so REL_F32.
    for fixture in fixtures::all() {
        let palette = vec![Mat4::IDENTITY; fixture.joint_centers.len()];
        for method in [Method::Linear, Method::DualQuaternion] {
            let input = SkinInput::new(
                &fixture.positions,
                Some(&fixture.normals),
                Some(&fixture.tangents),
                &fixture.influences,
            )
            .unwrap();
            let out = skin(
                &input,
                &palette,
                Some(&fixture.joint_centers),
                &options(method),
            )
            .unwrap();
            assert_points_close(fixture.name, &fixture.positions, &out.positions, REL_F32);
            assert_points_close(
                fixture.name,
                &fixture.normals,
                out.normals.as_ref().unwrap(),
                REL_F32,
            );
            assert_eq!(out.diagnostics, Default::default());
        }
    }
}

#[test]
fn dqs_keeps_every_joint_ring_distance_but_not_every_edge() {
    let f = fixtures::twist_coarse();
    for angle_deg in [45.0, 90.0, 135.0, 180.0] {
        let out = skin_fixture(&f, angle_deg, Method::DualQuaternion);
        let pairs = metrics::pair_distance_ratios(&f.positions, &out.positions, &f.joint_ring)
            .unwrap()
            .unwrap();
        assert_eq!(pairs.count, 66);
        // The bound: within 1e-6 of 1, f32 round-off of a rigid motion.
        assert!(
            (pairs.min - 1.0).abs() <= 1e-6 && (pairs.max - 1.0).abs() <= 1e-6,
            "{angle_deg}°: ring pairs in [{}, {}]",
            pairs.min,
            pairs.max
        );
        // The weaker claim is the true one: the mesh as a whole does not move rigidly.
        let edges = metrics::triangle_edge_ratios(&f.positions, &out.positions, &f.triangles)
            .unwrap()
            .unwrap();
        assert!(
            edges.max - edges.min > 0.01,
            "{angle_deg}°: edges all kept?"
        );
    }
}

#[test]
fn candy_wrapper_at_180_degrees_is_0_percent_under_lbs_and_100_under_dqs() {
    let f = fixtures::twist_coarse();
    let lbs = skin_fixture(&f, 180.0, Method::Linear);
    let dq = skin_fixture(&f, 180.0, Method::DualQuaternion);
    // The seed's own metric: a slab 0.25 either side of y = 1 around the Y axis; with rings
    // 0.5 apart it holds exactly the joint ring.
    let radius = |positions: &[Vec3]| {
        metrics::candy_wrapper_radius(positions, Vec3::ZERO, Vec3::Y, 1.0, 0.25).unwrap()
    };
    let rest = f64::from(REST_RADIUS);
    let lbs_percent = radius(&lbs.positions) / rest * 100.0;
    let dq_percent = radius(&dq.positions) / rest * 100.0;
    assert_eq!(format!("{lbs_percent:.1}%"), "0.0%");
    assert_eq!(format!("{dq_percent:.1}%"), "100.0%");
    // The ring metric the evidence table uses agrees with the slab here.
    let (point, direction) = f.ring_axis(180.0);
    let ring = metrics::ring_radius(&dq.positions, &f.joint_ring, point, direction)
        .unwrap()
        .unwrap();
    assert!((ring - radius(&dq.positions)).abs() < 1e-12);
}

#[test]
fn mean_edge_ratio_at_180_degrees_is_0_950_under_lbs_and_1_051_under_dqs() {
    let f = fixtures::twist_coarse();
    let mean = |method| {
        let out = skin_fixture(&f, 180.0, method);
        let edges = metrics::triangle_edge_ratios(&f.positions, &out.positions, &f.triangles)
            .unwrap()
            .unwrap();
        assert_eq!(edges.count, 288);
        format!("{:.3}", edges.mean)
    };
    // The seed's figures to the three decimals it prints.
    assert_eq!(mean(Method::Linear), "0.950");
    assert_eq!(mean(Method::DualQuaternion), "1.051");
}

#[test]
fn the_other_diagonal_or_the_other_turn_would_not_give_1_051() {
    // The fixture's details matter, as the issue says: a twist of −180° turns the ring the
    // other way round under DQS (its quaternion has the opposite sign of w), and the triangles'
    // diagonals then lie across the twist instead of along it.
    let f = fixtures::twist_coarse();
    let out = skin_fixture(&f, -180.0, Method::DualQuaternion);
    let edges = metrics::triangle_edge_ratios(&f.positions, &out.positions, &f.triangles)
        .unwrap()
        .unwrap();
    assert_eq!(format!("{:.3}", edges.mean), "1.084");
}
