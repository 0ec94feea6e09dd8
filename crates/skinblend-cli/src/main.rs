//! The `skinblend` command line program.

mod bench;
mod centers;
mod gpu;
mod gpu_bench;
mod info;
mod pose;
mod report;
mod shaders;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use skinblend::evidence::{self, EvidenceRow, SeedComparison};

/// Skeletal mesh skinning that does not collapse a twisted joint: LBS, DQS and centers of
/// rotation, measured side by side.
#[derive(Debug, Parser)]
#[command(name = "skinblend", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Measure LBS, DQS and centers of rotation (CoR) on the built-in rigs (twist, bend,
    /// shear-and-cap) and print the side-by-side table, then the seed's own figures beside ours.
    /// Needs no input files.
    Evidence {
        /// Print the rows as a JSON array of objects instead of the table.
        #[arg(long)]
        json: bool,
        /// Skin LBS, DQS and CoR on the GPU (skinblend-gpu, Vulkan) instead of the CPU; a method
        /// the adapter cannot run stays on the CPU. Prints the adapter and the largest GPU vs CPU
        /// difference after the table.
        #[arg(long)]
        gpu: bool,
        /// Also write the picture report into this folder: side-by-side renders (LBS | DQS |
        /// CoR) of the fine twist and bend cylinders and of shear-and-cap, plots of the
        /// artefacts against the angle, and a self-contained index.html (always CPU-skinned).
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
    },
    /// Compare the methods (LBS | DQS | CoR) on your own glTF model over an animation and write
    /// a picture report: per-frame distance between methods and volume and edge ratios, the
    /// frames where the methods differ most rendered side by side, and index.html.
    Compare {
        /// The .gltf or .glb file.
        file: std::path::PathBuf,
        /// Animation name or index (default: the first).
        #[arg(long)]
        animation: Option<String>,
        /// Frames sampled evenly over the animation, its first and last time included (1 to
        /// 10000).
        #[arg(long, default_value_t = 48, value_parser = clap::value_parser!(u32).range(1..=MAX_FRAMES))]
        frames: u32,
        /// The folder to write the report into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: std::path::PathBuf,
    },
    /// Describe a glTF 2.0 file: scenes, meshes, skins (joints, influences, non-rigid joints),
    /// animations, and what the loader repaired.
    Info {
        /// The .gltf or .glb file.
        file: std::path::PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Pose a glTF 2.0 file at a time of an animation and write the posed scene (skinned meshes
    /// baked, everything else kept) to .glb, .gltf or .obj.
    Pose {
        /// The .gltf or .glb file.
        file: std::path::PathBuf,
        /// Animation name or index (default: the first, if any; else the rest pose).
        #[arg(long)]
        animation: Option<String>,
        /// Time in seconds, clamped to the animation's range.
        #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
        time: f32,
        /// Skinning method.
        #[arg(long, default_value = "linear", value_parser = clap::builder::PossibleValuesParser::new(skinblend_gltf::method_names()))]
        method: String,
        /// Output file: .glb, .gltf or .obj.
        #[arg(short, long)]
        output: std::path::PathBuf,
        /// Skin on the GPU (skinblend-gpu, Vulkan; every method).
        #[arg(long)]
        gpu: bool,
    },
    /// Precompute the centers of rotation (CoR) of every skinned mesh of a glTF file, with a
    /// progress bar, and write a copy of the file that carries them as the vertex attribute
    /// _SKINBLEND_COR: `pose --method cor` and `compare` then use them instead of computing.
    Centers {
        /// The .gltf or .glb file.
        file: std::path::PathBuf,
        /// Output file: .glb or .gltf (the input, everything kept, plus the centers).
        #[arg(short, long)]
        output: std::path::PathBuf,
        /// σ of the weight similarity (Le & Hodgins 2016).
        #[arg(long, default_value_t = skinblend::cor::DEFAULT_SIGMA)]
        sigma: f32,
        /// ε of the subdivision: the largest weight difference along a sub-triangle's edge.
        #[arg(long, default_value_t = skinblend::cor::DEFAULT_SUBDIVISION_EPSILON)]
        epsilon: f32,
    },
    /// Measure skinning speed (million vertices per second) for every method, attribute set,
    /// influence count, mesh size and backend (scalar, SIMD, all cores), beside the memory floor
    /// measured in the same run, and the per-frame cost of preparing a palette. With --gpu: the
    /// GPU compute kernel and end to end, beside a GPU buffer copy of the same bytes.
    Bench {
        /// CPU: only positions+normals with 4 influences (under a minute).
        #[arg(long)]
        quick: bool,
        /// Print JSON (CPU: `rows` with backend, method, attributes, influences, vertices,
        /// threads, mverts_per_s, floor_mverts_per_s) instead of the table.
        #[arg(long)]
        json: bool,
        /// Benchmark the GPU path instead of the CPU kernels.
        #[arg(long)]
        gpu: bool,
        /// GPU: vertex counts, comma-separated (1 to 100000000 each).
        #[arg(long, value_delimiter = ',', default_values_t = [10_000u32, 100_000, 1_000_000], requires = "gpu",
              value_parser = clap::value_parser!(u32).range(1..=MAX_BENCH_VERTICES))]
        vertices: Vec<u32>,
        /// GPU: influences per vertex, comma-separated (1 to 64 each).
        #[arg(long, value_delimiter = ',', default_values_t = [4u32], requires = "gpu",
              value_parser = clap::value_parser!(u32).range(1..=64))]
        influences: Vec<u32>,
        /// GPU: timed frames per case (medians are reported; 1 to 10000).
        #[arg(long, default_value_t = 10, requires = "gpu", value_parser = clap::value_parser!(u32).range(1..=MAX_FRAMES))]
        frames: u32,
    },
    /// Write the skinning functions (blend, pivot sign alignment, residual, CoR) and an example
    /// vertex shader per method in an engine's shading language, translated with naga from
    /// skinblend's one WGSL source; each file starts with its bindings, data layout and
    /// conventions. Also writes interface-<lang>.json (entry point, names to bind).
    Shaders {
        /// Shading language: wgsl, glsl (4.50), glsl-es (3.00, WebGL2), hlsl, msl.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(["wgsl", "glsl", "glsl-es", "hlsl", "msl"]))]
        lang: String,
        /// Skinning method, or all.
        #[arg(long, default_value = "all", value_parser = clap::builder::PossibleValuesParser::new(["linear", "dq", "cor", "all"]))]
        method: String,
        /// The folder to write into (created if missing).
        #[arg(short, long, value_name = "DIR")]
        output: std::path::PathBuf,
    },
    /// Write conformance vectors: the built-in rigs (as .glb) at the evidence angles, the cases
    /// engines get wrong (opposite quaternion signs, a scaled joint, a mirrored joint, weights
    /// not summing to 1, exactly 180°) and optionally sample models at three poses, with the
    /// palettes, the prepared dual quaternions and the expected positions and normals per
    /// method; manifest.json describes the files and the tolerance.
    Conformance {
        /// The folder to write into (created if missing).
        #[arg(short, long, value_name = "DIR")]
        output: std::path::PathBuf,
        /// Also every .glb/.gltf one folder below this one (e.g. models/Fox/Fox.glb).
        #[arg(long, value_name = "DIR")]
        models: Option<std::path::PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Evidence { json, gpu, out } => run_evidence(json, gpu).and_then(|()| match out {
            Some(dir) => report::evidence(&dir),
            None => Ok(()),
        }),
        Command::Compare {
            file,
            animation,
            frames,
            out,
        } => report::compare(&file, animation, frames as usize, &out),
        Command::Info { file, json } => info::run(&file, json),
        Command::Centers {
            file,
            output,
            sigma,
            epsilon,
        } => centers::run(&file, sigma, epsilon, &output),
        Command::Pose {
            file,
            animation,
            time,
            method,
            output,
            gpu,
        } => {
            if gpu {
                gpu::pose(&file, animation.as_deref(), time, &method, &output)
            } else {
                pose::run(&file, animation.as_deref(), time, &method, &output)
            }
        }
        Command::Shaders {
            lang,
            method,
            output,
        } => shaders::run(&lang, &method, &output),
        Command::Conformance { output, models } => shaders::conformance(&output, models.as_deref()),
        Command::Bench {
            quick,
            json,
            gpu: true,
            vertices,
            influences,
            frames,
        } => {
            let _ = quick;
            gpu_bench::run(&gpu_bench::GpuBenchOptions {
                vertices: vertices.into_iter().map(|v| v as usize).collect(),
                influences: influences.into_iter().map(|k| k as usize).collect(),
                frames: frames as usize,
                json,
            })
        }
        Command::Bench {
            quick,
            json,
            gpu: false,
            ..
        } => run_bench(quick, json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("skinblend: {}", one_line(&error));
            ExitCode::from(1)
        }
    }
}

/// Frames a command may be asked for: far more than any report or benchmark needs, and a bound
/// on the work a typo can start.
const MAX_FRAMES: i64 = 10_000;
/// Vertices a GPU benchmark case may be asked for (100 million: 10 GB of buffers).
const MAX_BENCH_VERTICES: i64 = 100_000_000;

/// The error and its causes on one line, `context: error: cause`, leaving out a cause whose
/// text the line already holds (our error types print their source in their own message) and
/// a context that the next cause repeats.
fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string().replace(['\n', '\r'], " ");
        if text.starts_with(&line) {
            // A cause that repeats the context (a file name) and says more replaces it.
            line = text;
            continue;
        }
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

fn run_evidence(json: bool, on_gpu: bool) -> Result<()> {
    let (rows, gpu_note) = if on_gpu {
        let gpu = gpu::evidence_rows()?;
        let cpu_methods: Vec<&str> = gpu.cpu_methods.iter().map(|m| m.name()).collect();
        let note = format!(
            "GPU: {}; largest relative difference of GPU from CPU vertices {:.1e}{}\n",
            gpu.adapter,
            gpu.max_relative_difference,
            if cpu_methods.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} on the CPU: this adapter cannot run its kernel)",
                    cpu_methods.join(", ")
                )
            }
        );
        (gpu.rows, Some(note))
    } else {
        (evidence::rows()?, None)
    };
    let mut out = std::io::stdout().lock();
    if json {
        let array: Vec<serde_json::Value> = rows.iter().map(row_json).collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&array)?)?;
    } else {
        write!(out, "{}", evidence_table(&rows))?;
        write!(out, "\n{}", seed_table(&evidence::seed_comparison(&rows)))?;
        if let Some(note) = gpu_note {
            write!(out, "\n{note}")?;
        }
    }
    Ok(())
}

fn run_bench(quick: bool, json: bool) -> Result<()> {
    let plan = if quick {
        bench::Plan::quick()
    } else {
        bench::Plan::full()
    };
    let (rows, prepare_rows) = bench::run(&plan, !json)?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&bench::json(&rows, &prepare_rows))?
        )?;
    } else {
        write!(out, "{}", bench::table(&rows, &prepare_rows))?;
    }
    Ok(())
}

fn row_json(row: &EvidenceRow) -> serde_json::Value {
    serde_json::json!({
        "fixture": row.fixture,
        "angle_deg": row.angle_deg,
        "method": row.method.name(),
        "candy_wrapper_ratio": row.candy_wrapper_ratio,
        "edge_ratio_min": row.edge_ratio.min,
        "edge_ratio_mean": row.edge_ratio.mean,
        "edge_ratio_max": row.edge_ratio.max,
        "edge_count": row.edge_ratio.count,
        "volume_ratio": row.volume_ratio,
        "ring_distance_ratio_min": row.ring_distance_ratio.min,
        "ring_distance_ratio_max": row.ring_distance_ratio.max,
        "ring_pair_count": row.ring_distance_ratio.count,
        "bone_distance_ratio_min": row.bone_distance_ratio.min,
        "bone_distance_ratio_max": row.bone_distance_ratio.max,
        "non_rigid_joints": row.diagnostics.non_rigid_joints,
        "sign_flips": row.diagnostics.sign_flips,
        "singular_normal_matrices": row.diagnostics.singular_normal_matrices,
        "unweighted_vertices": row.diagnostics.unweighted_vertices,
    })
}

/// The side-by-side table: one line per fixture and angle, LBS | DQS | CoR per metric.
fn evidence_table(rows: &[EvidenceRow]) -> String {
    let mut text = String::new();
    text.push_str(
        "Each cell is LBS | DQS | CoR (centers of rotation). radius: smallest distance of the joint\n\
         ring from its axis, as a share of the rest radius (the candy wrapper). edges: posed/rest\n\
         length over the triangles' edges (three per triangle) min / mean / max. volume: posed/rest\n\
         (closed meshes). ring pairs: posed/rest distance over all joint-ring pairs, min..max. bone:\n\
         distance of blended vertices from the posed bones / rest radius, min (pinch) and max\n\
         (bulge). diag: non-rigid joints, sign flips, singular normal matrices.\n\n",
    );
    text.push_str(&format!(
        "{:<13} {:>5}  {:>24}  {:>56}  {:>21}  {:>46}  {:>21}  {:>21}  {}\n",
        "fixture",
        "angle",
        "radius",
        "edges min/mean/max",
        "volume",
        "ring pairs",
        "pinch",
        "bulge",
        "diag"
    ));
    let methods = evidence::METHODS.len();
    for group in rows.chunks(methods) {
        debug_assert!(group.iter().map(|r| r.method).eq(evidence::METHODS));
        let Some(first) = group.first() else { continue };
        let cells = |cell: &dyn Fn(&EvidenceRow) -> String| {
            group.iter().map(cell).collect::<Vec<_>>().join(" | ")
        };
        let volume = |r: &EvidenceRow| r.volume_ratio.map_or("-".into(), |v| format!("{v:.3}"));
        let edges = |r: &EvidenceRow| {
            format!(
                "{:.3}/{:.3}/{:.3}",
                r.edge_ratio.min, r.edge_ratio.mean, r.edge_ratio.max
            )
        };
        let ring = |r: &EvidenceRow| {
            format!(
                "{:.4}..{:.4}",
                r.ring_distance_ratio.min, r.ring_distance_ratio.max
            )
        };
        let diag = |r: &EvidenceRow| {
            format!(
                "{}/{}/{}",
                r.diagnostics.non_rigid_joints,
                r.diagnostics.sign_flips,
                r.diagnostics.singular_normal_matrices
            )
        };
        text.push_str(&format!(
            "{:<13} {:>4}°  {:>24}  {:>56}  {:>21}  {:>46}  {:>21}  {:>21}  {}\n",
            first.fixture,
            first.angle_deg,
            cells(&|r| format!("{:.1}%", r.candy_wrapper_ratio * 100.0)),
            cells(&edges),
            cells(&volume),
            cells(&ring),
            cells(&|r| format!("{:.3}", r.bone_distance_ratio.min)),
            cells(&|r| format!("{:.3}", r.bone_distance_ratio.max)),
            cells(&diag),
        ));
    }
    text
}

fn seed_table(comparisons: &[SeedComparison]) -> String {
    let mut text = String::from("The seed's figures (twist_coarse, 180°) beside ours:\n");
    text.push_str(&format!(
        "{:<62} {:>24} {:>24}  {}\n",
        "measurement", "seed", "skinblend", "agrees"
    ));
    for c in comparisons {
        text.push_str(&format!(
            "{:<62} {:>24} {:>24}  {}{}\n",
            c.what,
            c.seed,
            c.ours,
            if c.agrees { "yes" } else { "NO" },
            if c.remark.is_empty() {
                String::new()
            } else {
                format!(" ({})", c.remark)
            }
        ));
    }
    text
}
