//! glTF 2.0 in and out for `skinblend`.
//!
//! Loads `.gltf` (external buffers, data: URIs) and `.glb` files with the `gltf` crate's JSON
//! model and validation, reading buffers itself; builds the scene graph (parent-first), skins,
//! influences from every `JOINTS_n`/`WEIGHTS_n` set, morph targets, sparse and quantized
//! accessors; samples animations (STEP, LINEAR, CUBICSPLINE) at a time in seconds; builds
//! palettes `world_from_joint · joint_from_bind` with each joint's bind origin as the DQS
//! residual center; skins every skinned node with any method of the core; and writes the posed
//! scene to `.glb`, `.gltf` or `.obj`, keeping everything else.
//!
//! # Conventions
//! - glam types; column vectors, `v' = M · v`; column-major; translation in the last column
//!   (glTF's convention). Quaternions `(x, y, z, w)`.
//! - Transforms are named `X_from_Y`; times are `time_s` (seconds).
//! - Skinned output is in the space of the scene: the skinned mesh node's own transform is
//!   ignored, as the glTF specification says.
//!
//! # Use
//!
//! # Panics
//! No public function panics on file data: bad input is a [`GltfError`] naming the JSON path.
#![warn(missing_docs)]

pub mod accessor;
mod centers;
pub mod conformance;
mod container;
mod dq_blend;
mod error;
pub mod export;
pub mod info;
mod model;
mod morph;
mod pose;
pub mod rigs;
mod scene;
mod spec_rules;
mod topology;

/// The repository's README: its Rust code blocks are compiled and run as doctests of this
/// crate (it sees `skinblend` and `skinblend-gltf`, and `skinblend-gpu` as a dev-dependency).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// docs/library.md's Rust code blocks, compiled and run as doctests like the README's.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/library.md")]
pub struct LibraryDoctests;

/// docs/gpu.md's Rust code blocks, compiled and run as doctests like the README's.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/gpu.md")]
pub struct GpuDoctests;

pub use centers::{primitive_rotation_centers, PrimitiveCenters};
pub use container::MAX_FILE_BYTES;
pub use dq_blend::PrimitiveDqBlend;
pub use error::{GltfError, Result};
pub use model::{
    Animation, Channel, ChannelPath, Interp, Mesh, Model, MorphTarget, Node, Primitive, Repairs,
    Sampler, Skin, Trs, DQ_BLEND_ATTRIBUTE, MAX_NODE_DEPTH, ROTATION_CENTER_ATTRIBUTE,
    SUPPORTED_REQUIRED_EXTENSIONS,
};
pub use morph::morphed;
pub use pose::{sample, Pose};
pub use scene::{PosedNode, PosedPrimitive, SceneOptions, SceneSkinner};
pub use topology::triangles;
