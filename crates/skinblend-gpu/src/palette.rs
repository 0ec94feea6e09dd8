//! The palette as the GPU reads it: `#[repr(C)]` structs matching the WGSL ones byte for byte.

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Quat, Vec3};
use skinblend::{Method, PreparedPalette, SkinError};

use crate::GpuError;

/// One LBS joint: the skin matrix's three rows (`row[i] = (A[i][0], A[i][1], A[i][2], t[i])`),
/// WGSL `SkinAffine`. 48 bytes: three `vec4<f32>`, no padding.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct GpuLinearJoint {
    /// Rows 0, 1, 2 of the 3x4 affine map.
    pub rows: [[f32; 4]; 3],
}

/// One DQS joint, WGSL `SkinDualQuatJoint`. 96 bytes: `real` at 0, `dual` at 16, the residual's
/// rows at 32, `rigid` at 80, then 12 bytes of padding up to the struct's 16-byte alignment.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct GpuDualQuatJoint {
    /// The rotation quaternion `(x, y, z, w)` of the joint's rigid part.
    pub real: [f32; 4],
    /// The dual part `½ (0, t) real`.
    pub dual: [f32; 4],
    /// The residual map `p ↦ S p + (c − S c)` as rows (identity for a rigid joint).
    pub residual_rows: [[f32; 4]; 3],
    /// 1 when the joint is rigid (the residual is skipped), 0 otherwise.
    pub rigid: u32,
    /// Padding to 96 bytes (WGSL rounds the struct up to its 16-byte alignment).
    pub padding: [u32; 3],
}

/// One CoR or blended joint, WGSL `SkinCorJoint`. 144 bytes: the joint's DQS entry at 0 (its
/// split: the rotation, which turns the vertex, and the residual), then its full skin matrix's
/// rows at 96 (the LBS entry, which places the vertex's center of rotation under CoR and is
/// blended into the LBS result under blended skinning). No padding beyond the DQS entry's own.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct GpuCorJoint {
    /// The DQS entry: dual quaternion, residual and rigid flag of the core's split.
    pub dual_quat: GpuDualQuatJoint,
    /// The LBS entry: the skin matrix as rows.
    pub linear: GpuLinearJoint,
}

/// Bytes per joint of the largest palette entry: the palette buffer is sized for this so one
/// buffer serves every method.
#[cfg(feature = "compute")]
pub(crate) const MAX_JOINT_BYTES: u64 = std::mem::size_of::<GpuCorJoint>() as u64;

const _: () = assert!(std::mem::size_of::<GpuLinearJoint>() == 48);
const _: () = assert!(std::mem::size_of::<GpuDualQuatJoint>() == 96);
const _: () = assert!(std::mem::size_of::<GpuCorJoint>() == 144);

/// The per-vertex centers of rotation as the GPU reads them (WGSL `vec4<f32>`): `[x, y, z, 1]`
/// for a vertex with a center, `[0, 0, 0, 0]` for one without
/// ([`skinblend::cor::NO_ROTATION_CENTER`], NaN, or any non-finite center, which the CPU
/// kernel also skins by DQS). No NaN reaches the GPU. Fill the attribute that
/// [`crate::cor_skinning_wgsl`]'s `skin_cor_blend4` takes with these. Allocates the result.
#[must_use]
pub fn gpu_rotation_centers(centers: &[Vec3]) -> Vec<[f32; 4]> {
    centers.iter().map(|&c| gpu_rotation_center(c)).collect()
}

/// One center in GPU layout (see [`gpu_rotation_centers`]).
pub(crate) fn gpu_rotation_center(center: Vec3) -> [f32; 4] {
    if center.is_finite() {
        [center.x, center.y, center.z, 1.0]
    } else {
        [0.0; 4]
    }
}

fn rows(map: &Affine3A) -> [[f32; 4]; 3] {
    let (x, y, z, t) = (
        map.matrix3.x_axis,
        map.matrix3.y_axis,
        map.matrix3.z_axis,
        map.translation,
    );
    [
        [x.x, y.x, z.x, t.x],
        [x.y, y.y, z.y, t.y],
        [x.z, y.z, z.z, t.z],
    ]
}

fn quat(q: Quat) -> [f32; 4] {
    [q.x, q.y, q.z, q.w]
}

/// A prepared palette in GPU layout: what is uploaded each frame.
#[derive(Debug, Clone, PartialEq)]
pub enum GpuPalette {
    /// For [`Method::Linear`].
    Linear(Vec<GpuLinearJoint>),
    /// For [`Method::DualQuaternion`].
    DualQuaternion(Vec<GpuDualQuatJoint>),
    /// For [`Method::CenterOfRotation`].
    CenterOfRotation(Vec<GpuCorJoint>),
    /// For [`Method::Blended`]: the same entries as CoR (the DQS entry and the LBS matrix).
    Blended(Vec<GpuCorJoint>),
}

fn dual_quat_joint(dq: &skinblend::DualQuat, residual: &Affine3A, rigid: bool) -> GpuDualQuatJoint {
    GpuDualQuatJoint {
        real: quat(dq.real),
        dual: quat(dq.dual),
        residual_rows: rows(residual),
        rigid: u32::from(rigid),
        padding: [0; 3],
    }
}

impl GpuPalette {
    /// Converts the first `joint_count` joints of `palette` (all of them when `None`). The DQS
    /// entries are the core's own split (dual quaternion, residual, rigid flag), and the CoR and
    /// blended entries that split beside the core's 3x4 skin matrix, so CPU and GPU share one
    /// definition. Allocates the result.
    ///
    /// # Errors
    /// [`SkinError::PaletteLength`] when the palette has fewer than `joint_count` joints;
    /// [`GpuError::UnsupportedMethod`] for a method the GPU does not implement.
    pub fn from_prepared(
        palette: &PreparedPalette,
        joint_count: Option<usize>,
    ) -> Result<Self, GpuError> {
        let mut out = Self::Linear(Vec::new());
        out.fill(palette, joint_count)?;
        Ok(out)
    }

    /// As [`GpuPalette::from_prepared`], reusing this palette's allocation.
    ///
    /// # Errors
    /// As [`GpuPalette::from_prepared`].
    pub fn fill(
        &mut self,
        palette: &PreparedPalette,
        joint_count: Option<usize>,
    ) -> Result<(), GpuError> {
        let method = palette.method();
        let available = palette.joint_count();
        let count = joint_count.unwrap_or(available);
        if available < count {
            return Err(SkinError::PaletteLength {
                expected: count,
                found: available,
            }
            .into());
        }
        // A method added to the core after this crate gets a clear error, not a build failure.
        #[allow(unreachable_patterns)]
        match method {
            Method::Linear => {
                let mut joints = match std::mem::replace(self, Self::Linear(Vec::new())) {
                    Self::Linear(v) => v,
                    Self::DualQuaternion(_) | Self::CenterOfRotation(_) | Self::Blended(_) => {
                        Vec::new()
                    }
                };
                joints.clear();
                joints.extend(
                    palette.linear_matrices()[..count]
                        .iter()
                        .map(|m| GpuLinearJoint { rows: rows(m) }),
                );
                *self = Self::Linear(joints);
            }
            Method::DualQuaternion => {
                let mut joints = match std::mem::replace(self, Self::Linear(Vec::new())) {
                    Self::DualQuaternion(v) => v,
                    Self::Linear(_) | Self::CenterOfRotation(_) | Self::Blended(_) => Vec::new(),
                };
                joints.clear();
                let dqs = &palette.dual_quats()[..count];
                let residuals = &palette.residuals()[..count];
                let rigid = &palette.rigid_flags()[..count];
                joints.extend(
                    dqs.iter()
                        .zip(residuals)
                        .zip(rigid)
                        .map(|((dq, residual), &rigid)| dual_quat_joint(dq, residual, rigid)),
                );
                *self = Self::DualQuaternion(joints);
            }
            Method::CenterOfRotation | Method::Blended => {
                let mut joints = match std::mem::replace(self, Self::Linear(Vec::new())) {
                    Self::CenterOfRotation(v) | Self::Blended(v) => v,
                    Self::Linear(_) | Self::DualQuaternion(_) => Vec::new(),
                };
                joints.clear();
                let dqs = &palette.dual_quats()[..count];
                let residuals = &palette.residuals()[..count];
                let rigid = &palette.rigid_flags()[..count];
                let linear = &palette.linear_matrices()[..count];
                joints.extend(dqs.iter().zip(residuals).zip(rigid).zip(linear).map(
                    |(((dq, residual), &rigid), linear)| GpuCorJoint {
                        dual_quat: dual_quat_joint(dq, residual, rigid),
                        linear: GpuLinearJoint { rows: rows(linear) },
                    },
                ));
                *self = if method == Method::Blended {
                    Self::Blended(joints)
                } else {
                    Self::CenterOfRotation(joints)
                };
            }
            other => {
                return Err(GpuError::UnsupportedMethod {
                    method: other.name().to_string(),
                })
            }
        }
        Ok(())
    }

    /// The method this palette is for.
    #[must_use]
    pub fn method(&self) -> Method {
        match self {
            Self::Linear(_) => Method::Linear,
            Self::DualQuaternion(_) => Method::DualQuaternion,
            Self::CenterOfRotation(_) => Method::CenterOfRotation,
            Self::Blended(_) => Method::Blended,
        }
    }

    /// The bytes to upload (`Pod` cast, no copy).
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        match self {
            Self::Linear(joints) => bytemuck::cast_slice(joints),
            Self::DualQuaternion(joints) => bytemuck::cast_slice(joints),
            Self::CenterOfRotation(joints) | Self::Blended(joints) => bytemuck::cast_slice(joints),
        }
    }
}
