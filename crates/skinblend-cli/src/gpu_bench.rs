//! The GPU rows of the benchmark: kernel and end-to-end throughput beside the GPU's own copy
//! floor, from `skinblend_gpu::bench`.

use std::io::Write;

use anyhow::{Context, Result};
use skinblend::Method;
use skinblend_gpu::bench::{self, GpuBenchCase, GpuBenchRow, Timing};

/// Options of the GPU benchmark.
#[derive(Debug, Clone)]
pub struct GpuBenchOptions {
    /// Vertex counts.
    pub vertices: Vec<usize>,
    /// Influences per vertex.
    pub influences: Vec<usize>,
    /// Timed frames per case.
    pub frames: usize,
    /// Print JSON instead of the table.
    pub json: bool,
}

/// Runs every case (every method, with normals, and with normals and tangents) and prints the
/// rows.
pub fn run(options: &GpuBenchOptions) -> Result<()> {
    let gpu = crate::gpu::open_gpu()?;
    let mut rows = Vec::new();
    for &vertices in &options.vertices {
        for &influences in &options.influences {
            for (normals, tangents) in [(true, false), (true, true)] {
                for method in Method::ALL {
                    let case = GpuBenchCase {
                        method,
                        vertices,
                        influences,
                        normals,
                        tangents,
                        frames: options.frames,
                    };
                    let row = bench::run(&gpu, &case).with_context(|| format!("{case:?}"))?;
                    if !options.json {
                        eprint!(".");
                    }
                    rows.push(row);
                }
            }
        }
    }
    let mut out = std::io::stdout().lock();
    if options.json {
        let array: Vec<serde_json::Value> = rows.iter().map(row_json).collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&array)?)?;
    } else {
        eprintln!();
        let info = gpu.adapter_info();
        write!(
            out,
            "{}",
            table(
                &rows,
                &format!(
                    "{} ({:?}, driver {} {})",
                    info.name, info.backend, info.driver, info.driver_info
                )
            )
        )?;
    }
    Ok(())
}

fn attributes(case: &GpuBenchCase) -> &'static str {
    match (case.normals, case.tangents) {
        (false, false) => "positions",
        (true, false) => "+normals",
        (false, true) => "+tangents",
        (true, true) => "+normals+tangents",
    }
}

fn timing(t: Timing) -> &'static str {
    match t {
        Timing::Timestamps => "timestamps",
        Timing::WallClock => "wall clock",
    }
}

fn row_json(row: &GpuBenchRow) -> serde_json::Value {
    serde_json::json!({
        "backend": "gpu",
        "adapter": row.adapter,
        "method": row.case.method.name(),
        "vertices": row.case.vertices,
        "influences": row.case.influences,
        "frames": row.case.frames,
        "attributes": attributes(&row.case),
        "bytes_per_frame": row.bytes_per_frame,
        "kernel_s": row.kernel_s,
        "end_to_end_s": row.end_to_end_s,
        "copy_s": row.copy_s,
        "copy_timing": timing(row.copy_timing),
        "kernel_mvps": row.kernel_mvps(),
        "end_to_end_mvps": row.end_to_end_mvps(),
        "copy_floor_mvps": row.copy_floor_mvps(),
        "share_of_floor": row.share_of_floor(),
    })
}

fn table(rows: &[GpuBenchRow], adapter: &str) -> String {
    let mut text = format!(
        "GPU: {adapter}\n\
         Million vertices per second (medians). kernel: the compute pass by timestamp queries;\n\
         end-to-end: palette upload, dispatch and completion per frame (wall clock); copy floor: a\n\
         buffer copy moving the same bytes in the same run; share: kernel (or end-to-end when\n\
         untimed) speed as a share of the copy floor.\n\n"
    );
    text.push_str(&format!(
        "{:<7} {:>10} {:>2} {:<18} {:>10} {:>12} {:>11} {:>7}  {}\n",
        "method",
        "vertices",
        "k",
        "attributes",
        "kernel",
        "end-to-end",
        "copy floor",
        "share",
        "copy timed by"
    ));
    for row in rows {
        let kernel = row
            .kernel_mvps()
            .map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
        text.push_str(&format!(
            "{:<7} {:>10} {:>2} {:<18} {:>10} {:>12.1} {:>11.1} {:>6.0}%  {}\n",
            row.case.method.name(),
            row.case.vertices,
            row.case.influences,
            attributes(&row.case),
            kernel,
            row.end_to_end_mvps(),
            row.copy_floor_mvps(),
            row.share_of_floor() * 100.0,
            timing(row.copy_timing),
        ));
    }
    text
}
