//! [`SkinblendSkinned`], the plugin's state on a mesh entity it skins: what it replaced (to
//! give it back to Bevy) and the skin it prepares each frame.

use bevy::mesh::skinning::SkinnedMesh;
use bevy::prelude::*;
use skinblend::SkinMesh;
use skinblend_gpu::GpuPalette;

use crate::dq_blend::BlendSource;
use crate::pose::{PosedMesh, SkinState};
use crate::SkinningMethod;

/// The plugin's state on a mesh entity it skins: what it replaced (to give it back) and the skin.
#[derive(Component)]
pub struct SkinblendSkinned {
    pub(crate) source_mesh: Handle<Mesh>,
    pub(crate) source_material: Handle<StandardMaterial>,
    pub(crate) source_skin: SkinnedMesh,
    /// Whether Bevy kept its bounds from joints (`DynamicSkinnedMeshBounds`), given back with it.
    pub(crate) dynamic_bounds: bool,
    pub(crate) method: SkinningMethod,
    /// Where `Blended` takes its blend values from (`None` for the other methods).
    pub(crate) blend: Option<BlendSource>,
    /// Whether a CPU pose was asked for ([`crate::CpuPose`] or a marker that implies it).
    pub(crate) cpu_pose: bool,
    /// Whether posed normals were asked for ([`crate::CpuPoseNormals`]).
    pub(crate) normals: bool,
    pub(crate) skin: SkinState,
    pub(crate) gpu: GpuPalette,
    pub(crate) posed_ok: bool,
    /// A CPU pose for the bounds alone, where the bounds from joints do not hold this frame.
    pub(crate) bounds_pose: PosedMesh,
}

impl SkinblendSkinned {
    /// The method the entity is skinned with now.
    #[must_use]
    pub fn method(&self) -> SkinningMethod {
        self.method
    }

    /// The joints of its skin.
    #[must_use]
    pub fn joints(&self) -> &[Entity] {
        &self.skin.joints
    }

    /// This frame's skin matrices `mesh_from_bind` (mesh-local space), one per joint.
    #[must_use]
    pub fn skin_matrices(&self) -> &[skinblend::glam::Mat4] {
        &self.skin.mesh_from_bind
    }

    /// The CPU mesh the plugin poses (bind pose, influences, centers of rotation when known).
    #[must_use]
    pub fn cpu_mesh(&self) -> &SkinMesh<'static> {
        &self.skin.cpu
    }

    /// The palette prepared for this frame, if any.
    #[must_use]
    pub fn prepared_palette(&self) -> Option<&skinblend::PreparedPalette> {
        self.skin.prepared.as_ref()
    }
}
