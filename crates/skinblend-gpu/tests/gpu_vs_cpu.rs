//! The GPU kernels against the CPU scalar reference: every core fixture at the evidence angles,
//! the antipodal (negated dual quaternion) palettes, random rigs with 1, 2, 4 and 8 influences,
//! split dispatches, diagnostics, and the errors; every method (LBS, DQS, CoR), CoR with the
//! fixtures' own centers of rotation and, on the random rigs, with every fifth vertex without
//! a center (NaN, skinned by DQS).
//!
//! Without an adapter these tests print why and pass, unless `SKINBLEND_REQUIRE_GPU=1` (CI sets
//! it, with lavapipe installed), in which case they fail.

use glam::{Mat4, Quat, Vec3, Vec4};
use skinblend::{
    cor, evidence, fixtures, prepare, skin_into, DualQuat, Influences, Method, PreparedPalette,
    RunOptions, SkinError, SkinInput, SkinOptions, SkinOutputs, Skinned,
};
use skinblend_gpu::{GpuError, GpuOptions, GpuSkinner};

/// GPU against CPU, relative: both are f32 with a different operation order (and FMA on the
/// GPU), a few dozen operations deep; 1e-5 is about a hundred f32 ulps, well above that
/// round-off and far below any semantic difference (a wrong sign, pivot or residual moves a
/// vertex by a sizeable fraction of the mesh).
const GPU_VS_CPU: f32 = 1e-5;

/// The least CoR must move some vertex away from DQS (relative to the mesh size) on the random
/// rigs: their centers sit up to 0.5 from the vertex and their joints turn by up to 3.1 rad, so a
/// working center moves vertices by a good fraction of the mesh; 1e-2 is a thousand times
/// [`GPU_VS_CPU`], so round-off cannot pass for it.
const COR_MOVES_AT_LEAST: f32 = 1e-2;

/// The skinner, or `None` (with a message) when there is no adapter and the GPU is not required.
fn gpu(options: GpuOptions) -> Option<GpuSkinner> {
    match GpuSkinner::with_options(options) {
        Ok(gpu) => Some(gpu),
        Err(error) => {
            skinblend_testkit::skip_without_gpu(error);
            None
        }
    }
}

/// The CPU's scalar reference kernel (the SIMD kernels differ from it by rounding).
fn cpu(input: &SkinInput<'_>, palette: &PreparedPalette) -> Skinned {
    let n = input.vertex_count();
    let mut positions = vec![Vec3::ZERO; n];
    let mut normals = input.normals().map(|_| vec![Vec3::ZERO; n]);
    let mut tangents = input.tangents().map(|_| vec![Vec4::ZERO; n]);
    let diagnostics = skin_into(
        input,
        palette,
        SkinOutputs {
            positions: &mut positions,
            normals: normals.as_deref_mut(),
            tangents: tangents.as_deref_mut(),
        },
        RunOptions {
            simd: false,
            ..RunOptions::default()
        },
    )
    .expect("CPU skinning");
    Skinned {
        positions,
        normals,
        tangents,
        diagnostics,
    }
}

/// The largest |gpu − cpu| / max(|cpu|, scale) over all vertices and attributes; `scale` is the
/// mesh's size for positions (so points near the origin are judged against the mesh, not
/// against zero) and 1 for the unit normals and tangents. A NaN on either side counts as
/// infinitely far (`f32::max` would drop it and let a NaN output pass).
fn max_relative(gpu: &Skinned, cpu: &Skinned, scale: f32) -> f32 {
    let mut worst = 0f32;
    let rel = |a: Vec4, b: Vec4, floor: f32| {
        let difference = (a - b).length() / b.length().max(floor);
        if difference.is_nan() {
            f32::INFINITY
        } else {
            difference
        }
    };
    for (g, c) in gpu.positions.iter().zip(&cpu.positions) {
        worst = worst.max(rel(g.extend(0.0), c.extend(0.0), scale));
    }
    if let (Some(g), Some(c)) = (&gpu.normals, &cpu.normals) {
        for (g, c) in g.iter().zip(c) {
            worst = worst.max(rel(g.extend(0.0), c.extend(0.0), 1.0));
        }
    }
    if let (Some(g), Some(c)) = (&gpu.tangents, &cpu.tangents) {
        for (g, c) in g.iter().zip(c) {
            worst = worst.max(rel(*g, *c, 1.0));
        }
    }
    worst
}

fn mesh_scale(positions: &[Vec3]) -> f32 {
    positions
        .iter()
        .fold(0f32, |m, p| m.max(p.length()))
        .max(1e-6)
}

/// Skins on both and asserts agreement (attributes, lengths and diagnostics); returns the
/// largest relative difference.
fn compare(gpu: &GpuSkinner, input: &SkinInput<'_>, palette: &PreparedPalette, what: &str) -> f32 {
    let mut mesh = gpu.upload(input).expect("upload");
    let on_gpu = gpu
        .skin_and_read_back(&mut mesh, palette, RunOptions::default())
        .expect("GPU skinning");
    let on_cpu = cpu(input, palette);
    assert_eq!(on_gpu.positions.len(), on_cpu.positions.len(), "{what}");
    assert_eq!(on_gpu.normals.is_some(), on_cpu.normals.is_some(), "{what}");
    assert_eq!(
        on_gpu.tangents.is_some(),
        on_cpu.tangents.is_some(),
        "{what}"
    );
    assert_eq!(
        on_gpu.diagnostics, on_cpu.diagnostics,
        "{what}: diagnostics"
    );
    let worst = max_relative(&on_gpu, &on_cpu, mesh_scale(input.positions()));
    assert!(
        worst <= GPU_VS_CPU,
        "{what}: GPU differs from CPU by {worst:e} relative (allowed {GPU_VS_CPU:e})"
    );
    worst
}

fn every_fixture_at_every_evidence_angle_matches_the_cpu() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let mut worst = 0f32;
    let mut worst_cor = 0f32;
    let mut cases = 0;
    for fixture in fixtures::all() {
        let centers = evidence::fixture_rotation_centers(&fixture).expect("centers");
        let input = SkinInput::new(
            &fixture.positions,
            Some(&fixture.normals),
            Some(&fixture.tangents),
            &fixture.influences,
        )
        .expect("fixture input")
        .with_rotation_centers(&centers)
        .expect("centers");
        for &angle_deg in evidence::angles_deg(&fixture) {
            for method in Method::ALL {
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
                let what = format!("{} at {angle_deg}° with {}", fixture.name, method.name());
                let difference = compare(&gpu, &input, &palette, &what);
                worst = worst.max(difference);
                if method == Method::CenterOfRotation {
                    worst_cor = worst_cor.max(difference);
                }
                cases += 1;
            }
        }
    }
    assert!(
        cases >= 45,
        "only {cases} cases: fixtures or angles missing"
    );
    println!(
        "fixtures: {cases} cases, max relative GPU vs CPU difference {worst:e} (CoR: {worst_cor:e})"
    );
}

fn shear_cap_has_residuals_and_singular_lbs_normals_on_both() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    // The test above would pass vacuously if the residual path never ran: make sure it does.
    let fixture = fixtures::shear_cap();
    let input = SkinInput::new(
        &fixture.positions,
        Some(&fixture.normals),
        Some(&fixture.tangents),
        &fixture.influences,
    )
    .expect("input");
    let options = SkinOptions {
        method: Method::DualQuaternion,
        ..SkinOptions::default()
    };
    let palette = prepare(
        &fixture.palette(90.0),
        Some(&fixture.joint_centers),
        &options,
    )
    .expect("palette");
    assert!(palette.non_rigid_joints() > 0);
    let mut mesh = gpu.upload(&input).expect("upload");
    let skinned = gpu
        .skin_and_read_back(&mut mesh, &palette, RunOptions::default())
        .expect("skin");
    assert!(skinned.diagnostics.non_rigid_joints > 0);
    compare(&gpu, &input, &palette, "shear_cap DQS at 90°");

    // LBS at the 180° twist: the joint ring's blended 3x3 is singular, counted on both sides.
    let twist = fixtures::twist_coarse();
    let input = SkinInput::new(
        &twist.positions,
        Some(&twist.normals),
        Some(&twist.tangents),
        &twist.influences,
    )
    .expect("input");
    let palette = prepare(&twist.palette(180.0), None, &SkinOptions::default()).expect("palette");
    let mut mesh = gpu.upload(&input).expect("upload");
    let skinned = gpu
        .skin_and_read_back(&mut mesh, &palette, RunOptions::default())
        .expect("skin");
    assert_eq!(
        skinned.diagnostics.singular_normal_matrices,
        twist.joint_ring.len()
    );
}

/// A random rigid motion from a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        // xorshift64*: deterministic, no dependency.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        bits as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, low: f32, high: f32) -> f32 {
        low + (high - low) * self.next()
    }

    fn unit(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            if let Some(u) = v.try_normalize() {
                if v.length() > 0.1 {
                    return u;
                }
            }
        }
    }

    fn rotation(&mut self) -> Quat {
        Quat::from_axis_angle(self.unit(), self.range(-3.1, 3.1))
    }
}

struct RandomRig {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
    influences: Influences,
    palette: Vec<Mat4>,
    centers: Vec<Vec3>,
    /// Per-vertex centers of rotation: a point near the vertex, or none (NaN) for every fifth.
    rotation_centers: Vec<Vec3>,
}

impl RandomRig {
    /// The rig's input with normals and tangents as asked and its centers of rotation.
    fn input(&self, normals: bool, tangents: bool) -> SkinInput<'_> {
        SkinInput::new(
            &self.positions,
            normals.then_some(&self.normals[..]),
            tangents.then_some(&self.tangents[..]),
            &self.influences,
        )
        .expect("input")
        .with_rotation_centers(&self.rotation_centers)
        .expect("rotation centers")
    }
}

/// `vertices` vertices with `k` influences over `joints` joints; some vertices unweighted, some
/// slots zero; the palette mixes rigid, scaled, sheared and mirrored joints when `non_rigid`.
fn random_rig(seed: u64, vertices: usize, k: usize, joints: usize, non_rigid: bool) -> RandomRig {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    // The centers draw from their own generator, so the rest of the rig is what it was before
    // CoR was tested here.
    let mut center_rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1);
    let mut joint_indices = Vec::with_capacity(vertices * k);
    let mut weights = Vec::with_capacity(vertices * k);
    let mut positions = Vec::with_capacity(vertices);
    let mut normals = Vec::with_capacity(vertices);
    let mut tangents = Vec::with_capacity(vertices);
    let mut rotation_centers = Vec::with_capacity(vertices);
    for v in 0..vertices {
        let position = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(0.0, 2.0),
            rng.range(-1.0, 1.0),
        );
        positions.push(position);
        rotation_centers.push(if v % 5 == 2 {
            cor::NO_ROTATION_CENTER
        } else {
            position + center_rng.unit() * center_rng.range(0.0, 0.5)
        });
        let normal = rng.unit();
        normals.push(normal);
        let tangent = normal.any_orthonormal_vector();
        tangents.push(tangent.extend(if rng.next() < 0.5 { 1.0 } else { -1.0 }));
        let unweighted = v % 97 == 13;
        for slot in 0..k {
            joint_indices.push((rng.next() * joints as f32) as u16 % joints as u16);
            let zero = unweighted || (slot > 0 && rng.next() < 0.2);
            weights.push(if zero { 0.0 } else { rng.range(0.01, 1.0) });
        }
    }
    let influences = Influences::new(k, joint_indices, weights, joints).expect("influences");
    let mut palette = Vec::with_capacity(joints);
    let mut centers = Vec::with_capacity(joints);
    for j in 0..joints {
        let rigid = Mat4::from_rotation_translation(
            rng.rotation(),
            Vec3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            ),
        );
        let residual = if non_rigid {
            match j % 4 {
                0 => Mat4::IDENTITY,
                1 => Mat4::from_scale(Vec3::new(1.5, 0.7, 1.2)),
                2 => Mat4::from_cols(Vec4::X, Vec4::new(0.3, 1.0, 0.0, 0.0), Vec4::Z, Vec4::W),
                _ => Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)),
            }
        } else {
            Mat4::IDENTITY
        };
        palette.push(rigid * residual);
        centers.push(Vec3::new(0.0, j as f32 * 0.1, 0.0));
    }
    RandomRig {
        positions,
        normals,
        tangents,
        influences,
        palette,
        centers,
        rotation_centers,
    }
}

fn random_rigs_with_1_2_4_8_influences_match_the_cpu() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let mut worst = 0f32;
    let mut worst_cor = 0f32;
    for k in [1, 2, 4, 8] {
        for non_rigid in [false, true] {
            for renormalize in [true, false] {
                let rig = random_rig(k as u64 * 31 + 7, 3000, k, 24, non_rigid);
                let input = rig.input(true, true);
                for method in Method::ALL {
                    let options = SkinOptions {
                        method,
                        renormalize,
                        ..SkinOptions::default()
                    };
                    let palette =
                        prepare(&rig.palette, Some(&rig.centers), &options).expect("palette");
                    let what = format!(
                        "k={k}, non_rigid={non_rigid}, renormalize={renormalize}, {}",
                        method.name()
                    );
                    let difference = compare(&gpu, &input, &palette, &what);
                    worst = worst.max(difference);
                    if method == Method::CenterOfRotation {
                        worst_cor = worst_cor.max(difference);
                    }
                }
            }
        }
    }
    println!("random rigs: max relative GPU vs CPU difference {worst:e} (CoR: {worst_cor:e})");
}

fn positions_only_and_normals_only_meshes_match_the_cpu() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let rig = random_rig(5, 700, 3, 9, true);
    for (normals, tangents) in [(false, false), (true, false), (false, true)] {
        let input = rig.input(normals, tangents);
        for method in Method::ALL {
            let options = SkinOptions {
                method,
                ..SkinOptions::default()
            };
            let palette = prepare(&rig.palette, Some(&rig.centers), &options).expect("palette");
            let mut mesh = gpu.upload(&input).expect("upload");
            let layout = mesh.output_layout();
            assert_eq!(
                layout.stride_bytes,
                12 + 12 * u64::from(normals) + 16 * u64::from(tangents)
            );
            let skinned = gpu
                .skin_and_read_back(&mut mesh, &palette, RunOptions::default())
                .expect("skin");
            assert_eq!(skinned.normals.is_some(), normals);
            assert_eq!(skinned.tangents.is_some(), tangents);
            compare(
                &gpu,
                &input,
                &palette,
                &format!("normals={normals} tangents={tangents} {}", method.name()),
            );
        }
    }
}

fn antipodal_dual_quaternions_match_the_cpu_and_count_sign_flips() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let rig = random_rig(11, 2000, 4, 16, false);
    let input = rig.input(true, true);
    let motions: Vec<DualQuat> = rig
        .palette
        .iter()
        .map(|m| {
            let (_, rotation, translation) = m.to_scale_rotation_translation();
            DualQuat::from_rotation_translation(rotation, translation)
        })
        .collect();
    // The same motions with every other joint stored with the opposite sign.
    let negated: Vec<DualQuat> = motions
        .iter()
        .enumerate()
        .map(|(j, dq)| if j % 2 == 1 { dq.negated() } else { *dq })
        .collect();
    for method in [Method::DualQuaternion, Method::CenterOfRotation] {
        let options = SkinOptions {
            method,
            ..SkinOptions::default()
        };
        let plain = PreparedPalette::from_dual_quats(&motions, &options).expect("palette");
        let flipped = PreparedPalette::from_dual_quats(&negated, &options).expect("palette");
        let name = method.name();
        compare(&gpu, &input, &plain, &format!("{name}: as given"));
        compare(
            &gpu,
            &input,
            &flipped,
            &format!("{name}: every other negated"),
        );

        let mut mesh = gpu.upload(&input).expect("upload");
        let a = gpu
            .skin_and_read_back(&mut mesh, &plain, RunOptions::default())
            .expect("skin");
        let b = gpu
            .skin_and_read_back(&mut mesh, &flipped, RunOptions::default())
            .expect("skin");
        assert!(
            b.diagnostics.sign_flips > 0,
            "{name}: negation must be seen"
        );
        // Storage sign does not change the result (up to f32 round-off of the negation-free
        // sum).
        let worst = max_relative(&b, &a, mesh_scale(&rig.positions));
        assert!(
            worst <= GPU_VS_CPU,
            "{name}: sign changed the GPU result by {worst:e}"
        );
    }

    // LBS from the same dual quaternions goes through the same palette path.
    let linear = SkinOptions::default();
    let linear_palette = PreparedPalette::from_dual_quats(&negated, &linear).expect("palette");
    compare(
        &gpu,
        &input,
        &linear_palette,
        "LBS from negated dual quaternions",
    );
}

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
    let input = SkinInput::new(
        &fixture.positions,
        Some(&fixture.normals),
        Some(&fixture.tangents),
        &fixture.influences,
    )
    .expect("input")
    .with_rotation_centers(&centers)
    .expect("centers");
    let mut mesh = gpu.upload(&input).expect("upload");
    for angle_deg in [30.0, 170.0, 90.0] {
        for method in [
            Method::DualQuaternion,
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

fn cor_turns_about_the_centers_and_falls_back_to_dqs_without_one() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    // The comparisons above would pass vacuously if the center were never used: CoR must differ
    // from DQS where a vertex has a center and equal it (same kernel arithmetic) where not.
    for non_rigid in [false, true] {
        let rig = random_rig(17, 1500, 4, 12, non_rigid);
        let input = rig.input(true, true);
        let mut mesh = gpu.upload(&input).expect("upload");
        assert!(mesh.has_rotation_centers());
        let prepared = |method| {
            let options = SkinOptions {
                method,
                ..SkinOptions::default()
            };
            prepare(&rig.palette, Some(&rig.centers), &options).expect("palette")
        };
        let cor_palette = prepared(Method::CenterOfRotation);
        let dq = gpu
            .skin_and_read_back(
                &mut mesh,
                &prepared(Method::DualQuaternion),
                RunOptions::default(),
            )
            .expect("DQS");
        let cor = gpu
            .skin_and_read_back(&mut mesh, &cor_palette, RunOptions::default())
            .expect("CoR");
        assert_eq!(cor.diagnostics, dq.diagnostics, "same blend, same counts");
        let scale = mesh_scale(&rig.positions);
        let mut moved = 0f32;
        for (v, center) in rig.rotation_centers.iter().enumerate() {
            let d = (cor.positions[v] - dq.positions[v]).length() / scale;
            if cor::has_rotation_center(*center) {
                moved = moved.max(d);
            } else {
                assert!(
                    d <= GPU_VS_CPU,
                    "vertex {v} has no center: CoR must be DQS, differs by {d:e}"
                );
            }
        }
        assert!(
            moved > COR_MOVES_AT_LEAST,
            "CoR never moved a vertex away from DQS (at most {moved:e})"
        );
        compare(
            &gpu,
            &input,
            &cor_palette,
            &format!("CoR with NaN centers, non_rigid={non_rigid}"),
        );

        // Every center NaN: the whole mesh is DQS, on both sides.
        let none = vec![cor::NO_ROTATION_CENTER; rig.positions.len()];
        let without = rig
            .input(true, true)
            .with_rotation_centers(&none)
            .expect("centers");
        compare(&gpu, &without, &cor_palette, "CoR, no vertex with a center");
    }
}

fn cor_on_a_mesh_uploaded_without_centers_is_an_error() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    let rig = random_rig(4, 50, 2, 4, false);
    let input = SkinInput::new(&rig.positions, None, None, &rig.influences).expect("input");
    let mut mesh = gpu.upload(&input).expect("upload");
    assert!(!mesh.has_rotation_centers());
    let options = SkinOptions {
        method: Method::CenterOfRotation,
        ..SkinOptions::default()
    };
    let palette = prepare(&rig.palette, None, &options).expect("palette");
    assert_eq!(
        gpu.skin(&mut mesh, &palette, RunOptions::default()),
        Err(GpuError::Skin(SkinError::MissingRotationCenters {
            vertex_count: 50
        }))
    );
    assert_eq!(gpu.read_back(&mesh), Err(GpuError::NothingSkinned));
}

fn a_device_with_webgpu_default_storage_buffers_skins_lbs_and_dqs_and_refuses_cor() {
    let Some(reference) = gpu(GpuOptions::default()) else {
        return;
    };
    // A renderer's device created with WebGPU's default 8 storage buffers per stage: the CoR
    // kernel's ninth (the centers) does not fit.
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
    assert!(!gpu.supports(Method::CenterOfRotation));
    assert!(gpu.supports(Method::Linear) && gpu.supports(Method::DualQuaternion));
    assert!(reference.supports(Method::CenterOfRotation));
    let rig = random_rig(6, 300, 4, 8, true);
    let input = rig.input(true, true);
    for method in Method::ALL {
        let options = SkinOptions {
            method,
            ..SkinOptions::default()
        };
        let palette = prepare(&rig.palette, Some(&rig.centers), &options).expect("palette");
        if method == Method::CenterOfRotation {
            let mut mesh = gpu.upload(&input).expect("upload");
            let error = gpu
                .skin(&mut mesh, &palette, RunOptions::default())
                .expect_err("no CoR kernel");
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

fn subnormal_weight_sums_leave_a_vertex_unweighted_as_on_the_cpu() {
    let Some(gpu) = gpu(GpuOptions::default()) else {
        return;
    };
    // Vertex 0: weights summing to a subnormal (1/sum overflows; a GPU may flush it to zero);
    // vertex 1: the smallest normal sum, skinned; vertex 2: ordinary weights.
    let positions = [
        Vec3::new(1.0, 2.0, 3.0),
        Vec3::new(-1.0, 0.5, 2.0),
        Vec3::new(0.5, -1.0, 1.0),
    ];
    let normals = [Vec3::Y, Vec3::X, Vec3::Z];
    let tangents = [Vec4::new(1.0, 0.0, 0.0, 1.0); 3];
    let centers = [Vec3::ZERO, Vec3::new(0.0, 1.0, 0.0), Vec3::X];
    let influences = skinblend::Influences::new(
        2,
        vec![0, 1, 0, 1, 0, 1],
        vec![1e-39, 0.5e-39, f32::MIN_POSITIVE, 0.0, 0.25, 0.75],
        2,
    )
    .expect("valid influences");
    let input = SkinInput::new(&positions, Some(&normals), Some(&tangents), &influences)
        .expect("input")
        .with_rotation_centers(&centers)
        .expect("centers");
    let palette = [
        Mat4::from_scale_rotation_translation(
            Vec3::new(1.0, 2.0, 1.0),
            Quat::from_rotation_y(0.5),
            Vec3::X,
        ),
        Mat4::from_rotation_translation(Quat::from_rotation_z(1.0), Vec3::Y),
    ];
    for method in Method::ALL {
        let options = SkinOptions {
            method,
            ..SkinOptions::default()
        };
        let prepared = prepare(&palette, None, &options).expect("palette");
        compare(
            &gpu,
            &input,
            &prepared,
            &format!("subnormal sums {}", method.name()),
        );
        let on_cpu = cpu(&input, &prepared);
        assert_eq!(
            on_cpu.diagnostics.unweighted_vertices,
            1,
            "{}",
            method.name()
        );
        assert_eq!(on_cpu.positions[0], positions[0], "{}", method.name());
    }
}

skinblend_testkit::test_main!(
    every_fixture_at_every_evidence_angle_matches_the_cpu,
    shear_cap_has_residuals_and_singular_lbs_normals_on_both,
    random_rigs_with_1_2_4_8_influences_match_the_cpu,
    positions_only_and_normals_only_meshes_match_the_cpu,
    antipodal_dual_quaternions_match_the_cpu_and_count_sign_flips,
    split_dispatches_give_the_unsplit_result,
    reuses_a_mesh_across_frames_and_methods,
    cor_turns_about_the_centers_and_falls_back_to_dqs_without_one,
    cor_on_a_mesh_uploaded_without_centers_is_an_error,
    a_device_with_webgpu_default_storage_buffers_skins_lbs_and_dqs_and_refuses_cor,
    a_short_palette_is_an_error_not_a_panic,
    an_empty_mesh_skins_to_nothing,
    a_lost_device_is_an_error_not_a_panic,
    subnormal_weight_sums_leave_a_vertex_unweighted_as_on_the_cpu,
);
