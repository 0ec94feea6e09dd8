//! Each frame's CPU work per skinned entity: skin matrices from the joints' transforms, the
//! palette the core prepares for the method, the bounds, and the CPU pose where it is asked for.

use bevy::camera::primitives::Aabb;
use bevy::prelude::*;

use crate::pose::{bounds_of, PosedMesh};
use crate::skinned::SkinblendSkinned;

/// Each frame, in parallel over entities: every skinned entity's skin matrices from its joints'
/// `GlobalTransform`s (in the mesh entity's space), its palette prepared by the core for its
/// method and converted to the GPU layout, and its `Aabb`. An entity with a [`PosedMesh`] (one
/// that asked for a CPU pose) is posed on the CPU and its `Aabb` is its posed vertices' bounds;
/// any other gets bounds from its joints (O(joints), no vertex posed), or, where those do not
/// hold this frame (a scaled joint under DQS or CoR), a CPU pose kept for its bounds only. A
/// frame that cannot be posed keeps the last pose and bounds, with one warning naming the
/// entity.
pub(crate) fn update_poses(
    mut skinned: Query<(
        Entity,
        &mut SkinblendSkinned,
        Option<&mut PosedMesh>,
        &mut Aabb,
    )>,
    transforms: Query<&GlobalTransform>,
) {
    skinned
        .par_iter_mut()
        .for_each(|(entity, mut state, posed, mut aabb)| {
            let Ok(world_from_mesh) = transforms.get(entity) else {
                return;
            };
            let state = &mut *state;
            let world_from_joint = |joint| transforms.get(joint).ok().map(GlobalTransform::to_matrix);
            let result = state
                .skin
                .update(world_from_mesh, world_from_joint, state.method)
                .and_then(|complete| {
                    if !complete {
                        return Ok(None);
                    }
                    if let Some(mut posed) = posed {
                        state.skin.pose(&mut posed, state.normals)?;
                        return Ok(Some(bounds_of(&posed.positions)));
                    }
                    if let Some(bounds) = state.skin.bounds_from_joints(state.method) {
                        return Ok(Some(Some(bounds)));
                    }
                    state.skin.pose(&mut state.bounds_pose, false)?;
                    Ok(Some(bounds_of(&state.bounds_pose.positions)))
                });
            match result {
                Ok(Some(bounds)) => {
                    state.posed_ok = true;
                    if let Some(bounds) = bounds {
                        if *aabb != bounds {
                            *aabb = bounds;
                        }
                    }
                    let SkinblendSkinned { skin, gpu, .. } = state;
                    if let Some(prepared) = skin.prepared.as_ref() {
                        if let Err(error) = gpu.fill(prepared, None) {
                            warn!("skinblend: entity {entity}: palette not converted for the GPU: {error}");
                        }
                    }
                }
                Ok(None) => {
                    if state.posed_ok {
                        warn!("skinblend: entity {entity}: a joint of its skin has no GlobalTransform; the frame keeps the last pose");
                    }
                    state.posed_ok = false;
                }
                Err(error) => {
                    if state.posed_ok {
                        warn!("skinblend: entity {entity}: the pose was refused by skinblend ({error}); the frame keeps the last pose");
                    }
                    state.posed_ok = false;
                }
            }
        });
}
