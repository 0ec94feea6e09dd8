//! The WGSL functions for users' own shaders (`skin_linear_blend4`, `skin_dual_quat_blend4`,
//! `skin_cor_blend4`, `skin_blended_blend4` and their point/normal/tangent functions, the palette
//! declared by `linear_skinning_wgsl` / `dual_quat_skinning_wgsl` / `cor_skinning_wgsl` /
//! `blended_skinning_wgsl`) against the CPU reference, in a shader laid out as a user would write
//! it: four influences per vertex as `vec4<u32>` / `vec4<f32>`, for CoR the center as a
//! `vec4<f32>` (w = has one), for blended the blend value as an `f32` (0, 1, ½ and between).
//!
//! Skips without an adapter unless `SKINBLEND_REQUIRE_GPU=1`.

mod common;

use common::{gpu, GPU_VS_CPU};
use glam::{Mat4, Quat, Vec3, Vec4};
use skinblend::{
    cor, prepare, skin, BlendValues, DualQuat, Influences, Method, PreparedPalette, SkinInput,
    SkinOptions, Skinned,
};
use skinblend_gpu::{
    blended_skinning_wgsl, cor_skinning_wgsl, dual_quat_skinning_wgsl, gpu_rotation_centers,
    linear_skinning_wgsl, GpuOptions, GpuPalette, GpuSkinner,
};
use wgpu::util::DeviceExt;

/// The user's shader: the library, then their own bindings and entry point.
const USER_SHADER: &str = r"
struct UserVertex {
    position: vec4<f32>,
    normal: vec4<f32>,
    tangent: vec4<f32>,
    joints: vec4<u32>,
    weights: vec4<f32>,
    center: vec4<f32>,
    blend: f32,
}
@group(0) @binding(1) var<storage, read> vertices: array<UserVertex>;
@group(0) @binding(2) var<storage, read_write> skinned: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= arrayLength(&vertices) {
        return;
    }
    let v = vertices[i];
    BODY
}
";

const LINEAR_BODY: &str = r"
    let m = skin_linear_blend4(v.joints, v.weights);
    skinned[3u * i] = vec4<f32>(skin_affine_point(m, v.position.xyz), 1.0);
    skinned[3u * i + 1u] = vec4<f32>(skin_linear_normal(m, v.normal.xyz), 0.0);
    skinned[3u * i + 2u] = skin_linear_tangent(m, v.tangent);
";

const DUAL_QUAT_BODY: &str = r"
    let b = skin_dual_quat_blend4(v.joints, v.weights);
    skinned[3u * i] = vec4<f32>(skin_dual_quat_blend_point(b, v.position.xyz), 1.0);
    skinned[3u * i + 1u] = vec4<f32>(skin_dual_quat_blend_normal(b, v.normal.xyz), 0.0);
    skinned[3u * i + 2u] = skin_dual_quat_blend_tangent(b, v.tangent);
";

const COR_BODY: &str = r"
    let b = skin_cor_blend4(v.joints, v.weights, v.center);
    skinned[3u * i] = vec4<f32>(skin_dual_quat_blend_point(b, v.position.xyz), 1.0);
    skinned[3u * i + 1u] = vec4<f32>(skin_dual_quat_blend_normal(b, v.normal.xyz), 0.0);
    skinned[3u * i + 2u] = skin_dual_quat_blend_tangent(b, v.tangent);
";

const BLENDED_BODY: &str = r"
    let b = skin_blended_blend4(v.joints, v.weights, v.blend);
    skinned[3u * i] = vec4<f32>(skin_blended_point(b, v.position.xyz), 1.0);
    skinned[3u * i + 1u] = vec4<f32>(skin_blended_normal(b, v.normal.xyz), 0.0);
    skinned[3u * i + 2u] = skin_blended_tangent(b, v.tangent);
";

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct UserVertex {
    position: [f32; 4],
    normal: [f32; 4],
    tangent: [f32; 4],
    joints: [u32; 4],
    weights: [f32; 4],
    center: [f32; 4],
    /// WGSL `blend: f32`, then the padding up to the struct's 16-byte alignment.
    blend: f32,
    padding: [f32; 3],
}

/// Runs the user shader for `method` and returns positions, normals, tangents.
fn run_user_shader(
    gpu: &GpuSkinner,
    method: Method,
    palette: &PreparedPalette,
    vertices: &[UserVertex],
) -> Vec<[f32; 4]> {
    let device = gpu.device();
    let source = match method {
        Method::Linear => linear_skinning_wgsl(0, 0) + &USER_SHADER.replace("BODY", LINEAR_BODY),
        Method::DualQuaternion => {
            dual_quat_skinning_wgsl(0, 0) + &USER_SHADER.replace("BODY", DUAL_QUAT_BODY)
        }
        Method::CenterOfRotation => {
            cor_skinning_wgsl(0, 0) + &USER_SHADER.replace("BODY", COR_BODY)
        }
        Method::Blended => blended_skinning_wgsl(0, 0) + &USER_SHADER.replace("BODY", BLENDED_BODY),
    };
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("user shader"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("user pipeline"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let gpu_palette = GpuPalette::from_prepared(palette, None).expect("palette");
    let storage = wgpu::BufferUsages::STORAGE;
    let palette_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("user palette"),
        contents: gpu_palette.bytes(),
        usage: storage,
    });
    let vertex_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("user vertices"),
        contents: bytemuck::cast_slice(vertices),
        usage: storage,
    });
    let out_bytes = (vertices.len() * 48) as u64;
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("user output"),
        size: out_bytes,
        usage: storage | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("user readback"),
        size: out_bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("user bind group"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: palette_buffer.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: vertex_buffer.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: output.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups((vertices.len() as u32).div_ceil(64), 1, 1);
    }
    encoder.copy_buffer_to_buffer(&output, 0, &staging, 0, out_bytes);
    gpu.queue().submit([encoder.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |result| result.expect("map"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let view = staging.get_mapped_range(..).expect("mapped");
    bytemuck::cast_slice(&view).to_vec()
}

fn blend4_functions_in_a_user_shader_match_the_cpu() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    // 500 vertices, four influences over 8 joints (one slot often zero, vertex 7 unweighted).
    let joints = 8;
    let mut state = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let n = 500;
    let mut positions = Vec::new();
    let mut normals = Vec::new();
    let mut tangents = Vec::new();
    let mut joint_indices = Vec::new();
    let mut weights = Vec::new();
    let mut rotation_centers = Vec::new();
    // Blend values: 0 (LBS), 1 (DQS), ½ (the handedness switch) and values between.
    let mut blend_values = Vec::new();
    for v in 0..n {
        blend_values.push(match v % 5 {
            0 => 0.0,
            1 => 1.0,
            2 => 0.5,
            // Between, without drawing from `next` (the rest of the mesh stays as it was).
            _ => ((v * 37) % 100 + 1) as f32 / 101.0,
        });
        let position = Vec3::new(next(), next() * 2.0, next()) - 0.5;
        positions.push(position);
        // Every seventh vertex has no center of rotation (CoR skins it by DQS).
        rotation_centers.push(if v % 7 == 3 {
            cor::NO_ROTATION_CENTER
        } else {
            position + (Vec3::new(next(), next(), next()) - 0.5) * 0.4
        });
        let normal = (Vec3::new(next(), next(), next()) - 0.5).normalize_or(Vec3::Y);
        normals.push(normal);
        tangents.push(normal.any_orthonormal_vector().extend(1.0));
        for slot in 0..4 {
            joint_indices.push((next() * joints as f32) as u16 % joints as u16);
            let zero = v == 7 || (slot == 3 && next() < 0.5);
            weights.push(if zero { 0.0 } else { 0.05 + next() });
        }
    }
    let influences = Influences::new(4, joint_indices, weights, joints).expect("influences");
    let input = SkinInput::new(&positions, Some(&normals), Some(&tangents), &influences)
        .expect("input")
        .with_rotation_centers(&rotation_centers)
        .expect("centers")
        .with_blend_values(BlendValues::PerVertex(&blend_values))
        .expect("blend values");
    let gpu_centers = gpu_rotation_centers(&rotation_centers);
    let user_vertices: Vec<UserVertex> = (0..n)
        .map(|v| {
            let (j, w) = influences.vertex(v).expect("vertex");
            UserVertex {
                position: positions[v].extend(1.0).to_array(),
                normal: normals[v].extend(0.0).to_array(),
                tangent: tangents[v].to_array(),
                joints: [0, 1, 2, 3].map(|s| u32::from(j[s])),
                weights: [w[0], w[1], w[2], w[3]],
                center: gpu_centers[v],
                blend: blend_values[v],
                padding: [0.0; 3],
            }
        })
        .collect();
    // A palette with scale, shear and mirror (the residual path) and one with opposite signs.
    let palette: Vec<Mat4> = (0..joints)
        .map(|j| {
            let rigid = Mat4::from_rotation_translation(
                Quat::from_axis_angle(Vec3::new(1.0, next(), next()).normalize(), next() * 6.0),
                Vec3::new(next(), next(), next()),
            );
            match j % 4 {
                1 => rigid * Mat4::from_scale(Vec3::new(1.3, 0.8, 1.0)),
                3 => rigid * Mat4::from_scale(Vec3::new(1.0, -1.0, 1.0)),
                _ => rigid,
            }
        })
        .collect();
    let centers: Vec<Vec3> = (0..joints).map(|j| Vec3::Y * j as f32 * 0.2).collect();
    let mut worst = 0f32;
    for method in Method::ALL {
        // The CPU's scalar reference kernel (the SIMD kernels differ from it by rounding).
        let options = SkinOptions {
            method,
            simd: false,
            ..SkinOptions::default()
        };
        let prepared = prepare(&palette, Some(&centers), &options).expect("prepare");
        let cpu = skin(&input, &palette, Some(&centers), &options).expect("cpu");
        let out = run_user_shader(&gpu, method, &prepared, &user_vertices);
        worst = worst.max(check(&cpu, &out, method));
    }
    // Rigid motions stored with alternating signs: blend4 aligns them as the CPU does.
    let motions: Vec<DualQuat> = (0..joints)
        .map(|j| {
            let dq = DualQuat::from_rotation_translation(
                Quat::from_rotation_y(j as f32 * 0.7),
                Vec3::X * j as f32,
            );
            if j % 2 == 1 {
                dq.negated()
            } else {
                dq
            }
        })
        .collect();
    for method in [
        Method::DualQuaternion,
        Method::CenterOfRotation,
        Method::Blended,
    ] {
        // The CPU's scalar reference kernel (the SIMD kernels differ from it by rounding).
        let options = SkinOptions {
            method,
            simd: false,
            ..SkinOptions::default()
        };
        let prepared = PreparedPalette::from_dual_quats(&motions, &options).expect("palette");
        let mut positions_out = vec![Vec3::ZERO; n];
        let mut normals_out = vec![Vec3::ZERO; n];
        let mut tangents_out = vec![Vec4::ZERO; n];
        let diagnostics = skinblend::skin_into(
            &input,
            &prepared,
            skinblend::SkinOutputs {
                positions: &mut positions_out,
                normals: Some(&mut normals_out),
                tangents: Some(&mut tangents_out),
            },
            options.run_options(),
        )
        .expect("cpu");
        assert!(diagnostics.sign_flips > 0);
        let cpu = Skinned {
            positions: positions_out,
            normals: Some(normals_out),
            tangents: Some(tangents_out),
            diagnostics,
        };
        let out = run_user_shader(&gpu, method, &prepared, &user_vertices);
        worst = worst.max(check(&cpu, &out, method));
    }
    println!("WGSL library (blend4): max relative GPU vs CPU difference {worst:e}");
}

fn check(cpu: &Skinned, out: &[[f32; 4]], method: Method) -> f32 {
    let mut worst = 0f32;
    let normals = cpu.normals.as_ref().expect("normals");
    let tangents = cpu.tangents.as_ref().expect("tangents");
    for (v, p) in cpu.positions.iter().enumerate() {
        let got_p = Vec4::from(out[3 * v]).truncate();
        let got_n = Vec4::from(out[3 * v + 1]).truncate();
        let got_t = Vec4::from(out[3 * v + 2]);
        let dp = (got_p - *p).length() / p.length().max(1.0);
        let dn = (got_n - normals[v]).length();
        let dt = (got_t - tangents[v]).length();
        // A NaN counts as infinitely far (`f32::max` would drop it).
        let d = [dp, dn, dt]
            .into_iter()
            .map(|d| if d.is_nan() { f32::INFINITY } else { d })
            .fold(0.0, f32::max);
        assert!(
            d <= GPU_VS_CPU,
            "{} vertex {v}: position {got_p} vs {p}, normal {got_n} vs {}, tangent {got_t} vs {}",
            method.name(),
            normals[v],
            tangents[v]
        );
        worst = worst.max(d);
    }
    worst
}

skinblend_testkit::test_main!(blend4_functions_in_a_user_shader_match_the_cpu,);
