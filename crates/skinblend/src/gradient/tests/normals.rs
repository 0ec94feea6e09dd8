//! Normals: the backward against central differences for each method, and the two places
//! where the function is not differentiable (or not smooth) with the gradient the forward's
//! branch gives there: a singular normal matrix (the unsigned cofactor) and a result without
//! length (the input normal passed through).

use super::{check_against_differences, Pass};
use crate::gradient::{backward_normals, forward_normals, Gradients, Rig};
use crate::types::Method;

#[test]
fn lbs_normal_gradients_match_finite_differences() {
    check_against_differences(Method::Linear, Pass::Normals);
}

#[test]
fn dqs_normal_gradients_match_finite_differences() {
    check_against_differences(Method::DualQuaternion, Pass::Normals);
}

#[test]
fn cor_normal_gradients_match_finite_differences() {
    check_against_differences(Method::CenterOfRotation, Pass::Normals);
}

#[test]
fn blended_normal_gradients_match_finite_differences() {
    check_against_differences(Method::Blended, Pass::Normals);
}

/// Inside the singular band (`|det| ≤ 1e-6 · largest³`) the forward is the unsigned cofactor,
/// a polynomial: central differences with a step of 1e-9 move the determinant by ~1e-9 and stay
/// inside the band; their round-off is ~1e-16/1e-9 = 1e-7, under this tolerance.
const SINGULAR_FD_STEP: f64 = 1e-9;
const SINGULAR_FD_TOLERANCE: f64 = 1e-5;

/// Joint 0 the identity times `diag(1, 1, 2)`, joint 1 `diag(1, 1, −2)` (a mirror: for DQS
/// `R = I`, `S = diag(1, 1, −2)`), each with a translation; equal weights blend both the 3x3
/// (LBS) and the residual (DQS) to `diag(1, 1, 0)`: determinant 0, the normal matrix singular.
fn singular_palette() -> Vec<f64> {
    let mut p = vec![0.0; 32];
    for (joint, z) in [(0, 2.0), (1, -2.0)] {
        let m = &mut p[joint * 16..joint * 16 + 16];
        m[0] = 1.0;
        m[5] = 1.0;
        m[10] = z;
        m[15] = 1.0;
        m[3] = 0.25;
        m[7] = -0.5 * joint as f64;
    }
    p
}

struct Singular {
    palette: Vec<f64>,
    normal: Vec<f64>,
    weights: Vec<f64>,
}

impl Singular {
    fn rig(&self, method: Method) -> Rig<'_, f64> {
        Rig {
            method,
            palettes: &self.palette,
            palette_batch: 1,
            joint_count: 2,
            vertices: &self.normal,
            vertex_batch: 1,
            vertex_count: 1,
            joints: &[0, 1],
            influences: 2,
            weights: &self.weights,
            weight_batch: 1,
            bind_origins: None,
            centers: None,
            blend_values: None,
            rigid_tolerance: crate::types::DEFAULT_RIGID_TOLERANCE,
        }
    }

    /// Input `which` (0 palette, 1 normal, 2 weights), entry `i`.
    fn value(&mut self, which: usize, i: usize) -> &mut f64 {
        match which {
            0 => &mut self.palette[i],
            1 => &mut self.normal[i],
            _ => &mut self.weights[i],
        }
    }

    fn forward(&self, method: Method) -> [f64; 3] {
        let mut out = [0.0; 3];
        forward_normals(&self.rig(method), &mut out).unwrap();
        out
    }

    /// The gradients (palette, normal, weights) of `g · forward`.
    fn backward(&self, method: Method, g: [f64; 3]) -> [Vec<f64>; 3] {
        let (mut gp, mut gn, mut gw) = (vec![0.0; 32], vec![0.0; 3], vec![0.0; 2]);
        backward_normals(
            &self.rig(method),
            &g,
            Gradients {
                palettes: Some(&mut gp),
                vertices: Some(&mut gn),
                weights: Some(&mut gw),
            },
        )
        .unwrap();
        [gp, gn, gw]
    }
}

const G: [f64; 3] = [0.5, -1.0, 0.75];

fn loss(s: &Singular, method: Method) -> f64 {
    s.forward(method).iter().zip(G).map(|(a, b)| a * b).sum()
}

#[test]
fn singular_normal_matrix_takes_the_unsigned_cofactor_and_its_gradient() {
    for method in [Method::Linear, Method::DualQuaternion] {
        let mut s = Singular {
            palette: singular_palette(),
            normal: vec![0.3, 0.4, 0.8],
            weights: vec![0.5, 0.5],
        };
        // cofactor(diag(1, 1, 0)) = diag(0, 0, 1): the normal's z alone, renormalized.
        let out = s.forward(method);
        assert!(
            (out[0].abs() + out[1].abs() + (out[2] - 1.0).abs()) < 1e-12,
            "{method:?}: {out:?}"
        );
        let analytic = s.backward(method, G);
        let mut moved = 0.0f64;
        for (which, grads) in analytic.iter().enumerate() {
            for (i, &a) in grads.iter().enumerate() {
                let x = *s.value(which, i);
                *s.value(which, i) = x + SINGULAR_FD_STEP;
                let up = loss(&s, method);
                *s.value(which, i) = x - SINGULAR_FD_STEP;
                let down = loss(&s, method);
                *s.value(which, i) = x;
                let numeric = (up - down) / (2.0 * SINGULAR_FD_STEP);
                assert!(
                    (a - numeric).abs() <= SINGULAR_FD_TOLERANCE * (1.0 + numeric.abs()),
                    "{method:?} input {which}[{i}]: analytic {a} vs differences {numeric}"
                );
                moved = moved.max(a.abs());
            }
        }
        // The result stays (0, 0, 1) under the normal's z, but the palette and x, y move it.
        assert!(moved > 1e-2, "{method:?}: every gradient is zero");
    }
}

#[test]
fn a_result_without_length_passes_the_input_normal_through() {
    for method in [Method::Linear, Method::DualQuaternion] {
        // cofactor(diag(1, 1, 0)) · (1, 0, 0) = 0: no direction to renormalize.
        let s = Singular {
            palette: singular_palette(),
            normal: vec![1.0, 0.0, 0.0],
            weights: vec![0.5, 0.5],
        };
        let out = s.forward(method);
        assert_eq!(out, [1.0, 0.0, 0.0], "{method:?}");
        let [gp, gn, gw] = s.backward(method, G);
        assert_eq!(gn, G.to_vec(), "{method:?}: the identity");
        assert!(gp.iter().chain(&gw).all(|&x| x == 0.0), "{method:?}");
    }
}
