//! Unit dual quaternions: rigid motions that blend without collapsing.

use glam::{Quat, Vec3};

/// A dual quaternion `real + ε · dual`, used for rigid motions.
///
/// Convention: `real` is the rotation quaternion `q` `(x, y, z, w)`, and
/// `dual = ½ · (0, t) · q` for the translation `t`, so the motion is `p ↦ q p q* + t` (rotate,
/// then translate), the same as `Mat4::from_rotation_translation(q, t)` in glam's column-vector
/// convention. `q` and `-q` are the same rotation but opposite dual quaternions: blending must
/// align their signs first (see [`DualQuat::real_dot`]).
///
/// `#[repr(C)]`: `real` then `dual`, 32 bytes; the SIMD kernels read it as 8 contiguous f32s
/// (asserted at compile time in `simd/lanes.rs`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub struct DualQuat {
    /// The rotation part `q`.
    pub real: Quat,
    /// `½ · (0, t) · q`.
    pub dual: Quat,
}

impl DualQuat {
    /// The identity motion.
    pub const IDENTITY: Self = Self {
        real: Quat::IDENTITY,
        dual: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
    };

    /// The motion that rotates by the unit quaternion `rotation`, then translates by
    /// `translation`.
    #[must_use]
    pub fn from_rotation_translation(rotation: Quat, translation: Vec3) -> Self {
        let t = Quat::from_xyzw(translation.x, translation.y, translation.z, 0.0);
        Self {
            real: rotation,
            dual: (t * rotation) * 0.5,
        }
    }

    /// The rotation quaternion (the real part, as stored).
    #[must_use]
    pub fn rotation(&self) -> Quat {
        self.real
    }

    /// The translation `t = 2 · dual · real*`, exact for a unit dual quaternion.
    #[must_use]
    pub fn translation(&self) -> Vec3 {
        let t = (self.dual * self.real.conjugate()) * 2.0;
        Vec3::new(t.x, t.y, t.z)
    }

    /// Dot product of the real parts: negative when the two are stored with opposite signs and
    /// must be aligned before blending.
    #[must_use]
    pub fn real_dot(&self, other: &Self) -> f32 {
        self.real.dot(other.real)
    }

    /// Both parts negated: the same rigid motion, the other sign.
    #[must_use]
    pub fn negated(&self) -> Self {
        Self {
            real: -self.real,
            dual: -self.dual,
        }
    }

    /// Divides both parts by the length of the real part, or `None` when that length is zero or
    /// not finite. The result's real part is a unit quaternion; its dual part is not projected
    /// orthogonal to the real part ([`DualQuat::transform_point`] does not need it).
    #[must_use]
    pub fn normalized(&self) -> Option<Self> {
        let length = self.real.length();
        if !(length.is_finite() && length > 0.0) {
            return None;
        }
        let inverse = 1.0 / length;
        Some(Self {
            real: self.real * inverse,
            dual: self.dual * inverse,
        })
    }

    /// Applies the motion to a point. Expects a normalized dual quaternion (unit real part).
    ///
    /// Uses Kavan et al.'s form `p + 2 v×(v×p + w p) + 2 (w vε − wε v + v×vε)` with
    /// `real = (v, w)`, `dual = (vε, wε)`, which is exact for a unit dual quaternion and, for a
    /// blended one whose dual part is not orthogonal to its real part, drops the component that
    /// is not a translation.
    #[must_use]
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        let v = Vec3::new(self.real.x, self.real.y, self.real.z);
        let w = self.real.w;
        let ve = Vec3::new(self.dual.x, self.dual.y, self.dual.z);
        let we = self.dual.w;
        let rotated = p + 2.0 * v.cross(v.cross(p) + w * p);
        rotated + 2.0 * (w * ve - we * v + v.cross(ve))
    }

    /// Rotates a direction by the real part (no translation). Expects a unit real part.
    #[must_use]
    pub fn transform_vector(&self, d: Vec3) -> Vec3 {
        let v = Vec3::new(self.real.x, self.real.y, self.real.z);
        d + 2.0 * v.cross(v.cross(d) + self.real.w * d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Mat4;

    /// f32 round-off of a handful of multiply-adds on values of order 1.
    const REL_F32: f32 = 1e-6;

    #[test]
    fn matches_the_matrix_of_the_same_motion() {
        let q = Quat::from_axis_angle(Vec3::new(1.0, 2.0, -0.5).normalize(), 1.3);
        let t = Vec3::new(0.3, -2.0, 5.0);
        let dq = DualQuat::from_rotation_translation(q, t);
        let m = Mat4::from_rotation_translation(q, t);
        let p = Vec3::new(-1.0, 0.5, 2.0);
        let expected = m.transform_point3(p);
        let got = dq.transform_point(p);
        assert!(
            (got - expected).length() <= REL_F32 * 8.0 * expected.length(),
            "{got} vs {expected}"
        );
        assert!((dq.translation() - t).length() <= REL_F32 * 8.0 * t.length());
        // The negated dual quaternion is the same motion.
        let flipped = dq.negated().transform_point(p);
        assert!((flipped - expected).length() <= REL_F32 * 8.0 * expected.length());
    }

    #[test]
    fn zero_real_part_does_not_normalize() {
        let zero = DualQuat {
            real: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            dual: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        };
        assert_eq!(zero.normalized(), None);
    }
}
