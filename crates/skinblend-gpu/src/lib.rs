//! GPU skinning with wgpu: linear blend (LBS), dual quaternion (DQS), centers-of-rotation
//! (CoR, Le & Hodgins 2016) and blended (the per-vertex blend of the LBS and DQS results)
//! compute kernels with the same results as the `skinblend` CPU kernels, and the same WGSL
//! functions for your own vertex shaders.
//!
//! # Use
//! ```no_run
//! use skinblend::{fixtures, prepare, Method, RunOptions, SkinInput};
//! use skinblend_gpu::GpuSkinner;
//!
//! let rig = fixtures::twist_coarse();
//! let input = SkinInput::new(&rig.positions, Some(&rig.normals), Some(&rig.tangents), &rig.influences)?;
//! let gpu = GpuSkinner::new()?;                 // a clear error, not a panic, without a GPU
//! let mut mesh = gpu.upload(&input)?;            // once per mesh
//! let pose = rig.palette(180.0);                 // per frame: prepare, then one dispatch
//! let palette = prepare(&pose, Some(&rig.joint_centers), Method::DualQuaternion)?;
//! gpu.skin(&mut mesh, &palette, RunOptions::default())?; // bind mesh.output_buffer()
//! let skinned = gpu.read_back(&mesh)?;           // or read it back (tests, the CLI)
//! assert_eq!(skinned.positions.len(), rig.positions.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Centers of rotation need the per-vertex centers in the input before upload:
//! ```no_run
//! # use skinblend::{fixtures, prepare, Method, RunOptions, SkinInput};
//! # use skinblend_gpu::GpuSkinner;
//! # let rig = fixtures::twist_coarse();
//! # let gpu = GpuSkinner::new()?;
//! let centers = skinblend::evidence::fixture_rotation_centers(&rig)?; // or cor::rotation_centers
//! let input = SkinInput::new(&rig.positions, Some(&rig.normals), None, &rig.influences)?
//!     .with_rotation_centers(&centers)?;
//! let mut mesh = gpu.upload(&input)?;            // the centers go up once, with the mesh
//! let pose = rig.palette(180.0);
//! let palette = prepare(&pose, Some(&rig.joint_centers), Method::CenterOfRotation)?;
//! let skinned = gpu.skin_and_read_back(&mut mesh, &palette, RunOptions::default())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//!
//! Blended skinning needs the per-vertex blend values (0 = LBS, 1 = DQS) in the input, or one
//! value for the whole mesh:
//! ```no_run
//! # use skinblend::{fixtures, prepare, BlendValues, Method, RunOptions, SkinInput};
//! # use skinblend_gpu::GpuSkinner;
//! # let rig = fixtures::twist_coarse();
//! # let gpu = GpuSkinner::new()?;
//! let blend = rig.dq_blend_values();             // or skinblend::blend_values_from_joints
//! let input = SkinInput::new(&rig.positions, Some(&rig.normals), None, &rig.influences)?
//!     .with_blend_values(BlendValues::PerVertex(&blend))?;
//! let mut mesh = gpu.upload(&input)?;            // the values go up once, with the mesh
//! let palette = prepare(&rig.palette(180.0), Some(&rig.joint_centers), Method::Blended)?;
//! let skinned = gpu.skin_and_read_back(&mut mesh, &palette, RunOptions::default())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Conventions (as the core crate)
//! glam types; column vectors, `v' = M v`; column-major on the CPU, 3x4 matrices as three rows on
//! the GPU (see [`GpuLinearJoint`]); quaternions `(x, y, z, w)`; dual quaternion
//! `dual = ½ (0, t) real`.
//!
//! # What runs where
//! Per mesh, once: positions, normals, tangents, influences (any `k`) and, when the input has
//! them, the centers of rotation (a `vec4` per vertex: the center, `w` = 1; or `w` = 0 for a
//! vertex without one, never NaN) and the blend values (an `f32` per vertex; a value for the
//! whole mesh is repeated) are uploaded. Per frame: the palette is prepared on the CPU by
//! [`skinblend::prepare`] (for DQS, CoR and blended the core's own rigid/residual split, so both
//! paths share one definition), only it is uploaded (48 bytes per joint for LBS, 96 for DQS,
//! 144 for CoR and blended: the DQS entry and the LBS matrix), and one compute pass skins the
//! whole mesh into an interleaved vertex buffer. Per-vertex semantics are those of the CPU
//! scalar kernels: pivot = heaviest influence (ties: lowest slot), sign alignment (flips
//! counted), residual blend, for CoR the translation that sends the vertex's center where LBS
//! does (DQS for a vertex without a center), for blended `(1 − b)·LBS + b·DQS` (only LBS at
//! `b` = 0, only DQS at 1; unit normals and tangent directions interpolated and renormalized,
//! the handedness LBS's below `b` = ½), normals by the inverse transpose through the cofactor
//! (singular ones counted), tangents with handedness, weights summing to zero passed through.
//! Diagnostics are counted on the GPU with atomics.
//!
//! # Errors and limits
//! No public function panics on data or a missing GPU: see [`GpuError`]. Buffers are checked
//! against the device's `max_buffer_size`; a mesh above the storage binding size or the
//! workgroup-count limit is skinned by several dispatches in one pass. The CoR and blended
//! kernels read a ninth storage buffer (the centers, the blend values); a device with only
//! WebGPU's default 8 per stage (one you created and passed to [`GpuSkinner::from_device`])
//! skins LBS and DQS and refuses CoR and blended with [`GpuError::UnsuitableAdapter`] (see
//! [`GpuSkinner::supports`]).
#![warn(missing_docs)]

#[cfg(feature = "compute")]
pub mod bench;
#[cfg(feature = "compute")]
mod bindings;
#[cfg(feature = "compute")]
mod device;
#[cfg(feature = "compute")]
mod dispatch;
mod error;
#[cfg(feature = "compute")]
mod mesh;
mod methods;
mod palette;
#[cfg(feature = "compute")]
pub mod shaders;
pub mod wgsl;

#[cfg(feature = "compute")]
pub use bindings::WORKGROUP_SIZE;
#[cfg(feature = "compute")]
pub use device::{GpuOptions, GpuSkinner};
pub use error::GpuError;
#[cfg(feature = "compute")]
pub use mesh::{GpuMesh, OutputLayout};
pub use palette::{
    gpu_rotation_centers, GpuCorJoint, GpuDualQuatJoint, GpuLinearJoint, GpuPalette,
};
#[cfg(feature = "compute")]
pub use shaders::{export_shader, ExportedShader, ShaderExportError, ShaderLanguage};
pub use wgsl::{
    blended_skinning_wgsl, cor_skinning_wgsl, dual_quat_skinning_wgsl, linear_skinning_wgsl,
};

/// Re-export of the wgpu version in this crate's public API.
#[cfg(feature = "compute")]
pub use wgpu;
