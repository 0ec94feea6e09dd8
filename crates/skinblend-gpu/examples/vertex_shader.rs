//! Dual quaternion skinning in your own vertex shader with skinblend's WGSL functions.
//!
//! Renders the seed's cylinder (`twist_coarse`) twisted by 180° off-screen, skinned per vertex by
//! `skin_dual_quat_blend4` in a vertex shader, and writes `twist_dq.ppm` to the temporary
//! directory. The palette is prepared on the CPU by `skinblend::prepare` and uploaded with
//! `GpuPalette`, exactly as the compute path does.
//!
//! Binding layout of this shader: `@group(0) @binding(0)` the DQS palette (declared by
//! `dual_quat_skinning_wgsl(0, 0)`: a read-only storage buffer of `GpuDualQuatJoint`, 96 bytes
//! per joint, visible to the vertex stage); `@group(0) @binding(1)` a uniform `mat4x4<f32>`
//! clip-from-world matrix. Vertex buffer: position (vec3), normal (vec3), joints (vec4<u32>),
//! weights (vec4<f32>), 56 bytes per vertex.
//!
//! Run: `cargo run -p skinblend-gpu --example vertex_shader`

use glam::{Mat4, Quat, Vec4};
use skinblend::{fixtures, prepare, Method, SkinOptions};
use skinblend_gpu::{dual_quat_skinning_wgsl, GpuPalette, GpuSkinner};
use wgpu::util::DeviceExt;

const SIZE: u32 = 128;

/// The user's own shader; everything named `skin_*` comes from skinblend.
const SHADER: &str = r"
@group(0) @binding(1) var<uniform> clip_from_world: mat4x4<f32>;

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) joints: vec4<u32>,
    @location(3) weights: vec4<f32>,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
}

@vertex
fn vs_main(v: VertexIn) -> VertexOut {
    let blend = skin_dual_quat_blend4(v.joints, v.weights);
    let world = skin_dual_quat_blend_point(blend, v.position);
    let normal = skin_dual_quat_blend_normal(blend, v.normal);
    return VertexOut(clip_from_world * vec4<f32>(world, 1.0), normal);
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    let light = max(abs(dot(normalize(in.normal), normalize(vec3<f32>(0.4, 0.3, 1.0)))), 0.15);
    return vec4<f32>(light, light * 0.8, light * 0.6, 1.0);
}
";

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Vertex {
    position: [f32; 3],
    normal: [f32; 3],
    joints: [u32; 4],
    weights: [f32; 4],
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let gpu = GpuSkinner::new()?;
    let (device, queue) = (gpu.device(), gpu.queue());
    let rig = fixtures::twist_coarse();
    let k = rig.influences.influences_per_vertex();

    // glTF-style vertices: four influence slots, unused ones with weight 0.
    let vertices: Vec<Vertex> = (0..rig.positions.len())
        .map(|v| {
            let (joints, weights) = rig.influences.vertex(v).unwrap_or((&[], &[]));
            let mut vertex = Vertex {
                position: rig.positions[v].to_array(),
                normal: rig.normals[v].to_array(),
                joints: [0; 4],
                weights: [0.0; 4],
            };
            for slot in 0..k.min(4) {
                vertex.joints[slot] = u32::from(joints[slot]);
                vertex.weights[slot] = weights[slot];
            }
            vertex
        })
        .collect();
    let indices: Vec<u32> = rig.triangles.iter().flatten().copied().collect();

    // Per frame: prepare on the CPU (the core's split), upload in GPU layout.
    let options = SkinOptions {
        method: Method::DualQuaternion,
        ..SkinOptions::default()
    };
    let prepared = prepare(&rig.palette(180.0), Some(&rig.joint_centers), &options)?;
    let palette = GpuPalette::from_prepared(&prepared, None)?;

    // Orthographic, looking at the cylinder (y in 0..2) from 45° around +Y: x, y to [-1, 1],
    // depth to [0, 1].
    let camera = Mat4::from_cols(
        Vec4::new(0.8, 0.0, 0.0, 0.0),
        Vec4::new(0.0, 0.8, 0.0, 0.0),
        Vec4::new(0.0, 0.0, -0.2, 0.0),
        Vec4::new(0.0, -0.8, 0.5, 1.0),
    ) * Mat4::from_quat(Quat::from_rotation_y(std::f32::consts::FRAC_PI_4));
    let buffer = |label, contents: &[u8], usage| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    let palette_buffer = buffer("palette", palette.bytes(), wgpu::BufferUsages::STORAGE);
    let camera_buffer = buffer(
        "camera",
        bytemuck::cast_slice(&camera.to_cols_array()),
        wgpu::BufferUsages::UNIFORM,
    );
    let vertex_buffer = buffer(
        "vertices",
        bytemuck::cast_slice(&vertices),
        wgpu::BufferUsages::VERTEX,
    );
    let index_buffer = buffer(
        "indices",
        bytemuck::cast_slice(&indices),
        wgpu::BufferUsages::INDEX,
    );

    let source = dual_quat_skinning_wgsl(0, 0) + SHADER;
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("skinned mesh"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let format = wgpu::TextureFormat::Rgba8Unorm;
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("skinned mesh"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs_main"),
            compilation_options: Default::default(),
            buffers: &[Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<Vertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![
                    0 => Float32x3, 1 => Float32x3, 2 => Uint32x4, 3 => Float32x4
                ],
            })],
        },
        primitive: wgpu::PrimitiveState::default(),
        depth_stencil: None,
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs_main"),
            compilation_options: Default::default(),
            targets: &[Some(format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("skinning"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: palette_buffer.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: camera_buffer.as_entire_binding(),
            },
        ],
    });

    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("image"),
        size: wgpu::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = target.create_view(&Default::default());
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("image readback"),
        size: u64::from(SIZE * SIZE * 4),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("draw"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Store,
                },
            })],
            ..Default::default()
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.set_vertex_buffer(0, vertex_buffer.slice(..));
        pass.set_index_buffer(index_buffer.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..indices.len() as u32, 0, 0..1);
    }
    encoder.copy_texture_to_buffer(
        target.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(SIZE * 4),
                rows_per_image: Some(SIZE),
            },
        },
        wgpu::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
    );
    queue.submit([encoder.finish()]);
    readback.map_async(wgpu::MapMode::Read, .., |_| {});
    device.poll(wgpu::PollType::wait_indefinitely())?;
    let pixels = readback.get_mapped_range(..)?;
    let covered = pixels.chunks_exact(4).filter(|p| p[0] > 0).count();
    let mut ppm = format!("P6\n{SIZE} {SIZE}\n255\n").into_bytes();
    for p in pixels.chunks_exact(4) {
        ppm.extend_from_slice(&p[..3]);
    }
    let path = std::env::temp_dir().join("twist_dq.ppm");
    std::fs::write(&path, ppm)?;
    println!(
        "{}: the 180° twist, skinned by skin_dual_quat_blend4 in a vertex shader, covers {covered} \
         of {} pixels; image written to {}",
        gpu.adapter_info().name,
        SIZE * SIZE,
        path.display()
    );
    if covered == 0 {
        return Err("nothing was drawn".into());
    }
    Ok(())
}
