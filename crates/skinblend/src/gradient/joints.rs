//! One joint's rigid/residual split as the kernels read it, and its backward: the same
//! Gram–Schmidt, mirror rule, rigid tolerance and quaternion as `rigid_split`, in `T`.

use crate::rigid_split::DEGENERATE_RELATIVE;

use super::real::{
    add, conjugate, cross, dot, identity_m34, length, pure, qmul, scale, sub, vector, Real, M34, Q,
    V3,
};

/// Where a joint's gradient parts sit in its accumulator of [`JOINT_GRADS`] values.
pub(crate) const G_MATRIX: usize = 0;
pub(crate) const G_REAL: usize = 12;
pub(crate) const G_DUAL: usize = 16;
pub(crate) const G_RESIDUAL: usize = 20;
/// Values per joint in a gradient accumulator: the skin matrix's 3x4, the dual quaternion's
/// real and dual parts, the residual's 3x4.
pub(crate) const JOINT_GRADS: usize = 32;

/// One joint of a palette, as the per-vertex kernels read it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JointParts<T> {
    /// The skin matrix's top three rows.
    pub m: M34<T>,
    /// The dual quaternion `(real, dual)` of the rigid part.
    pub real: Q<T>,
    pub dual: Q<T>,
    /// The rigid part's translation `A c + t − R c`.
    pub translation: V3<T>,
    /// The residual affine map `p ↦ c + S (p − c)`; the identity where `rigid`.
    pub residual: M34<T>,
    pub rigid: bool,
}

/// The Gram–Schmidt factors of `A`, with what the backward needs.
struct Factors<T> {
    a: [V3<T>; 3],
    sx: T,
    e0: V3<T>,
    d01: T,
    sy: T,
    e1: V3<T>,
    d02: T,
    d12: T,
    /// `|c1|` and `c1 / |c1|` before the mirror.
    sz: T,
    e2: V3<T>,
    mirrored: bool,
}

fn max<T: Real>(a: T, b: T) -> T {
    if b > a {
        b
    } else {
        a
    }
}

impl<T: Real> Factors<T> {
    fn of(a: [V3<T>; 3]) -> Option<Self> {
        let [a0, a1, a2] = a;
        let largest = max(max(length(a0), length(a1)), length(a2));
        let floor = largest * T::of(DEGENERATE_RELATIVE);
        if largest <= T::ZERO {
            return None;
        }
        let sx = length(a0);
        if sx <= floor {
            return None;
        }
        let e0 = [a0[0] / sx, a0[1] / sx, a0[2] / sx];
        let d01 = dot(e0, a1);
        let b1 = sub(a1, scale(e0, d01));
        let sy = length(b1);
        if sy <= floor {
            return None;
        }
        let e1 = [b1[0] / sy, b1[1] / sy, b1[2] / sy];
        let d02 = dot(e0, a2);
        let d12 = dot(e1, a2);
        let c1 = sub(sub(a2, scale(e0, d02)), scale(e1, d12));
        let sz = length(c1);
        if sz <= floor {
            return None;
        }
        let e2 = [c1[0] / sz, c1[1] / sz, c1[2] / sz];
        let mirrored = dot(cross(e0, e1), e2) < T::ZERO;
        Some(Self {
            a,
            sx,
            e0,
            d01,
            sy,
            e1,
            d02,
            d12,
            sz,
            e2,
            mirrored,
        })
    }

    /// `R`'s third column and `S`'s last entry, the mirror applied.
    fn signed_e2_sz(&self) -> (V3<T>, T) {
        if self.mirrored {
            (scale(self.e2, -T::ONE), -self.sz)
        } else {
            (self.e2, self.sz)
        }
    }

    fn is_rigid(&self, tolerance: T) -> bool {
        let near = |x: T, target: T| (x - target).abs() <= tolerance;
        !self.mirrored
            && near(self.sx, T::ONE)
            && near(self.sy, T::ONE)
            && near(self.sz, T::ONE)
            && near(self.d01, T::ZERO)
            && near(self.d02, T::ZERO)
            && near(self.d12, T::ZERO)
    }

    /// `S` row-major: `[[sx, d01, d02], [0, sy, d12], [0, 0, sz]]`.
    fn s(&self) -> [V3<T>; 3] {
        let z = T::ZERO;
        let (_, sz) = self.signed_e2_sz();
        [
            [self.sx, self.d01, self.d02],
            [z, self.sy, self.d12],
            [z, z, sz],
        ]
    }

    /// The gradient of the columns of `A` given those of `e0`, `e1`, `e2` (mirror applied) and
    /// of `S`'s upper triangle (row-major `gs`).
    fn backward(&self, ge: [V3<T>; 3], gs: [V3<T>; 3]) -> [V3<T>; 3] {
        let [_, a1, a2] = self.a;
        let sign = if self.mirrored { -T::ONE } else { T::ONE };
        let (mut ge0, mut ge1) = (ge[0], ge[1]);
        let ge2 = scale(ge[2], sign);
        let (gsx, gd01, mut gd02) = (gs[0][0], gs[0][1], gs[0][2]);
        let (gsy, mut gd12, gsz) = (gs[1][1], gs[1][2], gs[2][2] * sign);
        let mut gd01 = gd01;
        // e2 = c1 / |c1|, sz = |c1|.
        let gc1 = add(
            scale(
                sub(ge2, scale(self.e2, dot(self.e2, ge2))),
                T::ONE / self.sz,
            ),
            scale(self.e2, gsz),
        );
        // c1 = a2 − e0 d02 − e1 d12.
        let mut ga2 = gc1;
        ge0 = sub(ge0, scale(gc1, self.d02));
        gd02 += -dot(self.e0, gc1);
        ge1 = sub(ge1, scale(gc1, self.d12));
        gd12 += -dot(self.e1, gc1);
        // d12 = e1 · a2, d02 = e0 · a2.
        ge1 = add(ge1, scale(a2, gd12));
        ga2 = add(ga2, scale(self.e1, gd12));
        ge0 = add(ge0, scale(a2, gd02));
        ga2 = add(ga2, scale(self.e0, gd02));
        // e1 = b1 / |b1|, sy = |b1|.
        let gb1 = add(
            scale(
                sub(ge1, scale(self.e1, dot(self.e1, ge1))),
                T::ONE / self.sy,
            ),
            scale(self.e1, gsy),
        );
        // b1 = a1 − e0 d01, d01 = e0 · a1.
        let mut ga1 = gb1;
        ge0 = sub(ge0, scale(gb1, self.d01));
        gd01 += -dot(self.e0, gb1);
        ge0 = add(ge0, scale(a1, gd01));
        ga1 = add(ga1, scale(self.e0, gd01));
        // e0 = a0 / |a0|, sx = |a0|.
        let ga0 = add(
            scale(
                sub(ge0, scale(self.e0, dot(self.e0, ge0))),
                T::ONE / self.sx,
            ),
            scale(self.e0, gsx),
        );
        [ga0, ga1, ga2]
    }
}

/// A unit quaternion from the columns of a rotation matrix: glam's `Quat::from_mat3` (the
/// DirectXMath branches), then normalized, as `rigid_split.rs` does.
fn quat_from_columns<T: Real>(e: [V3<T>; 3]) -> Q<T> {
    let [[m00, m01, m02], [m10, m11, m12], [m20, m21, m22]] = e;
    let half = T::of(0.5);
    let one = T::ONE;
    let q = if m22 <= T::ZERO {
        let dif10 = m11 - m00;
        let omm22 = one - m22;
        if dif10 <= T::ZERO {
            let four = omm22 - dif10;
            let inv = half / four.sqrt();
            [
                four * inv,
                (m01 + m10) * inv,
                (m02 + m20) * inv,
                (m12 - m21) * inv,
            ]
        } else {
            let four = omm22 + dif10;
            let inv = half / four.sqrt();
            [
                (m01 + m10) * inv,
                four * inv,
                (m12 + m21) * inv,
                (m20 - m02) * inv,
            ]
        }
    } else {
        let sum10 = m11 + m00;
        let opm22 = one + m22;
        if sum10 <= T::ZERO {
            let four = opm22 - sum10;
            let inv = half / four.sqrt();
            [
                (m02 + m20) * inv,
                (m12 + m21) * inv,
                four * inv,
                (m01 - m10) * inv,
            ]
        } else {
            let four = opm22 + sum10;
            let inv = half / four.sqrt();
            [
                (m12 - m21) * inv,
                (m20 - m02) * inv,
                (m01 - m10) * inv,
                four * inv,
            ]
        }
    };
    let norm = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    q.map(|x| x / norm)
}

fn columns<T: Real>(m: &M34<T>) -> [V3<T>; 3] {
    std::array::from_fn(|c| [m[0][c], m[1][c], m[2][c]])
}

/// `A · c` for the columns `a`.
fn apply<T: Real>(a: &[V3<T>; 3], c: V3<T>) -> V3<T> {
    add(add(scale(a[0], c[0]), scale(a[1], c[1])), scale(a[2], c[2]))
}

/// The residual map `p ↦ c + S (p − c)` for `S` given by its columns.
fn residual_map<T: Real>(s: &[V3<T>; 3], c: V3<T>) -> M34<T> {
    let t = sub(c, apply(s, c));
    std::array::from_fn(|r| [s[0][r], s[1][r], s[2][r], t[r]])
}

/// The split of skin matrix `m` (its top rows) about `center`, as the library makes it.
pub(crate) fn split<T: Real>(m: &M34<T>, center: V3<T>, rigid_tolerance: T) -> JointParts<T> {
    let a = columns(m);
    let t = [m[0][3], m[1][3], m[2][3]];
    let ac_t = add(apply(&a, center), t);
    let (real, translation, residual, rigid) = match Factors::of(a) {
        None => (
            [T::ZERO, T::ZERO, T::ZERO, T::ONE],
            sub(ac_t, center),
            residual_map(&a, center),
            false,
        ),
        Some(f) => {
            let (e2, _) = f.signed_e2_sz();
            let r = [f.e0, f.e1, e2];
            let real = quat_from_columns(r);
            let translation = sub(ac_t, apply(&r, center));
            let rigid = f.is_rigid(rigid_tolerance);
            let residual = if rigid {
                identity_m34()
            } else {
                let s = f.s();
                let s_columns = std::array::from_fn(|c| [s[0][c], s[1][c], s[2][c]]);
                residual_map(&s_columns, center)
            };
            (real, translation, residual, rigid)
        }
    };
    let dual = qmul(pure(translation), real).map(|x| x * T::of(0.5));
    JointParts {
        m: *m,
        real,
        dual,
        translation,
        residual,
        rigid,
    }
}

/// The gradient of the skin matrix's top rows (row-major 3x4) given the gradient `g` of the
/// joint's parts (laid out as [`JOINT_GRADS`]): the backward of [`split`].
pub(crate) fn split_backward<T: Real>(
    m: &M34<T>,
    center: V3<T>,
    rigid_tolerance: T,
    g: &[T],
) -> M34<T> {
    let parts = split(m, center, rigid_tolerance);
    let a = columns(m);
    let mut ga: [V3<T>; 3] = std::array::from_fn(|c| [g[c], g[4 + c], g[8 + c]]);
    let mut gt = [g[3], g[7], g[11]];
    let gq: Q<T> = std::array::from_fn(|i| g[G_REAL + i]);
    let gd: Q<T> = std::array::from_fn(|i| g[G_DUAL + i]);
    let half = T::of(0.5);
    // dual = ½ (τ, 0) ⊗ real.
    let gtau = scale(vector(qmul(gd, conjugate(parts.real))), half);
    let from_dual = qmul(pure(parts.translation), gd).map(|x| -x * half);
    let gq: Q<T> = std::array::from_fn(|i| gq[i] + from_dual[i]);
    // τ = A c + t − R c (R = I where degenerate).
    for (c, column) in ga.iter_mut().enumerate() {
        *column = add(*column, scale(gtau, center[c]));
    }
    gt = add(gt, gtau);
    // The residual p ↦ S p + (c − S c): gS = gM − gu ⊗ c.
    let gs: [V3<T>; 3] = std::array::from_fn(|r| {
        let gu = g[G_RESIDUAL + r * 4 + 3];
        std::array::from_fn(|c| g[G_RESIDUAL + r * 4 + c] - gu * center[c])
    });
    match Factors::of(a) {
        None => {
            // R = I, S = A.
            if !parts.rigid {
                for (c, column) in ga.iter_mut().enumerate() {
                    *column = add(*column, [gs[0][c], gs[1][c], gs[2][c]]);
                }
            }
        }
        Some(f) => {
            let (e2, _) = f.signed_e2_sz();
            let r = [f.e0, f.e1, e2];
            // real = quat(R): d real = ½ (ω, 0) ⊗ real with [ω]× = dR Rᵀ, so gR = ½ [gω]× R.
            let gw = scale(vector(qmul(gq, conjugate(parts.real))), half);
            let ge: [V3<T>; 3] =
                std::array::from_fn(|c| sub(scale(cross(gw, r[c]), half), scale(gtau, center[c])));
            let gs = if parts.rigid { [[T::ZERO; 3]; 3] } else { gs };
            let from_factors = f.backward(ge, gs);
            for (column, extra) in ga.iter_mut().zip(from_factors) {
                *column = add(*column, extra);
            }
        }
    }
    std::array::from_fn(|r| [ga[0][r], ga[1][r], ga[2][r], gt[r]])
}
