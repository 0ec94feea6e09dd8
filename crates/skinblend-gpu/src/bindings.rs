//! The compute kernels' interface as the CPU sees it: the workgroup size, the storage bindings
//! a device needs, the bind group layout of `shaders/compute.wgsl`, the per-chunk uniform and
//! its flags, and the sizes of the counters and of the smallest buffer. The device builds its
//! pipelines with this layout (`device.rs`), a mesh its bind groups (`mesh.rs`), a frame its
//! dispatches (`dispatch.rs`).

use std::num::NonZeroU64;

use bytemuck::{Pod, Zeroable};

/// Invocations per workgroup of the compute kernels (`@workgroup_size(64)` in the WGSL): a
/// multiple of every vendor's SIMD width (32 or 64) and small enough for any device.
pub const WORKGROUP_SIZE: u32 = 64;

/// Storage bindings the LBS and DQS kernels use in one stage (bindings 1 to 8 of
/// `shaders/compute.wgsl`); WebGPU's default limit is exactly this.
pub(crate) const STORAGE_BINDINGS: u32 = 8;

/// Storage bindings the CoR and blended kernels use in one stage: the eight above and the
/// method's per-vertex extra (binding 9: CoR's centers of rotation, blended's blend values). A
/// device with fewer skins LBS and DQS but refuses CoR and blended with
/// [`crate::GpuError::UnsuitableAdapter`].
pub(crate) const EXTRAS_STORAGE_BINDINGS: u32 = 9;

/// The smallest buffer the crate creates: bindings may not be empty, and 16 bytes holds one
/// `vec4` (the dummy tangent buffer of a mesh without tangents).
pub(crate) const MIN_BUFFER_BYTES: u64 = 16;

/// The per-chunk uniform `SkinParams` of `shaders/compute.wgsl`: 16 bytes, four u32.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Params {
    pub(crate) vertex_count: u32,
    pub(crate) influences_per_vertex: u32,
    pub(crate) flags: u32,
    pub(crate) output_stride: u32,
}

const FLAG_NORMALS: u32 = 1;
const FLAG_TANGENTS: u32 = 2;
const FLAG_RENORMALIZE: u32 = 4;

/// The counters of `SkinCounters` in `shaders/compute.wgsl`: three u32 atomics, padded to 16.
pub(crate) const COUNTER_BYTES: u64 = 16;

/// The `flags` of [`Params`].
pub(crate) fn params_flags(normals: bool, tangents: bool, renormalize: bool) -> u32 {
    let mut flags = 0;
    if normals {
        flags |= FLAG_NORMALS;
    }
    if tangents {
        flags |= FLAG_TANGENTS;
    }
    if renormalize {
        flags |= FLAG_RENORMALIZE;
    }
    flags
}

/// The layout of `shaders/compute.wgsl`'s bindings (see the table there), binding 9 (the CoR
/// kernel's centers, the blended kernel's blend values) last so that a device without those
/// kernels can leave it off.
pub(crate) fn bind_group_layout_entries() -> [wgpu::BindGroupLayoutEntry; 10] {
    let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    [
        wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: NonZeroU64::new(std::mem::size_of::<Params>() as u64),
            },
            count: None,
        },
        storage(1, true),
        storage(2, true),
        storage(3, true),
        storage(4, true),
        storage(5, true),
        storage(6, false),
        storage(7, false),
        storage(8, true),
        storage(9, true),
    ]
}
