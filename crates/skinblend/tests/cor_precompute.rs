//! The CoR precomputation (Le & Hodgins 2016): the weight similarity, the clustered sum
//! against a naive one, a cylinder's joint ring, determinism and progress reports.

mod common;

use common::cor::*;
use glam::{DVec3, Vec3};
use skinblend::cor::{
    self, has_rotation_center, rotation_centers, rotation_centers_with_progress, weight_similarity,
    CorOptions, CorProgress, CorStage, NO_ROTATION_CENTER,
};
use skinblend::fixtures::{self, Fixture};
use skinblend::Influences;

// ---------------------------------------------------------------------------------------------
// The similarity and the precomputation.

#[test]
fn similarity_matches_hand_computed_values() {
    // Equal weights: the exponent is zero, so s = 0.5⁴ = 0.0625.
    let half = [(0u16, 0.5f32), (1, 0.5)];
    assert!((weight_similarity(&half, &half, 0.1) - 0.0625).abs() < 1e-15);
    // A single influence shares no pair of joints with anything: 0.
    assert_eq!(weight_similarity(&half, &[(0, 1.0)], 0.1), 0.0);
    assert_eq!(weight_similarity(&[(0, 1.0)], &half, 0.1), 0.0);
    // (0.25, 0.75) against (0.75, 0.25): product 0.25·0.75·0.75·0.25 = 0.03515625,
    // d = 0.25·0.25 − 0.75·0.75 = −0.5, so exp(−0.25 / σ²) ≈ exp(−25) (σ is the f32 0.1).
    let sigma = f64::from(0.1f32);
    let expected = 0.035_156_25 * (-0.25 / (sigma * sigma)).exp();
    let s = weight_similarity(&[(0, 0.25), (1, 0.75)], &[(0, 0.75), (1, 0.25)], 0.1);
    assert!(
        (s - expected).abs() <= 1e-12 * expected,
        "{s} vs {expected}"
    );
    // Order and repeated joints do not matter; a third joint only one side has adds nothing.
    let shuffled = [(1u16, 0.25f32), (0, 0.25), (0, 0.25), (1, 0.25)];
    assert_eq!(weight_similarity(&shuffled, &half, 0.1), 0.0625);
    assert_eq!(
        weight_similarity(
            &[(0, 0.5), (1, 0.5), (2, 0.0)],
            &[(0, 0.5), (1, 0.5), (2, 0.3)],
            0.1
        ),
        0.0625
    );
}

/// Weights as `(joint, weight)` in f64, any order, no repeats.
type Sparse = Vec<(u16, f64)>;

fn weight_of(w: &Sparse, joint: u16) -> f64 {
    w.iter()
        .find(|&&(k, _)| k == joint)
        .map_or(0.0, |&(_, x)| x)
}

fn joints_of(lists: &[&Sparse]) -> Vec<u16> {
    let mut joints: Vec<u16> = lists
        .iter()
        .flat_map(|w| w.iter().map(|&(j, _)| j))
        .collect();
    joints.sort_unstable();
    joints.dedup();
    joints
}

fn midpoint_weights(a: &Sparse, b: &Sparse) -> Sparse {
    joints_of(&[a, b])
        .into_iter()
        .map(|j| (j, (weight_of(a, j) + weight_of(b, j)) / 2.0))
        .collect()
}

fn weight_distance(a: &Sparse, b: &Sparse) -> f64 {
    joints_of(&[a, b])
        .into_iter()
        .map(|j| (weight_of(a, j) - weight_of(b, j)).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// A triangle of the subdivided mesh: area, centroid, mean weights.
struct Leaf {
    area: f64,
    centroid: DVec3,
    weights: Vec<(u16, f32)>,
}

/// Splits at the edge midpoints, recursively, until no edge's weights differ by more than ε.
fn split_triangle(corners: [(DVec3, Sparse); 3], epsilon: f64, leaves: &mut Vec<Leaf>) {
    let [(pa, wa), (pb, wb), (pc, wc)] = &corners;
    let largest = weight_distance(wa, wb)
        .max(weight_distance(wb, wc))
        .max(weight_distance(wc, wa));
    if largest <= epsilon {
        let weights = joints_of(&[wa, wb, wc])
            .into_iter()
            .map(|j| {
                let mean = (weight_of(wa, j) + weight_of(wb, j) + weight_of(wc, j)) / 3.0;
                (j, mean as f32)
            })
            .collect();
        leaves.push(Leaf {
            area: 0.5 * (*pb - *pa).cross(*pc - *pa).length(),
            centroid: (*pa + *pb + *pc) / 3.0,
            weights,
        });
        return;
    }
    let mid = |(p, w): &(DVec3, Sparse), (q, v): &(DVec3, Sparse)| {
        ((*p + *q) / 2.0, midpoint_weights(w, v))
    };
    let [a, b, c] = corners;
    let (ab, bc, ca) = (mid(&a, &b), mid(&b, &c), mid(&c, &a));
    for child in [
        [a, ab.clone(), ca.clone()],
        [ab.clone(), b, bc.clone()],
        [ca.clone(), bc.clone(), c],
        [ab, bc, ca],
    ] {
        split_triangle(child, epsilon, leaves);
    }
}

/// The paper's sum, written the slow way: every vertex against every sub-triangle, with its own
/// recursive midpoint subdivision and [`weight_similarity`].
fn naive_centers(fixture: &Fixture, sigma: f32, epsilon: f64) -> Vec<Vec3> {
    let normalized = |v: usize| -> Sparse {
        let (joints, weights) = fixture.influences.vertex(v).unwrap();
        let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
        joints
            .iter()
            .zip(weights)
            .filter(|(_, &w)| w > 0.0)
            .map(|(&j, &w)| (j, f64::from(w) / sum))
            .collect()
    };
    let mut leaves = Vec::new();
    for t in &fixture.triangles {
        let corners = t.map(|v| {
            (
                fixture.positions[v as usize].as_dvec3(),
                normalized(v as usize),
            )
        });
        split_triangle(corners, epsilon, &mut leaves);
    }
    (0..fixture.positions.len())
        .map(|v| {
            let w: Vec<(u16, f32)> = normalized(v)
                .into_iter()
                .map(|(j, x)| (j, x as f32))
                .collect();
            let mut moment = DVec3::ZERO;
            let mut total = 0.0;
            for leaf in &leaves {
                let s = weight_similarity(&w, &leaf.weights, sigma);
                moment += leaf.centroid * (s * leaf.area);
                total += s * leaf.area;
            }
            if total > 0.0 {
                (moment / total).as_vec3()
            } else {
                NO_ROTATION_CENTER
            }
        })
        .collect()
}

/// Exact clustering reproduces the naive sum up to summation order and the f32 rounding of the
/// naive side's weights: 1e-5 of the fixture's length (2 m).
const CLUSTERED_VS_NAIVE: f32 = 1e-5 * fixtures::LENGTH;
/// The default weight rounding moves centers by second-order amounts: measured 1e-5 of the
/// mesh length on a painted 100k mesh; bound 1e-4 of the length here.
const ROUNDED_VS_EXACT: f32 = 1e-4 * fixtures::LENGTH;

#[test]
fn clustered_centers_match_the_naive_sum() {
    for fixture in [
        fixtures::bend_coarse(),
        fixtures::bend_fine(),
        fixtures::shear_cap(),
    ] {
        let naive = naive_centers(&fixture, cor::DEFAULT_SIGMA, 0.1);
        let exact = centers_of(
            &fixture,
            &CorOptions {
                weight_quantum: 0.0,
                ..CorOptions::default()
            },
        );
        let rounded = centers_of(&fixture, &CorOptions::default());
        for (v, ((n, e), r)) in naive
            .iter()
            .zip(&exact.centers)
            .zip(&rounded.centers)
            .enumerate()
        {
            assert_eq!(
                has_rotation_center(*n),
                has_rotation_center(*e),
                "{} vertex {v}: {n} vs {e}",
                fixture.name
            );
            assert_eq!(has_rotation_center(*e), has_rotation_center(*r));
            if has_rotation_center(*n) {
                assert!(
                    n.distance(*e) <= CLUSTERED_VS_NAIVE,
                    "{} vertex {v}: naive {n}, clustered {e}",
                    fixture.name
                );
                assert!(
                    e.distance(*r) <= ROUNDED_VS_EXACT,
                    "{} vertex {v}: exact {e}, rounded {r}",
                    fixture.name
                );
            }
        }
    }
}

#[test]
fn a_cylinder_joint_ring_turns_about_the_axis_at_the_joint() {
    // By symmetry the 0.5/0.5 ring of the seed's cylinder sees the same triangles at every angle
    // and its similar triangles lie symmetrically about y = 1: its center is (0, 1, 0). Its other
    // rings have a single influence and no center.
    let fixture = fixtures::twist_coarse();
    let result = centers_of(&fixture, &CorOptions::default());
    assert_eq!(result.vertices_without_center, 48);
    for (v, c) in result.centers.iter().enumerate() {
        let on_ring = fixture.joint_ring.contains(&(v as u32));
        assert_eq!(has_rotation_center(*c), on_ring, "vertex {v}: {c}");
        if on_ring {
            assert!(c.distance(Vec3::Y) < 1e-6, "vertex {v}: {c}");
        }
    }
}

#[test]
fn precomputation_is_deterministic_and_serial_equals_parallel() {
    // A mesh of several chunks of triangles and of weights, with wandering weight boundaries.
    let fixture = painted_cylinder(60, 48);
    let run = |threads: usize, parallel: bool| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let result = pool.install(|| {
            rotation_centers(
                &fixture.0,
                &fixture.1,
                &fixture.2,
                &CorOptions {
                    parallel,
                    ..CorOptions::default()
                },
            )
            .unwrap()
        });
        (bits(&result.centers), result)
    };
    let (serial_bits, serial) = run(1, false);
    assert!(serial.distinct_weights > 512, "{}", serial.distinct_weights);
    assert!(fixture.1.len() > 2048);
    assert!(serial.vertices_without_center < fixture.0.len());
    for (threads, parallel) in [(1, true), (2, true), (3, true), (8, true), (4, false)] {
        let (other_bits, other) = run(threads, parallel);
        assert!(
            other_bits == serial_bits,
            "{threads} threads (parallel {parallel}) differ from serial"
        );
        assert_eq!(
            (
                other.subdivided_triangles,
                other.triangle_clusters,
                other.distinct_weights
            ),
            (
                serial.subdivided_triangles,
                serial.triangle_clusters,
                serial.distinct_weights
            )
        );
        assert_eq!(
            other.vertices_without_center,
            serial.vertices_without_center
        );
    }
}

/// Positions, triangles and influences of a cylinder of `rings` × `segments` whose three joints'
/// weight boundaries wander around it, so that most vertices have their own weights.
fn painted_cylinder(rings: usize, segments: usize) -> (Vec<Vec3>, Vec<[u32; 3]>, Influences) {
    let mut positions = Vec::new();
    let mut lists = Vec::new();
    for ring in 0..rings {
        let y = 2.0 * ring as f32 / (rings - 1) as f32;
        for k in 0..segments {
            let theta = std::f32::consts::TAU * k as f32 / segments as f32;
            positions.push(Vec3::new(0.25 * theta.cos(), y, 0.25 * theta.sin()));
            let shift = 0.15 * (3.0 * theta + 2.0 * y).sin();
            let list: Vec<(u16, f32)> = (0..3)
                .map(|j| {
                    (
                        j as u16,
                        (1.0 - (y + shift - j as f32).abs() / 0.8).max(0.0),
                    )
                })
                .filter(|&(_, w)| w > 0.0)
                .collect();
            lists.push(if list.is_empty() {
                vec![(2, 1.0)]
            } else {
                list
            });
        }
    }
    let mut triangles = Vec::new();
    let at = |ring: usize, k: usize| (ring * segments + k % segments) as u32;
    for ring in 0..rings - 1 {
        for k in 0..segments {
            triangles.push([at(ring, k), at(ring + 1, k), at(ring + 1, k + 1)]);
            triangles.push([at(ring, k), at(ring + 1, k + 1), at(ring, k + 1)]);
        }
    }
    let (influences, _) = Influences::from_lists(lists, 4, 3).unwrap();
    (positions, triangles, influences)
}

#[test]
fn progress_reports_every_stage_in_order_to_the_end() {
    let (positions, triangles, influences) = painted_cylinder(60, 48);
    let mut reports: Vec<CorProgress> = Vec::new();
    let result = rotation_centers_with_progress(
        &positions,
        &triangles,
        &influences,
        &CorOptions::default(),
        &mut |p| reports.push(p),
    )
    .unwrap();
    let stage = |s| reports.iter().filter(move |p| p.stage == s);
    for (s, total) in [
        (CorStage::Subdivide, triangles.len()),
        (CorStage::Centers, result.distinct_weights),
    ] {
        let done: Vec<usize> = stage(s).map(|p| p.done).collect();
        assert!(done.len() > 1, "{s:?}: {done:?}");
        assert!(done.windows(2).all(|w| w[0] < w[1]), "{s:?}: {done:?}");
        assert_eq!(done.last(), Some(&total));
        assert!(stage(s).all(|p| p.total == total));
    }
    assert!(reports
        .iter()
        .position(|p| p.stage == CorStage::Centers)
        .is_some_and(|first| reports[first..]
            .iter()
            .all(|p| p.stage == CorStage::Centers)));
    // An empty mesh still finishes both stages.
    let empty = Influences::new(1, vec![], vec![], 1).unwrap();
    let mut empty_reports = Vec::new();
    rotation_centers_with_progress(&[], &[], &empty, &CorOptions::default(), &mut |p| {
        empty_reports.push(p)
    })
    .unwrap();
    assert_eq!(empty_reports.len(), 2);
    assert!(empty_reports.iter().all(|p| p.done == 0 && p.total == 0));
}
