//! The components a user puts on a character: which method skins it and what the CPU poses,
//! and how the plugin finds them (on the mesh entity or above it).

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;

/// How the skinned meshes at and below this entity are skinned, on the GPU and on the CPU.
///
/// Put it on the entity that holds a glTF scene (`WorldAssetRoot`) or on a skinned mesh entity
/// itself: every skinned mesh entity (one with Bevy's `SkinnedMesh`) at or below the nearest
/// entity carrying this component is skinned by skinblend with that method. Change it at any
/// time; remove it and the meshes go back to Bevy's own skinning.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Reflect)]
#[reflect(Component, Debug, Clone, PartialEq, Default)]
pub enum SkinningMethod {
    /// Linear blend skinning (what Bevy does), through skinblend's shader: more than 256 joints
    /// and up to 8 influences.
    Linear,
    /// Dual quaternion skinning with the residual 3x3 for scale and shear: no candy wrapper.
    #[default]
    DualQuaternion,
    /// Optimized centers of rotation (Le & Hodgins 2016): neither candy wrapper nor DQS's bulge.
    /// The centers come from the file's `_SKINBLEND_COR` (written by `skinblend centers`) or are
    /// computed once per mesh in the background; until they are ready the mesh is skinned by DQS
    /// (as a vertex without a center always is).
    CenterOfRotation,
    /// LBS and DQS blended per vertex by a blend value `b` in `[0, 1]` (0 = LBS, 1 = DQS):
    /// `v' = (1 − b)·LBS(v) + b·DQS(v)`, normals and tangents as the core blends them (see
    /// docs/blended.md). The values come from the file's `_SKINBLEND_DQ_BLEND` attribute, else
    /// from a [`DqBlend`] at or above the entity; with neither (or an invalid [`DqBlend`]) the
    /// mesh stays with Bevy's skinning, with one warning naming the entity.
    Blended,
}

impl SkinningMethod {
    /// Every method, in the order of the `skinblend` core's list.
    pub const ALL: [Self; 4] = [
        Self::Linear,
        Self::DualQuaternion,
        Self::CenterOfRotation,
        Self::Blended,
    ];

    /// The core's method.
    #[must_use]
    pub fn core(self) -> skinblend::Method {
        match self {
            Self::Linear => skinblend::Method::Linear,
            Self::DualQuaternion => skinblend::Method::DualQuaternion,
            Self::CenterOfRotation => skinblend::Method::CenterOfRotation,
            Self::Blended => skinblend::Method::Blended,
        }
    }

    /// A short name for labels and logs: the core's [`skinblend::Method::label`] (`"LBS"`,
    /// `"DQS"`, `"CoR"`, `"Blend"`).
    #[must_use]
    pub fn short_name(self) -> &'static str {
        self.core().label()
    }
}

/// The blend value of [`SkinningMethod::Blended`] for every vertex of the skinned meshes at and
/// below this entity (found as [`SkinningMethod`] is) whose file gives none
/// (`_SKINBLEND_DQ_BLEND` wins where the file has it): 0 = LBS, 1 = DQS, in `[0, 1]`. A NaN or
/// a value outside `[0, 1]` leaves the mesh with Bevy's skinning, with one warning naming the
/// entity. Change it at any time.
#[derive(Component, Debug, Clone, Copy, PartialEq, Default, Reflect)]
#[reflect(Component, Debug, Clone, PartialEq, Default)]
pub struct DqBlend(pub f32);

/// Asks for a CPU pose (a [`crate::PosedMesh`] refreshed each frame: posed positions, and the
/// `Aabb` their bounds) of the skinned meshes at and below this entity (found as
/// [`SkinningMethod`] is). Without it (or [`CpuPoseNormals`] or [`PosedPicking`], which imply
/// it) nothing is posed on the CPU and the `Aabb` comes from the joints (see docs/bevy.md).
/// Costs one CPU skinning of every vertex per entity and frame.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Default, Reflect)]
#[reflect(Component, Debug, Clone, PartialEq, Default)]
pub struct CpuPose;

/// Asks for posed normals on the CPU as well as positions (a [`CpuPose`] with normals), for the
/// skinned meshes at and below this entity (found as [`SkinningMethod`] is).
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Default, Reflect)]
#[reflect(Component, Debug, Clone, PartialEq, Default)]
pub struct CpuPoseNormals;

/// Makes Bevy's mesh picking hit the posed mesh, for the skinned meshes at and below this entity
/// (found as [`SkinningMethod`] is): the plugin keeps a main-world copy of the mesh with this
/// frame's posed positions as the entity's `SimplifiedMesh`, which Bevy's ray casts read
/// instead of the bind-pose mesh. Implies a [`CpuPose`]; costs that and a copy of the positions
/// per entity and frame.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Default, Reflect)]
#[reflect(Component, Debug, Clone, PartialEq, Default)]
pub struct PosedPicking;

/// The nearest component `C` at or above `entity`.
pub(crate) fn nearest<C: Component + Copy>(
    entity: Entity,
    components: &Query<&C>,
    parents: &Query<&ChildOf>,
) -> Option<C> {
    let mut current = entity;
    loop {
        if let Ok(c) = components.get(current) {
            return Some(*c);
        }
        current = parents.get(current).ok()?.parent();
    }
}

/// What the markers at or above a skinned entity ask the CPU for.
#[derive(SystemParam)]
pub(crate) struct CpuPoseRequests<'w, 's> {
    pose: Query<'w, 's, &'static CpuPose>,
    normals: Query<'w, 's, &'static CpuPoseNormals>,
    picking: Query<'w, 's, &'static PosedPicking>,
    parents: Query<'w, 's, &'static ChildOf>,
}

impl CpuPoseRequests<'_, '_> {
    /// `(pose, normals)`: whether `entity` is to be posed on the CPU, and with normals.
    pub(crate) fn of(&self, entity: Entity) -> (bool, bool) {
        let normals = nearest(entity, &self.normals, &self.parents).is_some();
        let pose = normals
            || nearest(entity, &self.pose, &self.parents).is_some()
            || nearest(entity, &self.picking, &self.parents).is_some();
        (pose, normals)
    }
}

/// The plugin's method for a core method; `Err(())` for a core method the plugin does not draw.
impl TryFrom<skinblend::Method> for SkinningMethod {
    type Error = ();
    fn try_from(method: skinblend::Method) -> Result<Self, ()> {
        SkinningMethod::ALL
            .into_iter()
            .find(|m| m.core() == method)
            .ok_or(())
    }
}
