//! The GPU path's device, dispatch and error cases: split dispatches against one, a mesh reused
//! across frames and methods, a renderer's device with WebGPU's default limits, and the errors
//! (CoR without centers, blended without blend values, a short palette, an empty mesh, a lost
//! device) that must be errors, not panics.
//!
//! Without an adapter these tests print why and pass, unless `SKINBLEND_REQUIRE_GPU=1` (CI sets
//! it, with lavapipe installed), in which case they fail.

mod common;

use common::random_rig::random_rig;
use common::{compare, cpu, gpu, max_relative, mesh_scale, GPU_VS_CPU};
use glam::Mat4;
use skinblend::{
    evidence, fixtures, prepare, BlendValues, Influences, Method, RunOptions, SkinError, SkinInput,
    SkinOptions,
};
use skinblend_gpu::{GpuError, GpuOptions, GpuSkinner};

fn split_dispatches_give_the_unsplit_result() {
    let Some(whole) = gpu(GpuOptions::default()) else {
        return;
    };
    let Some(split) = gpu(GpuOptions {
        max_vertices_per_dispatch: Some(256),
        ..GpuOptions::default()
    }) else {
        return;
    };
    // 1000 vertices with k = 3: chunks of 256, the last partial, odd joint-slot counts.
    let rig = random_rig(3, 1000, 3, 12, true);
    let input = rig.input(true, true);
    for method in Method::ALL {
        let options = SkinOptions {
            method,
            ..SkinOptions::default()
        };
        let palette = prepare(&rig.palette, Some(&rig.centers), &options).expect("palette");
        let mut a = whole.upload(&input).expect("upload");
        let mut b = split.upload(&input).expect("upload");
        assert_eq!(a.dispatch_count(), 1);
        assert_eq!(b.dispatch_count(), 4);
        let a = whole
            .skin_and_read_back(&mut a, &palette, RunOptions::default())
            .expect("skin");
        let b = split
            .skin_and_read_back(&mut b, &palette, RunOptions::default())
            .expect("skin");
        // Every vertex is computed by the same code either way: bit-identical.
        assert_eq!(a, b, "{}", method.name());
        compare(&split, &input, &palette, "split dispatch");
    }
}

fn reuses_a_mesh_across_frames_and_methods() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let fixture = fixtures::twist_fine();
    let centers = evidence::fixture_rotation_centers(&fixture).expect("centers");
    let blend = fixture.dq_blend_values();
    let input = SkinInput::new(
        &fixture.positions,
        Some(&fixture.normals),
        Some(&fixture.tangents),
        &fixture.influences,
    )
    .expect("input")
    .with_rotation_centers(&centers)
    .expect("centers")
    .with_blend_values(BlendValues::PerVertex(&blend))
    .expect("blend values");
    let mut mesh = gpu.upload(&input).expect("upload");
    assert!(mesh.has_blend_values());
    for angle_deg in [30.0, 170.0, 90.0] {
        for method in [
            Method::DualQuaternion,
            Method::Blended,
            Method::CenterOfRotation,
            Method::Linear,
        ] {
            let options = SkinOptions {
                method,
                ..SkinOptions::default()
            };
            let palette = prepare(
                &fixture.palette(angle_deg),
                Some(&fixture.joint_centers),
                &options,
            )
            .expect("palette");
            let on_gpu = gpu
                .skin_and_read_back(&mut mesh, &palette, RunOptions::default())
                .expect("skin");
            let on_cpu = cpu(&input, &palette);
            let worst = max_relative(&on_gpu, &on_cpu, mesh_scale(&fixture.positions));
            assert!(
                worst <= GPU_VS_CPU,
                "frame {angle_deg}° {}: {worst:e}",
                method.name()
            );
        }
    }
}

/// CoR on a mesh uploaded without centers, and blended without blend values: the method's own
/// error, and nothing to read back.
fn a_method_on_a_mesh_uploaded_without_its_input_is_an_error() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let rig = random_rig(4, 50, 2, 4, false);
    let input = SkinInput::new(&rig.positions, None, None, &rig.influences).expect("input");
    let cases = [
        (
            Method::CenterOfRotation,
            SkinError::MissingRotationCenters { vertex_count: 50 },
        ),
        (
            Method::Blended,
            SkinError::MissingBlendValues { vertex_count: 50 },
        ),
    ];
    for (method, expected) in cases {
        let mut mesh = gpu.upload(&input).expect("upload");
        assert!(!mesh.has_rotation_centers() && !mesh.has_blend_values());
        let options = SkinOptions {
            method,
            ..SkinOptions::default()
        };
        let palette = prepare(&rig.palette, None, &options).expect("palette");
        assert_eq!(
            gpu.skin(&mut mesh, &palette, RunOptions::default()),
            Err(GpuError::Skin(expected)),
            "{}",
            method.name()
        );
        assert_eq!(gpu.read_back(&mesh), Err(GpuError::NothingSkinned));
    }
}

fn a_device_with_webgpu_default_storage_buffers_skins_lbs_and_dqs_and_refuses_cor_and_blended() {
    let Some(reference) = gpu(GpuOptions::default()) else {
        return;
    };
    // A renderer's device created with WebGPU's default 8 storage buffers per stage: the CoR and
    // blended kernels' ninth (the centers, the blend values) does not fit.
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter =
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default()))
            .expect("the adapter the reference skinner opened");
    let required_limits = wgpu::Limits {
        max_storage_buffers_per_shader_stage: 8,
        ..adapter.limits()
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits,
        ..Default::default()
    }))
    .expect("device");
    let gpu = GpuSkinner::from_device(device, queue, adapter.get_info(), None).expect("skinner");
    assert!(!gpu.supports(Method::CenterOfRotation) && !gpu.supports(Method::Blended));
    assert!(gpu.supports(Method::Linear) && gpu.supports(Method::DualQuaternion));
    assert!(reference.supports(Method::CenterOfRotation) && reference.supports(Method::Blended));
    let rig = random_rig(6, 300, 4, 8, true);
    let input = rig.input(true, true);
    for method in Method::ALL {
        let options = SkinOptions {
            method,
            ..SkinOptions::default()
        };
        let palette = prepare(&rig.palette, Some(&rig.centers), &options).expect("palette");
        if matches!(method, Method::CenterOfRotation | Method::Blended) {
            let mut mesh = gpu.upload(&input).expect("upload");
            let error = gpu
                .skin(&mut mesh, &palette, RunOptions::default())
                .expect_err("no CoR or blended kernel");
            assert!(
                matches!(error, GpuError::UnsuitableAdapter { needed: 9, .. }),
                "{error}"
            );
        } else {
            compare(
                &gpu,
                &input,
                &palette,
                &format!("8 storage buffers, {}", method.name()),
            );
        }
    }
}

fn a_short_palette_is_an_error_not_a_panic() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let rig = random_rig(1, 10, 2, 5, false);
    let input = SkinInput::new(&rig.positions, None, None, &rig.influences).expect("input");
    let mut mesh = gpu.upload(&input).expect("upload");
    let palette = prepare(&rig.palette[..3], None, &SkinOptions::default()).expect("palette");
    let error = gpu
        .skin(&mut mesh, &palette, RunOptions::default())
        .expect_err("palette too short");
    assert_eq!(
        error,
        GpuError::Skin(SkinError::PaletteLength {
            expected: 5,
            found: 3
        })
    );
    assert_eq!(gpu.read_back(&mesh), Err(GpuError::NothingSkinned));
}

fn an_empty_mesh_skins_to_nothing() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let influences = Influences::new(4, Vec::new(), Vec::new(), 2).expect("influences");
    let input = SkinInput::new(&[], None, None, &influences).expect("input");
    let mut mesh = gpu.upload(&input).expect("upload");
    let palette = prepare(&[Mat4::IDENTITY; 2], None, &SkinOptions::default()).expect("palette");
    let skinned = gpu
        .skin_and_read_back(&mut mesh, &palette, RunOptions::default())
        .expect("skin");
    assert!(skinned.positions.is_empty());
    assert_eq!(mesh.dispatch_count(), 0);
    // Blended with one value for the (empty) mesh: nothing to upload, nothing to skin.
    let input = SkinInput::new(&[], None, None, &influences)
        .expect("input")
        .with_blend_values(BlendValues::Uniform(0.5))
        .expect("blend value");
    let mut mesh = gpu.upload(&input).expect("upload");
    assert!(mesh.has_blend_values());
    let options = SkinOptions {
        method: Method::Blended,
        ..SkinOptions::default()
    };
    let palette = prepare(&[Mat4::IDENTITY; 2], None, &options).expect("palette");
    let skinned = gpu
        .skin_and_read_back(&mut mesh, &palette, RunOptions::default())
        .expect("skin blended");
    assert!(skinned.positions.is_empty());
}

fn a_lost_device_is_an_error_not_a_panic() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let rig = random_rig(2, 100, 2, 4, false);
    let input = SkinInput::new(&rig.positions, None, None, &rig.influences).expect("input");
    let mut mesh = gpu.upload(&input).expect("upload");
    let palette = prepare(&rig.palette, None, &SkinOptions::default()).expect("palette");
    gpu.device().destroy();
    let error = gpu
        .skin_and_read_back(&mut mesh, &palette, RunOptions::default())
        .expect_err("destroyed device");
    assert!(
        matches!(error, GpuError::DeviceLost { .. } | GpuError::Wgpu { .. }),
        "{error}"
    );
}

skinblend_testkit::test_main!(
    split_dispatches_give_the_unsplit_result,
    reuses_a_mesh_across_frames_and_methods,
    a_method_on_a_mesh_uploaded_without_its_input_is_an_error,
    a_device_with_webgpu_default_storage_buffers_skins_lbs_and_dqs_and_refuses_cor_and_blended,
    a_short_palette_is_an_error_not_a_panic,
    an_empty_mesh_skins_to_nothing,
    a_lost_device_is_an_error_not_a_panic,
);
