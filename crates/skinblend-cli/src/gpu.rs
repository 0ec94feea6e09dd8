//! `--gpu` for `evidence` (the rigs skinned by `skinblend-gpu`, measured as on the CPU) and the
//! GPU that `pose --gpu` hands to the scene skinner.

use anyhow::{Context, Result};
use skinblend::evidence::{self, EvidenceRow};
use skinblend::fixtures;
use skinblend::glam::Vec4;
use skinblend::{prepare, skin, Method, SkinInput, SkinOptions, Skinned};
use skinblend_gpu::GpuSkinner;

/// What the GPU evidence run did besides the rows.
pub struct GpuEvidence {
    /// The rows, in `evidence::rows()` order.
    pub rows: Vec<EvidenceRow>,
    /// The adapter's name and backend.
    pub adapter: String,
    /// Methods this adapter cannot run, whose rows were computed on the CPU: none, except CoR
    /// on a device with fewer than 9 storage buffers per shader stage (see
    /// `GpuSkinner::supports`).
    pub cpu_methods: Vec<Method>,
    /// The largest relative difference between GPU and CPU vertices over all GPU rows.
    pub max_relative_difference: f32,
}

/// The GPU, or an error saying `--gpu` needs one.
pub fn open_gpu() -> Result<GpuSkinner> {
    GpuSkinner::new().context("--gpu needs a GPU adapter")
}

/// The evidence rows with every mesh skinned on the GPU (LBS, DQS and CoR, the centers of
/// rotation computed on the CPU as `skinblend::evidence::rows` does and uploaded with the mesh),
/// measured exactly as `skinblend::evidence::measure` measures.
pub fn evidence_rows() -> Result<GpuEvidence> {
    let gpu = open_gpu()?;
    let info = gpu.adapter_info();
    let adapter = format!("{} ({:?})", info.name, info.backend);
    let mut rows = Vec::new();
    let mut cpu_methods = Vec::new();
    let mut worst = 0f32;
    for fixture in fixtures::all() {
        let centers = evidence::fixture_rotation_centers(&fixture)?;
        let input = SkinInput::new(
            &fixture.positions,
            Some(&fixture.normals),
            Some(&fixture.tangents),
            &fixture.influences,
        )?
        .with_rotation_centers(&centers)?;
        let mut mesh = gpu.upload(&input)?;
        for &angle_deg in evidence::angles_deg(&fixture) {
            for method in Method::ALL {
                if !gpu.supports(method) {
                    rows.push(evidence::measure_with_centers(
                        &fixture, angle_deg, method, &centers,
                    )?);
                    if !cpu_methods.contains(&method) {
                        cpu_methods.push(method);
                    }
                    continue;
                }
                let options = SkinOptions {
                    method,
                    ..SkinOptions::default()
                };
                let palette = fixture.palette(angle_deg);
                let joint_centers = Some(&fixture.joint_centers[..]);
                let prepared = prepare(&palette, joint_centers, &options)?;
                let on_gpu = gpu.skin_and_read_back(&mut mesh, &prepared, options.run_options())?;
                let on_cpu = skin(&input, &palette, joint_centers, &options)?;
                worst = worst.max(max_relative_difference(&on_gpu, &on_cpu));
                rows.push(evidence::measure_skinned(
                    &fixture, angle_deg, method, &on_gpu,
                )?);
            }
        }
    }
    Ok(GpuEvidence {
        rows,
        adapter,
        cpu_methods,
        max_relative_difference: worst,
    })
}

/// The largest |gpu − cpu| / max(|cpu|, 1) over every vertex attribute (the fixtures are about
/// 1 m in size, and normals and tangents are unit vectors). A NaN on either side counts as
/// infinitely far (`f32::max` would drop it).
fn max_relative_difference(gpu: &Skinned, cpu: &Skinned) -> f32 {
    let rel = |a: Vec4, b: Vec4| {
        let difference = (a - b).length() / b.length().max(1.0);
        if difference.is_nan() {
            f32::INFINITY
        } else {
            difference
        }
    };
    let mut worst = 0f32;
    for (a, b) in gpu.positions.iter().zip(&cpu.positions) {
        worst = worst.max(rel(a.extend(0.0), b.extend(0.0)));
    }
    if let (Some(a), Some(b)) = (&gpu.normals, &cpu.normals) {
        for (a, b) in a.iter().zip(b) {
            worst = worst.max(rel(a.extend(0.0), b.extend(0.0)));
        }
    }
    if let (Some(a), Some(b)) = (&gpu.tangents, &cpu.tangents) {
        for (a, b) in a.iter().zip(b) {
            worst = worst.max(rel(*a, *b));
        }
    }
    worst
}
