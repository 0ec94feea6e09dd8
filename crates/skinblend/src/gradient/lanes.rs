//! DQS eight vertices at a time where the palette has no residual (every joint rigid, as
//! forward kinematics makes it): the sign-aligned blend, its normalization, the point
//! transform (or a normal's rotation and renormalization) and their backward run on lane arrays ([`Lanes`]) that LLVM vectorizes (eight
//! `f32` in one AVX register); the joints' reads and the gradients' accumulation stay per
//! lane, in vertex order.
//!
//! Per lane these are `vertex.rs`'s operations in its order (a zero-weight slot adds a zero
//! where the scalar code skips it), so the results are the scalar kernel's. A group with a
//! vertex the scalar code treats apart (weights summing below the minimum, a blend without
//! length) returns `false` and is left to the scalar kernel, as are rigs with more than
//! [`MAX_SLOTS`] influences per vertex.

use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

use super::joints::{JointParts, G_DUAL, G_REAL, JOINT_GRADS};

const _: () = assert!(
    G_DUAL == G_REAL + 4,
    "the accumulators' real and dual parts are one row"
);
use super::real::{dot, dot4, scale, sub, Arith, Real, Q, V3};
use super::vertex::{dq_point, dq_point_backward, pivot_slot, rotate, MIN_WEIGHT_SUM};
use crate::types::Method;

/// Vertices per group.
pub(crate) const LANES: usize = 8;
/// The most influences per vertex the lane kernels take.
pub(crate) const MAX_SLOTS: usize = 8;

/// One value per vertex of a group.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lanes<T>(pub [T; LANES]);

macro_rules! lanewise {
    ($trait:ident, $method:ident, $op:tt) => {
        impl<T: Real> $trait for Lanes<T> {
            type Output = Self;
            #[inline(always)]
            fn $method(self, other: Self) -> Self {
                Lanes(std::array::from_fn(|l| self.0[l] $op other.0[l]))
            }
        }
    };
}

lanewise!(Add, add, +);
lanewise!(Sub, sub, -);
lanewise!(Mul, mul, *);
lanewise!(Div, div, /);

impl<T: Real> Neg for Lanes<T> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Lanes(self.0.map(|x| -x))
    }
}

impl<T: Real> AddAssign for Lanes<T> {
    #[inline(always)]
    fn add_assign(&mut self, other: Self) {
        for l in 0..LANES {
            self.0[l] += other.0[l];
        }
    }
}

impl<T: Real> Arith for Lanes<T> {
    #[inline(always)]
    fn constant(value: f32) -> Self {
        Lanes([T::of(value); LANES])
    }
}

impl<T: Real> Lanes<T> {
    #[inline(always)]
    fn of(f: impl FnMut(usize) -> T) -> Self {
        Lanes(std::array::from_fn(f))
    }
}

/// Whether the lane kernels take a batch element: DQS, no residual, at most [`MAX_SLOTS`]
/// influences.
pub(crate) fn applies<T: Real>(
    method: Method,
    joints: &[JointParts<T>],
    influences: usize,
) -> bool {
    method == Method::DualQuaternion
        && influences <= MAX_SLOTS
        && joints.iter().all(|joint| joint.rigid)
}

/// One group's inputs: `LANES` consecutive vertices.
pub(crate) struct Group<'a, T> {
    /// `LANES × 3`.
    pub points: &'a [T],
    /// `LANES × k`.
    pub joints: &'a [u16],
    /// `LANES × k`.
    pub weights: &'a [T],
    pub k: usize,
}

/// A group's blend: per lane the signed weights, and the normalized sum and the points over
/// the lanes.
struct Blend<T> {
    /// Per lane and slot `±w` (0 where the weight is not positive: the scalar code skips it).
    signed: [[T; MAX_SLOTS]; LANES],
    norm: Lanes<T>,
    r: Q<Lanes<T>>,
    e: Q<Lanes<T>>,
    p: V3<Lanes<T>>,
}

impl<T: Real> Blend<T> {
    /// `None` where a vertex of the group is one the scalar code treats apart. The signed sums
    /// per lane (`[real, dual]` as one 8-wide row), then the normalization over the lanes.
    #[inline(always)]
    fn of(joints: &[JointParts<T>], g: &Group<'_, T>) -> Option<Self> {
        let k = g.k;
        let mut signed = [[T::ZERO; MAX_SLOTS]; LANES];
        let mut sums = [[T::ZERO; 8]; LANES];
        for l in 0..LANES {
            let weights = &g.weights[l * k..(l + 1) * k];
            let mut total = T::ZERO;
            for &w in weights {
                total += w;
            }
            if total < T::of(MIN_WEIGHT_SUM) {
                return None;
            }
            let pivot_q = joints[usize::from(g.joints[l * k + pivot_slot(weights)])].real;
            // In a local (registers), not through `sums[l]`: stored there once.
            let mut sum = [T::ZERO; 8];
            let mut lane_signed = [T::ZERO; MAX_SLOTS];
            for (slot, &w) in weights.iter().enumerate() {
                if w > T::ZERO {
                    let joint = &joints[usize::from(g.joints[l * k + slot])];
                    let s = if dot4(joint.real, pivot_q) < T::ZERO {
                        -w
                    } else {
                        w
                    };
                    lane_signed[slot] = s;
                    for i in 0..4 {
                        sum[i] += joint.real[i] * s;
                        sum[4 + i] += joint.dual[i] * s;
                    }
                }
            }
            sums[l] = sum;
            signed[l] = lane_signed;
        }
        let real_sum: Q<Lanes<T>> = std::array::from_fn(|i| Lanes::of(|l| sums[l][i]));
        let dual_sum: Q<Lanes<T>> = std::array::from_fn(|i| Lanes::of(|l| sums[l][4 + i]));
        let squared = dot4(real_sum, real_sum);
        let norm = Lanes::of(|l| squared.0[l].sqrt());
        if !norm.0.iter().all(|&x| x.is_finite() && x > T::ZERO) {
            return None;
        }
        let inverse = Lanes::constant(1.0) / norm;
        Some(Blend {
            signed,
            norm,
            r: real_sum.map(|x| x * inverse),
            e: dual_sum.map(|x| x * inverse),
            p: std::array::from_fn(|c| Lanes::of(|l| g.points[l * 3 + c])),
        })
    }
}

/// The rotated normals `u = r n` of a group's blend, their units and inverse lengths, or
/// `None` where one has no length (the scalar kernel's pass-through): `normal.rs`'s `unit`.
#[inline(always)]
fn rotated_units<T: Real>(b: &Blend<T>) -> Option<(V3<Lanes<T>>, Lanes<T>)> {
    let u = rotate(b.r, b.p);
    let squared = dot(u, u);
    let inverse = Lanes::of(|l| T::ONE / squared.0[l].sqrt());
    inverse
        .0
        .iter()
        .all(|&x| x.is_finite() && x > T::ZERO)
        .then(|| (scale(u, inverse), inverse))
}

/// The group's positions, or (`normals`: the group's points are normals) unit normals, into
/// `out` (`LANES × 3`); `false` (nothing written) where the group is the scalar kernel's.
/// Compiled for AVX2 and FMA where the CPU has them (the same floats: nothing is contracted
/// into FMAs).
pub(crate) fn forward<T: Real>(
    joints: &[JointParts<T>],
    g: &Group<'_, T>,
    normals: bool,
    out: &mut [T],
) -> bool {
    crate::vectorize::vectorized(
        #[inline(always)]
        || forward_lanes(joints, g, normals, out),
    )
}

#[inline(always)]
fn forward_lanes<T: Real>(
    joints: &[JointParts<T>],
    g: &Group<'_, T>,
    normals: bool,
    out: &mut [T],
) -> bool {
    let Some(b) = Blend::of(joints, g) else {
        return false;
    };
    let p = if normals {
        match rotated_units(&b) {
            Some((y, _)) => y,
            None => return false,
        }
    } else {
        dq_point(b.r, b.e, b.p)
    };
    for l in 0..LANES {
        for c in 0..3 {
            out[l * 3 + c] = p[c].0[l];
        }
    }
    true
}

/// Where a group's backward adds: the points' gradients (`LANES × 3`), the weights' (`LANES ×
/// k`, `None`: not wanted) and the joints' accumulators.
pub(crate) struct GroupSink<'a, T> {
    pub points: &'a mut [T],
    pub weights: Option<&'a mut [T]>,
    pub joints: &'a mut [T],
}

/// Adds the gradient of `Σ grad · forward(..)` (`grad` `LANES × 3`) into `sink`; `false`
/// (nothing added) where the group is the scalar kernel's. Compiled as [`forward`].
pub(crate) fn backward<T: Real>(
    joints: &[JointParts<T>],
    g: &Group<'_, T>,
    normals: bool,
    grad: &[T],
    sink: GroupSink<'_, T>,
) -> bool {
    crate::vectorize::vectorized(
        #[inline(always)]
        || backward_lanes(joints, g, normals, grad, sink),
    )
}

#[inline(always)]
fn backward_lanes<T: Real>(
    joints: &[JointParts<T>],
    g: &Group<'_, T>,
    normals: bool,
    grad: &[T],
    sink: GroupSink<'_, T>,
) -> bool {
    let Some(b) = Blend::of(joints, g) else {
        return false;
    };
    let k = g.k;
    let gout: V3<Lanes<T>> = std::array::from_fn(|c| Lanes::of(|l| grad[l * 3 + c]));
    let (gr, ge, gp) = if normals {
        // `normal.rs`: the unit's backward, then the rotation's (no dual part).
        let Some((y, inverse)) = rotated_units(&b) else {
            return false;
        };
        let gu = scale(sub(gout, scale(y, dot(y, gout))), inverse);
        let zero = [Lanes::constant(0.0); 4];
        let (gr, _, gp) = dq_point_backward(b.r, zero, b.p, gu);
        (gr, zero, gp)
    } else {
        dq_point_backward(b.r, b.e, b.p, gout)
    };
    // The normalization: as `DqBlend::blend_backward`.
    let inverse = Lanes::constant(1.0) / b.norm;
    let radial = dot4(gr, b.r) + dot4(ge, b.e);
    let g_real: Q<Lanes<T>> = std::array::from_fn(|i| (gr[i] - b.r[i] * radial) * inverse);
    let g_dual: Q<Lanes<T>> = ge.map(|x| x * inverse);
    let GroupSink {
        points,
        mut weights,
        joints: acc,
    } = sink;
    for l in 0..LANES {
        // This vertex's `[g_real, g_dual]`, the layout of its joints' accumulators from G_REAL.
        let row: [T; 8] = std::array::from_fn(|i| {
            if i < 4 {
                g_real[i].0[l]
            } else {
                g_dual[i - 4].0[l]
            }
        });
        let (gq, gd): (Q<T>, Q<T>) = (
            std::array::from_fn(|i| row[i]),
            std::array::from_fn(|i| row[4 + i]),
        );
        let pivot_q = if weights.is_some() {
            let w = &g.weights[l * k..(l + 1) * k];
            joints[usize::from(g.joints[l * k + pivot_slot(w)])].real
        } else {
            [T::ZERO; 4]
        };
        for slot in 0..k {
            let joint = &joints[usize::from(g.joints[l * k + slot])];
            if let Some(gw) = weights.as_deref_mut() {
                let sign = if dot4(joint.real, pivot_q) < T::ZERO {
                    -T::ONE
                } else {
                    T::ONE
                };
                gw[l * k + slot] += sign * (dot4(joint.real, gq) + dot4(joint.dual, gd));
            }
            if g.weights[l * k + slot] > T::ZERO {
                let at = usize::from(g.joints[l * k + slot]) * JOINT_GRADS + G_REAL;
                let s = b.signed[l][slot];
                for (a, &x) in acc[at..at + 8].iter_mut().zip(&row) {
                    *a += x * s;
                }
            }
        }
        for c in 0..3 {
            points[l * 3 + c] += T::ZERO + gp[c].0[l];
        }
    }
    true
}
