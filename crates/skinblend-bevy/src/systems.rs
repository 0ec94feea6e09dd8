//! The plugin's systems: take over skinned mesh entities under a [`SkinningMethod`] (and give
//! them back), compute centers of rotation in the background, and each frame prepare every
//! entity's palette, pose it on the CPU, refresh its bounds and upload the palettes.

use std::sync::Arc;

use bevy::asset::AssetId;
use bevy::camera::primitives::{Aabb, MeshAabb};
use bevy::camera::visibility::{DynamicSkinnedMeshBounds, NoAutoAabb};
use bevy::mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy::mesh::{Indices, MeshTag, VertexAttributeValues};
use bevy::picking::mesh_picking::ray_cast::SimplifiedMesh;
use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;
use bevy::render::storage::ShaderBuffer;
use bevy::tasks::{block_on, futures_lite::future, AsyncComputeTaskPool, Task};
use skinblend::cor::{rotation_centers, CorOptions};
use skinblend::glam::Vec3 as CoreVec3;
use skinblend::SkinMesh;
use skinblend_gpu::GpuPalette;

use crate::gltf_extras::SkinblendGltfExtras;
use crate::material::{SkinblendExtension, SkinblendMaterial};
use crate::mesh_data::{prepare_mesh, ATTRIBUTE_SKINBLEND_ROTATION_CENTER};
use crate::pose::{bounds_of, PosedMesh, SkinState};
use crate::{CpuPoseNormals, PosedPicking, SkinningMethod};

/// The plugin's state on a mesh entity it skins: what it replaced (to give it back) and the skin.
#[derive(Component)]
pub struct SkinblendSkinned {
    pub(crate) source_mesh: Handle<Mesh>,
    pub(crate) source_material: Handle<StandardMaterial>,
    pub(crate) source_skin: SkinnedMesh,
    pub(crate) method: SkinningMethod,
    pub(crate) normals: bool,
    pub(crate) skin: SkinState,
    pub(crate) gpu: GpuPalette,
    pub(crate) posed_ok: bool,
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

/// The centers of rotation of one mesh.
enum Centers {
    /// Known (from the file or computed): the CPU mesh and render mesh have them.
    Ready,
    /// Not asked for yet (no entity of this mesh uses CoR).
    NotRequested,
    /// Being computed on the async compute pool.
    Computing(Task<Result<Vec<CoreVec3>, skinblend::SkinError>>),
    /// The computation failed (logged once); CoR skins this mesh as DQS.
    Failed,
}

/// One source mesh made ready (shared by every entity that draws it).
struct CachedMesh {
    render_mesh: Handle<Mesh>,
    cpu: Arc<SkinMesh<'static>>,
    triangles: Arc<Vec<[u32; 3]>>,
    centers: Centers,
}

/// Source meshes made ready, materials made, and the three palette buffers.
#[derive(Resource)]
pub(crate) struct SkinblendCache {
    meshes: HashMap<AssetId<Mesh>, CachedMesh>,
    refused: HashSet<Entity>,
    /// An entity under a method waits for its assets: scan again next frame.
    waiting: bool,
    materials: HashMap<(AssetId<StandardMaterial>, SkinningMethod), Handle<SkinblendMaterial>>,
    palettes: [Handle<ShaderBuffer>; 3],
    /// Joints each palette buffer holds room for (at least 1).
    capacity_joints: [usize; 3],
    bytes: [Vec<u8>; 3],
}

/// Bytes per joint of each method's GPU entry (in [`SkinningMethod::ALL`]'s order).
const JOINT_BYTES: [usize; 3] = [
    size_of::<skinblend_gpu::GpuLinearJoint>(),
    size_of::<skinblend_gpu::GpuDualQuatJoint>(),
    size_of::<skinblend_gpu::GpuCorJoint>(),
];

/// The starting capacity of each palette buffer, in joints (grown by doubling).
const INITIAL_CAPACITY_JOINTS: usize = 1024;

fn method_index(method: SkinningMethod) -> usize {
    match method {
        SkinningMethod::Linear => 0,
        SkinningMethod::DualQuaternion => 1,
        SkinningMethod::CenterOfRotation => 2,
    }
}

impl FromWorld for SkinblendCache {
    fn from_world(world: &mut World) -> Self {
        let mut buffers = world.resource_mut::<Assets<ShaderBuffer>>();
        let mut palette = |i: usize| {
            let bytes = vec![0u8; INITIAL_CAPACITY_JOINTS * JOINT_BYTES[i]];
            buffers.add(ShaderBuffer::new(
                &bytes,
                bevy::asset::RenderAssetUsages::RENDER_WORLD
                    | bevy::asset::RenderAssetUsages::MAIN_WORLD,
            ))
        };
        let palettes = [palette(0), palette(1), palette(2)];
        Self {
            meshes: HashMap::default(),
            refused: HashSet::default(),
            waiting: false,
            materials: HashMap::default(),
            palettes,
            capacity_joints: [INITIAL_CAPACITY_JOINTS; 3],
            bytes: [Vec::new(), Vec::new(), Vec::new()],
        }
    }
}

/// The nearest component `C` at or above `entity`.
fn nearest<C: Component + Copy>(
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

/// Takes over skinned mesh entities that have a [`SkinningMethod`] at or above them: their mesh
/// becomes the plugin's render mesh, their material a [`SkinblendMaterial`], their
/// `SkinnedMesh` moves into [`SkinblendSkinned`] (so Bevy's skinning and its joint limit stay
/// out), and they get a [`PosedMesh`], an `Aabb` the plugin keeps and a `MeshTag`. Refused
/// meshes are left to Bevy with one warning naming the entity and the limit.
// Bevy systems state their queries in their signatures.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(crate) fn attach(
    mut commands: Commands,
    mut cache: ResMut<SkinblendCache>,
    candidates: Query<
        (
            Entity,
            &SkinnedMesh,
            &Mesh3d,
            Option<&MeshMaterial3d<StandardMaterial>>,
        ),
        Without<SkinblendSkinned>,
    >,
    added: Query<(), Or<(Added<SkinnedMesh>, Added<Mesh3d>)>>,
    method_changes: Query<(), Or<(Changed<SkinningMethod>, Added<SkinningMethod>)>>,
    methods: Query<&SkinningMethod>,
    parents: Query<&ChildOf>,
    mut meshes: ResMut<Assets<Mesh>>,
    inverse_bindposes: Res<Assets<SkinnedMeshInverseBindposes>>,
    extras: Res<SkinblendGltfExtras>,
    mut materials: ResMut<Assets<SkinblendMaterial>>,
    standard_materials: Res<Assets<StandardMaterial>>,
) {
    // Scan only when something that could change the answer happened (a new skinned mesh, a
    // method placed or changed, or an earlier candidate still waiting for its assets).
    if added.is_empty() && method_changes.is_empty() && !cache.waiting {
        return;
    }
    let cache = &mut *cache;
    cache.waiting = false;
    for (entity, skinned, mesh3d, material) in &candidates {
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
                    let render_mesh = meshes.add(prepared.render_mesh);
                    cache.meshes.insert(
                        mesh_id,
                        CachedMesh {
                            render_mesh,
                            cpu,
                            triangles: prepared.triangles,
                            centers,
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
        let Some(cached) = cache.meshes.get(&mesh_id) else {
            continue;
        };
        let Some(skin_material) = material_for(
            &mut cache.materials,
            &cache.palettes,
            &mut materials,
            &standard_materials,
            &material.0,
            method,
        ) else {
            cache.waiting = true; // the StandardMaterial is still loading
            continue;
        };
        let skin = SkinState::new(skinned.joints.clone(), ibms, cached.cpu.clone());
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
                PosedMesh::default(),
                SkinblendSkinned {
                    source_mesh: mesh3d.0.clone(),
                    source_material: material.0.clone(),
                    source_skin: skinned.clone(),
                    method,
                    normals: false,
                    gpu: GpuPalette::Linear(Vec::new()),
                    skin,
                    posed_ok: true,
                },
            ));
    }
}

/// The plugin's material for `base` skinned by `method`, made once per pair.
fn material_for(
    cache: &mut HashMap<(AssetId<StandardMaterial>, SkinningMethod), Handle<SkinblendMaterial>>,
    palettes: &[Handle<ShaderBuffer>; 3],
    materials: &mut Assets<SkinblendMaterial>,
    standard_materials: &Assets<StandardMaterial>,
    base: &Handle<StandardMaterial>,
    method: SkinningMethod,
) -> Option<Handle<SkinblendMaterial>> {
    if let Some(handle) = cache.get(&(base.id(), method)) {
        return Some(handle.clone());
    }
    let base_material = standard_materials.get(base)?.clone();
    let handle = materials.add(SkinblendMaterial {
        base: base_material,
        extension: SkinblendExtension {
            linear_palette: palettes[0].clone(),
            dual_quat_palette: palettes[1].clone(),
            cor_palette: palettes[2].clone(),
            method,
        },
    });
    cache.insert((base.id(), method), handle.clone());
    Some(handle)
}

/// The CPU mesh with every center "none" (NaN): CoR poses it as DQS until the centers are known.
fn with_no_centers(cpu: &Arc<SkinMesh<'static>>) -> Arc<SkinMesh<'static>> {
    let n = cpu.vertex_count();
    match (**cpu)
        .clone()
        .with_rotation_centers(vec![skinblend::cor::NO_ROTATION_CENTER; n])
    {
        Ok(mesh) => Arc::new(mesh),
        Err(_) => cpu.clone(),
    }
}

/// Follows method changes (swapping the material), gives entities back to Bevy when their
/// method is gone, starts centers of rotation where CoR is first used, and collects the
/// finished ones.
#[allow(clippy::too_many_arguments)]
pub(crate) fn follow_methods(
    mut commands: Commands,
    mut cache: ResMut<SkinblendCache>,
    mut skinned: Query<(
        Entity,
        &mut SkinblendSkinned,
        &mut MeshMaterial3d<SkinblendMaterial>,
    )>,
    methods: Query<&SkinningMethod>,
    normals: Query<&CpuPoseNormals>,
    parents: Query<&ChildOf>,
    mut materials: ResMut<Assets<SkinblendMaterial>>,
    standard_materials: Res<Assets<StandardMaterial>>,
    mut meshes: ResMut<Assets<Mesh>>,
) {
    let cache = &mut *cache;
    // Centers finished since last frame.
    for cached in cache.meshes.values_mut() {
        let Centers::Computing(task) = &mut cached.centers else {
            continue;
        };
        let Some(result) = block_on(future::poll_once(task)) else {
            continue;
        };
        match result.and_then(|centers| {
            let mesh = (*cached.cpu)
                .clone()
                .with_rotation_centers(centers.clone())?;
            Ok((mesh, centers))
        }) {
            Ok((mesh, centers)) => {
                cached.cpu = Arc::new(mesh);
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
    for (entity, mut state, mut material) in &mut skinned {
        let Some(cached) = cache.meshes.get_mut(&state.source_mesh.id()) else {
            continue;
        };
        if !Arc::ptr_eq(&state.skin.cpu, &cached.cpu) {
            state.skin.cpu = cached.cpu.clone();
        }
        state.normals = nearest(entity, &normals, &parents).is_some();
        let Some(method) = nearest(entity, &methods, &parents) else {
            // Given back: Bevy's mesh, material and skin, as they were.
            commands
                .entity(entity)
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
            continue;
        };
        if method == SkinningMethod::CenterOfRotation {
            if let Centers::NotRequested = cached.centers {
                let cpu = cached.cpu.clone();
                let triangles = cached.triangles.clone();
                cached.centers =
                    Centers::Computing(AsyncComputeTaskPool::get().spawn(async move {
                        rotation_centers(
                            cpu.positions(),
                            &triangles,
                            cpu.influences(),
                            &CorOptions::default(),
                        )
                        .map(|c| c.centers)
                    }));
            }
        }
        if method != state.method {
            if let Some(handle) = material_for(
                &mut cache.materials,
                &cache.palettes,
                &mut materials,
                &standard_materials,
                &state.source_material,
                method,
            ) {
                material.0 = handle;
                state.method = method;
            }
        }
    }
}

/// Each frame: every skinned entity's skin matrices from its joints' `GlobalTransform`s (in the
/// mesh entity's space), its palette prepared by the core for its method, its vertices posed on
/// the CPU ([`PosedMesh`]) and its `Aabb` set to their bounds (in parallel over entities); then
/// the palettes laid out one entity after another in each method's buffer, each entity's
/// offset written to its `MeshTag`, and the buffers uploaded once.
pub(crate) fn pose_and_upload(
    mut skinned: Query<(
        Entity,
        &mut SkinblendSkinned,
        &mut PosedMesh,
        &mut Aabb,
        &mut MeshTag,
    )>,
    transforms: Query<&GlobalTransform>,
    mut cache: ResMut<SkinblendCache>,
    mut buffers: ResMut<Assets<ShaderBuffer>>,
    mut materials: ResMut<Assets<SkinblendMaterial>>,
) {
    skinned
        .par_iter_mut()
        .for_each(|(entity, mut state, mut posed, mut aabb, _)| {
            let Ok(world_from_mesh) = transforms.get(entity) else {
                return;
            };
            let method = state.method;
            let result = state
                .skin
                .update(world_from_mesh, |joint| transforms.get(joint).ok().map(GlobalTransform::to_matrix), method)
                .and_then(|complete| {
                    if !complete {
                        return Ok(false);
                    }
                    let normals = state.normals;
                    state.skin.pose(&mut posed, normals)?;
                    Ok(true)
                });
            match result {
                Ok(true) => {
                    state.posed_ok = true;
                    if let Some(bounds) = bounds_of(&posed.positions) {
                        if *aabb != bounds {
                            *aabb = bounds;
                        }
                    }
                    let SkinblendSkinned { skin, gpu, .. } = &mut *state;
                    if let Some(prepared) = skin.prepared.as_ref() {
                        if let Err(error) = gpu.fill(prepared, None) {
                            warn!("skinblend: entity {entity}: palette not converted for the GPU: {error}");
                        }
                    }
                }
                Ok(false) => {
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

    let cache = &mut *cache;
    for bytes in &mut cache.bytes {
        bytes.clear();
    }
    for (_, state, _, _, mut tag) in &mut skinned {
        let index = method_index(state.gpu.method().try_into().unwrap_or(state.method));
        let bytes = &mut cache.bytes[index];
        let offset = u32::try_from(bytes.len() / JOINT_BYTES[index]).unwrap_or(u32::MAX);
        bytes.extend_from_slice(state.gpu.bytes());
        if tag.0 != offset {
            tag.0 = offset;
        }
    }
    let mut grown = false;
    for (index, &joint_bytes) in JOINT_BYTES.iter().enumerate() {
        let bytes = &mut cache.bytes[index];
        let joints = bytes.len() / joint_bytes;
        if joints == 0 {
            continue;
        }
        let mut capacity = cache.capacity_joints[index];
        while capacity < joints {
            capacity *= 2;
        }
        if capacity != cache.capacity_joints[index] {
            cache.capacity_joints[index] = capacity;
            grown = true;
        }
        bytes.resize(capacity * joint_bytes, 0);
        if let Some(mut buffer) = buffers.get_mut(&cache.palettes[index]) {
            let data = buffer.data.get_or_insert_with(Vec::new);
            data.clear();
            data.extend_from_slice(bytes);
        }
    }
    if grown {
        // A larger buffer is a new GPU buffer: the materials' bind groups are made again.
        for handle in cache.materials.values() {
            let _ = materials.get_mut(handle);
        }
    }
}

impl TryFrom<skinblend::Method> for SkinningMethod {
    type Error = ();
    fn try_from(method: skinblend::Method) -> Result<Self, ()> {
        SkinningMethod::ALL
            .into_iter()
            .find(|m| m.core() == method)
            .ok_or(())
    }
}

/// The main-world mesh Bevy's picking casts rays against for an entity under [`PosedPicking`].
#[derive(Component)]
pub(crate) struct PickingMesh(Handle<Mesh>);

/// Keeps a posed copy of the mesh as the `SimplifiedMesh` of every skinned entity under
/// [`PosedPicking`] (made on first use; its positions refreshed each frame in place), and
/// removes it where the marker is gone.
#[allow(clippy::type_complexity)]
pub(crate) fn update_picking_meshes(
    mut commands: Commands,
    skinned: Query<(Entity, &PosedMesh, &Mesh3d, Option<&PickingMesh>), With<SkinblendSkinned>>,
    markers: Query<&PosedPicking>,
    parents: Query<&ChildOf>,
    mut meshes: ResMut<Assets<Mesh>>,
) {
    for (entity, posed, mesh3d, picking) in &skinned {
        let wanted = nearest(entity, &markers, &parents).is_some();
        match (wanted, picking) {
            (false, None) => {}
            (false, Some(_)) => {
                commands
                    .entity(entity)
                    .remove::<(PickingMesh, SimplifiedMesh)>();
            }
            (true, None) => {
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
            (true, Some(picking)) => {
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
