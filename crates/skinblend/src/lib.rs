//! Skeletal mesh skinning that does not collapse a twisted joint.
//!
//! `skinblend` deforms a rigged mesh with linear blend skinning (LBS), dual quaternion
//! skinning (DQS, Kavan et al. 2008), skinning with optimized centers of rotation (CoR, Le &
//! Hodgins 2016, precomputed by [`cor`]) or a per-vertex blend of LBS and DQS
//! ([`Method::Blended`]) through one entry point, so the methods compare on
//! identical data, and measures what each does to the mesh ([`metrics`]) on procedural rigs
//! ([`fixtures`]) or your own.
//!
//! # Conventions (repeated on each type)
//! - glam types; column vectors, `v' = M · v`; column-major storage; translation in the last
//!   column. This is glTF's convention too.
//! - Quaternions are `(x, y, z, w)`. A [`DualQuat`] is `(real, dual)` with
//!   `dual = ½ · (0, t) · real`.
//! - A palette entry is a skin matrix `world_from_joint · joint_from_bind`: it maps a bind-pose
//!   position to its posed position under that one joint.
//! - Right-handed, +Y up, metres, seconds; units appear in names (`angle_rad`, `time_s`).
//!
//! # Use
//! ```
//! use glam::{Mat4, Quat, Vec3};
//! use skinblend::{prepare, skin_into, Influences, Method, RunOptions, SkinInput, SkinOutputs};
//!
//! // Two vertices, each weighted half to joint 0 and half to joint 1.
//! let positions = [Vec3::new(0.25, 1.0, 0.0), Vec3::new(-0.25, 1.0, 0.0)];
//! let influences = Influences::new(2, vec![0, 1, 0, 1], vec![0.5; 4], 2)?;
//! let input = SkinInput::new(&positions, None, None, &influences)?;
//!
//! // Joint 1 twists 180° about +Y; joint 0 stays put.
//! let palette = [Mat4::IDENTITY, Mat4::from_quat(Quat::from_rotation_y(std::f32::consts::PI))];
//! // What is built depends on the method; how it runs is an option of each call.
//! let prepared = prepare(&palette, None, Method::DualQuaternion)?; // once per frame
//!
//! let mut out = [Vec3::ZERO; 2];
//! let outputs = SkinOutputs::positions(&mut out);
//! let diagnostics = skin_into(&input, &prepared, outputs, RunOptions::default())?;
//! // DQS keeps the ring's radius where linear blending would collapse it to the axis.
//! assert!((out[0].length() - 1.0308).abs() < 1e-3);
//! assert_eq!(diagnostics.non_rigid_joints, 0);
//! # Ok::<(), skinblend::SkinError>(())
//! ```
//!
//! # Panics
//! No public function panics on data: bad input is a [`SkinError`] that names the place.
#![warn(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

mod backend;
mod blend_values;
pub mod cor;
mod dense_weights;
mod dual_quat;
mod error;
pub mod evidence;
pub mod fixtures;
pub mod gradient;
mod influence_tables;
mod influences;
mod input;
mod mesh;
pub mod metrics;
mod palette;
mod reference;
mod rigid_split;
mod simd;
mod skin;
mod types;
mod vectorize;
mod vertex_blocks;

pub use backend::{CpuBackend, SkinBackend};
pub use blend_values::{blend_values_from_joints, BlendValues};
pub use dual_quat::DualQuat;
pub use error::SkinError;
pub use influences::{InfluenceBuildReport, Influences};
pub use input::{full_validations, SkinInput};
pub use mesh::{skin_batch, update_palettes, SkinJob, SkinMesh};
pub use palette::{prepare, PreparedPalette};
pub use rigid_split::{split, RigidSplit};
pub use simd::simd_backend;
pub use skin::{skin, skin_into};
pub use types::{
    Diagnostics, Method, PaletteSpec, RunOptions, SkinOptions, SkinOutputs, Skinned, VertexInput,
    DEFAULT_RIGID_TOLERANCE,
};

/// Re-export of the glam version used in this crate's public API.
pub use glam;
