//! The components a user puts on a character: which method skins it and what the CPU poses.

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
}

impl SkinningMethod {
    /// Every method, in the order of the `skinblend` core's list.
    pub const ALL: [Self; 3] = [Self::Linear, Self::DualQuaternion, Self::CenterOfRotation];

    /// The core's method.
    #[must_use]
    pub fn core(self) -> skinblend::Method {
        match self {
            Self::Linear => skinblend::Method::Linear,
            Self::DualQuaternion => skinblend::Method::DualQuaternion,
            Self::CenterOfRotation => skinblend::Method::CenterOfRotation,
        }
    }

    /// A short name for labels and logs (`"LBS"`, `"DQS"`, `"CoR"`).
    #[must_use]
    pub fn short_name(self) -> &'static str {
        match self {
            Self::Linear => "LBS",
            Self::DualQuaternion => "DQS",
            Self::CenterOfRotation => "CoR",
        }
    }
}

/// Asks for posed normals on the CPU as well as positions, for the skinned meshes at and below
/// this entity (found as [`SkinningMethod`] is). Positions are always posed: the bounds need
/// them.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Default, Reflect)]
#[reflect(Component, Debug, Clone, PartialEq, Default)]
pub struct CpuPoseNormals;

/// Makes Bevy's mesh picking hit the posed mesh, for the skinned meshes at and below this entity
/// (found as [`SkinningMethod`] is): the plugin keeps a main-world copy of the mesh with this
/// frame's posed positions as the entity's `SimplifiedMesh`, which Bevy's ray casts read
/// instead of the bind-pose mesh. Costs a copy of the positions per entity and frame.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Default, Reflect)]
#[reflect(Component, Debug, Clone, PartialEq, Default)]
pub struct PosedPicking;
