//! What the plugin makes once and shares ([`SkinblendCache`]): each source mesh made ready
//! (render mesh, CPU mesh, centers of rotation, blend values), the plugin's materials, and the
//! three palette buffers every skinned entity's joints are uploaded into.

use std::sync::Arc;

use bevy::asset::AssetId;
use bevy::platform::collections::{HashMap, HashSet};
use bevy::prelude::*;
use bevy::render::storage::ShaderBuffer;
use bevy::tasks::Task;
use skinblend::glam::Vec3 as CoreVec3;
use skinblend::SkinMesh;

use crate::joint_bounds::JointBounds;
use crate::material::{SkinblendExtension, SkinblendMaterial};
use crate::SkinningMethod;

/// The centers of rotation of one mesh.
pub(crate) enum Centers {
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
pub(crate) struct CachedMesh {
    pub(crate) render_mesh: Handle<Mesh>,
    pub(crate) cpu: Arc<SkinMesh<'static>>,
    /// `cpu`'s boxes for bounds from joints (made again when the centers arrive).
    pub(crate) joint_bounds: Arc<JointBounds>,
    pub(crate) triangles: Arc<Vec<[u32; 3]>>,
    pub(crate) centers: Centers,
    /// Whether the file's `_SKINBLEND_DQ_BLEND` is on `cpu` and the render mesh (`Ok(true)`),
    /// absent (`Ok(false)`) or invalid (see [`crate::PreparedMesh`]).
    pub(crate) blend_values_from_file: Result<bool, skinblend::SkinError>,
    /// `cpu` with a uniform blend value, by the value's bits (see `dq_blend::cpu_mesh_for`);
    /// emptied when `cpu` changes.
    pub(crate) constant_blend_meshes: HashMap<u32, Arc<SkinMesh<'static>>>,
}

/// Source meshes made ready, materials made, and the three palette buffers.
#[derive(Resource)]
pub(crate) struct SkinblendCache {
    pub(crate) meshes: HashMap<AssetId<Mesh>, CachedMesh>,
    pub(crate) refused: HashSet<Entity>,
    /// Entities under `Blended` left to Bevy for want of blend values, with the fault last
    /// logged (one warning per fault); they are looked at again when a `DqBlend` changes.
    pub(crate) blend_refused: HashMap<Entity, String>,
    /// An entity under a method waits for its assets: scan again next frame.
    pub(crate) waiting: bool,
    pub(crate) materials: MaterialCache,
    pub(crate) palettes: [Handle<ShaderBuffer>; 3],
    /// Joints each palette buffer holds room for (at least 1).
    pub(crate) capacity_joints: [usize; 3],
    pub(crate) bytes: [Vec<u8>; 3],
}

/// The plugin's materials by base material, method and blend constant (its bits; 0 for methods
/// other than `Blended` and for file values).
pub(crate) type MaterialCache =
    HashMap<(AssetId<StandardMaterial>, SkinningMethod, u32), Handle<SkinblendMaterial>>;

/// Bytes per joint of each palette buffer's GPU entry (LBS, DQS, then CoR and blended, which
/// share one layout and one buffer).
pub(crate) const JOINT_BYTES: [usize; 3] = [
    size_of::<skinblend_gpu::GpuLinearJoint>(),
    size_of::<skinblend_gpu::GpuDualQuatJoint>(),
    size_of::<skinblend_gpu::GpuCorJoint>(),
];

/// The starting capacity of each palette buffer, in joints (grown by doubling).
const INITIAL_CAPACITY_JOINTS: usize = 1024;

/// The index of `method`'s palette buffer and entry size: blended's entries (the DQS entry
/// beside the LBS matrix, `GpuCorJoint`) share CoR's buffer.
pub(crate) fn method_index(method: SkinningMethod) -> usize {
    match method {
        SkinningMethod::Linear => 0,
        SkinningMethod::DualQuaternion => 1,
        SkinningMethod::CenterOfRotation | SkinningMethod::Blended => 2,
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
            blend_refused: HashMap::default(),
            waiting: false,
            materials: HashMap::default(),
            palettes,
            capacity_joints: [INITIAL_CAPACITY_JOINTS; 3],
            bytes: [Vec::new(), Vec::new(), Vec::new()],
        }
    }
}

/// Blend-constant materials (`Blended`'s, by constant) kept before they are dropped from the
/// cache (entities keep theirs alive): a [`crate::DqBlend`] changed every frame would otherwise
/// add a material each frame and keep every one. For every base material together.
pub(crate) const BLEND_CONSTANT_MATERIALS_KEPT: usize = 64;

/// The plugin's material for `base` skinned by `method` with the blend constant `dq_blend`
/// (`Blended` without the file's values; pass 0 otherwise), made once per triple while the
/// cache keeps it (at most [`BLEND_CONSTANT_MATERIALS_KEPT`] of `Blended`'s: past that they are
/// all dropped from the cache and made again when asked for).
pub(crate) fn material_for(
    cache: &mut MaterialCache,
    palettes: &[Handle<ShaderBuffer>; 3],
    materials: &mut Assets<SkinblendMaterial>,
    standard_materials: &Assets<StandardMaterial>,
    base: &Handle<StandardMaterial>,
    method: SkinningMethod,
    dq_blend: f32,
) -> Option<Handle<SkinblendMaterial>> {
    let key = (base.id(), method, dq_blend.to_bits());
    if let Some(handle) = cache.get(&key) {
        return Some(handle.clone());
    }
    let base_material = standard_materials.get(base)?.clone();
    if method.core().needs_blend_values() {
        let blended = cache
            .keys()
            .filter(|(_, m, _)| m.core().needs_blend_values())
            .count();
        if blended >= BLEND_CONSTANT_MATERIALS_KEPT {
            cache.retain(|(_, m, _), _| !m.core().needs_blend_values());
        }
    }
    let handle = materials.add(SkinblendMaterial {
        base: base_material,
        extension: SkinblendExtension {
            linear_palette: palettes[0].clone(),
            dual_quat_palette: palettes[1].clone(),
            cor_palette: palettes[2].clone(),
            blended_palette: palettes[2].clone(),
            dq_blend: Vec4::new(dq_blend, 0.0, 0.0, 0.0),
            method,
        },
    });
    cache.insert(key, handle.clone());
    Some(handle)
}

/// The CPU mesh with every center "none" (NaN): CoR poses it as DQS until the centers are known.
pub(crate) fn with_no_centers(cpu: &Arc<SkinMesh<'static>>) -> Arc<SkinMesh<'static>> {
    let n = cpu.vertex_count();
    match (**cpu)
        .clone()
        .with_rotation_centers(vec![skinblend::cor::NO_ROTATION_CENTER; n])
    {
        Ok(mesh) => Arc::new(mesh),
        Err(_) => cpu.clone(),
    }
}
