//! The seam between what is skinned and where it runs.
//!
//! [`SkinBackend`] is what a scene skinner (skinblend-gltf's `SceneSkinner`) needs from a place
//! that skins: make a mesh ready once, then skin it every frame with a prepared palette into
//! caller-owned buffers. [`CpuBackend`] is this crate's kernels ([`SkinMesh::skin_into`]); skinblend-gpu
//! implements the trait for its `GpuSkinner` (upload once, one dispatch per frame, readback).
//! Code that walks a scene is written once against the trait and runs on either.

use crate::error::SkinError;
use crate::mesh::SkinMesh;
use crate::palette::PreparedPalette;
use crate::types::{Diagnostics, RunOptions, SkinOutputs};

/// A place where meshes are skinned: the CPU kernels ([`CpuBackend`]) or a GPU.
///
/// The contract, for every implementation:
/// - [`SkinBackend::load_mesh`] is called once per mesh (a [`SkinMesh`], checked once), and
///   again whenever the mesh's attribute values change (morph targets): a backend may keep its
///   own copy of them (a GPU does).
/// - [`SkinBackend::skin_mesh`] gets the same `mesh` it was loaded from, a palette
///   prepared for the method to run and the call's [`RunOptions`] (a GPU honours
///   `renormalize` and ignores the CPU-only `parallel` and `simd`); it writes one element per
///   vertex into each output given and returns the exact diagnostics, as [`SkinMesh::skin_into`] does. Results of different backends
///   agree within f32 rounding (skinblend-gpu: 1e-5 relative).
pub trait SkinBackend {
    /// A mesh made ready to be skinned every frame (nothing on the CPU; buffers on a GPU).
    type Mesh;
    /// What can go wrong. Core errors ([`SkinError`]) must be reported as themselves or
    /// wrapped, never dropped.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Makes `mesh` ready to be skinned (a GPU uploads it; allocates what the backend keeps).
    ///
    /// # Errors
    /// The backend's: for example a GPU buffer over the device's limits.
    fn load_mesh(&self, mesh: &SkinMesh<'_>) -> Result<Self::Mesh, Self::Error>;

    /// Skins `loaded` (loaded from `mesh`) under `palette` into `outputs`, as `run` says.
    ///
    /// # Errors
    /// Those of [`SkinMesh::skin_into`] (as the backend's error), and the backend's own.
    fn skin_mesh(
        &self,
        loaded: &mut Self::Mesh,
        mesh: &SkinMesh<'_>,
        palette: &PreparedPalette,
        outputs: SkinOutputs<'_>,
        run: RunOptions,
    ) -> Result<Diagnostics, Self::Error>;
}

/// The CPU kernels as a [`SkinBackend`]: [`SkinMesh::skin_into`] (SIMD where the CPU has it, all cores of
/// the current rayon pool, as each call's [`RunOptions`] say). Loading a mesh costs nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuBackend;

impl SkinBackend for CpuBackend {
    type Mesh = ();
    type Error = SkinError;

    fn load_mesh(&self, _mesh: &SkinMesh<'_>) -> Result<(), SkinError> {
        Ok(())
    }

    fn skin_mesh(
        &self,
        _loaded: &mut (),
        mesh: &SkinMesh<'_>,
        palette: &PreparedPalette,
        outputs: SkinOutputs<'_>,
        run: RunOptions,
    ) -> Result<Diagnostics, SkinError> {
        mesh.skin_into(palette, outputs, run)
    }
}
