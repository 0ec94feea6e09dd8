//! The WGSL skinning functions, for the compute kernels and for your own vertex shaders.
//!
//! The text is the same the compute kernels run (they are built from these strings), so what
//! the tests prove for the kernels holds for a shader that includes them.
//!
//! # Binding layout for your shader
//! [`linear_skinning_wgsl`]`(group, binding)` declares
//! `@group(group) @binding(binding) var<storage, read> skin_linear_palette: array<SkinAffine>;`
//! — a read-only storage buffer, visible to the stage that calls the functions (e.g.
//! `ShaderStages::VERTEX`), holding one [`crate::GpuLinearJoint`] (48 bytes) per joint; fill it
//! with [`crate::GpuPalette::from_prepared`] from a palette prepared for [`skinblend::Method::Linear`].
//! [`dual_quat_skinning_wgsl`]`(group, binding)` declares `skin_dual_quat_palette:
//! array<SkinDualQuatJoint>` the same way, one [`crate::GpuDualQuatJoint`] (96 bytes) per joint,
//! from a palette prepared for [`skinblend::Method::DualQuaternion`].
//! [`cor_skinning_wgsl`]`(group, binding)` declares `skin_cor_palette: array<SkinCorJoint>`
//! the same way, one [`crate::GpuCorJoint`] (144 bytes: the DQS entry, then the LBS matrix) per
//! joint, from a palette prepared for [`skinblend::Method::CenterOfRotation`]. CoR also needs
//! each vertex's center of rotation as a `vec4<f32>` attribute (xyz the center, w = 1 when it
//! has one, 0 when not), which [`crate::gpu_rotation_centers`] makes from the core's centers.
//! [`blended_skinning_wgsl`]`(group, binding)` declares `skin_blended_palette:
//! array<SkinCorJoint>` the same way (the same 144-byte entries as CoR: blended reads both the
//! DQS entry and the LBS matrix), from a palette prepared for [`skinblend::Method::Blended`].
//! Blended also needs each vertex's blend value as an `f32` attribute in `[0, 1]` (0 = LBS,
//! 1 = DQS; glTF `_SKINBLEND_DQ_BLEND`).
//!
//! # Functions (see the `.wgsl` files in `shaders/` for each contract)
//! - LBS: `skin_linear_blend4(joints: vec4<u32>, weights: vec4<f32>) -> SkinAffine`, then
//!   `skin_affine_point(m, p)`, `skin_linear_normal(m, n)`, `skin_linear_tangent(m, t)`; any k:
//!   `skin_linear_add(sum, joint, weight)` from `skin_affine_zero()`.
//! - DQS: `skin_dual_quat_blend4(joints, weights) -> SkinDualQuatBlend`, then
//!   `skin_dual_quat_blend_point(b, p)`, `skin_dual_quat_blend_normal(b, n)`,
//!   `skin_dual_quat_blend_tangent(b, t)`; any k: `skin_dual_quat_begin`, `skin_dual_quat_add`,
//!   `skin_dual_quat_add_residual`, `skin_dual_quat_finish`.
//! - CoR: `skin_cor_blend4(joints, weights, center: vec4<f32>) -> SkinDualQuatBlend`, then the
//!   DQS functions `skin_dual_quat_blend_point(b, p)`, `skin_dual_quat_blend_normal(b, n)`,
//!   `skin_dual_quat_blend_tangent(b, t)`; any k: `skin_dual_quat_begin`, `skin_cor_add`,
//!   `skin_cor_add_residual`, `skin_cor_finish`, then (when the vertex has a center)
//!   `skin_cor_add_linear` from `skin_affine_zero()` and `skin_cor_place(b, linear, center)`.
//! - Blended: `skin_blended_blend4(joints, weights, blend: f32) -> SkinBlended`, then
//!   `skin_blended_point(b, p)`, `skin_blended_normal(b, n)`, `skin_blended_tangent(b, t)`; any
//!   k: `skin_blended_begin(blend)`, then where `skin_blended_uses_linear(b)`
//!   `skin_blended_add_linear` into `b.linear`, and where `skin_blended_uses_dual_quat(b)`
//!   `skin_dual_quat_begin`, `skin_blended_add`, `skin_blended_add_residual`,
//!   `skin_blended_finish` into `b.dual_quat`.
//!
//! Every name this library declares starts with `skin_`, `Skin` or `SKIN_`.

use skinblend::Method;

use crate::methods::MethodKernel;
use crate::methods::{method_index, method_kernel, KERNELS};

/// Structs and helpers shared by every method (the DQS blend, which CoR finishes too, included);
/// declares no bindings.
pub const SKINNING_WGSL: &str = include_str!("../shaders/skinning.wgsl");
/// LBS functions; need [`SKINNING_WGSL`] and a `skin_linear_palette` declaration.
pub const LINEAR_WGSL: &str = KERNELS[method_index(Method::Linear)].library;
/// DQS functions; need [`SKINNING_WGSL`] and a `skin_dual_quat_palette` declaration.
pub const DUAL_QUAT_WGSL: &str = KERNELS[method_index(Method::DualQuaternion)].library;
/// CoR functions; need [`SKINNING_WGSL`] and a `skin_cor_palette` declaration.
pub const COR_WGSL: &str = KERNELS[method_index(Method::CenterOfRotation)].library;
/// Blended (LBS/DQS) functions; need [`SKINNING_WGSL`] and a `skin_blended_palette`
/// declaration.
pub const BLENDED_WGSL: &str = KERNELS[method_index(Method::Blended)].library;

/// The compute kernels' shared part: bindings, parameters, counters (`shaders/compute.wgsl`);
/// each method's own part is its `crate::methods::MethodKernel::compute`.
#[cfg(feature = "compute")]
pub(crate) const COMPUTE_WGSL: &str = include_str!("../shaders/compute.wgsl");

/// The binding of the palette in the compute kernels (see `shaders/compute.wgsl`).
#[cfg(feature = "compute")]
pub(crate) const COMPUTE_PALETTE_BINDING: u32 = 8;

/// WGSL source with the LBS palette declared at `@group(group) @binding(binding)` and every LBS
/// function; append your entry points. Allocates the string.
#[must_use]
pub fn linear_skinning_wgsl(group: u32, binding: u32) -> String {
    skinning_wgsl(method_kernel(Method::Linear), group, binding)
}

/// WGSL source with the DQS palette declared at `@group(group) @binding(binding)` and every DQS
/// function; append your entry points. Allocates the string.
#[must_use]
pub fn dual_quat_skinning_wgsl(group: u32, binding: u32) -> String {
    skinning_wgsl(method_kernel(Method::DualQuaternion), group, binding)
}

/// WGSL source with the CoR palette declared at `@group(group) @binding(binding)` and every CoR
/// function (with the DQS blend functions that apply its result); append your entry points.
/// Allocates the string.
#[must_use]
pub fn cor_skinning_wgsl(group: u32, binding: u32) -> String {
    skinning_wgsl(method_kernel(Method::CenterOfRotation), group, binding)
}

/// WGSL source with the blended palette declared at `@group(group) @binding(binding)` and every
/// blended function (the LBS and DQS blends it interpolates); append your entry points.
/// Allocates the string.
#[must_use]
pub fn blended_skinning_wgsl(group: u32, binding: u32) -> String {
    skinning_wgsl(method_kernel(Method::Blended), group, binding)
}

/// The WGSL declaring `kernel`'s palette at `@group(group) @binding(binding)` (a read-only
/// storage buffer), then the shared structs and the method's functions. Allocates.
pub(crate) fn skinning_wgsl(kernel: &MethodKernel, group: u32, binding: u32) -> String {
    format!(
        "@group({group}) @binding({binding}) var<storage, read> {}: array<{}>;\n{SKINNING_WGSL}\n{}\n",
        kernel.palette_name, kernel.entry_type, kernel.library
    )
}

/// The compute module of `kernel`'s method: its palette at binding 8, its functions, the shared
/// compute part and its own kernel. Allocates.
#[cfg(feature = "compute")]
pub(crate) fn compute_source(kernel: &MethodKernel) -> String {
    format!(
        "{}\n{COMPUTE_WGSL}\n{}",
        skinning_wgsl(kernel, 0, COMPUTE_PALETTE_BINDING),
        kernel.compute
    )
}
