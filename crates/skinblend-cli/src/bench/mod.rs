//! `skinblend bench`: million vertices per second against the memory floor, measured in one run.
//!
//! The floor is a plain copy loop over the same input and output bytes (bind-pose attributes and
//! influences in, posed attributes out) on the same number of threads, timed right before each
//! kernel it is compared with, so the ratio holds on a noisy machine.

mod kernels;
mod paths;
mod plan;

use std::hint::black_box;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use skinblend::fixtures::benchmark_mesh;
use skinblend::{prepare, Method, SkinOptions};
// The rig, its joint count and seed are the GPU benchmark's: both measure the same mesh.
use skinblend_gpu::bench::{bench_rig, BENCH_JOINTS};

use kernels::{floor_mverts_per_s, kernel_call_times, Outputs};
pub use plan::Plan;
use plan::{call_times, cpu_name, Attributes, Backend};

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

/// Everything one run measured.
pub struct Report {
    /// The kernels against the memory floor.
    pub rows: Vec<Row>,
    /// Palette preparation per frame.
    pub prepare: Vec<PrepareRow>,
    /// The paths users call against the kernel alone.
    pub paths: Vec<paths::PathRow>,
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
    let paths = paths::run(plan, &plan.methods, &|message| {
        progress.set_message(message.to_owned());
    })?;
    progress.finish_and_clear();
    Ok(Report {
        rows,
        prepare: prepare_rows,
        paths,
    })
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
    text.push_str(&paths::table(&report.paths));
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
        "paths": paths::json(&report.paths),
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A plan small enough for a unit test: every method, backend and attribute set, one size.
    fn tiny() -> Plan {
        Plan {
            methods: Method::ALL.to_vec(),
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
        let methods = Method::ALL.len();
        assert_eq!(paths.len(), methods + methods + methods * threads);
        for row in paths {
            assert!(row["ratio"].as_f64().unwrap() > 0.0, "{row}");
        }
        assert!(table(&report).contains("CPU:"));
    }
}
