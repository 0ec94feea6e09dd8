//! One vertex's normal under each method, forward and backward, as `reference.rs` skins it:
//! LBS by the normal matrix of the blended 3x3, DQS and CoR by the blended rotation after the
//! normal matrix of the blended residual, blended by the interpolation of the two unit results;
//! then renormalized, the input normal kept where the result has no length.
//!
//! The normal matrix is the cofactor matrix of the 3x3 times the sign of its determinant (the
//! inverse transpose up to a positive factor), the cofactor alone where the 3x3 is singular
//! (`|det| ≤ SINGULAR_RELATIVE · (largest column length)³`, the library's rule). The cofactor
//! is a polynomial in the 3x3, so the gradient is defined there too: it is that of what the
//! forward computes, the unsigned cofactor. Where the result has no length (a zero, or not
//! finite, inverse length) the output is the input normal: its gradient is the identity and
//! nothing flows to the palette or the weights.

use super::joints::{JointParts, G_MATRIX, G_RESIDUAL, JOINT_GRADS};
use super::real::{add, cross, dot, length, scale, sub, Real, M34, V3};
use super::vertex::{dq_point_backward, linear, rotate, weight_scale, DqBlend, Sink, Vertex};
use crate::reference::SINGULAR_RELATIVE;
use crate::types::Method;

/// The columns of `m`'s 3x3.
#[inline(always)]
fn columns<T: Real>(m: &M34<T>) -> [V3<T>; 3] {
    std::array::from_fn(|c| [m[0][c], m[1][c], m[2][c]])
}

const fn identity_columns<T: Real>() -> [V3<T>; 3] {
    let (o, z) = (T::ONE, T::ZERO);
    [[o, z, z], [z, o, z], [z, z, o]]
}

/// The cofactor matrix's columns of the 3x3 with columns `c`, and the sign the library applies
/// (that of the determinant; +1 where the 3x3 is singular).
#[inline(always)]
fn cofactor_and_sign<T: Real>(c: &[V3<T>; 3]) -> ([V3<T>; 3], T) {
    let cofactor = [cross(c[1], c[2]), cross(c[2], c[0]), cross(c[0], c[1])];
    let det = dot(c[0], cofactor[0]);
    let largest = {
        let (a, b, d) = (length(c[0]), length(c[1]), length(c[2]));
        let ab = if b > a { b } else { a };
        if d > ab {
            d
        } else {
            ab
        }
    };
    let singular = det.abs() <= T::of(SINGULAR_RELATIVE) * largest * largest * largest;
    let sign = if !singular && det < T::ZERO {
        -T::ONE
    } else {
        T::ONE
    };
    (cofactor, sign)
}

/// `normal_matrix(c) · n`, the library's `normal_matrix`.
#[inline(always)]
fn apply_normal_matrix<T: Real>(c: &[V3<T>; 3], n: V3<T>) -> V3<T> {
    let (cof, sign) = cofactor_and_sign(c);
    let sum = add(
        add(scale(cof[0], n[0]), scale(cof[1], n[1])),
        scale(cof[2], n[2]),
    );
    scale(sum, sign)
}

/// The gradients of `g · normal_matrix(c) · n` with respect to the columns `c` and to `n` (the
/// sign is constant off the singular band's edge; inside it, +1).
#[inline(always)]
fn normal_matrix_backward<T: Real>(c: &[V3<T>; 3], n: V3<T>, g: V3<T>) -> ([V3<T>; 3], V3<T>) {
    let (cof, sign) = cofactor_and_sign(c);
    let g = scale(g, sign);
    let gn = [dot(g, cof[0]), dot(g, cof[1]), dot(g, cof[2])];
    // g·(a×b) = a·(b×g) = b·(g×a), for each of the three cross products.
    let gc = [
        add(scale(cross(g, c[2]), n[1]), scale(cross(c[1], g), n[2])),
        add(scale(cross(c[2], g), n[0]), scale(cross(g, c[0]), n[2])),
        add(scale(cross(g, c[1]), n[0]), scale(cross(c[0], g), n[1])),
    ];
    (gc, gn)
}

/// `u / |u|`, or `None` where glam's `try_normalize` gives none (the inverse length zero or
/// not finite).
#[inline(always)]
fn unit<T: Real>(u: V3<T>) -> Option<(V3<T>, T)> {
    let inverse = T::ONE / length(u);
    (inverse.is_finite() && inverse > T::ZERO).then(|| (scale(u, inverse), inverse))
}

/// The gradient of `g · u/|u|` with respect to `u`, given the unit `y` and `1/|u|`.
#[inline(always)]
fn unit_backward<T: Real>(y: V3<T>, inverse: T, g: V3<T>) -> V3<T> {
    scale(sub(g, scale(y, dot(y, g))), inverse)
}

/// `<g, m − reference>` over the 3x3s given by columns.
#[inline(always)]
fn inner_difference<T: Real>(g: &[V3<T>; 3], m: &[V3<T>; 3], reference: &[V3<T>; 3]) -> T {
    let mut sum = T::ZERO;
    for c in 0..3 {
        sum += dot(g[c], sub(m[c], reference[c]));
    }
    sum
}

/// Adds `weight · g` (a 3x3 by columns) into a joint's 3x4 accumulator at `at`.
#[inline(always)]
fn add_columns<T: Real>(acc: &mut [T], at: usize, g: &[V3<T>; 3], weight: T) {
    for (c, column) in g.iter().enumerate() {
        for (r, &x) in column.iter().enumerate() {
            acc[at + r * 4 + c] += x * weight;
        }
    }
}

/// LBS's normal direction (unnormalized).
#[inline(always)]
fn linear_direction<T: Real>(joints: &[JointParts<T>], v: &Vertex<'_, T>, s: T) -> V3<T> {
    apply_normal_matrix(&columns(&linear(joints, v, s)), v.p)
}

fn linear_direction_backward<T: Real>(
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
    s: T,
    g: V3<T>,
    mut sink: Sink<'_, T>,
) {
    let a = columns(&linear(joints, v, s));
    let (ga, gn) = normal_matrix_backward(&a, v.p, g);
    *sink.gp = add(*sink.gp, gn);
    for (slot, (&j, &w)) in v.joints.iter().zip(v.weights).enumerate() {
        let m = columns(&joints[usize::from(j)].m);
        // d A / d w = s (M − A): the renormalization included (right derivative at 0).
        if let Some(gw) = sink.gw.as_deref_mut() {
            gw[slot] += s * inner_difference(&ga, &m, &a);
        }
        if w > T::ZERO {
            add_columns(
                sink.joints,
                usize::from(j) * JOINT_GRADS + G_MATRIX,
                &ga,
                w * s,
            );
        }
    }
}

/// DQS's (and CoR's) normal direction (unnormalized): the blended rotation of the residual's
/// normal matrix applied to `n`.
#[inline(always)]
fn dq_direction<T: Real>(joints: &[JointParts<T>], v: &Vertex<'_, T>, s: T) -> V3<T> {
    let b = DqBlend::of(joints, v, s);
    let n = match &b.residual {
        Some(m) => apply_normal_matrix(&columns(m), v.p),
        None => v.p,
    };
    rotate(b.r, n)
}

fn dq_direction_backward<T: Real>(
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
    s: T,
    g: V3<T>,
    sink: Sink<'_, T>,
) {
    let b = DqBlend::of(joints, v, s);
    // Without a blended residual every positive-weight joint is rigid: `S = I`, whose normal
    // matrix is the identity; its gradient still reaches zero-weight non-rigid slots (from above).
    let residual = b.residual.as_ref().map(columns);
    let s_columns = residual.unwrap_or(identity_columns());
    let n1 = match &residual {
        Some(c) => apply_normal_matrix(c, v.p),
        None => v.p,
    };
    let zero = [T::ZERO; 4];
    let (gr, _, gn1) = dq_point_backward(b.r, zero, n1, g);
    let Sink {
        gp,
        mut gw,
        joints: acc,
    } = sink;
    b.blend_backward(joints, v, gr, zero, gw.as_deref_mut(), acc);
    let (gs, gn) = normal_matrix_backward(&s_columns, v.p, gn1);
    *gp = add(*gp, if residual.is_some() { gn } else { gn1 });
    for (slot, (&j, &w)) in v.joints.iter().zip(v.weights).enumerate() {
        let joint = &joints[usize::from(j)];
        if let Some(gw) = gw.as_deref_mut() {
            if residual.is_some() || !joint.rigid {
                gw[slot] += s * inner_difference(&gs, &columns(&joint.residual), &s_columns);
            }
        }
        if w > T::ZERO && !joint.rigid {
            add_columns(acc, usize::from(j) * JOINT_GRADS + G_RESIDUAL, &gs, w * s);
        }
    }
}

/// Which direction a blended vertex's part takes.
#[derive(Clone, Copy)]
enum Part {
    Linear,
    DualQuaternion,
}

#[inline(always)]
fn direction<T: Real>(part: Part, joints: &[JointParts<T>], v: &Vertex<'_, T>, s: T) -> V3<T> {
    match part {
        Part::Linear => linear_direction(joints, v, s),
        Part::DualQuaternion => dq_direction(joints, v, s),
    }
}

fn direction_backward<T: Real>(
    part: Part,
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
    s: T,
    g: V3<T>,
    sink: Sink<'_, T>,
) {
    match part {
        Part::Linear => linear_direction_backward(joints, v, s, g, sink),
        Part::DualQuaternion => dq_direction_backward(joints, v, s, g, sink),
    }
}

/// The unit normal of a part, or the input normal where its direction has no length.
#[inline(always)]
fn part_unit<T: Real>(part: Part, joints: &[JointParts<T>], v: &Vertex<'_, T>, s: T) -> V3<T> {
    unit(direction(part, joints, v, s)).map_or(v.p, |(y, _)| y)
}

/// The backward of [`part_unit`].
fn part_unit_backward<T: Real>(
    part: Part,
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
    s: T,
    g: V3<T>,
    sink: Sink<'_, T>,
) {
    match unit(direction(part, joints, v, s)) {
        None => *sink.gp = add(*sink.gp, g),
        Some((y, inverse)) => {
            direction_backward(part, joints, v, s, unit_backward(y, inverse, g), sink);
        }
    }
}

/// The parts a vertex's normal interpolates, with their shares: one part alone, or both.
fn parts<T: Real>(method: Method, v: &Vertex<'_, T>) -> (Part, Option<(Part, T)>) {
    match method {
        Method::Linear => (Part::Linear, None),
        Method::DualQuaternion | Method::CenterOfRotation => (Part::DualQuaternion, None),
        Method::Blended if v.blend <= T::ZERO => (Part::Linear, None),
        Method::Blended if v.blend >= T::ONE => (Part::DualQuaternion, None),
        Method::Blended => (Part::Linear, Some((Part::DualQuaternion, v.blend))),
    }
}

/// The unnormalized direction the caller renormalizes: one part's, or `l + b (d − l)` of the
/// parts' unit normals.
#[inline(always)]
fn blended_direction<T: Real>(
    method: Method,
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
    s: T,
) -> V3<T> {
    match parts(method, v) {
        (part, None) => direction(part, joints, v, s),
        (first, Some((second, b))) => {
            let l = part_unit(first, joints, v, s);
            let d = part_unit(second, joints, v, s);
            add(l, scale(sub(d, l), b))
        }
    }
}

/// The vertex's unit normal under `method` (`v.p` is the input normal).
pub(crate) fn forward<T: Real>(
    method: Method,
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
) -> V3<T> {
    let Some(s) = weight_scale(v.weights) else {
        return v.p;
    };
    unit(blended_direction(method, joints, v, s)).map_or(v.p, |(y, _)| y)
}

/// Adds the gradient of `g · forward(..)` into `sink` (`sink.gp` receives the normal's).
pub(crate) fn backward<T: Real>(
    method: Method,
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
    g: V3<T>,
    sink: Sink<'_, T>,
) {
    let Some(s) = weight_scale(v.weights) else {
        *sink.gp = add(*sink.gp, g);
        return;
    };
    let Some((y, inverse)) = unit(blended_direction(method, joints, v, s)) else {
        *sink.gp = add(*sink.gp, g);
        return;
    };
    let gu = unit_backward(y, inverse, g);
    match parts(method, v) {
        (part, None) => direction_backward(part, joints, v, s, gu, sink),
        (first, Some((second, b))) => {
            let Sink {
                gp,
                mut gw,
                joints: acc,
            } = sink;
            part_unit_backward(
                first,
                joints,
                v,
                s,
                scale(gu, T::ONE - b),
                Sink {
                    gp: &mut *gp,
                    gw: gw.as_deref_mut(),
                    joints: &mut *acc,
                },
            );
            part_unit_backward(
                second,
                joints,
                v,
                s,
                scale(gu, b),
                Sink {
                    gp,
                    gw,
                    joints: acc,
                },
            );
        }
    }
}
