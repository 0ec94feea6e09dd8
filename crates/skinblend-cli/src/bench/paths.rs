//! `skinblend bench`'s second table: the paths users call, as ratios to the kernel alone on the
//! same vertices in the same run.
//!
//! - `kernel`: [`skinblend::skin_into`] over a [`SkinInput`] of plain arrays (checked when made,
//!   outside the timing), the figure the first table reports for the one-thread SIMD rows.
//! - `handle`: [`SkinMesh::skin_into`], the mesh handle an application keeps and skins every
//!   frame (checked once; its private layout read where a kernel can).
//! - `scene`: [`SceneSkinner::skin`] on a built-in rig shown by 100 skinned nodes (the palette
//!   refreshed from the pose and every node's primitive skinned, per frame), against the kernel
//!   alone on the same primitive as the file holds it, 100 times into 100 outputs.
//! - `crowd`: [`skinblend::skin_batch`] over many meshes, each with its own palette (an
//!   engine's crowd), against the kernel alone on each mesh in turn; on one thread and on the
//!   pool's threads.

use std::hint::black_box;

use anyhow::Result;
use glam::Vec3;
use skinblend::fixtures::{self, benchmark_mesh, BenchmarkMesh};
use skinblend::{
    prepare, skin_batch, skin_into, BlendValues, Method, PreparedPalette, RunOptions, SkinInput,
    SkinJob, SkinMesh, SkinOutputs,
};
use skinblend_gltf::{Model, SceneOptions, SceneSkinner};
use skinblend_gpu::bench::bench_rig;

use super::kernels::BENCH_BLEND_VALUE;
use super::plan::{call_times, Plan};

/// One measured path.
#[derive(Debug, Clone)]
pub struct PathRow {
    /// `handle`, `scene` or `crowd` (`kernel` rows are the reference of each ratio).
    pub path: &'static str,
    /// The method.
    pub method: Method,
    /// Meshes skinned per call.
    pub meshes: usize,
    /// Vertices per mesh.
    pub vertices: usize,
    /// Threads the call ran on.
    pub threads: usize,
    /// Million vertices per second by the path (median over samples).
    pub mverts_per_s: f64,
    /// The same for the kernel alone on the same vertices, measured right before.
    pub kernel_mverts_per_s: f64,
    /// The path's fastest single call (on a shared host, the call least disturbed).
    pub fastest_mverts_per_s: f64,
    /// The kernel's fastest single call.
    pub kernel_fastest_mverts_per_s: f64,
}

impl PathRow {
    /// The path's rate over the kernel's (medians).
    #[must_use]
    pub fn ratio(&self) -> f64 {
        self.mverts_per_s / self.kernel_mverts_per_s
    }

    /// The path's fastest call over the kernel's.
    #[must_use]
    pub fn fastest_ratio(&self) -> f64 {
        self.fastest_mverts_per_s / self.kernel_fastest_mverts_per_s
    }
}

/// Positions + normals outputs for `n` vertices.
struct Outputs {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
}

impl Outputs {
    fn new(n: usize) -> Self {
        Self {
            positions: vec![Vec3::ZERO; n],
            normals: vec![Vec3::ZERO; n],
        }
    }

    fn outputs(&mut self) -> SkinOutputs<'_> {
        SkinOutputs {
            positions: &mut self.positions,
            normals: Some(&mut self.normals),
            tangents: None,
        }
    }
}

fn one_thread() -> RunOptions {
    RunOptions {
        parallel: false,
        ..RunOptions::default()
    }
}

fn mesh_handle(mesh: &BenchmarkMesh) -> Result<SkinMesh<'_>> {
    Ok(SkinMesh::new(&mesh.positions[..], &mesh.influences)?
        .with_normals(&mesh.normals[..])?
        .with_rotation_centers(&mesh.positions[..])?
        .with_uniform_blend_value(BENCH_BLEND_VALUE)?)
}

fn plain_input(mesh: &BenchmarkMesh) -> Result<SkinInput<'_>> {
    Ok(
        SkinInput::new(&mesh.positions, Some(&mesh.normals), None, &mesh.influences)?
            .with_rotation_centers(&mesh.positions)?
            .with_blend_values(BlendValues::Uniform(BENCH_BLEND_VALUE))?,
    )
}

/// Million vertices per second of `vertices` vertices per call: (median, fastest call).
fn rate(plan: &Plan, vertices: usize, call: impl FnMut() -> Result<()>) -> Result<(f64, f64)> {
    let times = call_times(plan, call)?;
    Ok((
        vertices as f64 / times.median_seconds / 1e6,
        vertices as f64 / times.fastest_seconds / 1e6,
    ))
}

/// A row from the (median, fastest) rates of the path and of the kernel.
fn row(
    path: &'static str,
    method: Method,
    (meshes, vertices, threads): (usize, usize, usize),
    path_rate: (f64, f64),
    kernel_rate: (f64, f64),
) -> PathRow {
    PathRow {
        path,
        method,
        meshes,
        vertices,
        threads,
        mverts_per_s: path_rate.0,
        kernel_mverts_per_s: kernel_rate.0,
        fastest_mverts_per_s: path_rate.1,
        kernel_fastest_mverts_per_s: kernel_rate.1,
    }
}

/// The rows for `methods`: the handle at each of the plan's sizes, the scene, and the crowds.
///
/// # Errors
/// The core's or the glTF crate's on the built-in data (none expected).
pub fn run(plan: &Plan, methods: &[Method], progress: &dyn Fn(&str)) -> Result<Vec<PathRow>> {
    let mut rows = Vec::new();
    for &vertices in &plan.vertices {
        let mesh = bench_rig(vertices, 4);
        let handle = mesh_handle(&mesh)?;
        let input = plain_input(&mesh)?;
        let mut out = Outputs::new(vertices);
        for &method in methods {
            progress(&format!("handle {} {vertices}", method.name()));
            let palette = prepare(&mesh.palette, None, method)?;
            let kernel = rate(plan, vertices, || {
                black_box(skin_into(&input, &palette, out.outputs(), one_thread())?);
                Ok(())
            })?;
            let path = rate(plan, vertices, || {
                black_box(handle.skin_into(&palette, out.outputs(), one_thread())?);
                Ok(())
            })?;
            rows.push(row("handle", method, (1, vertices, 1), path, kernel));
        }
    }
    rows.extend(scene_rows(plan, methods, progress)?);
    rows.extend(crowd_rows(plan, methods, progress)?);
    Ok(rows)
}

/// The scene skinner on [`SCENE_COPIES`] nodes of `shear_cap`, one thread.
fn scene_rows(plan: &Plan, methods: &[Method], progress: &dyn Fn(&str)) -> Result<Vec<PathRow>> {
    let fixture = fixtures::shear_cap();
    let copies = plan.scene_copies;
    let bytes = skinblend_gltf::rigs::to_glb_with_copies(&fixture, copies)?;
    let model = Model::from_bytes(&bytes, None)?;
    let pose = model.pose(Some(0), 0.5)?;
    // The reference skins the primitive as the file holds it (JOINTS_0 has four slots, two of
    // them empty for this rig), as the scene skinner does.
    let primitive = &model.meshes()[0].primitives[0];
    let influences = primitive
        .influences
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("the rig's primitive has no JOINTS_0"))?;
    let n = primitive.positions.len();
    let total = n * copies;
    let mut rows = Vec::new();
    for &method in methods {
        progress(&format!("scene {} {total}", method.name()));
        let mut options = SceneOptions::with_method(method);
        options.tangents = false;
        options.dq_blend = Some(BENCH_BLEND_VALUE);
        options.skin.parallel = false;
        let mut skinner = SceneSkinner::cpu(&model, options)?;
        let centers;
        let mut input = SkinInput::new(
            &primitive.positions,
            primitive.normals.as_deref(),
            None,
            influences,
        )?;
        if method == Method::CenterOfRotation {
            centers = skinblend::cor::rotation_centers(
                &primitive.positions,
                &primitive.triangles(),
                influences,
                &skinblend::cor::CorOptions::default(),
            )?;
            input = input.with_rotation_centers(&centers.centers)?;
        }
        // Blended: the file's values (the rig carries them), as the scene skinner takes them.
        input = input.with_blend_values(match &primitive.dq_blend {
            Some(values) => BlendValues::PerVertex(values),
            None => BlendValues::Uniform(BENCH_BLEND_VALUE),
        })?;
        let world_palette = model.palette(&pose, 0)?;
        let palette = prepare(
            &world_palette,
            Some(&model.skins()[0].joint_centers),
            method,
        )?;
        // One output per node, as the scene skinner keeps: the same bytes written per frame.
        let mut outs: Vec<Outputs> = (0..copies).map(|_| Outputs::new(n)).collect();
        let kernel = rate(plan, total, || {
            for out in &mut outs {
                black_box(skin_into(&input, &palette, out.outputs(), one_thread())?);
            }
            Ok(())
        })?;
        let path = rate(plan, total, || {
            black_box(skinner.skin(&pose)?);
            Ok(())
        })?;
        rows.push(row("scene", method, (copies, n, 1), path, kernel));
    }
    Ok(rows)
}

/// The crowds of [`CROWDS`], on one thread and on the pool's.
fn crowd_rows(plan: &Plan, methods: &[Method], progress: &dyn Fn(&str)) -> Result<Vec<PathRow>> {
    let pool_threads = rayon::current_num_threads();
    let mut rows = Vec::new();
    for &(meshes, vertices) in &plan.crowds {
        let crowd: Vec<BenchmarkMesh> = (0..meshes)
            .map(|i| benchmark_mesh(vertices, 4, 24 + i % 41, 0xC0_0000 + i as u64))
            .collect();
        let handles = crowd.iter().map(mesh_handle).collect::<Result<Vec<_>>>()?;
        let inputs = crowd.iter().map(plain_input).collect::<Result<Vec<_>>>()?;
        let mut outs: Vec<Outputs> = (0..meshes).map(|_| Outputs::new(vertices)).collect();
        let total = meshes * vertices;
        for &method in methods {
            let palettes = crowd
                .iter()
                .map(|m| prepare(&m.palette, None, method))
                .collect::<Result<Vec<PreparedPalette>, _>>()?;
            let thread_counts = if pool_threads > 1 {
                vec![1, pool_threads]
            } else {
                vec![1]
            };
            for threads in thread_counts {
                progress(&format!(
                    "crowd {} {meshes}x{vertices} {threads} threads",
                    method.name()
                ));
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()?;
                let run = RunOptions::default();
                // The kernel alone: each mesh in turn, each call split over the pool as
                // `skin_into` splits a mesh (meshes under 4,096 vertices are not split).
                let kernel = pool.install(|| {
                    rate(plan, total, || {
                        for ((input, palette), out) in inputs.iter().zip(&palettes).zip(&mut outs) {
                            black_box(skin_into(input, palette, out.outputs(), run)?);
                        }
                        Ok(())
                    })
                })?;
                let mut jobs: Vec<SkinJob<'_>> = handles
                    .iter()
                    .zip(&palettes)
                    .zip(&mut outs)
                    .map(|((h, p), o)| SkinJob::new(h, p, o.outputs()))
                    .collect();
                let path = pool.install(|| {
                    rate(plan, total, || {
                        skin_batch(&mut jobs, run)?;
                        Ok(())
                    })
                })?;
                rows.push(row(
                    "crowd",
                    method,
                    (meshes, vertices, threads),
                    path,
                    kernel,
                ));
            }
        }
    }
    Ok(rows)
}

/// The rows as a table.
#[must_use]
pub fn table(rows: &[PathRow]) -> String {
    let mut text = String::from(
        "\nPaths users call, against the kernel alone on the same vertices (K = 4 except scene: \
         shear_cap's file: 4 slots, 2 used; positions + normals):\n",
    );
    text.push_str(&format!(
        "{:<7} {:<6} {:>6} {:>9} {:>7} {:>10} {:>10} {:>7} {:>10} {:>10} {:>7}\n",
        "path",
        "method",
        "meshes",
        "vertices",
        "threads",
        "Mverts/s",
        "kernel",
        "ratio",
        "fastest",
        "kernel",
        "ratio"
    ));
    for r in rows {
        text.push_str(&format!(
            "{:<7} {:<6} {:>6} {:>9} {:>7} {:>10.1} {:>10.1} {:>7.3} {:>10.1} {:>10.1} {:>7.3}\n",
            r.path,
            r.method.name(),
            r.meshes,
            r.vertices,
            r.threads,
            r.mverts_per_s,
            r.kernel_mverts_per_s,
            r.ratio(),
            r.fastest_mverts_per_s,
            r.kernel_fastest_mverts_per_s,
            r.fastest_ratio()
        ));
    }
    for r in rows.iter().filter(|r| r.path == "crowd") {
        let single = rows
            .iter()
            .find(|h| h.path == "handle" && h.method == r.method && h.vertices == 100_000);
        let one_thread = rows.iter().find(|o| {
            o.path == "crowd"
                && o.method == r.method
                && o.meshes == r.meshes
                && o.vertices == r.vertices
                && o.threads == 1
        });
        if let (Some(single), Some(one_thread)) = (single, one_thread) {
            text.push_str(&format!(
                "crowd {} {}x{} on {} threads: {:.3}x the single 100k-vertex handle per vertex, \
                 {:.3}x the crowd on one thread\n",
                r.method.name(),
                r.meshes,
                r.vertices,
                r.threads,
                r.mverts_per_s / single.mverts_per_s,
                r.mverts_per_s / one_thread.mverts_per_s
            ));
        }
    }
    text
}

/// The rows as JSON objects.
#[must_use]
pub fn json(rows: &[PathRow]) -> Vec<serde_json::Value> {
    rows.iter()
        .map(|r| {
            serde_json::json!({
                "path": r.path,
                "method": r.method.name(),
                "meshes": r.meshes,
                "vertices": r.vertices,
                "threads": r.threads,
                "mverts_per_s": r.mverts_per_s,
                "kernel_mverts_per_s": r.kernel_mverts_per_s,
                "ratio": r.ratio(),
                "fastest_call_mverts_per_s": r.fastest_mverts_per_s,
                "kernel_fastest_call_mverts_per_s": r.kernel_fastest_mverts_per_s,
                "fastest_ratio": r.fastest_ratio(),
            })
        })
        .collect()
}
