//! Where a skinned entity under [`SkinningMethod::Blended`] takes its blend values from: the
//! file's `_SKINBLEND_DQ_BLEND` (carried by the shared render and CPU meshes), else the nearest
//! [`DqBlend`] (a constant: a uniform of the entity's material on the GPU, a CPU mesh with that
//! uniform value); with neither, or an invalid one, the entity stays with Bevy's skinning.

use std::sync::Arc;

use bevy::prelude::*;
use skinblend::SkinMesh;

use crate::cache::CachedMesh;
use crate::method::DqBlend;

/// Constant-value CPU meshes kept per source mesh before the oldest are dropped (entities keep
/// theirs alive): a [`DqBlend`] changed every frame would otherwise grow the cache each frame.
const CONSTANT_MESHES_KEPT: usize = 16;

/// The blend values an entity under [`crate::SkinningMethod::Blended`] is skinned with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum BlendSource {
    /// The file's `_SKINBLEND_DQ_BLEND`, on the shared meshes.
    File,
    /// One value for every vertex, from a [`DqBlend`], checked in `[0, 1]`.
    Constant(f32),
}

impl BlendSource {
    /// The constant the material's uniform carries (unused by the shader where the mesh has the
    /// attribute; 0 then, so every such entity shares one material).
    pub(crate) fn constant(self) -> f32 {
        match self {
            Self::File => 0.0,
            Self::Constant(value) => value,
        }
    }
}

/// Why an entity under [`crate::SkinningMethod::Blended`] has no blend values: the warning's
/// text, compared to warn once per fault and entity.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BlendProblem(String);

impl std::fmt::Display for BlendProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The source of `cached`'s blend values for an entity whose nearest [`DqBlend`] is `constant`:
/// the file's where it has them (valid), else the constant (checked in `[0, 1]`).
///
/// # Errors
/// A [`BlendProblem`] naming what to do: the file's values are invalid, the constant is NaN or
/// outside `[0, 1]`, or there is neither.
pub(crate) fn blend_source(
    cached: &CachedMesh,
    constant: Option<DqBlend>,
) -> Result<BlendSource, BlendProblem> {
    match (&cached.blend_values_from_file, constant) {
        (Err(fault), _) => Err(BlendProblem(format!(
            "SkinningMethod::Blended needs valid blend values, and its file's _SKINBLEND_DQ_BLEND is not ({fault}); write them again with `skinblend dq-blend`"
        ))),
        (Ok(true), _) => Ok(BlendSource::File),
        (Ok(false), None) => Err(BlendProblem(
            "SkinningMethod::Blended needs blend values, and its mesh has no _SKINBLEND_DQ_BLEND attribute and no DqBlend is on it or above it: add a DqBlend(b) (b in [0, 1], 0 = LBS, 1 = DQS) or write the attribute with `skinblend dq-blend`".to_owned(),
        )),
        (Ok(false), Some(DqBlend(value))) if (0.0..=1.0).contains(&value) => {
            Ok(BlendSource::Constant(value))
        }
        (Ok(false), Some(DqBlend(value))) => Err(BlendProblem(format!(
            "its DqBlend is {value}; a blend value must be in [0, 1] (0 = LBS, 1 = DQS)"
        ))),
    }
}

/// Logs `problem` for `entity` unless it is the fault last logged for it (`warned`: each
/// entity's last message; one warning per fault, not one per frame).
pub(crate) fn warn_once(
    warned: &mut bevy::platform::collections::HashMap<Entity, String>,
    entity: Entity,
    problem: BlendProblem,
) {
    if warned.get(&entity) != Some(&problem.0) {
        warn!("skinblend: entity {entity} is left to Bevy's skinning: {problem}");
        warned.insert(entity, problem.0);
    }
}

/// The CPU mesh an entity skinned with `source` poses: the shared one for file values (or any
/// other method: `None`), a copy with the uniform blend value for a constant (made once per
/// value and shared while [`CONSTANT_MESHES_KEPT`] allows).
pub(crate) fn cpu_mesh_for(
    cached: &mut CachedMesh,
    source: Option<BlendSource>,
) -> Arc<SkinMesh<'static>> {
    let Some(BlendSource::Constant(value)) = source else {
        return cached.cpu.clone();
    };
    if let Some(mesh) = cached.constant_blend_meshes.get(&value.to_bits()) {
        return mesh.clone();
    }
    // The value was checked in [0, 1], so the core accepts it; were it not, the shared mesh
    // poses it and the core's own refusal is logged by the pose.
    let Ok(mesh) = (*cached.cpu).clone().with_uniform_blend_value(value) else {
        return cached.cpu.clone();
    };
    if cached.constant_blend_meshes.len() >= CONSTANT_MESHES_KEPT {
        cached.constant_blend_meshes.clear();
    }
    let mesh = Arc::new(mesh);
    cached
        .constant_blend_meshes
        .insert(value.to_bits(), mesh.clone());
    mesh
}
