//! One vertex of each method, forward and backward, step for step as `reference.rs` computes it.
//!
//! Each backward adds into its outputs: the vertex's position gradient, its weights' gradient
//! (one value per slot) and the joints' accumulators (laid out as [`JOINT_GRADS`] per joint).

use super::joints::{JointParts, G_DUAL, G_MATRIX, G_REAL, G_RESIDUAL, JOINT_GRADS};
use super::real::{
    add, add_outer, add_scaled, cross, dot, dot4, scale, sub, transform, transform_transposed,
    vector, zero_m34, Arith, Real, M34, Q, V3,
};
use crate::types::Method;

/// The library's `MIN_WEIGHT_SUM`: a vertex whose weights sum below it is passed through.
pub(super) const MIN_WEIGHT_SUM: f32 = f32::MIN_POSITIVE;

/// One vertex's inputs.
pub(crate) struct Vertex<'a, T> {
    pub p: V3<T>,
    pub joints: &'a [u16],
    pub weights: &'a [T],
    /// CoR's center of rotation (`None`, or not finite: skinned by DQS).
    pub center: Option<V3<T>>,
    /// Blended's blend value (0 = LBS, 1 = DQS; held fixed: no gradient flows to it).
    pub blend: T,
}

/// What a backward adds into.
pub(crate) struct Sink<'a, T> {
    pub gp: &'a mut V3<T>,
    /// `None` where the weights' gradient is not wanted (its terms are skipped).
    pub gw: Option<&'a mut [T]>,
    pub joints: &'a mut [T],
}

/// The factor that renormalizes the weights, or `None` below the minimum sum.
#[inline(always)]
pub(super) fn weight_scale<T: Real>(weights: &[T]) -> Option<T> {
    let mut sum = T::ZERO;
    for &w in weights {
        sum += w;
    }
    if sum < T::of(MIN_WEIGHT_SUM) {
        return None;
    }
    Some(T::ONE / sum)
}

/// The library's pivot: the heaviest slot, the lowest on ties.
#[inline(always)]
pub(super) fn pivot_slot<T: Real>(weights: &[T]) -> usize {
    let mut pivot = 0;
    for (slot, &w) in weights.iter().enumerate().skip(1) {
        if w > weights[pivot] {
            pivot = slot;
        }
    }
    pivot
}

/// The vertex's position under `method`.
pub(crate) fn forward<T: Real>(
    method: Method,
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
) -> V3<T> {
    let Some(s) = weight_scale(v.weights) else {
        return v.p;
    };
    match method {
        Method::Linear => transform(&linear(joints, v, s), v.p),
        Method::DualQuaternion => {
            let b = DqBlend::of(joints, v, s);
            dq_point(b.r, b.e, b.apply(v.p))
        }
        Method::CenterOfRotation => {
            let b = DqBlend::of(joints, v, s);
            match v.center.filter(|c| c.iter().all(|x| x.is_finite())) {
                None => dq_point(b.r, b.e, b.apply(v.p)),
                Some(c) => {
                    let x = sub(b.apply(v.p), b.apply(c));
                    add(rotate(b.r, x), transform(&linear(joints, v, s), c))
                }
            }
        }
        // As the library: only LBS at 0, only DQS at 1, else `l + b (d − l)`.
        Method::Blended => {
            let dq = || {
                let b = DqBlend::of(joints, v, s);
                dq_point(b.r, b.e, b.apply(v.p))
            };
            let l = || transform(&linear(joints, v, s), v.p);
            if v.blend <= T::ZERO {
                l()
            } else if v.blend >= T::ONE {
                dq()
            } else {
                let l = l();
                add(l, scale(sub(dq(), l), v.blend))
            }
        }
    }
}

/// Adds the gradient of `g · forward(..)` into `sink`.
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
    match method {
        Method::Linear => linear_backward(joints, v, s, v.p, g, sink),
        Method::DualQuaternion => dq_backward(joints, v, s, g, sink),
        Method::CenterOfRotation => match v.center.filter(|c| c.iter().all(|x| x.is_finite())) {
            None => dq_backward(joints, v, s, g, sink),
            Some(c) => cor_backward(joints, v, s, c, g, sink),
        },
        // `(1 − b)` of LBS's gradient and `b` of DQS's, each method alone at its end.
        Method::Blended => {
            if v.blend <= T::ZERO {
                linear_backward(joints, v, s, v.p, g, sink);
            } else if v.blend >= T::ONE {
                dq_backward(joints, v, s, g, sink);
            } else {
                let Sink {
                    gp,
                    mut gw,
                    joints: acc,
                } = sink;
                linear_backward(
                    joints,
                    v,
                    s,
                    v.p,
                    scale(g, T::ONE - v.blend),
                    Sink {
                        gp: &mut *gp,
                        gw: gw.as_deref_mut(),
                        joints: &mut *acc,
                    },
                );
                dq_backward(
                    joints,
                    v,
                    s,
                    scale(g, v.blend),
                    Sink {
                        gp,
                        gw,
                        joints: acc,
                    },
                );
            }
        }
    }
}

/// `Σ w s M` over the positive weights.
#[inline(always)]
pub(super) fn linear<T: Real>(joints: &[JointParts<T>], v: &Vertex<'_, T>, s: T) -> M34<T> {
    let mut sum = zero_m34();
    for (&j, &w) in v.joints.iter().zip(v.weights) {
        if w > T::ZERO {
            add_scaled(&mut sum, &joints[usize::from(j)].m, w * s);
        }
    }
    sum
}

/// The backward of `g · (Σ w s M) (x, 1)` for the point `x` (the vertex, or CoR's center),
/// `gp` receiving the gradient of `x`.
#[inline(always)]
fn linear_backward<T: Real>(
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
    s: T,
    x: V3<T>,
    g: V3<T>,
    mut sink: Sink<'_, T>,
) {
    let blended = linear(joints, v, s);
    let out = transform(&blended, x);
    *sink.gp = add(*sink.gp, transform_transposed(&blended, g));
    for (slot, (&j, &w)) in v.joints.iter().zip(v.weights).enumerate() {
        let m = &joints[usize::from(j)].m;
        // d out / d w = s (M x − out): the renormalization included (right derivative at 0).
        if let Some(gw) = sink.gw.as_deref_mut() {
            gw[slot] += s * dot(g, sub(transform(m, x), out));
        }
        if w > T::ZERO {
            let at = usize::from(j) * JOINT_GRADS + G_MATRIX;
            add_outer(&mut sink.joints[at..at + 12], g, x, w * s);
        }
    }
}

/// A vertex's dual quaternion blend and blended residual.
pub(super) struct DqBlend<T> {
    /// The factor that renormalizes the weights.
    s: T,
    /// The length of the sum of the signed, weighted real parts.
    norm: T,
    /// Normalized (the pivot's where the sum does not normalize).
    pub(super) r: Q<T>,
    e: Q<T>,
    pivot: usize,
    /// Whether `r`, `e` are the pivot's own (the sum had no finite, non-zero length).
    fallback: bool,
    /// The blended residual where any positive-weight joint has one.
    pub(super) residual: Option<M34<T>>,
}

impl<T: Real> DqBlend<T> {
    #[inline(always)]
    pub(super) fn of(joints: &[JointParts<T>], v: &Vertex<'_, T>, s: T) -> Self {
        let pivot = pivot_slot(v.weights);
        let pivot_q = joints[usize::from(v.joints[pivot])].real;
        let (mut real_sum, mut dual_sum) = ([T::ZERO; 4], [T::ZERO; 4]);
        let mut any_residual = false;
        for (&j, &w) in v.joints.iter().zip(v.weights) {
            if w > T::ZERO {
                let joint = &joints[usize::from(j)];
                let signed = if dot4(joint.real, pivot_q) < T::ZERO {
                    -w
                } else {
                    w
                };
                for i in 0..4 {
                    real_sum[i] += joint.real[i] * signed;
                    dual_sum[i] += joint.dual[i] * signed;
                }
                any_residual |= !joint.rigid;
            }
        }
        let norm = dot4(real_sum, real_sum).sqrt();
        let fallback = !(norm.is_finite() && norm > T::ZERO);
        let (r, e) = if fallback {
            let joint = &joints[usize::from(v.joints[pivot])];
            (joint.real, joint.dual)
        } else {
            let inverse = T::ONE / norm;
            (real_sum.map(|x| x * inverse), dual_sum.map(|x| x * inverse))
        };
        let residual = any_residual.then(|| {
            let mut blended = zero_m34();
            for (&j, &w) in v.joints.iter().zip(v.weights) {
                if w > T::ZERO {
                    add_scaled(&mut blended, &joints[usize::from(j)].residual, w * s);
                }
            }
            blended
        });
        Self {
            s,
            norm,
            r,
            e,
            pivot,
            fallback,
            residual,
        }
    }

    /// The blended residual applied to `x` (nothing where there is none).
    #[inline(always)]
    fn apply(&self, x: V3<T>) -> V3<T> {
        match &self.residual {
            Some(m) => transform(m, x),
            None => x,
        }
    }

    /// The backward of the residual at `x` given the gradient `gx` of its image: returns the
    /// gradient of `x` and adds into the weights' and joints' residual gradients.
    #[inline(always)]
    fn apply_backward(
        &self,
        joints: &[JointParts<T>],
        v: &Vertex<'_, T>,
        x: V3<T>,
        gx: V3<T>,
        mut gw: Option<&mut [T]>,
        grads: &mut [T],
    ) -> V3<T> {
        let s = self.s;
        let Some(blended) = &self.residual else {
            // Every positive-weight joint is rigid; a zero-weight slot of a non-rigid joint
            // still has its right derivative.
            if let Some(gw) = gw {
                for (slot, &j) in v.joints.iter().enumerate() {
                    let joint = &joints[usize::from(j)];
                    if !joint.rigid {
                        gw[slot] += s * dot(gx, sub(transform(&joint.residual, x), x));
                    }
                }
            }
            return gx;
        };
        let image = transform(blended, x);
        for (slot, (&j, &w)) in v.joints.iter().zip(v.weights).enumerate() {
            let joint = &joints[usize::from(j)];
            if let Some(gw) = gw.as_deref_mut() {
                gw[slot] += s * dot(gx, sub(transform(&joint.residual, x), image));
            }
            if w > T::ZERO && !joint.rigid {
                let at = usize::from(j) * JOINT_GRADS + G_RESIDUAL;
                add_outer(&mut grads[at..at + 12], gx, x, w * s);
            }
        }
        transform_transposed(blended, gx)
    }

    /// The backward of the normalization and the signed sums, given the gradients of `r`, `e`.
    #[inline(always)]
    pub(super) fn blend_backward(
        &self,
        joints: &[JointParts<T>],
        v: &Vertex<'_, T>,
        gr: Q<T>,
        ge: Q<T>,
        mut gw: Option<&mut [T]>,
        grads: &mut [T],
    ) {
        if self.fallback {
            let at = usize::from(v.joints[self.pivot]) * JOINT_GRADS;
            for i in 0..4 {
                grads[at + G_REAL + i] += gr[i];
                grads[at + G_DUAL + i] += ge[i];
            }
            return;
        }
        let inverse = T::ONE / self.norm;
        let radial = dot4(gr, self.r) + dot4(ge, self.e);
        let g_real: Q<T> = std::array::from_fn(|i| (gr[i] - self.r[i] * radial) * inverse);
        let g_dual: Q<T> = ge.map(|x| x * inverse);
        let pivot_q = joints[usize::from(v.joints[self.pivot])].real;
        for (slot, (&j, &w)) in v.joints.iter().zip(v.weights).enumerate() {
            let joint = &joints[usize::from(j)];
            // The sign is constant between antipodal pairs; at an exact tie (dot 0) the
            // library adds, and so does its gradient.
            let sign = if dot4(joint.real, pivot_q) < T::ZERO {
                -T::ONE
            } else {
                T::ONE
            };
            if let Some(gw) = gw.as_deref_mut() {
                gw[slot] += sign * (dot4(joint.real, g_real) + dot4(joint.dual, g_dual));
            }
            if w > T::ZERO {
                let at = usize::from(j) * JOINT_GRADS;
                let signed = sign * w;
                for i in 0..4 {
                    grads[at + G_REAL + i] += g_real[i] * signed;
                    grads[at + G_DUAL + i] += g_dual[i] * signed;
                }
            }
        }
    }
}

/// `x + 2 v×(v×x + w x)`: the rotation by a unit `r = (v, w)`.
#[inline(always)]
pub(super) fn rotate<T: Arith>(r: Q<T>, x: V3<T>) -> V3<T> {
    let v = vector(r);
    let u = add(cross(v, x), scale(x, r[3]));
    add(x, scale(cross(v, u), T::constant(2.0)))
}

/// `DualQuat::transform_point`: Kavan et al.'s form with `r = (v, w)`, `e = (vε, wε)`.
#[inline(always)]
pub(super) fn dq_point<T: Arith>(r: Q<T>, e: Q<T>, p: V3<T>) -> V3<T> {
    let (v, w, ve, we) = (vector(r), r[3], vector(e), e[3]);
    let two = T::constant(2.0);
    let translation = add(sub(scale(ve, w), scale(v, we)), cross(v, ve));
    add(rotate(r, p), scale(translation, two))
}

/// The gradients of `g · dq_point(r, e, p)` with respect to `r`, `e` and `p`.
#[inline(always)]
pub(super) fn dq_point_backward<T: Arith>(
    r: Q<T>,
    e: Q<T>,
    p: V3<T>,
    g: V3<T>,
) -> (Q<T>, Q<T>, V3<T>) {
    let (v, w, ve, we) = (vector(r), r[3], vector(e), e[3]);
    let two = T::constant(2.0);
    let u = add(cross(v, p), scale(p, w));
    let gu = scale(cross(g, v), two);
    let gp = add(add(g, cross(gu, v)), scale(gu, w));
    let gv = add(
        add(scale(cross(u, g), two), cross(p, gu)),
        sub(scale(cross(ve, g), two), scale(g, two * we)),
    );
    let gw = dot(gu, p) + two * dot(g, ve);
    let gve = add(scale(g, two * w), scale(cross(g, v), two));
    let gwe = -two * dot(g, v);
    ([gv[0], gv[1], gv[2], gw], [gve[0], gve[1], gve[2], gwe], gp)
}

fn dq_backward<T: Real>(
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
    s: T,
    g: V3<T>,
    sink: Sink<'_, T>,
) {
    let b = DqBlend::of(joints, v, s);
    let p1 = b.apply(v.p);
    let (gr, ge, gp1) = dq_point_backward(b.r, b.e, p1, g);
    let mut gw = sink.gw;
    b.blend_backward(joints, v, gr, ge, gw.as_deref_mut(), sink.joints);
    let gp = b.apply_backward(joints, v, v.p, gp1, gw, sink.joints);
    *sink.gp = add(*sink.gp, gp);
}

fn cor_backward<T: Real>(
    joints: &[JointParts<T>],
    v: &Vertex<'_, T>,
    s: T,
    c: V3<T>,
    g: V3<T>,
    sink: Sink<'_, T>,
) {
    let b = DqBlend::of(joints, v, s);
    let x = sub(b.apply(v.p), b.apply(c));
    let zero = [T::ZERO; 4];
    let (gr, _, gx) = dq_point_backward(b.r, zero, x, g);
    let mut gw = sink.gw;
    b.blend_backward(joints, v, gr, zero, gw.as_deref_mut(), sink.joints);
    // The center is held fixed: its gradient is dropped.
    let mut center_gradient = [T::ZERO; 3];
    linear_backward(
        joints,
        v,
        s,
        c,
        g,
        Sink {
            gp: &mut center_gradient,
            gw: gw.as_deref_mut(),
            joints: sink.joints,
        },
    );
    let gp = b.apply_backward(joints, v, v.p, gx, gw.as_deref_mut(), sink.joints);
    let _ = b.apply_backward(joints, v, c, scale(gx, -T::ONE), gw, sink.joints);
    *sink.gp = add(*sink.gp, gp);
}
