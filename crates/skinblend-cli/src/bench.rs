//! `skinblend bench`: million vertices per second against the memory floor, measured in one run.
//!
//! The floor is a plain copy loop over the same input and output bytes (bind-pose attributes and
//! influences in, posed attributes out) on the same number of threads, timed right before each
//! kernel it is compared with, so the ratio holds on a noisy machine.

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use glam::{Vec3, Vec4};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use skinblend::fixtures::{benchmark_mesh, BenchmarkMesh};
// The rig, its joint count and seed are the GPU benchmark's: both measure the same mesh.
use skinblend::{prepare, Method, SkinMesh, SkinOptions, SkinOutputs};
use skinblend_gpu::bench::{bench_rig, BENCH_JOINTS};

/// Which vertex attributes are skinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attributes {
    /// Positions only.
    P,
    /// Positions and normals.
    Pn,
    /// Positions, normals and tangents.
    Pnt,
}

impl Attributes {
    fn name(self) -> &'static str {
        match self {
            Attributes::P => "p",
            Attributes::Pn => "pn",
            Attributes::Pnt => "pnt",
        }
    }
}

/// How the kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The scalar reference kernel on one thread.
    Scalar,
    /// The SIMD kernel on one thread.
    Simd,
    /// The SIMD kernel on every thread of the rayon pool.
    Parallel,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Simd => "simd",
            Backend::Parallel => "parallel",
        }
    }
}

/// One measured configuration.
#[derive(Debug, Clone)]
pub struct Row {
    backend: Backend,
    method: Method,
    attributes: Attributes,
    influences: usize,
    vertices: usize,
    threads: usize,
    mverts_per_s: f64,
    /// The rate of the fastest single call of all samples: on a shared machine, the call least
    /// disturbed by other tenants (steadier between runs than the median).
    fastest_call_mverts_per_s: f64,
    floor_mverts_per_s: f64,
}

/// The per-frame cost of preparing a palette.
#[derive(Debug, Clone)]
pub struct PrepareRow {
    method: Method,
    joints: usize,
    microseconds: f64,
}

/// The matrix to measure.
pub struct Plan {
    methods: Vec<Method>,
    attributes: Vec<Attributes>,
    influences: Vec<usize>,
    pub(crate) vertices: Vec<usize>,
    backends: Vec<Backend>,
    /// Minimum time per measurement sample.
    sample: Duration,
    /// Samples per measurement (the median is reported).
    samples: usize,
    /// The crowds of the paths table: (meshes, vertices per mesh).
    pub(crate) crowds: Vec<(usize, usize)>,
    /// Skinned nodes of the paths table's scene.
    pub(crate) scene_copies: usize,
}

impl Plan {
    /// The full matrix of DESIGN.md.
    pub fn full() -> Self {
        Self {
            methods: vec![
                Method::Linear,
                Method::DualQuaternion,
                Method::CenterOfRotation,
            ],
            attributes: vec![Attributes::P, Attributes::Pn, Attributes::Pnt],
            influences: vec![1, 2, 4, 8],
            vertices: vec![10_000, 100_000, 1_000_000],
            backends: vec![Backend::Scalar, Backend::Simd, Backend::Parallel],
            sample: Duration::from_millis(40),
            samples: 5,
            crowds: crate::bench_paths::CROWDS.to_vec(),
            scene_copies: crate::bench_paths::SCENE_COPIES,
        }
    }

    /// The rows that matter most, in well under a minute: every method with positions and
    /// normals and with positions only, K = 4, the rows `tools/ozz-compare` sets beside
    /// ozz-animation's figures, with the ozz driver's sampling there (5 samples of 25 ms), so
    /// that both programs' fastest calls are taken from as many calls.
    pub fn quick() -> Self {
        Self {
            methods: vec![
                Method::Linear,
                Method::DualQuaternion,
                Method::CenterOfRotation,
            ],
            attributes: vec![Attributes::P, Attributes::Pn],
            influences: vec![4],
            vertices: vec![10_000, 100_000, 1_000_000],
            backends: vec![Backend::Scalar, Backend::Simd, Backend::Parallel],
            sample: Duration::from_millis(25),
            samples: 5,
            crowds: crate::bench_paths::CROWDS.to_vec(),
            scene_copies: crate::bench_paths::SCENE_COPIES,
        }
    }

    fn len(&self) -> usize {
        self.methods.len()
            * self.attributes.len()
            * self.influences.len()
            * self.vertices.len()
            * self.backends.len()
    }
}

/// Everything one run measured.
pub struct Report {
    /// The kernels against the memory floor.
    pub rows: Vec<Row>,
    /// Palette preparation per frame.
    pub prepare: Vec<PrepareRow>,
    /// The paths users call against the kernel alone.
    pub paths: Vec<crate::bench_paths::PathRow>,
}

/// Runs the plan, showing progress on stderr.
pub fn run(plan: &Plan, show_progress: bool) -> Result<Report> {
    let progress = if show_progress {
        ProgressBar::new(plan.len() as u64 + 6)
    } else {
        ProgressBar::hidden()
    };
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
            .context("progress bar template")?,
    );
    let threads = rayon::current_num_threads();
    let mut rows = Vec::new();
    for &vertices in &plan.vertices {
        for &influences in &plan.influences {
            let mesh = bench_rig(vertices, influences);
            let mut out = Outputs::new(vertices);
            for &attributes in &plan.attributes {
                for &backend in &plan.backends {
                    let threads = if backend == Backend::Parallel {
                        threads
                    } else {
                        1
                    };
                    let floor = floor_mverts_per_s(&mesh, attributes, threads, &mut out, plan);
                    for &method in &plan.methods {
                        progress.set_message(format!(
                            "{} {} k={influences} {vertices} {}",
                            method.name(),
                            attributes.name(),
                            backend.name()
                        ));
                        let times =
                            kernel_call_times(&mesh, attributes, method, backend, &mut out, plan)?;
                        rows.push(Row {
                            backend,
                            method,
                            attributes,
                            influences,
                            vertices,
                            threads,
                            mverts_per_s: vertices as f64 / times.median_seconds / 1e6,
                            fastest_call_mverts_per_s: vertices as f64
                                / times.fastest_seconds
                                / 1e6,
                            floor_mverts_per_s: floor,
                        });
                        progress.inc(1);
                    }
                }
            }
        }
    }
    let mut prepare_rows = Vec::new();
    for joints in [64, 256, 1024] {
        let mesh = benchmark_mesh(1, 1, joints, 7);
        for method in [Method::Linear, Method::DualQuaternion] {
            progress.set_message(format!("prepare {} {joints} joints", method.name()));
            let options = SkinOptions {
                method,
                ..SkinOptions::default()
            };
            let mut prepared = prepare(&mesh.palette, None, &options)?;
            let times = call_times(plan, || {
                prepared.update(black_box(&mesh.palette)).map(|_| ())
            })?;
            prepare_rows.push(PrepareRow {
                method,
                joints,
                microseconds: times.median_seconds * 1e6,
            });
            progress.inc(1);
        }
    }
    let paths = crate::bench_paths::run(plan, &plan.methods, &|message| {
        progress.set_message(message.to_owned());
    })?;
    progress.finish_and_clear();
    Ok(Report {
        rows,
        prepare: prepare_rows,
        paths,
    })
}

/// Output buffers reused by every measurement of one vertex count.
struct Outputs {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
}

impl Outputs {
    fn new(vertices: usize) -> Self {
        Self {
            positions: vec![Vec3::ZERO; vertices],
            normals: vec![Vec3::ZERO; vertices],
            tangents: vec![Vec4::ZERO; vertices],
        }
    }
}

/// The call times of one kernel configuration.
fn kernel_call_times(
    mesh: &BenchmarkMesh,
    attributes: Attributes,
    method: Method,
    backend: Backend,
    out: &mut Outputs,
    plan: &Plan,
) -> Result<CallTimes> {
    let normals = attributes != Attributes::P;
    let tangents = attributes == Attributes::Pnt;
    // The mesh handle an application that skins a mesh every frame keeps: checked once, with
    // the layout the kernels read best (LBS with normals and four influences reads its blocks).
    let mut handle = SkinMesh::new(&mesh.positions[..], &mesh.influences)?
        // CoR's speed does not depend on where the centers are: the bind positions serve.
        .with_rotation_centers(&mesh.positions[..])?;
    if normals {
        handle = handle.with_normals(&mesh.normals[..])?;
    }
    if tangents {
        handle = handle.with_tangents(&mesh.tangents[..])?;
    }
    let options = SkinOptions {
        method,
        parallel: backend == Backend::Parallel,
        simd: backend != Backend::Scalar,
        ..SkinOptions::default()
    };
    let prepared = prepare(&mesh.palette, None, &options)?;
    let mut time = || {
        call_times(plan, || {
            let outputs = SkinOutputs {
                positions: &mut out.positions,
                normals: normals.then_some(&mut out.normals[..]),
                tangents: tangents.then_some(&mut out.tangents[..]),
            };
            handle
                .skin_into(&prepared, outputs, options.run_options())
                .map(|d| {
                    black_box(d);
                })
        })
    };
    // Parallel: the calls run on a thread of the pool, as an application that skins inside
    // `ThreadPool::install` (or from a rayon task) does, so that the calling thread takes a
    // piece itself; called from outside the pool, each call would also hand the whole job to
    // the pool and wait for it to come back.
    Ok(if backend == Backend::Parallel {
        rayon::scope(|_| time())
    } else {
        time()
    }?)
}

/// The memory floor: the same input bytes read and the same output bytes written by a plain
/// loop, on `threads` threads, in million vertices per second.
fn floor_mverts_per_s(
    mesh: &BenchmarkMesh,
    attributes: Attributes,
    threads: usize,
    out: &mut Outputs,
    plan: &Plan,
) -> f64 {
    let k = mesh.influences.influences_per_vertex();
    let joints = mesh.influences.joints();
    let weights = mesh.influences.weights();
    let normals = attributes != Attributes::P;
    let tangents = attributes == Attributes::Pnt;
    let chunk = 4096;
    // memcpy of each attribute, and every influence byte folded into a checksum the optimizer
    // cannot drop: the cheapest way to move the same bytes.
    let copy_range = |start: usize, p: &mut [Vec3], n: &mut [Vec3], t: &mut [Vec4]| {
        let end = start + p.len();
        p.copy_from_slice(&mesh.positions[start..end]);
        if normals {
            n.copy_from_slice(&mesh.normals[start..end]);
        }
        if tangents {
            t.copy_from_slice(&mesh.tangents[start..end]);
        }
        let joint_bits = joints[start * k..end * k]
            .iter()
            .fold(0u16, |acc, &j| acc ^ j);
        let weight_bits = weights[start * k..end * k]
            .iter()
            .fold(0u32, |acc, &w| acc ^ w.to_bits());
        black_box((joint_bits, weight_bits));
    };
    let seconds = call_times(plan, || {
        if threads > 1 {
            out.positions
                .par_chunks_mut(chunk)
                .zip(out.normals.par_chunks_mut(chunk))
                .zip(out.tangents.par_chunks_mut(chunk))
                .enumerate()
                .for_each(|(c, ((p, n), t))| copy_range(c * chunk, p, n, t));
        } else {
            for (c, ((p, n), t)) in out
                .positions
                .chunks_mut(chunk)
                .zip(out.normals.chunks_mut(chunk))
                .zip(out.tangents.chunks_mut(chunk))
                .enumerate()
            {
                copy_range(c * chunk, p, n, t);
            }
        }
        black_box(&out.positions);
        Ok::<(), anyhow::Error>(())
    })
    .map_or(f64::INFINITY, |times| times.median_seconds);
    mesh.positions.len() as f64 / seconds / 1e6
}

/// The time per call: the median over samples, and the fastest single call.
pub(crate) struct CallTimes {
    /// Median over `plan.samples` samples of the mean time per call.
    pub(crate) median_seconds: f64,
    /// The fastest single call of all samples.
    pub(crate) fastest_seconds: f64,
}

/// Times `call` in `plan.samples` samples, each repeating the call for at least `plan.sample`
/// (after one call that warms caches and the thread pool).
pub(crate) fn call_times<E>(
    plan: &Plan,
    mut call: impl FnMut() -> Result<(), E>,
) -> Result<CallTimes, E> {
    call()?;
    let mut samples = Vec::with_capacity(plan.samples);
    let mut fastest = Duration::MAX;
    for _ in 0..plan.samples {
        let start = Instant::now();
        let mut calls = 0u32;
        let mut last = start;
        while last - start < plan.sample {
            call()?;
            let now = Instant::now();
            fastest = fastest.min(now - last);
            last = now;
            calls += 1;
        }
        samples.push((last - start).as_secs_f64() / f64::from(calls));
    }
    samples.sort_by(f64::total_cmp);
    Ok(CallTimes {
        median_seconds: samples[samples.len() / 2],
        fastest_seconds: fastest.as_secs_f64(),
    })
}

/// The CPU's model name, from /proc/cpuinfo where there is one.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// The report as tables.
pub fn table(report: &Report) -> String {
    let (rows, prepare_rows) = (&report.rows, &report.prepare);
    let mut text = format!(
        "CPU: {} ({} threads); SIMD: {}; {BENCH_JOINTS} joints; floor = plain copy of the same \
         bytes on the same threads\n\n",
        cpu_name(),
        rayon::current_num_threads(),
        skinblend::simd_backend().unwrap_or("none (scalar fallback)")
    );
    text.push_str(&format!(
        "{:<8} {:<6} {:<4} {:>2} {:>9} {:>7} {:>10} {:>10} {:>10} {:>7}\n",
        "backend",
        "method",
        "attr",
        "k",
        "vertices",
        "threads",
        "Mverts/s",
        "fastest",
        "floor",
        "ratio"
    ));
    for r in rows {
        text.push_str(&format!(
            "{:<8} {:<6} {:<4} {:>2} {:>9} {:>7} {:>10.1} {:>10.1} {:>10.1} {:>7.2}\n",
            r.backend.name(),
            r.method.name(),
            r.attributes.name(),
            r.influences,
            r.vertices,
            r.threads,
            r.mverts_per_s,
            r.fastest_call_mverts_per_s,
            r.floor_mverts_per_s,
            r.mverts_per_s / r.floor_mverts_per_s
        ));
    }
    text.push_str("\nPalette preparation per frame:\n");
    for r in prepare_rows {
        text.push_str(&format!(
            "{:<6} {:>5} joints {:>9.2} µs\n",
            r.method.name(),
            r.joints,
            r.microseconds
        ));
    }
    text.push_str(&crate::bench_paths::table(&report.paths));
    text
}

/// The rows as JSON: `{"cpu", "simd", "rows": [...], "prepare": [...]}`.
pub fn json(report: &Report) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = report
        .rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "backend": r.backend.name(),
                "method": r.method.name(),
                "attributes": r.attributes.name(),
                "influences": r.influences,
                "vertices": r.vertices,
                "threads": r.threads,
                "mverts_per_s": r.mverts_per_s,
                "fastest_call_mverts_per_s": r.fastest_call_mverts_per_s,
                "floor_mverts_per_s": r.floor_mverts_per_s,
                "floor_ratio": r.mverts_per_s / r.floor_mverts_per_s,
            })
        })
        .collect();
    let prepare: Vec<serde_json::Value> = report
        .prepare
        .iter()
        .map(|r| {
            serde_json::json!({
                "method": r.method.name(),
                "joints": r.joints,
                "microseconds_per_frame": r.microseconds,
            })
        })
        .collect();
    serde_json::json!({
        "cpu": cpu_name(),
        "simd": skinblend::simd_backend(),
        "threads": rayon::current_num_threads(),
        "joints": BENCH_JOINTS,
        "rows": rows,
        "prepare": prepare,
        "paths": crate::bench_paths::json(&report.paths),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan small enough for a unit test: every method, backend and attribute set, one size.
    fn tiny() -> Plan {
        Plan {
            methods: vec![
                Method::Linear,
                Method::DualQuaternion,
                Method::CenterOfRotation,
            ],
            attributes: vec![Attributes::P, Attributes::Pn, Attributes::Pnt],
            influences: vec![1, 4],
            vertices: vec![100],
            backends: vec![Backend::Scalar, Backend::Simd, Backend::Parallel],
            sample: Duration::from_micros(200),
            samples: 1,
            crowds: vec![(5, 300)],
            scene_copies: 3,
        }
    }

    #[test]
    fn json_rows_have_the_documented_keys() {
        let report = run(&tiny(), false).unwrap();
        assert_eq!(report.rows.len(), tiny().len());
        let json = json(&report);
        let rows = json["rows"].as_array().unwrap();
        for row in rows {
            for key in [
                "backend",
                "method",
                "attributes",
                "influences",
                "vertices",
                "threads",
                "mverts_per_s",
                "fastest_call_mverts_per_s",
                "floor_mverts_per_s",
            ] {
                assert!(row.get(key).is_some(), "{row} lacks {key}");
            }
            assert!(row["mverts_per_s"].as_f64().unwrap() > 0.0);
            // The fastest call is at least as fast as the median sample's mean call.
            assert!(
                row["fastest_call_mverts_per_s"].as_f64().unwrap()
                    >= row["mverts_per_s"].as_f64().unwrap()
            );
            assert!(row["floor_mverts_per_s"].as_f64().unwrap() > 0.0);
        }
        let attributes: Vec<&str> = rows
            .iter()
            .map(|r| r["attributes"].as_str().unwrap())
            .collect();
        assert!(["p", "pn", "pnt"].iter().all(|a| attributes.contains(a)));
        assert_eq!(json["prepare"].as_array().unwrap().len(), 6);
        // Paths: the handle per method, the scene per method, the crowd per method and thread
        // count, each with its kernel figure.
        let paths = json["paths"].as_array().unwrap();
        let threads = if rayon::current_num_threads() > 1 {
            2
        } else {
            1
        };
        assert_eq!(paths.len(), 3 + 3 + 3 * threads);
        for row in paths {
            assert!(row["ratio"].as_f64().unwrap() > 0.0, "{row}");
        }
        assert!(table(&report).contains("CPU:"));
    }
}
