//! The written vectors follow the manifest's stated rules: an f64 DQS over the files, by the
//! rules as written, reproduces every expected normal and finds exactly the marked ones.

use std::path::Path;

use serde_json::{json, Value};
use skinblend::Method;

use super::{write, NORMAL_TOLERANCE, POSITION_TOLERANCE, SINGULAR_RELATIVE};

fn read_f32(path: &Path) -> Vec<f32> {
    std::fs::read(path)
        .expect("vector file")
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn read_u32(path: &Path) -> Vec<u32> {
    read_f32(path).into_iter().map(f32::to_bits).collect()
}

/// One vertex's DQS normal in f64 from the vector files, by the manifest's rules;
/// `negate_singular` takes −C where the residual is singular: what a port that multiplies by
/// sign(det) there gets when rounding leaves det negative (its sign is noise). Returns
/// the unnormalized direction's ratio `|C n| / (largest² |n|)` (infinite when no residual)
/// and the unit normal.
fn dq_normal(
    joints: &[u32],
    weights: &[f32],
    n: glam::DVec3,
    dqs: &[f32],
    residuals: &[f32],
    rigid: &[u32],
    negate_singular: bool,
) -> (f64, glam::DVec3) {
    use glam::{DMat3, DVec3, DVec4};
    let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
    let mut pivot = 0;
    for slot in 1..4 {
        if weights[slot] > weights[pivot] {
            pivot = slot;
        }
    }
    let real_of = |j: u32| {
        let b = 8 * j as usize;
        DVec4::new(
            f64::from(dqs[b]),
            f64::from(dqs[b + 1]),
            f64::from(dqs[b + 2]),
            f64::from(dqs[b + 3]),
        )
    };
    let pivot_real = real_of(joints[pivot]);
    let mut real = DVec4::ZERO;
    let mut s = DMat3::ZERO;
    let mut any_residual = false;
    for slot in 0..4 {
        let w = f64::from(weights[slot]);
        if w <= 0.0 {
            continue;
        }
        let j = joints[slot] as usize;
        let r = real_of(joints[slot]);
        real += r * if r.dot(pivot_real) < 0.0 { -w } else { w };
        any_residual |= rigid[j] == 0;
        let row = |i: usize| {
            let b = 12 * j + 4 * i;
            DVec3::new(
                f64::from(residuals[b]),
                f64::from(residuals[b + 1]),
                f64::from(residuals[b + 2]),
            )
        };
        s += DMat3::from_cols(row(0), row(1), row(2)).transpose() * (w / sum);
    }
    let real = real.normalize();
    let (ratio, m) = if any_residual {
        let (c0, c1, c2) = (s.x_axis, s.y_axis, s.z_axis);
        let cofactor = DMat3::from_cols(c1.cross(c2), c2.cross(c0), c0.cross(c1));
        let det = c0.dot(cofactor.x_axis);
        let largest = c0.length().max(c1.length()).max(c2.length());
        let singular = det.abs() <= f64::from(SINGULAR_RELATIVE) * largest.powi(3);
        let negate = if singular { negate_singular } else { det < 0.0 };
        let sign = if negate { -1.0 } else { 1.0 };
        let d = cofactor * n * sign;
        (d.length() / (largest * largest * n.length()), d)
    } else {
        (f64::INFINITY, n)
    };
    let v = real.truncate();
    let rotated = m + 2.0 * v.cross(v.cross(m) + real.w * m);
    (ratio, rotated.normalize_or_zero())
}

/// The manifest states the rules, and `undefined_normals` marks exactly the vertices whose
/// exact normal is zero: an f64 DQS over the written files, following the stated rules
/// (the unsigned cofactor where singular), finds those and agrees with every other expected
/// normal; with −C where singular (cofactor · sign(det) when det rounds negative) it is off by
/// more than 1 on the mirrored ring.
/// Fails when the rules or the marks are missing, when a mark is dropped or added, or when a
/// stated rule is not the one the expected values follow.
#[test]
fn manifest_states_the_rules_and_marks_undefined_normals() {
    let scratch = skinblend_testkit::ScratchDir::new("manifest-rules");
    let dir = scratch.join("vectors");
    write(&dir, &[], &mut |_| {}).expect("write vectors");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest"))
            .expect("json");
    let (dq, cor) = (
        Method::DualQuaternion.name(),
        Method::CenterOfRotation.name(),
    );
    let rules = &manifest["rules"];
    assert_eq!(rules["normal_matrix"]["singular_relative"], json!(1e-6));
    assert!(rules["normal_matrix"]["rule"]
        .as_str()
        .unwrap()
        .contains("unsigned"));
    for key in [
        "pivot",
        "sign_alignment",
        "blend",
        "normalization",
        "residual",
        "order",
    ] {
        assert!(rules[dq][key].is_string(), "rules.{dq}.{key}");
    }
    for (key, field) in [("weights", "unweighted"), ("undefined_normals", "rule")] {
        assert!(rules[key][field].is_string(), "rules.{key}.{field}");
    }
    assert!(rules["normalize"].is_string() && rules[cor].is_string());

    let cases = manifest["cases"].as_array().expect("cases");
    let mut marked_total = 0;
    let mut worst_signed: f64 = 0.0;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let v = &case["vertices"];
        let file = |key: &str| dir.join(v[key].as_str().unwrap());
        let (normals, joints, weights) = (
            read_f32(&file("normals")),
            read_u32(&file("joints")),
            read_f32(&file("weights")),
        );
        for (f, frame) in case["frames"].as_array().unwrap().iter().enumerate() {
            let frame_file = |key: &str| dir.join(frame[key].as_str().unwrap());
            let (dqs, residuals, rigid) = (
                read_f32(&frame_file("dual_quats")),
                read_f32(&frame_file("residuals")),
                read_u32(&frame_file("rigid")),
            );
            let expected = &frame["expected"][dq];
            let expected_normals = read_f32(&dir.join(expected["normals"].as_str().unwrap()));
            let marked: Vec<usize> = expected["undefined_normals"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: no undefined_normals"))
                .iter()
                .map(|x| x.as_u64().unwrap() as usize)
                .collect();
            for cor_or_linear in [cor, Method::Linear.name()] {
                assert!(frame["expected"][cor_or_linear]["undefined_normals"].is_array());
            }
            assert_eq!(
                frame["expected"][cor]["undefined_normals"], expected["undefined_normals"],
                "{name}: CoR normals are DQS's"
            );
            marked_total += marked.len();
            for vertex in 0..case["vertex_count"].as_u64().unwrap() as usize {
                let (j, w) = (
                    &joints[4 * vertex..4 * vertex + 4],
                    &weights[4 * vertex..4 * vertex + 4],
                );
                if w.iter().sum::<f32>() < f32::MIN_POSITIVE {
                    continue;
                }
                let n = glam::Vec3::from_slice(&normals[3 * vertex..]).as_dvec3();
                let (ratio, normal) = dq_normal(j, w, n, &dqs, &residuals, &rigid, false);
                let exact_zero = ratio <= 1e-6;
                assert_eq!(
                    marked.contains(&vertex),
                    exact_zero,
                    "{name} frame {f} vertex {vertex}: ratio {ratio}, marked {marked:?}"
                );
                if exact_zero {
                    continue;
                }
                let got = glam::Vec3::from_slice(&expected_normals[3 * vertex..]).as_dvec3();
                let off = (got - normal).abs().max_element();
                assert!(
                    off <= f64::from(NORMAL_TOLERANCE),
                    "{name} frame {f} vertex {vertex}: the stated rules give {normal}, expected {got}"
                );
                let (_, signed) = dq_normal(j, w, n, &dqs, &residuals, &rigid, true);
                worst_signed = worst_signed.max((got - signed).abs().max_element());
            }
            if name == "bend_coarse_mirrored_joint" {
                assert!(
                    !marked.is_empty(),
                    "{name}: the zero normals are not marked"
                );
            }
        }
    }
    assert!(marked_total > 0);
    assert!(
        worst_signed > 1.0,
        "sign(det) where singular is off by only {worst_signed}"
    );
    println!("marked {marked_total} dq normals; -C where singular: off by {worst_signed:.3}");
}

/// The blended vectors follow the stated rule: per vertex the expected blended position is the
/// interpolation of the expected linear and dq positions by the vertex's blend value (within
/// the position tolerance: the reference interpolates the same f32 results, so only the
/// interpolation's own rounding is between them), bit for bit the linear one at 0 and the dq one
/// at 1; every case's blend values lie in [0, 1] and the built-in rigs hold 0, 1 and values
/// between. Fails when the blend file or the blended outputs are missing, or a port following
/// the rule would not reproduce them.
#[test]
fn blended_vectors_interpolate_the_linear_and_dq_vectors() {
    let scratch = skinblend_testkit::ScratchDir::new("blended-vectors");
    let dir = scratch.join("vectors");
    write(&dir, &[], &mut |_| {}).expect("write vectors");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).expect("manifest"))
            .expect("json");
    let (linear, dq, blended) = (
        Method::Linear.name(),
        Method::DualQuaternion.name(),
        Method::Blended.name(),
    );
    assert!(manifest["rules"][blended].is_string(), "rules.{blended}");
    assert!(manifest["methods"]
        .as_array()
        .expect("methods")
        .contains(&json!(blended)));
    let mut seen = [false; 3];
    let mut worst: f32 = 0.0;
    for case in manifest["cases"].as_array().expect("cases") {
        let name = case["name"].as_str().unwrap();
        let scale = case["scale"].as_f64().unwrap() as f32;
        let blend_file = case["vertices"]["blend_values"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no blend_values"));
        let blend = read_f32(&dir.join(blend_file));
        assert_eq!(blend.len() as u64, case["vertex_count"].as_u64().unwrap());
        for &b in &blend {
            assert!((0.0..=1.0).contains(&b), "{name}: blend value {b}");
            seen[usize::from(b > 0.0) + usize::from(b >= 1.0)] = true;
        }
        for frame in case["frames"].as_array().unwrap() {
            let positions = |method: &str| {
                read_f32(&dir.join(frame["expected"][method]["positions"].as_str().unwrap()))
            };
            let (l, d, got) = (positions(linear), positions(dq), positions(blended));
            for (v, &b) in blend.iter().enumerate() {
                for axis in 0..3 {
                    let i = 3 * v + axis;
                    let want = l[i] * (1.0 - b) + d[i] * b;
                    if b == 0.0 || b == 1.0 {
                        assert_eq!(got[i].to_bits(), want.to_bits(), "{name} vertex {v}");
                    }
                    worst = worst.max((got[i] - want).abs() / scale);
                }
            }
        }
    }
    assert_eq!(seen, [true; 3], "blend values 0, 1 and between");
    assert!(
        worst <= POSITION_TOLERANCE,
        "blended positions are off the interpolation by {worst:e} of the scale"
    );
}
