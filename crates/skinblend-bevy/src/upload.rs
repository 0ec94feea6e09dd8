//! The palette buffers on the GPU: every skinned entity's joints, one entity after another in
//! its method's buffer, uploaded once per frame.

use bevy::mesh::MeshTag;
use bevy::prelude::*;
use bevy::render::storage::ShaderBuffer;

use crate::cache::{method_index, SkinblendCache, JOINT_BYTES};
use crate::material::SkinblendMaterial;
use crate::skinned::SkinblendSkinned;

/// Each frame, after [`crate::frame::update_poses`]: every entity's GPU palette laid out one
/// entity after another in its method's buffer, its offset written to its `MeshTag`, and the
/// three buffers uploaded once (grown by doubling; a grown buffer makes the materials' bind
/// groups again).
pub(crate) fn upload_palettes(
    mut skinned: Query<(&SkinblendSkinned, &mut MeshTag)>,
    mut cache: ResMut<SkinblendCache>,
    mut buffers: ResMut<Assets<ShaderBuffer>>,
    mut materials: ResMut<Assets<SkinblendMaterial>>,
) {
    let cache = &mut *cache;
    for bytes in &mut cache.bytes {
        bytes.clear();
    }
    for (state, mut tag) in &mut skinned {
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
