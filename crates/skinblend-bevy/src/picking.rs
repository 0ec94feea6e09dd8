//! Posed picking: under a [`PosedPicking`], a main-world copy of the mesh with this frame's
//! posed positions is the entity's `SimplifiedMesh`, so Bevy's mesh picking hits the mesh where
//! it is drawn.

use bevy::mesh::{Indices, VertexAttributeValues};
use bevy::picking::mesh_picking::ray_cast::SimplifiedMesh;
use bevy::prelude::*;

use crate::method::nearest;
use crate::pose::PosedMesh;
use crate::skinned::SkinblendSkinned;
use crate::PosedPicking;

/// The main-world mesh Bevy's picking casts rays against for an entity under [`PosedPicking`].
#[derive(Component)]
pub(crate) struct PickingMesh(Handle<Mesh>);

/// Keeps a posed copy of the mesh as the `SimplifiedMesh` of every skinned entity under
/// [`PosedPicking`] (made on first use; its positions refreshed each frame in place), and
/// removes it where the marker is gone.
#[allow(clippy::type_complexity)]
pub(crate) fn update_picking_meshes(
    mut commands: Commands,
    skinned: Query<
        (Entity, Option<&PosedMesh>, &Mesh3d, Option<&PickingMesh>),
        With<SkinblendSkinned>,
    >,
    markers: Query<&PosedPicking>,
    parents: Query<&ChildOf>,
    mut meshes: ResMut<Assets<Mesh>>,
) {
    for (entity, posed, mesh3d, picking) in &skinned {
        // The marker implies a CPU pose: without one (this frame) there is nothing to pick.
        let posed = posed.filter(|_| nearest(entity, &markers, &parents).is_some());
        match (posed, picking) {
            (None, None) => {}
            (None, Some(_)) => {
                commands
                    .entity(entity)
                    .remove::<(PickingMesh, SimplifiedMesh)>();
            }
            (Some(posed), None) => {
                if posed.positions().is_empty() {
                    continue;
                }
                let Some(render) = meshes.get(&mesh3d.0) else {
                    continue;
                };
                let mut mesh = Mesh::new(
                    render.primitive_topology(),
                    bevy::asset::RenderAssetUsages::MAIN_WORLD,
                );
                mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, posed.positions().to_vec());
                match render.indices() {
                    Some(Indices::U16(i)) => mesh.insert_indices(Indices::U16(i.clone())),
                    Some(Indices::U32(i)) => mesh.insert_indices(Indices::U32(i.clone())),
                    None => {}
                }
                let handle = meshes.add(mesh);
                commands
                    .entity(entity)
                    .insert((PickingMesh(handle.clone()), SimplifiedMesh(handle)));
            }
            (Some(posed), Some(picking)) => {
                let Some(mut mesh) = meshes.get_mut(&picking.0) else {
                    continue;
                };
                if let Some(VertexAttributeValues::Float32x3(positions)) =
                    mesh.attribute_mut(Mesh::ATTRIBUTE_POSITION)
                {
                    if positions.len() == posed.positions().len() {
                        for (out, p) in positions.iter_mut().zip(posed.positions()) {
                            *out = p.to_array();
                        }
                    }
                }
            }
        }
    }
}
