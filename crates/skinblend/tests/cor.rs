//! Skinning with optimized centers of rotation (Le & Hodgins 2016): the precomputation against a
//! naive sum, determinism, the file format, the kernel against an f64 reference, the paper's
//! claims measured on the fixtures, and one test per error it adds.

mod common;

use common::*;
use glam::{DMat3, DQuat, DVec3, Mat4, Vec3, Vec4};
use skinblend::cor::{
    self, decode_rotation_centers, encode_rotation_centers, has_rotation_center, rotation_centers,
    rotation_centers_with_progress, weight_similarity, CorOptions, CorProgress, CorStage,
    RotationCenters, COR_FORMAT_VERSION, NO_ROTATION_CENTER,
};
use skinblend::evidence::{self, EvidenceRow};
use skinblend::fixtures::{self, Fixture};
use skinblend::{
    prepare, skin, skin_into, DualQuat, Influences, Method, PreparedPalette, RunOptions, SkinError,
    SkinInput, SkinOptions, SkinOutputs,
};

fn options(method: Method) -> SkinOptions {
    SkinOptions {
        method,
        ..SkinOptions::default()
    }
}

fn centers_of(fixture: &Fixture, cor_options: &CorOptions) -> RotationCenters {
    rotation_centers(
        &fixture.positions,
        &fixture.triangles,
        &fixture.influences,
        cor_options,
    )
    .unwrap()
}

fn bits(centers: &[Vec3]) -> Vec<[u32; 3]> {
    centers
        .iter()
        .map(|c| c.to_array().map(f32::to_bits))
        .collect()
}

/// Random centers for a rig, a tenth of them missing (NaN).
fn random_centers(rng: &mut Rng, count: usize) -> Vec<Vec3> {
    (0..count)
        .map(|_| {
            if rng.unit() < 0.1 {
                NO_ROTATION_CENTER
            } else {
                rng.vec3(2.0)
            }
        })
        .collect()
}

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

// ---------------------------------------------------------------------------------------------
// Saving and loading.

#[test]
fn save_then_load_is_exact_to_the_bit() {
    let fixture = fixtures::shear_cap();
    let mut centers = centers_of(&fixture, &CorOptions::default()).centers;
    centers.push(Vec3::new(-0.0, f32::MIN_POSITIVE, f32::MAX));
    let bytes = encode_rotation_centers(&centers).unwrap();
    assert_eq!(bytes.len(), 28 + 12 * centers.len());
    assert_eq!(&bytes[..8], b"SKBLCOR\0");
    let loaded = decode_rotation_centers(&bytes).unwrap();
    assert_eq!(bits(&loaded), bits(&centers));
    assert!(loaded.iter().any(|c| !has_rotation_center(*c)));
    // Nothing at all round-trips too.
    assert_eq!(
        decode_rotation_centers(&encode_rotation_centers(&[]).unwrap()),
        Ok(vec![])
    );
}

#[test]
fn cor_data_magic() {
    let mut bytes = encode_rotation_centers(&[Vec3::ONE]).unwrap();
    bytes[0] = b'X';
    assert_eq!(
        decode_rotation_centers(&bytes),
        Err(SkinError::CorDataMagic {
            found: *b"XKBLCOR\0"
        })
    );
}

#[test]
fn cor_data_version() {
    let mut bytes = encode_rotation_centers(&[Vec3::ONE]).unwrap();
    bytes[8..12].copy_from_slice(&7u32.to_le_bytes());
    assert_eq!(
        decode_rotation_centers(&bytes),
        Err(SkinError::CorDataVersion {
            found: 7,
            supported: COR_FORMAT_VERSION
        })
    );
}

#[test]
fn cor_data_length_on_every_truncation_and_on_trailing_bytes() {
    let bytes = encode_rotation_centers(&[Vec3::ONE, NO_ROTATION_CENTER, Vec3::X]).unwrap();
    for len in 0..bytes.len() {
        let error = decode_rotation_centers(&bytes[..len]).unwrap_err();
        let expected = if len < 20 { 28 } else { bytes.len() };
        assert_eq!(
            error,
            SkinError::CorDataLength {
                expected,
                found: len
            },
            "truncated to {len}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        decode_rotation_centers(&longer),
        Err(SkinError::CorDataLength {
            expected: bytes.len(),
            found: bytes.len() + 1
        })
    );
    // A vertex count too large for memory is a length error, not an overflow.
    let mut huge = bytes;
    huge[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        decode_rotation_centers(&huge),
        Err(SkinError::CorDataLength { .. })
    ));
}

#[test]
fn cor_data_checksum() {
    let bytes = encode_rotation_centers(&[Vec3::ONE, Vec3::Y]).unwrap();
    for at in 20..bytes.len() {
        let mut corrupt = bytes.clone();
        corrupt[at] ^= 0x10;
        assert!(
            matches!(
                decode_rotation_centers(&corrupt),
                Err(SkinError::CorDataChecksum { stored, computed }) if stored != computed
            ),
            "byte {at} flipped"
        );
    }
}

#[test]
fn rotation_centers_must_be_finite_or_all_nan() {
    let bad = Vec3::new(f32::NAN, 0.0, 0.0);
    assert_eq!(
        encode_rotation_centers(&[Vec3::ONE, bad]),
        Err(SkinError::NonFiniteAttribute {
            attribute: "rotation_centers",
            vertex: 1
        })
    );
    // A stored infinity with a valid checksum is still refused on load.
    let mut bytes = encode_rotation_centers(&[Vec3::ONE]).unwrap();
    bytes[20..24].copy_from_slice(&f32::INFINITY.to_bits().to_le_bytes());
    let body = bytes.len() - 8;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &bytes[..body] {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    bytes[body..].copy_from_slice(&hash.to_le_bytes());
    assert_eq!(
        decode_rotation_centers(&bytes),
        Err(SkinError::NonFiniteAttribute {
            attribute: "rotation_centers",
            vertex: 0
        })
    );
    let influences = Influences::new(1, vec![0, 0], vec![1.0, 1.0], 1).unwrap();
    let positions = [Vec3::ZERO, Vec3::ONE];
    let input = SkinInput::new(&positions, None, None, &influences).unwrap();
    assert_eq!(
        input
            .with_rotation_centers(&[Vec3::ZERO, Vec3::new(0.0, f32::INFINITY, 0.0)])
            .unwrap_err(),
        SkinError::NonFiniteAttribute {
            attribute: "rotation_centers",
            vertex: 1
        }
    );
    assert_eq!(
        input.with_rotation_centers(&[Vec3::ZERO]).unwrap_err(),
        SkinError::AttributeLength {
            attribute: "rotation_centers",
            expected: 2,
            found: 1
        }
    );
    assert!(input
        .with_rotation_centers(&[Vec3::ZERO, NO_ROTATION_CENTER])
        .is_ok());
}

// ---------------------------------------------------------------------------------------------
// Errors of the precomputation and of skinning.

#[test]
fn missing_rotation_centers() {
    let fixture = fixtures::twist_coarse();
    let input = SkinInput::new(&fixture.positions, None, None, &fixture.influences).unwrap();
    let expected = SkinError::MissingRotationCenters { vertex_count: 60 };
    assert_eq!(
        skin(
            &input,
            &fixture.palette(90.0),
            None,
            &options(Method::CenterOfRotation)
        ),
        Err(expected.clone())
    );
    let prepared = prepare(
        &fixture.palette(90.0),
        None,
        &options(Method::CenterOfRotation),
    )
    .unwrap();
    let mut out = vec![Vec3::ZERO; 60];
    assert_eq!(
        skin_into(
            &input,
            &prepared,
            SkinOutputs::positions(&mut out),
            RunOptions::default()
        ),
        Err(expected)
    );
}

#[test]
fn invalid_cor_option() {
    let fixture = fixtures::twist_coarse();
    let cases = [
        (
            "sigma",
            CorOptions {
                sigma: 0.0,
                ..CorOptions::default()
            },
            0.0,
        ),
        (
            "sigma",
            CorOptions {
                sigma: -1.0,
                ..CorOptions::default()
            },
            -1.0,
        ),
        (
            "subdivision_epsilon",
            CorOptions {
                subdivision_epsilon: 1e-3,
                ..CorOptions::default()
            },
            1e-3,
        ),
        (
            "weight_quantum",
            CorOptions {
                weight_quantum: -0.5,
                ..CorOptions::default()
            },
            -0.5,
        ),
    ];
    for (option, cor_options, value) in cases {
        assert_eq!(
            rotation_centers(
                &fixture.positions,
                &fixture.triangles,
                &fixture.influences,
                &cor_options
            ),
            Err(SkinError::InvalidCorOption { option, value }),
        );
    }
    let nan = CorOptions {
        subdivision_epsilon: f32::NAN,
        ..CorOptions::default()
    };
    assert!(matches!(
        rotation_centers(&fixture.positions, &fixture.triangles, &fixture.influences, &nan),
        Err(SkinError::InvalidCorOption { option: "subdivision_epsilon", value }) if value.is_nan()
    ));
}

#[test]
fn precomputation_names_bad_positions_and_triangles() {
    let fixture = fixtures::twist_coarse();
    let options = CorOptions::default();
    assert_eq!(
        rotation_centers(
            &fixture.positions[1..],
            &fixture.triangles,
            &fixture.influences,
            &options
        ),
        Err(SkinError::AttributeLength {
            attribute: "positions",
            expected: 60,
            found: 59
        })
    );
    let mut positions = fixture.positions.clone();
    positions[7].y = f32::NAN;
    assert_eq!(
        rotation_centers(
            &positions,
            &fixture.triangles,
            &fixture.influences,
            &options
        ),
        Err(SkinError::NonFiniteAttribute {
            attribute: "positions",
            vertex: 7
        })
    );
    let mut triangles = fixture.triangles.clone();
    triangles[5][2] = 60;
    assert_eq!(
        rotation_centers(
            &fixture.positions,
            &triangles,
            &fixture.influences,
            &options
        ),
        Err(SkinError::VertexIndexOutOfRange {
            element: "triangles",
            index: 5,
            vertex: 60,
            vertex_count: 60
        })
    );
}

// ---------------------------------------------------------------------------------------------
// The kernel.

fn skin_cor(
    input: &SkinInput<'_>,
    palette: &[Mat4],
    joint_centers: Option<&[Vec3]>,
) -> skinblend::Skinned {
    skin(
        input,
        palette,
        joint_centers,
        &options(Method::CenterOfRotation),
    )
    .unwrap()
}

#[test]
fn one_rigid_influence_gives_cor_equal_to_lbs_and_dqs() {
    // With one joint, R is that joint's rotation and t = M p* − R p* is its translation,
    // whatever the center: the same matrix in another operation order (REL_F32, not bits).
    let mut rng = Rng::new(61);
    let rig = random_rig(&mut rng, 500, 1, 8, false);
    let centers = random_centers(&mut rng, 500);
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &rig.influences,
    )
    .unwrap()
    .with_rotation_centers(&centers)
    .unwrap();
    let cor = skin_cor(&input, &rig.palette, Some(&rig.centers));
    for method in [Method::Linear, Method::DualQuaternion] {
        let other = skin(&input, &rig.palette, Some(&rig.centers), &options(method)).unwrap();
        assert_points_close(method.name(), &other.positions, &cor.positions, REL_F32);
        assert_points_close(
            method.name(),
            other.normals.as_ref().unwrap(),
            cor.normals.as_ref().unwrap(),
            REL_F32,
        );
    }
}

#[test]
fn one_non_rigid_influence_gives_cor_equal_to_lbs() {
    // Scale, shear and mirror go through the residual before the turn about the center, and
    // the center goes where the full matrix sends it, so one joint is that matrix exactly.
    let mut rng = Rng::new(62);
    let rig = random_rig(&mut rng, 500, 1, 8, true);
    let centers = random_centers(&mut rng, 500);
    let input = SkinInput::new(&rig.positions, None, None, &rig.influences)
        .unwrap()
        .with_rotation_centers(&centers)
        .unwrap();
    let cor = skin_cor(&input, &rig.palette, Some(&rig.centers));
    let lbs = skin(
        &input,
        &rig.palette,
        Some(&rig.centers),
        &options(Method::Linear),
    )
    .unwrap();
    assert!(cor.diagnostics.non_rigid_joints > 0);
    assert_points_close("non-rigid", &lbs.positions, &cor.positions, NON_RIGID_REL);
}

#[test]
fn bind_pose_returns_the_input() {
    // Identity joints: R = I and LBS(p*) = p* up to the rounding of the weight sum.
    for fixture in fixtures::all() {
        let centers = centers_of(&fixture, &CorOptions::default()).centers;
        let input = SkinInput::new(
            &fixture.positions,
            Some(&fixture.normals),
            Some(&fixture.tangents),
            &fixture.influences,
        )
        .unwrap()
        .with_rotation_centers(&centers)
        .unwrap();
        let palette = vec![Mat4::IDENTITY; fixture.joint_from_bind.len()];
        let out = skin_cor(&input, &palette, Some(&fixture.joint_centers));
        assert_points_close(fixture.name, &fixture.positions, &out.positions, REL_F32);
        assert_points_close(
            fixture.name,
            &fixture.normals,
            out.normals.as_ref().unwrap(),
            REL_F32,
        );
        assert_eq!(out.diagnostics, skinblend::Diagnostics::default());
    }
}

/// The paper's formula in f64 for rigid palettes, written from the quaternions and matrices:
/// q = normalize(Σ ± w q), aligned to the heaviest influence; v' = R v + Σ w M p* − R p*.
fn reference_cor(
    position: Vec3,
    center: Vec3,
    joints: &[u16],
    weights: &[f32],
    palette: &[Mat4],
) -> DVec3 {
    let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
    let rotation_of =
        |j: u16| DQuat::from_mat3(&DMat3::from_mat4(palette[usize::from(j)].as_dmat4()));
    let mut pivot = 0;
    for (slot, &w) in weights.iter().enumerate() {
        if w > weights[pivot] {
            pivot = slot;
        }
    }
    let pivot_q = rotation_of(joints[pivot]);
    let mut q = DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    let mut placed = DVec3::ZERO;
    for (&j, &w) in joints.iter().zip(weights) {
        let w = f64::from(w) / sum;
        let qj = rotation_of(j);
        q += qj * if qj.dot(pivot_q) < 0.0 { -w } else { w };
        placed += palette[usize::from(j)]
            .as_dmat4()
            .transform_point3(center.as_dvec3())
            * w;
    }
    let q = q.normalize();
    q * position.as_dvec3() + placed - q * center.as_dvec3()
}

#[test]
fn library_agrees_with_the_f64_reference() {
    let mut rng = Rng::new(63);
    for k in [2, 4, 8] {
        let rig = random_rig(&mut rng, 400, k, 12, false);
        let centers = random_centers(&mut rng, 400);
        let input = SkinInput::new(&rig.positions, None, None, &rig.influences)
            .unwrap()
            .with_rotation_centers(&centers)
            .unwrap();
        let cor = skin_cor(&input, &rig.palette, None);
        // CoR falls back to the scalar DQS kernel (CoR has no SIMD kernel), so compare with the
        // scalar one: the SIMD DQS kernel differs from it by rounding.
        let scalar_dq = SkinOptions {
            simd: false,
            ..options(Method::DualQuaternion)
        };
        let dq = skin(&input, &rig.palette, None, &scalar_dq).unwrap();
        let expected: Vec<Vec3> = (0..400)
            .map(|v| {
                let (joints, weights) = rig.influences.vertex(v).unwrap();
                if has_rotation_center(centers[v]) {
                    reference_cor(rig.positions[v], centers[v], joints, weights, &rig.palette)
                        .as_vec3()
                } else {
                    dq.positions[v] // no center: DQS
                }
            })
            .collect();
        assert_points_close(
            &format!("k = {k}"),
            &expected,
            &cor.positions,
            REF_F64_VS_F32,
        );
        // Same pivot rule as DQS, so the same sign flips.
        assert_eq!(cor.diagnostics.sign_flips, dq.diagnostics.sign_flips);
        assert!(cor.diagnostics.sign_flips > 0);
        // Where the center is missing the result is DQS's, bit for bit.
        for v in (0..400).filter(|&v| !has_rotation_center(centers[v])) {
            assert_eq!(cor.positions[v], dq.positions[v], "vertex {v}");
        }
    }
}

#[test]
fn cor_is_immune_to_the_sign_of_stored_rotations() {
    let mut rng = Rng::new(64);
    let rig = random_rig(&mut rng, 300, 4, 6, false);
    let centers = random_centers(&mut rng, 300);
    let input = SkinInput::new(&rig.positions, None, None, &rig.influences)
        .unwrap()
        .with_rotation_centers(&centers)
        .unwrap();
    let dual_quats: Vec<DualQuat> = rig
        .palette
        .iter()
        .map(|m| {
            let (_, rotation, translation) = m.to_scale_rotation_translation();
            DualQuat::from_rotation_translation(rotation, translation)
        })
        .collect();
    let mixed: Vec<DualQuat> = dual_quats
        .iter()
        .enumerate()
        .map(|(j, dq)| if j % 2 == 0 { dq.negated() } else { *dq })
        .collect();
    let run = |dqs: &[DualQuat]| {
        let prepared =
            PreparedPalette::from_dual_quats(dqs, &options(Method::CenterOfRotation)).unwrap();
        let mut out = vec![Vec3::ZERO; 300];
        skin_into(
            &input,
            &prepared,
            SkinOutputs::positions(&mut out),
            RunOptions::default(),
        )
        .unwrap();
        out
    };
    assert_points_close("mixed signs", &run(&dual_quats), &run(&mixed), REL_F32);
}

#[test]
fn parallel_skinning_is_bit_identical_to_serial() {
    let mut rng = Rng::new(65);
    let rig = random_rig(&mut rng, 20_000, 4, 16, true);
    let centers = random_centers(&mut rng, 20_000);
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &rig.influences,
    )
    .unwrap()
    .with_rotation_centers(&centers)
    .unwrap();
    let prepared = prepare(
        &rig.palette,
        Some(&rig.centers),
        &options(Method::CenterOfRotation),
    )
    .unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut positions = vec![Vec3::ZERO; 20_000];
        let mut normals = vec![Vec3::ZERO; 20_000];
        let mut tangents = vec![Vec4::ZERO; 20_000];
        let diagnostics = pool
            .install(|| {
                skin_into(
                    &input,
                    &prepared,
                    SkinOutputs {
                        positions: &mut positions,
                        normals: Some(&mut normals),
                        tangents: Some(&mut tangents),
                    },
                    RunOptions::default(),
                )
            })
            .unwrap();
        (positions, normals, tangents, diagnostics)
    };
    let serial = run(1);
    for threads in [2, 3] {
        assert!(
            serial == run(threads),
            "{threads} threads differ from serial"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The paper's claims, measured on the fixtures.

fn row(fixture: &Fixture, angle_deg: f32, method: Method) -> EvidenceRow {
    evidence::measure(fixture, angle_deg, method).unwrap()
}

#[test]
fn twist_180_keeps_the_joint_ring_round() {
    let fixture = fixtures::twist_coarse();
    let cor = row(&fixture, 180.0, Method::CenterOfRotation);
    assert!(
        cor.candy_wrapper_ratio >= 0.99,
        "{}",
        cor.candy_wrapper_ratio
    );
    // The ring turns rigidly about its center: every pair distance kept.
    assert!((cor.ring_distance_ratio.min - 1.0).abs() < 1e-6);
    assert!((cor.ring_distance_ratio.max - 1.0).abs() < 1e-6);
    let lbs = row(&fixture, 180.0, Method::Linear);
    assert!(lbs.candy_wrapper_ratio < 1e-3);
}

/// The reference model's figures for `bend_fine` (the issue): bulge under CoR at 90° and 135°,
/// and volume ratio at 90°. Ours agree to the third decimal; 2e-3 allows for another
/// subdivision scheme's quadrature.
const REFERENCE_FIGURE: f64 = 2e-3;

#[test]
fn bend_fine_cor_bulges_less_than_dqs_and_keeps_volume_better_than_lbs() {
    let fixture = fixtures::bend_fine();
    for (angle, reference_bulge) in [(90.0, 1.053), (135.0, 1.024)] {
        let [lbs, dq, cor] = [
            Method::Linear,
            Method::DualQuaternion,
            Method::CenterOfRotation,
        ]
        .map(|m| row(&fixture, angle, m));
        let bulge = cor.bone_distance_ratio.max;
        assert!(
            bulge < dq.bone_distance_ratio.max,
            "{angle}°: CoR bulge {bulge} vs DQS {}",
            dq.bone_distance_ratio.max
        );
        assert!(
            (bulge - reference_bulge).abs() < REFERENCE_FIGURE,
            "{angle}°: {bulge}"
        );
        let volume = |r: &EvidenceRow| r.volume_ratio.unwrap();
        assert!(
            (volume(&cor) - 1.0).abs() < (volume(&lbs) - 1.0).abs(),
            "{angle}°: CoR volume {} vs LBS {}",
            volume(&cor),
            volume(&lbs)
        );
        if angle == 90.0 {
            assert!(
                (volume(&cor) - 0.995).abs() < REFERENCE_FIGURE,
                "{}",
                volume(&cor)
            );
            assert!((dq.bone_distance_ratio.max - 1.088).abs() < 5e-4);
            assert!((volume(&lbs) - 0.966).abs() < 5e-4);
        }
        // Honest about edges: on this fixture CoR does not beat DQS on the mean edge ratio.
        assert!(
            cor.edge_ratio.mean > dq.edge_ratio.mean,
            "{angle}°: CoR mean edge {} vs DQS {}",
            cor.edge_ratio.mean,
            dq.edge_ratio.mean
        );
        assert_eq!(cor.diagnostics, dq.diagnostics);
    }
}
