//! Shared by the GPU test files: the skinner (or a skip without an adapter), the CPU scalar
//! reference, the GPU-against-CPU comparison and its tolerance, and random rigs.
// Not every test file that includes this module uses all of it.
#![allow(dead_code)]

pub mod random_rig;

use glam::{Vec3, Vec4};
use skinblend::{skin_into, PreparedPalette, RunOptions, SkinInput, SkinOutputs, Skinned};
use skinblend_gpu::{GpuOptions, GpuSkinner};

/// GPU against CPU, relative: both are f32 with a different operation order (and FMA on the
/// GPU), a few dozen operations deep; 1e-5 is about a hundred f32 ulps, well above that
/// round-off and far below any semantic difference (a wrong sign, pivot or residual moves a
/// vertex by a sizeable fraction of the mesh).
pub const GPU_VS_CPU: f32 = 1e-5;

/// The skinner, or `None` (with a message) when there is no adapter and the GPU is not required.
pub fn gpu(options: GpuOptions) -> Option<GpuSkinner> {
    match GpuSkinner::with_options(options) {
        Ok(gpu) => Some(gpu),
        Err(error) => {
            skinblend_testkit::skip_without_gpu(error);
            None
        }
    }
}

/// The CPU's scalar reference kernel (the SIMD kernels differ from it by rounding).
pub fn cpu(input: &SkinInput<'_>, palette: &PreparedPalette) -> Skinned {
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
pub fn max_relative(gpu: &Skinned, cpu: &Skinned, scale: f32) -> f32 {
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

pub fn mesh_scale(positions: &[Vec3]) -> f32 {
    positions
        .iter()
        .fold(0f32, |m, p| m.max(p.length()))
        .max(1e-6)
}

/// Skins on both and asserts agreement (attributes, lengths and diagnostics); returns the
/// largest relative difference.
pub fn compare(
    gpu: &GpuSkinner,
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    what: &str,
) -> f32 {
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
