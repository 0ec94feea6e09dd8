//! Taking over Bevy's skinning: skinned mesh entities under a [`SkinningMethod`] get the
//! plugin's render mesh, material and state (or a warning naming the entity and the limit,
//! never a panic), follow method and blend-value changes, and are given back to Bevy when the
//! method is gone (or is `Blended` without blend values).

use bevy::camera::primitives::{Aabb, MeshAabb};
use bevy::camera::visibility::{DynamicSkinnedMeshBounds, NoAutoAabb};
use bevy::mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy::mesh::MeshTag;
use bevy::picking::mesh_picking::ray_cast::SimplifiedMesh;
use std::sync::Arc;

use bevy::prelude::*;
use skinblend_gpu::GpuPalette;

use crate::cache::{material_for, with_no_centers, CachedMesh, Centers, SkinblendCache};
use crate::dq_blend::{blend_source, cpu_mesh_for, warn_once, BlendSource};
use crate::gltf_extras::SkinblendGltfExtras;
use crate::joint_bounds::JointBounds;
use crate::material::SkinblendMaterial;
use crate::mesh_data::prepare_mesh;
use crate::method::{nearest, CpuPoseRequests, DqBlend};
use crate::picking::PickingMesh;
use crate::pose::{PosedMesh, SkinState};
use crate::rotation_centers;
use crate::skinned::SkinblendSkinned;
use crate::SkinningMethod;

/// Takes over skinned mesh entities that have a [`SkinningMethod`] at or above them: their mesh
/// becomes the plugin's render mesh, their material a [`SkinblendMaterial`], their
/// `SkinnedMesh` moves into [`SkinblendSkinned`] (so Bevy's skinning and its joint limit stay
/// out), and they get an `Aabb` the plugin keeps, a `MeshTag`, and a [`PosedMesh`] where a
/// CPU pose is asked for ([`crate::CpuPose`] and the markers that imply it). Refused
/// meshes are left to Bevy with one warning naming the entity and the limit; under
/// [`SkinningMethod::Blended`] without blend values (the file's or a valid [`DqBlend`]) too,
/// looked at again when a [`DqBlend`] changes.
// Bevy systems state their queries in their signatures.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn take_over(
    mut commands: Commands,
    mut cache: ResMut<SkinblendCache>,
    candidates: Query<
        (
            Entity,
            &SkinnedMesh,
            &Mesh3d,
            Option<&MeshMaterial3d<StandardMaterial>>,
            Has<DynamicSkinnedMeshBounds>,
        ),
        Without<SkinblendSkinned>,
    >,
    added: Query<(), Or<(Added<SkinnedMesh>, Added<Mesh3d>)>>,
    method_changes: Query<(), Or<(Changed<SkinningMethod>, Added<SkinningMethod>)>>,
    blend_changes: Query<(), Changed<DqBlend>>,
    methods: Query<&SkinningMethod>,
    dq_blends: Query<&DqBlend>,
    parents: Query<&ChildOf>,
    mut meshes: ResMut<Assets<Mesh>>,
    inverse_bindposes: Res<Assets<SkinnedMeshInverseBindposes>>,
    extras: Res<SkinblendGltfExtras>,
    mut materials: ResMut<Assets<SkinblendMaterial>>,
    standard_materials: Res<Assets<StandardMaterial>>,
    requests: CpuPoseRequests,
) {
    // Scan only when something that could change the answer happened (a new skinned mesh, a
    // method or blend constant placed or changed, or an earlier candidate still waiting for its
    // assets).
    if added.is_empty() && method_changes.is_empty() && blend_changes.is_empty() && !cache.waiting {
        return;
    }
    let cache = &mut *cache;
    cache.waiting = false;
    for (entity, skinned, mesh3d, material, dynamic_bounds) in &candidates {
        let Some(method) = nearest(entity, &methods, &parents) else {
            continue;
        };
        if cache.refused.contains(&entity) {
            continue;
        }
        let Some(ibms) = inverse_bindposes.get(&skinned.inverse_bindposes) else {
            cache.waiting = true; // still loading
            continue;
        };
        let Some(material) = material else {
            warn!(
                "skinblend: entity {entity} is left to Bevy's skinning: its material is not a StandardMaterial (the plugin extends StandardMaterial only)"
            );
            cache.refused.insert(entity);
            continue;
        };
        if ibms.len() != skinned.joints.len() {
            warn!(
                "skinblend: entity {entity} is left to Bevy's skinning: {} inverse bind matrices for {} joints",
                ibms.len(),
                skinned.joints.len()
            );
            cache.refused.insert(entity);
            continue;
        }
        if skinned.joints.len() > usize::from(u16::MAX) {
            warn!(
                "skinblend: entity {entity} is left to Bevy's skinning: its skin has {} joints, the limit is {} (16-bit joint indices)",
                skinned.joints.len(),
                u16::MAX
            );
            cache.refused.insert(entity);
            continue;
        }
        let mesh_id = mesh3d.0.id();
        if !cache.meshes.contains_key(&mesh_id) {
            let Some(source) = meshes.get(&mesh3d.0) else {
                cache.waiting = true; // still loading
                continue;
            };
            let file_extras = extras.of_mesh(&mesh3d.0);
            match prepare_mesh(source, ibms.len(), file_extras.as_deref()) {
                Ok(prepared) => {
                    let centers = if prepared.centers_from_file {
                        Centers::Ready
                    } else {
                        Centers::NotRequested
                    };
                    let cpu = if prepared.centers_from_file {
                        prepared.cpu
                    } else {
                        with_no_centers(&prepared.cpu)
                    };
                    let joint_bounds = Arc::new(JointBounds::new(&cpu));
                    let render_mesh = meshes.add(prepared.render_mesh);
                    cache.meshes.insert(
                        mesh_id,
                        CachedMesh {
                            render_mesh,
                            cpu,
                            joint_bounds,
                            triangles: prepared.triangles,
                            centers,
                            blend_values_from_file: prepared.blend_values_from_file,
                            constant_blend_meshes: Default::default(),
                        },
                    );
                }
                Err(refusal) => {
                    warn!("skinblend: entity {entity} is left to Bevy's skinning: {refusal}");
                    cache.refused.insert(entity);
                    continue;
                }
            }
        }
        let Some(cached) = cache.meshes.get_mut(&mesh_id) else {
            continue;
        };
        let blend = if method.core().needs_blend_values() {
            match blend_source(cached, nearest(entity, &dq_blends, &parents)) {
                Ok(source) => Some(source),
                Err(problem) => {
                    warn_once(&mut cache.blend_refused, entity, problem);
                    continue;
                }
            }
        } else {
            None
        };
        let Some(skin_material) = material_for(
            &mut cache.materials,
            &cache.palettes,
            &mut materials,
            &standard_materials,
            &material.0,
            method,
            blend.map_or(0.0, BlendSource::constant),
        ) else {
            cache.waiting = true; // the StandardMaterial is still loading
            continue;
        };
        cache.blend_refused.remove(&entity);
        let skin = SkinState::new(
            skinned.joints.clone(),
            ibms,
            cpu_mesh_for(cached, blend),
            cached.joint_bounds.clone(),
        );
        let (cpu_pose, normals) = requests.of(entity);
        // The bind pose's bounds until the first pose replaces them.
        let bind_bounds = meshes
            .get(&cached.render_mesh)
            .and_then(MeshAabb::compute_aabb)
            .unwrap_or_else(|| Aabb::from_min_max(Vec3::ZERO, Vec3::ZERO));
        let mut entity_commands = commands.entity(entity);
        entity_commands
            .remove::<(
                SkinnedMesh,
                MeshMaterial3d<StandardMaterial>,
                DynamicSkinnedMeshBounds,
            )>()
            .insert((
                Mesh3d(cached.render_mesh.clone()),
                MeshMaterial3d(skin_material),
                MeshTag(0),
                NoAutoAabb,
                bind_bounds,
                SkinblendSkinned {
                    source_mesh: mesh3d.0.clone(),
                    source_material: material.0.clone(),
                    source_skin: skinned.clone(),
                    dynamic_bounds,
                    method,
                    blend,
                    cpu_pose,
                    normals,
                    gpu: GpuPalette::Linear(Vec::new()),
                    skin,
                    posed_ok: true,
                    bounds_pose: PosedMesh::default(),
                },
            ));
        if cpu_pose {
            entity_commands.insert(PosedMesh::default());
        }
    }
}

/// Follows method and blend-constant changes (swapping the material and the CPU mesh) and
/// CPU-pose requests (adding or removing the [`PosedMesh`]), gives entities back to Bevy when
/// their method is gone or is [`SkinningMethod::Blended`] without blend values (one warning
/// naming the entity), starts centers of rotation where CoR is first used, and collects the
/// finished ones.
#[allow(clippy::too_many_arguments)]
pub(crate) fn follow_methods(
    mut commands: Commands,
    mut cache: ResMut<SkinblendCache>,
    mut skinned: Query<(
        Entity,
        &mut SkinblendSkinned,
        &mut MeshMaterial3d<SkinblendMaterial>,
        Has<PosedMesh>,
    )>,
    methods: Query<&SkinningMethod>,
    dq_blends: Query<&DqBlend>,
    requests: CpuPoseRequests,
    parents: Query<&ChildOf>,
    mut materials: ResMut<Assets<SkinblendMaterial>>,
    standard_materials: Res<Assets<StandardMaterial>>,
    mut meshes: ResMut<Assets<Mesh>>,
) {
    let cache = &mut *cache;
    for cached in cache.meshes.values_mut() {
        rotation_centers::collect(cached, &mut meshes);
    }
    for (entity, mut state, mut material, has_posed) in &mut skinned {
        let Some(cached) = cache.meshes.get_mut(&state.source_mesh.id()) else {
            continue;
        };
        let Some(method) = nearest(entity, &methods, &parents) else {
            give_back(&mut commands, entity, &state);
            continue;
        };
        let blend = if method.core().needs_blend_values() {
            match blend_source(cached, nearest(entity, &dq_blends, &parents)) {
                Ok(source) => Some(source),
                Err(problem) => {
                    warn_once(&mut cache.blend_refused, entity, problem);
                    give_back(&mut commands, entity, &state);
                    continue;
                }
            }
        } else {
            None
        };
        // The CPU mesh for the method and blend values (a constant's copy is kept while the
        // constant is; the shared mesh is followed when the centers of rotation arrive).
        let keeps_constant = matches!(blend, Some(BlendSource::Constant(value))
            if state.skin.cpu.blend_values() == Some(skinblend::BlendValues::Uniform(value)));
        if !keeps_constant {
            let cpu = cpu_mesh_for(cached, blend);
            if !Arc::ptr_eq(&state.skin.cpu, &cpu) {
                state.skin.cpu = cpu;
                state.skin.joint_bounds = cached.joint_bounds.clone();
            }
        }
        (state.cpu_pose, state.normals) = requests.of(entity);
        match (state.cpu_pose, has_posed) {
            (true, false) => {
                commands.entity(entity).insert(PosedMesh::default());
            }
            (false, true) => {
                commands.entity(entity).remove::<PosedMesh>();
            }
            _ => {}
        }
        if method.core().needs_rotation_centers() {
            rotation_centers::request(cached);
        }
        if method != state.method || blend != state.blend {
            if let Some(handle) = material_for(
                &mut cache.materials,
                &cache.palettes,
                &mut materials,
                &standard_materials,
                &state.source_material,
                method,
                blend.map_or(0.0, BlendSource::constant),
            ) {
                material.0 = handle;
                state.method = method;
                state.blend = blend;
            }
        }
    }
}

/// Gives `entity` back to Bevy: its mesh, material, skin and bounds, as they were.
fn give_back(commands: &mut Commands, entity: Entity, state: &SkinblendSkinned) {
    let mut entity_commands = commands.entity(entity);
    if state.dynamic_bounds {
        entity_commands.insert(DynamicSkinnedMeshBounds);
    }
    entity_commands
        .remove::<(
            SkinblendSkinned,
            MeshMaterial3d<SkinblendMaterial>,
            PosedMesh,
            NoAutoAabb,
            Aabb,
        )>()
        .remove::<(PickingMesh, SimplifiedMesh, MeshTag)>()
        .insert((
            Mesh3d(state.source_mesh.clone()),
            MeshMaterial3d(state.source_material.clone()),
            state.source_skin.clone(),
        ));
}
