//! The scalar the gradient kernels compute in (`f32` or `f64`) and the small vector algebra they
//! share: 3-vectors, quaternions `(x, y, z, w)` and 3x4 affine maps as row-major arrays.

use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

/// `f32` (the library's precision) or `f64` (for gradient checks).
pub trait Real:
    Copy
    + Send
    + Sync
    + PartialOrd
    + Default
    + std::fmt::Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + 'static
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// The `f32` value, exactly.
    fn of(value: f32) -> Self;
    /// The square root.
    fn sqrt(self) -> Self;
    /// Whether neither NaN nor infinite.
    fn is_finite(self) -> bool;
    /// The absolute value.
    fn abs(self) -> Self;
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    #[inline(always)]
    fn of(value: f32) -> Self {
        value
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::abs(self)
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    #[inline(always)]
    fn of(value: f32) -> Self {
        f64::from(value)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f64::abs(self)
    }
}

/// The arithmetic the vector and quaternion helpers need: one scalar, or eight at once
/// ([`super::lanes::Lanes`]), so the same formulas serve the scalar and the lane kernels.
pub(crate) trait Arith:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
{
    /// `value` (in every lane).
    fn constant(value: f32) -> Self;
}

impl<T: Real> Arith for T {
    #[inline(always)]
    fn constant(value: f32) -> Self {
        T::of(value)
    }
}

pub(crate) type V3<T> = [T; 3];
/// A quaternion `(x, y, z, w)`.
pub(crate) type Q<T> = [T; 4];
/// A 3x4 affine map, row-major: `m[r][3]` is the translation.
pub(crate) type M34<T> = [[T; 4]; 3];

#[inline(always)]
pub(crate) fn dot<T: Arith>(a: V3<T>, b: V3<T>) -> T {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline(always)]
pub(crate) fn dot4<T: Arith>(a: Q<T>, b: Q<T>) -> T {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

#[inline(always)]
pub(crate) fn cross<T: Arith>(a: V3<T>, b: V3<T>) -> V3<T> {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline(always)]
pub(crate) fn add<T: Arith>(a: V3<T>, b: V3<T>) -> V3<T> {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

#[inline(always)]
pub(crate) fn sub<T: Arith>(a: V3<T>, b: V3<T>) -> V3<T> {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline(always)]
pub(crate) fn scale<T: Arith>(a: V3<T>, s: T) -> V3<T> {
    [a[0] * s, a[1] * s, a[2] * s]
}

#[inline(always)]
pub(crate) fn length<T: Real>(a: V3<T>) -> T {
    dot(a, a).sqrt()
}

/// `a ⊗ b`, the Hamilton product.
#[inline(always)]
pub(crate) fn qmul<T: Real>(a: Q<T>, b: Q<T>) -> Q<T> {
    let (av, bv) = ([a[0], a[1], a[2]], [b[0], b[1], b[2]]);
    let c = cross(av, bv);
    [
        a[3] * bv[0] + b[3] * av[0] + c[0],
        a[3] * bv[1] + b[3] * av[1] + c[1],
        a[3] * bv[2] + b[3] * av[2] + c[2],
        a[3] * b[3] - dot(av, bv),
    ]
}

#[inline(always)]
pub(crate) fn conjugate<T: Real>(q: Q<T>) -> Q<T> {
    [-q[0], -q[1], -q[2], q[3]]
}

/// The pure quaternion `(v, 0)`.
#[inline(always)]
pub(crate) fn pure<T: Real>(v: V3<T>) -> Q<T> {
    [v[0], v[1], v[2], T::ZERO]
}

#[inline(always)]
pub(crate) fn vector<T: Arith>(q: Q<T>) -> V3<T> {
    [q[0], q[1], q[2]]
}

/// `m · (p, 1)`.
#[inline(always)]
pub(crate) fn transform<T: Real>(m: &M34<T>, p: V3<T>) -> V3<T> {
    std::array::from_fn(|r| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3])
}

/// `m[:, :3]ᵀ · g`: the gradient of `m · (p, 1)` with respect to `p`.
#[inline(always)]
pub(crate) fn transform_transposed<T: Real>(m: &M34<T>, g: V3<T>) -> V3<T> {
    std::array::from_fn(|c| m[0][c] * g[0] + m[1][c] * g[1] + m[2][c] * g[2])
}

/// `sum += weight · m`.
#[inline(always)]
pub(crate) fn add_scaled<T: Real>(sum: &mut M34<T>, m: &M34<T>, weight: T) {
    for r in 0..3 {
        for c in 0..4 {
            sum[r][c] += m[r][c] * weight;
        }
    }
}

/// `grad += weight · g ⊗ (p, 1)`: the gradient of `g · (m · (p, 1))` with respect to `m`.
#[inline(always)]
pub(crate) fn add_outer<T: Real>(grad: &mut [T], g: V3<T>, p: V3<T>, weight: T) {
    for r in 0..3 {
        let gr = g[r] * weight;
        grad[r * 4] += gr * p[0];
        grad[r * 4 + 1] += gr * p[1];
        grad[r * 4 + 2] += gr * p[2];
        grad[r * 4 + 3] += gr;
    }
}

pub(crate) const fn zero_m34<T: Real>() -> M34<T> {
    [[T::ZERO; 4]; 3]
}

pub(crate) fn identity_m34<T: Real>() -> M34<T> {
    let mut m = zero_m34();
    for (i, row) in m.iter_mut().enumerate() {
        row[i] = T::ONE;
    }
    m
}
