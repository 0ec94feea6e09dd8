//! A skinned entity's pose on the CPU: its skin matrices each frame, the palette the core
//! prepares from them, and the posed positions (normals on request) with their bounds.

use std::sync::Arc;

use bevy::camera::primitives::Aabb;
use bevy::prelude::*;
use skinblend::glam::{Mat4 as CoreMat4, Vec3 as CoreVec3};
use skinblend::{prepare, PreparedPalette, RunOptions, SkinError, SkinMesh, SkinOutputs};

use crate::joint_bounds::JointBounds;
use crate::SkinningMethod;

/// A skinned mesh entity's vertices as skinblend poses them on the CPU this frame: in the mesh
/// entity's local space (multiply by its `GlobalTransform` for world space), the same vertices
/// the GPU draws (the same palette, the same method; GPU and CPU agree within f32 rounding).
///
/// The plugin keeps it on the skinned mesh entities that ask for a CPU pose ([`crate::CpuPose`],
/// [`crate::CpuPoseNormals`] or [`crate::PosedPicking`] on the entity or above it) and refreshes
/// it each frame in `PostUpdate` (in [`crate::SkinblendSystems::Pose`]), after transforms
/// propagate and before visibility is checked; the entity's `Aabb` is then these positions'
/// bounds. Normals are posed only under a [`crate::CpuPoseNormals`].
#[derive(Component, Debug, Clone, Default)]
pub struct PosedMesh {
    pub(crate) positions: Vec<CoreVec3>,
    pub(crate) normals: Option<Vec<CoreVec3>>,
    pub(crate) method: Option<SkinningMethod>,
    pub(crate) frame: u64,
}

impl PosedMesh {
    /// Posed positions, one per vertex of the mesh, mesh-local space, metres. Empty until the
    /// first frame is posed.
    #[must_use]
    pub fn positions(&self) -> &[Vec3] {
        bytemuck::cast_slice(&self.positions)
    }

    /// Posed unit normals (mesh-local), when asked for with [`crate::CpuPoseNormals`] and the
    /// mesh has normals.
    #[must_use]
    pub fn normals(&self) -> Option<&[Vec3]> {
        self.normals.as_deref().map(bytemuck::cast_slice)
    }

    /// The method these vertices were posed with (`None` before the first frame).
    #[must_use]
    pub fn method(&self) -> Option<SkinningMethod> {
        self.method
    }

    /// How many frames this entity has been posed (0: not yet).
    #[must_use]
    pub fn frames_posed(&self) -> u64 {
        self.frame
    }

    /// The bounds of the posed positions, mesh-local, padded by [`BOUNDS_PADDING_RELATIVE`]
    /// (what the plugin writes into the entity's `Aabb`); `None` before the first frame or for
    /// a mesh without vertices.
    #[must_use]
    pub fn bounds(&self) -> Option<Aabb> {
        bounds_of(&self.positions)
    }
}

/// How much the plugin pads a posed mesh's bounds ([`PosedMesh::bounds`], the `Aabb`),
/// relative to its largest coordinate: `Aabb` stores a center and half extents, and
/// `center ± half` rounds back to within a few f32 ulps of the extreme vertices, on either
/// side; 1e-6 (8 ulps) keeps every vertex inside.
pub const BOUNDS_PADDING_RELATIVE: f32 = 1e-6;

/// The axis-aligned box of `positions`, padded by [`BOUNDS_PADDING_RELATIVE`]; `None` when
/// empty.
pub(crate) fn bounds_of(positions: &[CoreVec3]) -> Option<Aabb> {
    let first = *positions.first()?;
    let (min, max) = positions
        .iter()
        .fold((first, first), |(lo, hi), &p| (lo.min(p), hi.max(p)));
    let largest = min.abs().max(max.abs()).max_element();
    let pad = CoreVec3::splat(largest * BOUNDS_PADDING_RELATIVE + f32::MIN_POSITIVE);
    Some(Aabb::from_min_max(
        Vec3::from_array((min - pad).to_array()),
        Vec3::from_array((max + pad).to_array()),
    ))
}

/// A mesh entity's skin as the plugin keeps it: the joints and their bind data, the palette
/// prepared for the current method, and the CPU mesh.
#[derive(Debug)]
pub(crate) struct SkinState {
    /// The skin's joint entities (Bevy's `SkinnedMesh::joints`).
    pub joints: Vec<Entity>,
    /// `joint_from_bind` per joint (the inverse bind matrices).
    pub joint_from_bind: Vec<CoreMat4>,
    /// Each joint's origin in the bind pose, the center of its DQS residual (as skinblend-gltf).
    pub joint_centers: Vec<CoreVec3>,
    /// This frame's skin matrices `mesh_from_world · world_from_joint · joint_from_bind`.
    pub mesh_from_bind: Vec<CoreMat4>,
    /// Prepared for `method`; rebuilt when the method changes.
    pub prepared: Option<PreparedPalette>,
    /// The bind pose and influences (centers of rotation once known: NaN until then, so CoR
    /// poses those vertices by DQS, as the GPU does without the center attribute).
    pub cpu: Arc<SkinMesh<'static>>,
    /// The bind-space boxes of `cpu` for bounds from joints.
    pub joint_bounds: Arc<JointBounds>,
}

impl SkinState {
    /// A state for a skin with these inverse bind matrices (column-major, Bevy's glam).
    pub fn new(
        joints: Vec<Entity>,
        inverse_bindposes: &[Mat4],
        cpu: Arc<SkinMesh<'static>>,
        joint_bounds: Arc<JointBounds>,
    ) -> Self {
        let joint_from_bind: Vec<CoreMat4> = inverse_bindposes
            .iter()
            .map(|m| CoreMat4::from_cols_array(&m.to_cols_array()))
            .collect();
        let joint_centers = joint_from_bind
            .iter()
            .map(|m| {
                let center = m.inverse().w_axis.truncate();
                if center.is_finite() {
                    center
                } else {
                    CoreVec3::ZERO
                }
            })
            .collect();
        Self {
            mesh_from_bind: vec![CoreMat4::IDENTITY; joints.len()],
            joints,
            joint_from_bind,
            joint_centers,
            prepared: None,
            cpu,
            joint_bounds,
        }
    }

    /// This frame's bounds from the joints for `method` (mesh-local), without posing a vertex;
    /// `None` where they do not hold this frame (see `joint_bounds`).
    pub fn bounds_from_joints(&self, method: SkinningMethod) -> Option<Aabb> {
        self.joint_bounds.bounds(&self.mesh_from_bind, method)
    }

    /// Sets this frame's skin matrices from the joints' and the mesh's world transforms
    /// (`None` for a joint without one: the whole frame is skipped) and prepares the palette
    /// for `method`. Allocates only when the method changes.
    ///
    /// # Errors
    /// The core's, for a degenerate matrix (a zero scale, NaN).
    pub fn update(
        &mut self,
        world_from_mesh: &GlobalTransform,
        world_from_joint: impl Fn(Entity) -> Option<Mat4>,
        method: SkinningMethod,
    ) -> Result<bool, SkinError> {
        let mesh_from_world = world_from_mesh.to_matrix().inverse();
        for (j, &joint) in self.joints.iter().enumerate() {
            let Some(world_from_joint) = world_from_joint(joint) else {
                return Ok(false);
            };
            let mesh_from_joint = mesh_from_world * world_from_joint;
            self.mesh_from_bind[j] = CoreMat4::from_cols_array(&mesh_from_joint.to_cols_array())
                * self.joint_from_bind[j];
        }
        self.prepare(method)?;
        Ok(true)
    }

    /// Prepares `mesh_from_bind` for `method` (keeping the allocation when the method is the
    /// same).
    ///
    /// # Errors
    /// As [`skinblend::prepare`].
    pub fn prepare(&mut self, method: SkinningMethod) -> Result<(), SkinError> {
        match self.prepared.as_mut() {
            Some(prepared) if prepared.method() == method.core() => {
                prepared.update(&self.mesh_from_bind)
            }
            _ => {
                self.prepared = None;
                let prepared = prepare(
                    &self.mesh_from_bind,
                    Some(&self.joint_centers),
                    method.core(),
                )?;
                self.prepared = Some(prepared);
                Ok(())
            }
        }
    }

    /// Poses the CPU mesh under the prepared palette into `posed` (positions; normals when
    /// `normals` and the mesh has them), on the calling thread.
    ///
    /// # Errors
    /// The core's.
    pub fn pose(&self, posed: &mut PosedMesh, normals: bool) -> Result<(), SkinError> {
        let Some(prepared) = self.prepared.as_ref() else {
            return Ok(());
        };
        pose_into(&self.cpu, prepared, posed, normals)?;
        posed.method = SkinningMethod::try_from(prepared.method()).ok();
        posed.frame += 1;
        Ok(())
    }
}

/// Poses `mesh` under `prepared` into `posed`'s buffers (resized to the mesh once), on the
/// calling thread (Bevy's task pool parallelizes over entities); normals only when `normals`
/// and the mesh has them. Allocates only when the vertex count or the request changes. The
/// plugin's CPU pose, as a function: tests call it with the palettes `skinblend pose` uses.
///
/// # Errors
/// The core's ([`SkinMesh::skin_into`]).
pub fn pose_into(
    mesh: &SkinMesh<'_>,
    prepared: &PreparedPalette,
    posed: &mut PosedMesh,
    normals: bool,
) -> Result<(), SkinError> {
    let n = mesh.vertex_count();
    posed.positions.resize(n, CoreVec3::ZERO);
    let want_normals = normals && mesh.normals().is_some();
    match (&mut posed.normals, want_normals) {
        (Some(buffer), true) => buffer.resize(n, CoreVec3::ZERO),
        (slot @ None, true) => *slot = Some(vec![CoreVec3::ZERO; n]),
        (slot, false) => *slot = None,
    }
    let outputs = SkinOutputs {
        positions: &mut posed.positions,
        normals: posed.normals.as_deref_mut(),
        tangents: None,
    };
    let run = RunOptions {
        parallel: false,
        ..RunOptions::default()
    };
    mesh.skin_into(prepared, outputs, run)?;
    Ok(())
}
