//! Shared input decoding for the `influences` and `skin` fuzz targets.
//!
//! The targets read their input with a [`Reader`]: a cursor over the fuzzer's bytes that never
//! fails (past the end every read is zero), so any byte string is a valid input and a short one
//! is a small one. Floats use a compact encoding ([`Reader::float`]) in which most single bytes
//! are small, "sensible" values and a few tags bring in NaN, infinities, extremes, subnormals and
//! raw bit patterns; this keeps seeds short and lets byte mutations reach every special case.
//! `fuzz/seeds/generate.py` writes seeds in the same encoding: change both together.

use skinblend::glam::{Mat4, Quat, Vec3, Vec4};

/// A cursor over fuzzer bytes; every read past the end returns zero bytes.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Reads from `data`.
    #[must_use]
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// Whether every byte has been read.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let n = N.min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        out
    }

    /// One byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        self.bytes::<1>()[0]
    }

    /// A little-endian `u16`.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.bytes())
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.bytes())
    }

    /// A little-endian `f32` from its raw bits (any value, NaN payloads included).
    pub fn raw_f32(&mut self) -> f32 {
        f32::from_bits(self.u32())
    }

    /// A float in the compact encoding: one tag byte `t`, then
    /// - `t < 0xF0`: `(t − 120) / 16`, i.e. −7.5 to 7.4375 in steps of 1/16 (`0x78` is 0,
    ///   `0x88` is 1, `0x68` is −1);
    /// - `0xF0`: NaN; `0xF1`: +∞; `0xF2`: −∞; `0xF3`: `f32::MAX`; `0xF4`: `−f32::MAX`;
    ///   `0xF5`: `f32::MIN_POSITIVE`; `0xF6`: the smallest subnormal; `0xF7`: −0.0;
    /// - `0xF8`: a signed byte `b` follows, the value is `b · 1e-6` (tiny);
    /// - `0xF9`: a signed byte `b` follows, the value is `b · 1e5` (large, up to 1.27e7);
    /// - `0xFA`: a signed byte `b` follows, the value is `b · 1e30` (huge);
    /// - `0xFB` to `0xFF`: a raw little-endian `f32` follows.
    pub fn float(&mut self) -> f32 {
        let t = self.u8();
        if t < 0xF0 {
            return (f32::from(t) - 120.0) / 16.0;
        }
        match t {
            0xF0 => f32::NAN,
            0xF1 => f32::INFINITY,
            0xF2 => f32::NEG_INFINITY,
            0xF3 => f32::MAX,
            0xF4 => -f32::MAX,
            0xF5 => f32::MIN_POSITIVE,
            0xF6 => f32::from_bits(1),
            0xF7 => -0.0,
            0xF8 => f32::from(self.u8() as i8) * 1e-6,
            0xF9 => f32::from(self.u8() as i8) * 1e5,
            0xFA => f32::from(self.u8() as i8) * 1e30,
            _ => self.raw_f32(),
        }
    }

    /// Three compact floats.
    pub fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.float(), self.float(), self.float())
    }

    /// Four compact floats.
    pub fn vec4(&mut self) -> Vec4 {
        Vec4::new(self.float(), self.float(), self.float(), self.float())
    }

    /// A quaternion from four compact floats, normalized when that is possible (else as read,
    /// which may be zero, huge or NaN).
    pub fn quat(&mut self) -> Quat {
        let v = self.vec4();
        let n = v.normalize_or_zero();
        Quat::from_vec4(if n == Vec4::ZERO { v } else { n })
    }

    /// A skin matrix: one mode byte `m`, then by `m % 8`:
    /// 0 identity; 1 rigid (quaternion, translation); 2 scale·rotation·translation (scale,
    /// quaternion, translation); 3 sixteen raw compact floats, column-major (need not be affine);
    /// 4 a rigid motion mirrored on the axis `byte % 3`; 5 degenerate: mode 2 with the scale's
    /// axis `byte % 3` set to zero; 6 an affine matrix from twelve compact floats (three columns
    /// of the 3x3 part, then the translation); 7 nearly rigid: a rigid motion plus `byte · 1e-6`
    /// on each of the nine 3x3 entries (one byte each).
    pub fn matrix(&mut self) -> Mat4 {
        match self.u8() % 8 {
            0 => Mat4::IDENTITY,
            1 => {
                let (q, t) = (self.quat(), self.vec3());
                Mat4::from_rotation_translation(q, t)
            }
            2 => {
                let (s, q, t) = (self.vec3(), self.quat(), self.vec3());
                Mat4::from_scale_rotation_translation(s, q, t)
            }
            3 => {
                let mut cols = [0.0f32; 16];
                cols.iter_mut().for_each(|c| *c = self.float());
                Mat4::from_cols_array(&cols)
            }
            4 => {
                let axis = usize::from(self.u8() % 3);
                let (q, t) = (self.quat(), self.vec3());
                let mut scale = Vec3::ONE;
                scale[axis] = -1.0;
                Mat4::from_rotation_translation(q, t) * Mat4::from_scale(scale)
            }
            5 => {
                let axis = usize::from(self.u8() % 3);
                let (mut s, q, t) = (self.vec3(), self.quat(), self.vec3());
                s[axis] = 0.0;
                Mat4::from_scale_rotation_translation(s, q, t)
            }
            6 => {
                let (x, y, z, t) = (self.vec3(), self.vec3(), self.vec3(), self.vec3());
                Mat4::from_cols(x.extend(0.0), y.extend(0.0), z.extend(0.0), t.extend(1.0))
            }
            _ => {
                let (q, t) = (self.quat(), self.vec3());
                let mut m = Mat4::from_rotation_translation(q, t);
                for c in 0..3 {
                    for r in 0..3 {
                        m.col_mut(c)[r] += f32::from(self.u8() as i8) * 1e-6;
                    }
                }
                m
            }
        }
    }
}

/// Whether `x` is finite and below `limit` in magnitude.
#[must_use]
pub fn tame(x: f32, limit: f32) -> bool {
    x.is_finite() && x.abs() < limit
}
