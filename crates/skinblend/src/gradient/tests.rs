//! The backward passes against central finite differences (f64), the forward pass against the
//! library's scalar reference (f32), and the gradient at an exactly antipodal pair; normals'
//! own cases (the singular normal matrix, a result without length) in `tests/normals.rs`.

use glam::{Mat4, Quat, Vec3};

use super::{backward, backward_normals, forward, forward_normals, Gradients, Rig};
use crate::types::Method;

mod lanes;
mod normals;

/// Which pass a check runs: positions, or normals (the rig's `vertices` then hold normals).
#[derive(Clone, Copy, Debug)]
enum Pass {
    Positions,
    Normals,
}

impl Pass {
    fn forward(self, rig: &Rig<'_, f64>, out: &mut [f64]) {
        match self {
            Self::Positions => forward(rig, out),
            Self::Normals => forward_normals(rig, out),
        }
        .unwrap();
    }

    fn backward(self, rig: &Rig<'_, f64>, g: &[f64], grads: Gradients<'_, f64>) {
        match self {
            Self::Positions => backward(rig, g, grads),
            Self::Normals => backward_normals(rig, g, grads),
        }
        .unwrap();
    }
}

/// Central differences with step 1e-6 in f64 carry truncation error ~h²·f''' (1e-12 here) and
/// round-off ~1e-16/h (1e-10); 1e-6 relative leaves a wide margin and still catches any missing
/// term (those are of order 1e-2 to 1 on these rigs).
const FD_TOLERANCE: f64 = 1e-6;
const FD_STEP: f64 = 1e-6;
/// The generic f32 forward against the library's scalar reference on the same rig: both are
/// f32 Gram–Schmidt, quaternion and blend arithmetic on values of order 1–3, ~1e-6 relative;
/// a wrong sign, pivot or residual would be off by order 1.
const LIBRARY_TOLERANCE: f32 = 2e-5;

struct Random(u32);

impl Random {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        f64::from(self.0 >> 8) / f64::from(1u32 << 24)
    }
    fn signed(&mut self) -> f64 {
        2.0 * self.unit() - 1.0
    }
}

/// A small random rig: `b` palettes of `j` joints (rigid, scaled, sheared and mirrored ones),
/// `n` vertices with `k` influences (one zero-weight slot), bind origins and CoR centers (one
/// vertex without).
struct TestRig {
    palettes: Vec<f64>,
    vertices: Vec<f64>,
    joints: Vec<u16>,
    weights: Vec<f64>,
    origins: Vec<f64>,
    centers: Vec<f64>,
    /// Blended's values: 0, 1 and between.
    blend_values: Vec<f64>,
    b: usize,
    j: usize,
    n: usize,
    k: usize,
}

fn test_rig(seed: u32, b: usize) -> TestRig {
    let (j, n, k) = (5, 9, 3);
    let mut r = Random(seed);
    let mut palettes = Vec::new();
    for _ in 0..b {
        for joint in 0..j {
            let q = Quat::from_euler(
                glam::EulerRot::XYZ,
                (3.0 * r.signed()) as f32,
                (3.0 * r.signed()) as f32,
                (3.0 * r.signed()) as f32,
            );
            let part = match joint {
                0 | 1 => Mat4::IDENTITY,
                2 => Mat4::from_scale(Vec3::new(1.5, 0.7, 1.2)),
                3 => Mat4::from_cols_array(&[
                    1.0, 0.0, 0.0, 0.0, 0.4, 1.1, 0.0, 0.0, -0.3, 0.2, 0.9, 0.0, 0.0, 0.0, 0.0, 1.0,
                ]),
                _ => Mat4::from_scale(Vec3::new(1.0, -1.3, 1.0)),
            };
            let t = Vec3::new(r.signed() as f32, r.signed() as f32, r.signed() as f32);
            let m = Mat4::from_rotation_translation(q, t) * part;
            for row in 0..4 {
                for col in 0..4 {
                    palettes.push(f64::from(m.col(col)[row]));
                }
            }
        }
    }
    let vertices = (0..n * 3).map(|_| 2.0 * r.signed()).collect();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    for v in 0..n {
        let first = v % j;
        for slot in 0..k {
            joints.push(((first + 2 * slot) % j) as u16);
            weights.push(if slot == 2 && v % 3 == 0 {
                0.0
            } else {
                0.1 + r.unit()
            });
        }
    }
    let weights: Vec<f64> = (0..b)
        .flat_map(|_| weights.clone())
        .map(|w| w * (0.8 + 0.4 * r.unit()))
        .collect();
    let origins = (0..j * 3).map(|_| r.signed()).collect();
    let mut centers: Vec<f64> = (0..n * 3).map(|_| r.signed()).collect();
    centers[3..6].fill(f64::NAN);
    let blend_values = (0..n).map(|v| [0.0, 1.0, 0.3, 0.75][v % 4]).collect();
    TestRig {
        palettes,
        vertices,
        joints,
        weights,
        origins,
        centers,
        blend_values,
        b,
        j,
        n,
        k,
    }
}

impl TestRig {
    fn rig(&self, method: Method) -> Rig<'_, f64> {
        Rig {
            method,
            palettes: &self.palettes,
            palette_batch: self.b,
            joint_count: self.j,
            vertices: &self.vertices,
            vertex_batch: 1,
            vertex_count: self.n,
            joints: &self.joints,
            influences: self.k,
            weights: &self.weights,
            weight_batch: self.b,
            bind_origins: Some(&self.origins),
            centers: Some(&self.centers),
            blend_values: Some(&self.blend_values),
            rigid_tolerance: crate::types::DEFAULT_RIGID_TOLERANCE,
        }
    }

    fn loss(&self, method: Method, pass: Pass, g: &[f64]) -> f64 {
        let mut out = vec![0.0; self.b * self.n * 3];
        pass.forward(&self.rig(method), &mut out);
        out.iter().zip(g).map(|(a, b)| a * b).sum()
    }
}

fn check_against_differences(method: Method, pass: Pass) {
    let mut t = test_rig(7, 2);
    let mut r = Random(99);
    let g: Vec<f64> = (0..t.b * t.n * 3).map(|_| r.signed()).collect();
    let mut gp = vec![0.0; t.palettes.len()];
    let mut gv = vec![0.0; t.vertices.len()];
    let mut gw = vec![0.0; t.weights.len()];
    pass.backward(
        &t.rig(method),
        &g,
        Gradients {
            palettes: Some(&mut gp),
            vertices: Some(&mut gv),
            weights: Some(&mut gw),
        },
    );
    let mut worst = 0.0f64;
    for (name, analytic) in [("palette", &gp), ("vertices", &gv), ("weights", &gw)] {
        for (i, &analytic) in analytic.iter().enumerate() {
            fn value<'t>(t: &'t mut TestRig, name: &str, i: usize) -> &'t mut f64 {
                match name {
                    "palette" => &mut t.palettes[i],
                    "vertices" => &mut t.vertices[i],
                    _ => &mut t.weights[i],
                }
            }
            let x = *value(&mut t, name, i);
            *value(&mut t, name, i) = x + FD_STEP;
            let up = t.loss(method, pass, &g);
            *value(&mut t, name, i) = x;
            // Zero weights only have a derivative from above (a negative weight is refused).
            let numeric = if name == "weights" && x == 0.0 {
                (up - t.loss(method, pass, &g)) / FD_STEP
            } else {
                *value(&mut t, name, i) = x - FD_STEP;
                let down = t.loss(method, pass, &g);
                *value(&mut t, name, i) = x;
                (up - down) / (2.0 * FD_STEP)
            };
            let tolerance = if name == "weights" && x == 0.0 {
                1e-4
            } else {
                FD_TOLERANCE
            };
            let error = (analytic - numeric).abs() / (1.0 + numeric.abs());
            worst = worst.max(error);
            assert!(
                error <= tolerance,
                "{method:?} {pass:?} {name}[{i}]: analytic {analytic} vs differences {numeric}"
            );
        }
    }
    assert!(gp.iter().any(|x| x.abs() > 1e-3) && gw.iter().any(|x| x.abs() > 1e-3));
    eprintln!("{method:?} {pass:?}: worst relative difference {worst:e}");
}

#[test]
fn lbs_gradients_match_finite_differences() {
    check_against_differences(Method::Linear, Pass::Positions);
}

#[test]
fn dqs_gradients_match_finite_differences() {
    check_against_differences(Method::DualQuaternion, Pass::Positions);
}

#[test]
fn cor_gradients_match_finite_differences() {
    check_against_differences(Method::CenterOfRotation, Pass::Positions);
}

#[test]
fn blended_gradients_match_finite_differences() {
    check_against_differences(Method::Blended, Pass::Positions);
}

#[test]
fn f32_forward_is_the_library_reference() {
    // The vertices double as the normals (any direction will do).
    let t = test_rig(3, 1);
    let f = |x: &[f64]| x.iter().map(|&v| v as f32).collect::<Vec<f32>>();
    let (palettes, vertices, weights, origins, centers, blend_values) = (
        f(&t.palettes),
        f(&t.vertices),
        f(&t.weights),
        f(&t.origins),
        f(&t.centers),
        f(&t.blend_values),
    );
    let matrices: Vec<Mat4> = palettes
        .chunks_exact(16)
        .map(|m| Mat4::from_cols_slice(m).transpose())
        .collect();
    let positions: Vec<Vec3> = vertices.chunks_exact(3).map(Vec3::from_slice).collect();
    let joint_centers: Vec<Vec3> = origins.chunks_exact(3).map(Vec3::from_slice).collect();
    let rotation_centers: Vec<Vec3> = centers.chunks_exact(3).map(Vec3::from_slice).collect();
    let influences = crate::Influences::new(t.k, t.joints.clone(), weights.clone(), t.j).unwrap();
    for method in Method::ALL {
        let input = crate::SkinInput::new(&positions, Some(&positions), None, &influences)
            .and_then(|i| i.with_rotation_centers(&rotation_centers))
            .and_then(|i| i.with_blend_values(crate::BlendValues::PerVertex(&blend_values)))
            .unwrap();
        let options = crate::SkinOptions {
            method,
            simd: false,
            parallel: false,
            ..Default::default()
        };
        let library = crate::skin(&input, &matrices, Some(&joint_centers), &options).unwrap();
        let rig = Rig {
            method,
            palettes: &palettes,
            palette_batch: 1,
            joint_count: t.j,
            vertices: &vertices,
            vertex_batch: 1,
            vertex_count: t.n,
            joints: &t.joints,
            influences: t.k,
            weights: &weights,
            weight_batch: 1,
            bind_origins: Some(&origins),
            centers: Some(&centers),
            blend_values: Some(&blend_values),
            rigid_tolerance: crate::types::DEFAULT_RIGID_TOLERANCE,
        };
        let mut out = vec![0.0f32; t.n * 3];
        forward(&rig, &mut out).unwrap();
        for (i, (ours, theirs)) in out.chunks_exact(3).zip(&library.positions).enumerate() {
            let difference = (Vec3::from_slice(ours) - *theirs).abs().max_element();
            assert!(
                difference <= LIBRARY_TOLERANCE * (1.0 + theirs.abs().max_element()),
                "{method:?} vertex {i}: {ours:?} vs {theirs}"
            );
        }
        forward_normals(&rig, &mut out).unwrap();
        let normals = library.normals.as_deref().unwrap();
        for (i, (ours, theirs)) in out.chunks_exact(3).zip(normals).enumerate() {
            let difference = (Vec3::from_slice(ours) - *theirs).abs().max_element();
            assert!(
                difference <= LIBRARY_TOLERANCE,
                "{method:?} normal {i}: {ours:?} vs {theirs}"
            );
        }
    }
}

/// Two joints, the pivot at the identity and the other turned 180° about x from it: their
/// quaternions are exactly orthogonal, where DQS's sign alignment switches. The forward adds
/// (as at a positive dot), and the gradient is that side's: the limit of the gradients at
/// angles just below 180°, not of those just above.
#[test]
fn antipodal_pair_takes_the_added_side() {
    let rig_at = |angle: f64| -> Vec<f64> {
        let (s, c) = angle.sin_cos();
        let mut palettes = vec![0.0; 32];
        for i in 0..4 {
            palettes[i * 5] = 1.0;
        }
        let second = [
            1.0, 0.0, 0.0, 0.5, 0.0, c, -s, 0.0, 0.0, s, c, 0.0, 0.0, 0.0, 0.0, 1.0,
        ];
        palettes[16..].copy_from_slice(&second);
        palettes
    };
    let run = |palettes: &[f64]| {
        let (vertices, joints, weights) = ([0.3, 1.0, -0.2], [0u16, 1], [0.6, 0.4]);
        let rig = Rig {
            method: Method::DualQuaternion,
            palettes,
            palette_batch: 1,
            joint_count: 2,
            vertices: &vertices,
            vertex_batch: 1,
            vertex_count: 1,
            joints: &joints,
            influences: 2,
            weights: &weights,
            weight_batch: 1,
            bind_origins: None,
            centers: None,
            blend_values: None,
            rigid_tolerance: crate::types::DEFAULT_RIGID_TOLERANCE,
        };
        let mut out = [0.0; 3];
        forward(&rig, &mut out).unwrap();
        let mut gp = vec![0.0; 32];
        let g = [0.5, -1.0, 0.25];
        backward(
            &rig,
            &g,
            Gradients {
                palettes: Some(&mut gp),
                ..Default::default()
            },
        )
        .unwrap();
        (out, gp)
    };
    let pi = std::f64::consts::PI;
    let (at, grad_at) = run(&rig_at(pi));
    let (below, grad_below) = run(&rig_at(pi - 1e-7));
    let (above, grad_above) = run(&rig_at(pi + 1e-7));
    let distance = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    // Continuous from below (1e-7 of angle moves the result ~1e-7), a jump above.
    assert!(distance(&at, &below) < 1e-6, "{at:?} vs {below:?}");
    assert!(distance(&at, &above) > 1e-2, "{at:?} vs {above:?}");
    assert!(distance(&grad_at, &grad_below) < 1e-5);
    assert!(distance(&grad_at, &grad_above) > 1e-2);
}

#[test]
fn bad_input_names_the_argument() {
    let t = test_rig(5, 1);
    let mut rig = t.rig(Method::DualQuaternion);
    let joints = vec![9u16; t.n * t.k];
    rig.joints = &joints;
    let mut out = vec![0.0; t.n * 3];
    assert_eq!(forward(&rig, &mut out).unwrap_err().argument, "joints");
    let mut rig = t.rig(Method::Linear);
    let weights = vec![-1.0; t.n * t.k];
    rig.weights = &weights;
    assert_eq!(forward(&rig, &mut out).unwrap_err().argument, "weights");
    let mut rig = t.rig(Method::Linear);
    rig.vertex_batch = 3;
    assert_eq!(forward(&rig, &mut out).unwrap_err().argument, "vertices");
}
