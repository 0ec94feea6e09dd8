//! The lane kernels (DQS eight vertices at a time, palettes without residuals) against the
//! scalar kernel: the blended method with every blend value 1 runs `vertex.rs`'s DQS alone,
//! so the two passes must agree, positions and normals, groups the lane kernel declines (a
//! vertex without weight) and the vertices past the last whole group included.

use glam::{Mat4, Quat, Vec3};

use super::Random;
use crate::gradient::{backward, backward_normals, forward, forward_normals, Gradients, Real, Rig};
use crate::types::Method;

/// The lane kernel does each vertex's operations in the scalar kernel's order and Rust
/// contracts nothing into FMAs, so the results are the same floats: bit-exact, as a SIMD
/// routine against its scalar twin.
const SAME: f64 = 0.0;

/// Rigid joints (a rotation and a translation each), `n` vertices with three influences (zero
/// weights in some slots, vertex 9 with none), weights per batch element.
fn rigid_rig(seed: u32, b: usize, j: usize, n: usize) -> (Vec<f64>, Vec<f64>, Vec<u16>, Vec<f64>) {
    let mut r = Random(seed);
    let mut palettes = Vec::new();
    for _ in 0..b * j {
        let q = Quat::from_euler(
            glam::EulerRot::XYZ,
            (3.0 * r.signed()) as f32,
            (3.0 * r.signed()) as f32,
            (3.0 * r.signed()) as f32,
        );
        let t = Vec3::new(r.signed() as f32, r.signed() as f32, r.signed() as f32);
        let m = Mat4::from_rotation_translation(q, t);
        for row in 0..4 {
            for col in 0..4 {
                palettes.push(f64::from(m.col(col)[row]));
            }
        }
    }
    let vertices = (0..n * 3).map(|_| 2.0 * r.signed()).collect();
    let k = 3;
    let joints = (0..n * k)
        .map(|i| ((i / k + 3 * (i % k)) % j) as u16)
        .collect();
    let weights = (0..b * n * k)
        .map(|i| {
            let (v, slot) = ((i / k) % n, i % k);
            if v == 9 || (slot == 2 && v % 4 == 0) {
                0.0
            } else {
                0.1 + r.unit()
            }
        })
        .collect();
    (palettes, vertices, joints, weights)
}

/// Palettes, vertices, joints, weights and the output's gradient.
type Data<T> = (Vec<T>, Vec<T>, Vec<u16>, Vec<T>, Vec<T>);

/// Forward and backward, of positions or (`normals`: the vertices taken as normals) normals.
fn passes<T: Real>(method: Method, data: &Data<T>, normals: bool) -> Vec<Vec<T>> {
    let (palettes, vertices, joints, weights, grad) = data;
    let (b, j, n) = (2, 6, vertices.len() / 3);
    let blend_values = vec![T::ONE; n];
    let rig = Rig {
        method,
        palettes,
        palette_batch: b,
        joint_count: j,
        vertices,
        vertex_batch: 1,
        vertex_count: n,
        joints,
        influences: 3,
        weights,
        weight_batch: b,
        bind_origins: None,
        centers: None,
        blend_values: Some(&blend_values),
        rigid_tolerance: crate::types::DEFAULT_RIGID_TOLERANCE,
    };
    let mut out = vec![T::ZERO; b * n * 3];
    if normals {
        forward_normals(&rig, &mut out).unwrap();
    } else {
        forward(&rig, &mut out).unwrap();
    }
    let mut gp = vec![T::ZERO; palettes.len()];
    let mut gv = vec![T::ZERO; vertices.len()];
    let mut gw = vec![T::ZERO; weights.len()];
    let grads = Gradients {
        palettes: Some(&mut gp),
        vertices: Some(&mut gv),
        weights: Some(&mut gw),
    };
    if normals {
        backward_normals(&rig, grad, grads).unwrap();
    } else {
        backward(&rig, grad, grads).unwrap();
    }
    vec![out, gp, gv, gw]
}

fn check<T: Real + Into<f64>>(of: impl Fn(f64) -> T) {
    // 8 × 4 + 3 vertices: four groups (one declined: vertex 9 has no weight) and three left.
    let (palettes, vertices, joints, weights) = rigid_rig(21, 2, 6, 35);
    let mut r = Random(5);
    let grad: Vec<f64> = (0..2 * 35 * 3).map(|_| r.signed()).collect();
    let cast = |x: &Vec<f64>| x.iter().map(|&v| of(v)).collect::<Vec<T>>();
    let data = (
        cast(&palettes),
        cast(&vertices),
        joints,
        cast(&weights),
        cast(&grad),
    );
    for normals in [false, true] {
        let lanes = passes(Method::DualQuaternion, &data, normals);
        let scalar = passes(Method::Blended, &data, normals);
        compare(normals, &lanes, &scalar);
    }
}

fn compare<T: Real + Into<f64>>(normals: bool, lanes: &[Vec<T>], scalar: &[Vec<T>]) {
    for (name, (a, b)) in ["output", "palette", "vertices", "weights"]
        .iter()
        .zip(lanes.iter().zip(scalar))
    {
        let largest = b.iter().map(|&x| x.into().abs()).fold(0.0, f64::max);
        assert!(largest > 1e-3, "normals {normals} {name}: all zero");
        for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
            let (x, y) = (x.into(), y.into());
            assert!(
                (x - y).abs() <= SAME * largest,
                "normals {normals} {name}[{i}]: lanes {x} vs scalar {y}"
            );
        }
    }
}

#[test]
fn lane_kernel_equals_the_scalar_dqs_f32() {
    check::<f32>(|x| x as f32);
}

#[test]
fn lane_kernel_equals_the_scalar_dqs_f64() {
    check::<f64>(|x| x);
}
