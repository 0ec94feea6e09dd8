//! Metrics on hand-computed cases, and the influence builder.

use glam::Vec3;
use skinblend::{fixtures, metrics, InfluenceBuildReport, Influences};

/// Sums in f64 of order-one values: agreement to well below any printed digit.
const EXACT_F64: f64 = 1e-12;

#[test]
fn edge_ratios_of_a_stretched_triangle() {
    // A right triangle with legs 1 and 1 stretched by 2 along x: the x leg doubles, the y leg
    // keeps its length, the hypotenuse goes from √2 to √5.
    let rest = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let posed = [Vec3::ZERO, Vec3::X * 2.0, Vec3::Y];
    let triangles = [[0, 1, 2]];
    let stats = metrics::triangle_edge_ratios(&rest, &posed, &triangles)
        .unwrap()
        .unwrap();
    let hypotenuse = (5.0f64 / 2.0).sqrt();
    assert_eq!(stats.count, 3);
    assert!((stats.min - 1.0).abs() < EXACT_F64);
    assert!((stats.max - 2.0).abs() < EXACT_F64);
    assert!((stats.mean - (1.0 + 2.0 + hypotenuse) / 3.0).abs() < EXACT_F64);
    // Two triangles sharing an edge: the shared edge counts twice over triangle edges, once
    // over unique edges.
    let quad = [[0, 1, 2], [2, 1, 0]];
    assert_eq!(
        metrics::triangle_edge_ratios(&rest, &posed, &quad)
            .unwrap()
            .unwrap()
            .count,
        6
    );
    assert_eq!(
        metrics::unique_edge_ratios(&rest, &posed, &quad)
            .unwrap()
            .unwrap()
            .count,
        3
    );
}

#[test]
fn volume_of_the_capped_fixture_is_that_of_its_polygonal_prism() {
    // 32-gon of circumradius r: area = ½ n r² sin(2π/n); times the length 2.
    let f = fixtures::twist_fine();
    let n = 32.0f64;
    let r = f64::from(fixtures::REST_RADIUS);
    let expected = 0.5 * n * r * r * (std::f64::consts::TAU / n).sin() * 2.0;
    let volume = metrics::signed_volume(&f.positions, &f.triangles).unwrap();
    // f32 vertex coordinates: relative error of order 1e-7.
    assert!(
        (volume - expected).abs() < 1e-6 * expected,
        "{volume} vs {expected}"
    );
    // Scaling by 2 multiplies the volume by 8.
    let doubled: Vec<Vec3> = f.positions.iter().map(|p| *p * 2.0).collect();
    let ratio = metrics::volume_ratio(&f.positions, &doubled, &f.triangles)
        .unwrap()
        .unwrap();
    assert!((ratio - 8.0).abs() < 1e-6);
}

#[test]
fn candy_wrapper_radius_takes_the_minimum_in_the_slab() {
    // Two points in the slab at radius 3 and 4 from the Y axis, one outside it at radius 1.
    let positions = [
        Vec3::new(3.0, 1.0, 0.0),
        Vec3::new(0.0, 1.1, 4.0),
        Vec3::new(1.0, 2.0, 0.0),
    ];
    let r = metrics::candy_wrapper_radius(&positions, Vec3::ZERO, Vec3::Y, 1.0, 0.25).unwrap();
    assert!((r - 3.0).abs() < EXACT_F64);
    assert_eq!(
        metrics::candy_wrapper_radius(&positions, Vec3::ZERO, Vec3::Y, 10.0, 0.25),
        None
    );
    assert_eq!(
        metrics::candy_wrapper_radius(&positions, Vec3::ZERO, Vec3::ZERO, 1.0, 0.25),
        None
    );
}

#[test]
fn bone_distance_is_to_the_nearest_segment() {
    // Segments along Y from 0 to 1 and from (0,1,0) to (1,1,0). A point at (0.5, 0.5, 0) is
    // 0.5 from both; one at (2, 1, 0) is 1 past the end of the second.
    let segments = [[Vec3::ZERO, Vec3::Y], [Vec3::Y, Vec3::new(1.0, 1.0, 0.0)]];
    let positions = [Vec3::new(0.5, 0.5, 0.0), Vec3::new(2.0, 1.0, 0.0)];
    let stats = metrics::bone_distance_ratios(&positions, &[0, 1], &segments, 0.5)
        .unwrap()
        .unwrap();
    assert!((stats.min - 1.0).abs() < EXACT_F64);
    assert!((stats.max - 2.0).abs() < EXACT_F64);
}

#[test]
fn displacement_and_normal_angle() {
    // Bounding-box diagonal of the reference: |(3, 4, 0)| = 5. One vertex moves by 1.
    let a = [Vec3::ZERO, Vec3::new(3.0, 4.0, 0.0)];
    let b = [Vec3::ZERO, Vec3::new(3.0, 4.0, 1.0)];
    let d = metrics::displacement(&a, &b).unwrap().unwrap();
    assert!((d.max_relative - 0.2).abs() < EXACT_F64);
    assert!((d.rms_relative - (0.5f64).sqrt() / 5.0).abs() < EXACT_F64);
    let angle = metrics::normal_angle_max_rad(&[Vec3::X, Vec3::Y], &[Vec3::X, Vec3::Z])
        .unwrap()
        .unwrap();
    assert!((angle - std::f64::consts::FRAC_PI_2).abs() < EXACT_F64);
}

#[test]
fn blended_vertices_are_those_with_two_nonzero_weights() {
    let f = fixtures::twist_coarse();
    // Only the middle ring (0.5 / 0.5) blends on the coarse cylinder.
    assert_eq!(metrics::blended_vertices(&f.influences), f.joint_ring);
}

#[test]
fn builder_merges_truncates_renormalizes_and_reports() {
    let lists: Vec<Vec<(u16, f32)>> = vec![
        vec![(2, 0.5), (0, 0.2), (2, 0.1), (1, 0.2)], // joint 2 twice: merged to 0.6
        vec![(0, 0.1), (1, 0.4), (2, 0.3), (3, 0.2)], // four influences into two slots
        vec![(3, 2.0)],                               // sums to 2: renormalized
        vec![],                                       // no influence at all
    ];
    let (influences, report) = Influences::from_lists(&lists, 2, 4).unwrap();
    // Ties (joints 0 and 1 at 0.2) keep the lower joint index: joint 0 over joint 1.
    assert_eq!(
        influences.vertex(0).unwrap(),
        (&[2u16, 0][..], &[0.75f32, 0.25][..])
    );
    assert_eq!(influences.vertex(1).unwrap().0, &[1, 2]);
    let (_, w) = influences.vertex(1).unwrap();
    assert!((w[0] - 0.4 / 0.7).abs() < 1e-6 && (w[1] - 0.3 / 0.7).abs() < 1e-6);
    assert_eq!(
        influences.vertex(2).unwrap(),
        (&[3u16, 0][..], &[1.0f32, 0.0][..])
    );
    assert_eq!(
        influences.vertex(3).unwrap(),
        (&[0u16, 0][..], &[0.0f32, 0.0][..])
    );
    assert_eq!(
        report,
        InfluenceBuildReport {
            vertices_with_repeated_joints: 1,
            vertices_truncated: 2,
            influences_dropped: 3,
            max_weight_dropped: 0.2,
            vertices_renormalized: 3,
            vertices_unweighted: 1,
        }
    );
}

#[test]
fn any_number_of_influences_per_vertex() {
    for k in [1, 2, 3, 4, 8, 12] {
        let joints: Vec<u16> = (0..k as u16).collect();
        let influences = Influences::new(k, joints, vec![1.0 / k as f32; k], k).unwrap();
        assert_eq!(influences.vertex_count(), 1);
        assert_eq!(influences.influences_per_vertex(), k);
    }
}
