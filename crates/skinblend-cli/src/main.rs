//! The `skinblend` command line program.

mod bench;
mod centers;
mod dq_blend;
mod evidence;
mod gpu;
mod gpu_bench;
mod info;
mod output;
mod pose;
mod report;
mod rigs;
mod shaders;
mod view;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use output::MAX_FRAMES;
use skinblend::Method;

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
    /// shear-and-cap) and print the side-by-side table, then the reference figures of the
    /// 180° twist (from another engine's DQS documentation) beside ours. Needs no input files.
    Evidence {
        /// Print the rows as a JSON array of objects instead of the table.
        #[arg(long)]
        json: bool,
        /// Print the full table (every metric of LBS | DQS | CoR on one line per fixture and
        /// angle, about 250 columns) instead of the one that fits 100 columns.
        #[arg(long, conflicts_with = "json")]
        wide: bool,
        /// Skin LBS, DQS and CoR on the GPU (skinblend-gpu, Vulkan) instead of the CPU; a method
        /// the adapter cannot run stays on the CPU. Prints the adapter and the largest GPU vs CPU
        /// difference after the table.
        #[arg(long)]
        gpu: bool,
        /// Also write the picture report into this folder: side-by-side renders (LBS | DQS |
        /// CoR) of the fine twist and bend cylinders and of shear-and-cap, plots of the
        /// artefacts against the angle, and a self-contained index.html (always CPU-skinned).
        #[arg(short, long, visible_alias = "out", value_name = "DIR")]
        output: Option<std::path::PathBuf>,
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
        #[arg(short, long, visible_alias = "out", value_name = "DIR")]
        output: std::path::PathBuf,
        #[command(flatten)]
        blend: dq_blend::BlendArgs,
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
    /// Pose a glTF 2.0 file at a time of an animation, in its rest pose, or at every frame of
    /// an animation, and write the posed scene (skinned meshes baked, everything else kept) to
    /// .glb, .gltf or .obj. Prints a one-line summary on stderr (--json: the diagnostics of every
    /// pose on stdout).
    ///
    /// Frames: `--fps N` and/or `--frames A..B` with `{frame}` in the output's file name write
    /// one file per frame (frame n at the animation's start + n/N s, numbered with four digits:
    /// `-o out/fox_{frame}.glb` writes out/fox_0000.glb, out/fox_0001.glb, ...), loading the
    /// model once; each file equals a single `pose --time` of its frame's time.
    #[command(
        after_help = "Examples:\n  skinblend pose fox.glb --time 0.5 -o fox_posed.glb\n  \
                            skinblend pose fox.glb --rest -o fox_rest.glb\n  \
                            skinblend pose fox.glb --animation Run --fps 24 -o out/run_{frame}.glb"
    )]
    Pose {
        /// The .gltf or .glb file.
        file: std::path::PathBuf,
        /// Animation name or index (default: the first, if any; else the rest pose).
        #[arg(long)]
        animation: Option<String>,
        /// Time in seconds, clamped to the animation's range (default 0).
        #[arg(long, allow_negative_numbers = true, conflicts_with_all = ["fps", "frames"])]
        time: Option<f32>,
        /// The rest pose: the nodes' own transforms, no animation.
        #[arg(long, conflicts_with_all = ["animation", "time", "fps", "frames"])]
        rest: bool,
        /// One file per frame at N frames per second over the animation (1 to 1000; 24 when
        /// only --frames is given); the output must have {frame} in its file name.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
        fps: Option<u32>,
        /// Only frames A to B, both included (e.g. 0..47); with {frame} in the output.
        #[arg(long, value_name = "A..B")]
        frames: Option<pose::FrameRange>,
        /// Skinning method.
        #[arg(long, value_enum, default_value_t = Method::Linear)]
        method: Method,
        /// Output file: .glb, .gltf or .obj; with --fps/--frames a name with {frame} in it.
        #[arg(short, long, visible_alias = "out")]
        output: std::path::PathBuf,
        /// Skin on the GPU (skinblend-gpu, Vulkan; every method).
        #[arg(long)]
        gpu: bool,
        #[command(flatten)]
        blend: dq_blend::BlendArgs,
        /// Print the diagnostics of every pose (per node and primitive) as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Write the built-in rigs (twist_coarse, bend_coarse, twist_fine, bend_fine, shear_cap) as
    /// animated .glb files into a folder: nodes, a skin, normals and tangents, and an animation
    /// "sweep" turning each rig's joint from 0° to its largest angle at 90° per second.
    Rigs {
        /// The folder to write into (created if missing).
        #[arg(short, long, visible_alias = "out", value_name = "DIR")]
        output: std::path::PathBuf,
    },
    /// Precompute the centers of rotation (CoR) of every skinned mesh of a glTF file, with a
    /// progress bar, and write a copy of the file that carries them as the vertex attribute
    /// _SKINBLEND_COR: `pose --method cor` and `compare` then use them instead of computing.
    Centers {
        /// The .gltf or .glb file.
        file: std::path::PathBuf,
        /// Output file: .glb or .gltf (the input, everything kept, plus the centers).
        #[arg(short, long, visible_alias = "out")]
        output: std::path::PathBuf,
        /// σ of the weight similarity (Le & Hodgins 2016).
        #[arg(long, default_value_t = skinblend::cor::DEFAULT_SIGMA)]
        sigma: f32,
        /// ε of the subdivision: the largest weight difference along a sub-triangle's edge.
        #[arg(long, default_value_t = skinblend::cor::DEFAULT_SUBDIVISION_EPSILON)]
        epsilon: f32,
    },
    /// Write a copy of a glTF file whose skinned meshes carry the blend values of the blended
    /// method (0 = LBS, 1 = DQS) as the vertex attribute _SKINBLEND_DQ_BLEND, from a joint rule:
    /// each vertex takes as much DQS as its weights put on the named joints. `pose --method
    /// blended`, `compare` and `view` then use them.
    #[command(
        after_help = "Example:\n  skinblend dq-blend fox.glb --dq-joints b_Neck_04,b_Head_05 -o fox-blend.glb"
    )]
    DqBlend {
        /// The .gltf or .glb file.
        file: std::path::PathBuf,
        /// The joints (node names, comma-separated) whose influence becomes DQS.
        #[arg(long, value_name = "NAMES", value_delimiter = ',', required = true)]
        dq_joints: Vec<String>,
        /// Output file: .glb or .gltf (the input, everything kept, plus the blend values).
        #[arg(short, long, visible_alias = "out")]
        output: std::path::PathBuf,
    },
    /// Measure skinning speed (million vertices per second) for every method, attribute set,
    /// influence count, mesh size and backend (scalar, SIMD, all cores), beside the memory floor
    /// measured in the same run, and the per-frame cost of preparing a palette. With --gpu: the
    /// GPU compute kernel and end to end, beside a GPU buffer copy of the same bytes.
    Bench {
        /// CPU: only positions+normals with 4 influences (under a minute). GPU: 10k and 100k
        /// vertices, 3 frames (unless --vertices or --frames say otherwise).
        #[arg(long)]
        quick: bool,
        /// Print JSON (CPU: `rows` with backend, method, attributes, influences, vertices,
        /// threads, mverts_per_s, fastest_call_mverts_per_s, floor_mverts_per_s) instead of the
        /// table.
        #[arg(long)]
        json: bool,
        /// Benchmark the GPU path instead of the CPU kernels.
        #[arg(long)]
        gpu: bool,
        /// GPU: vertex counts, comma-separated (1 to 100000000 each; default 10000,100000,1000000).
        #[arg(long, value_delimiter = ',', requires = "gpu",
              value_parser = clap::value_parser!(u32).range(1..=MAX_BENCH_VERTICES))]
        vertices: Option<Vec<u32>>,
        /// GPU: influences per vertex, comma-separated (1 to 64 each).
        #[arg(long, value_delimiter = ',', default_values_t = [4u32], requires = "gpu",
              value_parser = clap::value_parser!(u32).range(1..=64))]
        influences: Vec<u32>,
        /// GPU: timed frames per case (medians are reported; 1 to 10000; default 10).
        #[arg(long, requires = "gpu", value_parser = clap::value_parser!(u32).range(1..=MAX_FRAMES))]
        frames: Option<u32>,
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
        #[arg(long, default_value = shaders::ALL_METHODS,
              value_parser = clap::builder::PossibleValuesParser::new(shaders::method_values()))]
        method: String,
        /// The folder to write into (created if missing).
        #[arg(short, long, visible_alias = "out", value_name = "DIR")]
        output: std::path::PathBuf,
    },
    /// Serve a live viewer of a glTF model in the browser: the model three times side by side
    /// (LBS | DQS | CoR) with one orbit camera, its animations, play/pause and a time slider,
    /// the report's colour maps, the per-frame metrics of `compare` as plots, and the frame
    /// rate. Skinning runs in the vertex shader from `skinblend shaders --lang glsl-es`. The
    /// server listens on 127.0.0.1 only and serves the page and this model's data, nothing
    /// else; Ctrl-C stops it.
    #[command(
        after_help = "Example:\n  skinblend view fox.glb            # prints the URL and opens it"
    )]
    View {
        /// The .gltf or .glb file.
        file: std::path::PathBuf,
        /// Port on 127.0.0.1 (default 0: a free port the system picks).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Methods side by side, comma-separated, in order (default: every method the model can
        /// run; blended where it has blend values, from the file or the flags below).
        #[arg(long, value_enum, value_delimiter = ',')]
        method: Vec<Method>,
        #[command(flatten)]
        blend: dq_blend::BlendArgs,
        /// Print the URL only; do not open a browser (one is never opened under CI or, on
        /// Linux, without a display).
        #[arg(long)]
        no_open: bool,
    },
    /// Write conformance vectors: the built-in rigs (as .glb) at the evidence angles, the cases
    /// engines get wrong (opposite quaternion signs, a scaled joint, a mirrored joint, weights
    /// not summing to 1, exactly 180°) and optionally sample models at three poses, with the
    /// palettes, the prepared dual quaternions and the expected positions and normals per
    /// method; manifest.json describes the files and the tolerance.
    Conformance {
        /// The folder to write into (created if missing).
        #[arg(short, long, visible_alias = "out", value_name = "DIR")]
        output: std::path::PathBuf,
        /// Also every .glb/.gltf one folder below this one (e.g. models/Fox/Fox.glb).
        #[arg(long, value_name = "DIR")]
        models: Option<std::path::PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Evidence {
            json,
            wide,
            gpu,
            output,
        } => evidence::run(json, wide, gpu).and_then(|()| match output {
            Some(dir) => report::evidence(&dir),
            None => Ok(()),
        }),
        Command::Compare {
            file,
            animation,
            frames,
            output,
            blend,
        } => report::compare(&file, animation, frames as usize, &blend, &output),
        Command::DqBlend {
            file,
            dq_joints,
            output,
        } => dq_blend::run(&file, &dq_joints, &output),
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
            rest,
            fps,
            frames,
            method,
            output,
            gpu,
            blend,
            json,
        } => {
            let when = if rest {
                pose::When::Rest
            } else if fps.is_some() || frames.is_some() {
                pose::When::Frames {
                    fps: fps.unwrap_or(pose::DEFAULT_FPS),
                    range: frames,
                }
            } else {
                pose::When::Time(time.unwrap_or(0.0))
            };
            pose::run(&pose::Request {
                file: &file,
                animation: animation.as_deref(),
                when,
                method,
                output: &output,
                gpu,
                blend: &blend,
                json,
            })
        }
        Command::Rigs { output } => rigs::run(&output),
        Command::View {
            file,
            port,
            method,
            blend,
            no_open,
        } => view::run(&view::ViewRequest {
            file: &file,
            port,
            methods: method,
            blend: &blend,
            open: !no_open,
        }),
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
            // --quick: two sizes and 3 frames, unless given.
            let default_vertices: &[u32] = if quick {
                &[10_000, 100_000]
            } else {
                &[10_000, 100_000, 1_000_000]
            };
            let vertices = vertices.unwrap_or_else(|| default_vertices.to_vec());
            let frames = frames.unwrap_or(if quick { 3 } else { 10 });
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
            eprintln!("skinblend: {}", output::one_line(&error));
            if output::is_usage(&error) {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// Vertices a GPU benchmark case may be asked for (100 million: 10 GB of buffers).
const MAX_BENCH_VERTICES: i64 = 100_000_000;

fn run_bench(quick: bool, json: bool) -> Result<()> {
    let plan = if quick {
        bench::Plan::quick()
    } else {
        bench::Plan::full()
    };
    let report = bench::run(&plan, !json)?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&bench::json(&report))?
        )?;
    } else {
        write!(out, "{}", bench::table(&report))?;
    }
    Ok(())
}
