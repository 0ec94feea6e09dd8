//! Centers of rotation computed once per mesh in the background (Bevy's async compute pool),
//! for meshes whose file has no `_SKINBLEND_COR`, started when an entity first uses CoR.

use std::sync::Arc;

use bevy::prelude::*;
use bevy::tasks::{block_on, futures_lite::future, AsyncComputeTaskPool};
use skinblend::cor::{rotation_centers, CorOptions};

use crate::cache::{CachedMesh, Centers};
use crate::joint_bounds::JointBounds;
use crate::mesh_data::ATTRIBUTE_SKINBLEND_ROTATION_CENTER;

/// Starts computing `cached`'s centers if nobody asked yet (no-op otherwise).
pub(crate) fn request(cached: &mut CachedMesh) {
    if !matches!(cached.centers, Centers::NotRequested) {
        return;
    }
    let cpu = cached.cpu.clone();
    let triangles = cached.triangles.clone();
    cached.centers = Centers::Computing(AsyncComputeTaskPool::get().spawn(async move {
        rotation_centers(
            cpu.positions(),
            &triangles,
            cpu.influences(),
            &CorOptions::default(),
        )
        .map(|c| c.centers)
    }));
}

/// Takes `cached`'s centers if their computation finished since the last frame: into its CPU
/// mesh and its render mesh's center attribute; a failure is logged once and CoR skins the mesh
/// as DQS.
pub(crate) fn collect(cached: &mut CachedMesh, meshes: &mut Assets<Mesh>) {
    let Centers::Computing(task) = &mut cached.centers else {
        return;
    };
    let Some(result) = block_on(future::poll_once(task)) else {
        return;
    };
    match result.and_then(|centers| {
        let mesh = (*cached.cpu)
            .clone()
            .with_rotation_centers(centers.clone())?;
        Ok((mesh, centers))
    }) {
        Ok((mesh, centers)) => {
            cached.joint_bounds = Arc::new(JointBounds::new(&mesh));
            cached.cpu = Arc::new(mesh);
            cached.constant_blend_meshes.clear();
            if let Some(mut render) = meshes.get_mut(&cached.render_mesh) {
                render.insert_attribute(
                    ATTRIBUTE_SKINBLEND_ROTATION_CENTER,
                    skinblend_gpu::gpu_rotation_centers(&centers),
                );
            }
            cached.centers = Centers::Ready;
        }
        Err(error) => {
            warn!("skinblend: centers of rotation could not be computed ({error}); CoR skins this mesh as DQS");
            cached.centers = Centers::Failed;
        }
    }
}
