//! `skinblend pose FILE [--animation NAME|INDEX] [--time SECONDS | --rest | --fps N
//! [--frames A..B]] [--method METHOD] [--gpu] [--json] -o OUT`.
//!
//! One process, the model loaded once: a single pose (at a time of an animation, or the rest
//! pose), or one file per frame of an animation (`{frame}` in the output's name). Each file is
//! written atomically. A one-line summary goes to stderr; `--json` prints the diagnostics of
//! every pose on stdout.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use skinblend::{Diagnostics, Method, SkinBackend};
use skinblend_gltf::{export, Model, PosedNode, SceneOptions, SceneSkinner};

use crate::output::{self, usage, FrameTemplate};

/// Frames per second when `--frames` is given without `--fps`.
pub const DEFAULT_FPS: u32 = 24;

/// Frame numbers `A..B`, both included (frame `n` is at `start + n / fps` seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRange {
    /// The first frame written.
    pub first: u32,
    /// The last frame written (included).
    pub last: u32,
}

impl FromStr for FrameRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{text:?} is not A..B (frame numbers, A <= B, e.g. 0..47)");
        let (a, b) = text.split_once("..").ok_or_else(bad)?;
        let first: u32 = a.trim().parse().map_err(|_| bad())?;
        let last: u32 = b.trim().parse().map_err(|_| bad())?;
        if first > last {
            return Err(bad());
        }
        if u64::from(last - first) >= crate::output::MAX_FRAMES as u64 {
            return Err(format!(
                "{text:?} asks for {} frames; at most {} per run",
                u64::from(last - first) + 1,
                crate::output::MAX_FRAMES
            ));
        }
        Ok(Self { first, last })
    }
}

/// Which pose or poses to write.
#[derive(Debug, Clone, Copy)]
pub enum When {
    /// The nodes' own transforms, no animation.
    Rest,
    /// One time of an animation (the first animation when none is named; the rest pose when
    /// the file has none), clamped to its range.
    Time(f32),
    /// Every frame of an animation at `fps`, or the frames of `range`.
    Frames {
        /// Frames per second.
        fps: u32,
        /// The frames to write; all of the animation when `None`.
        range: Option<FrameRange>,
    },
}

/// What `skinblend pose` was asked to do.
#[derive(Debug)]
pub struct Request<'a> {
    /// The .gltf or .glb file.
    pub file: &'a Path,
    /// Animation name or index.
    pub animation: Option<&'a str>,
    /// Which pose or poses.
    pub when: When,
    /// The skinning method.
    pub method: Method,
    /// Where blended's blend values come from, beside the file's.
    pub blend: &'a crate::dq_blend::BlendArgs,
    /// The output file, or a `{frame}` template for [`When::Frames`].
    pub output: &'a Path,
    /// Skin on the GPU.
    pub gpu: bool,
    /// Print the diagnostics as JSON on stdout.
    pub json: bool,
}

/// One file to write.
struct Job {
    frame: Option<u32>,
    time_s: Option<f32>,
    output: PathBuf,
}

/// Runs `skinblend pose` (see the module docs).
pub fn run(request: &Request) -> Result<()> {
    let start = Instant::now();
    let file = request.file;
    let method = request.method;
    let template = match request.when {
        When::Frames { .. } => Some(FrameTemplate::parse(request.output)?),
        _ => {
            output::refuse_template(request.output)?;
            None
        }
    };
    let first_output = template
        .as_ref()
        .map_or_else(|| request.output.to_path_buf(), |t| t.path(0));
    // An extension no command writes is bad usage (exit 2), checked before reading anything.
    output_format(&first_output)?;
    if template.is_none() {
        output::refuse_input(file, request.output)?;
    }

    let context = || file.display().to_string();
    let mut model = Model::open(file).with_context(context)?;
    let dq_blend = request.blend.apply(&mut model).with_context(context)?;
    let animation = match (request.when, request.animation) {
        (When::Rest, _) => None,
        (_, Some(name)) => Some(model.find_animation(name).with_context(context)?),
        (_, None) => (!model.animations().is_empty()).then_some(0),
    };
    let jobs = match (request.when, &template) {
        (When::Frames { fps, range }, Some(template)) => {
            let Some(a) = animation else {
                anyhow::bail!("{}: has no animation to take frames of", file.display());
            };
            let jobs = frame_jobs(&model, a, fps, range, template).with_context(context)?;
            // Every frame's name against every file the model was read from (its external
            // buffers and images too), before the first frame is written.
            for job in &jobs {
                output::refuse_input(file, &job.output)?;
                skinblend_gltf::export::refuse_input(model.input_files(), &job.output)
                    .or_else(|error| output::usage(error.to_string()))?;
            }
            // Created before the first frame is skinned (the writer would create it too), the
            // error naming the folder alone, as the writer's does.
            let folder = template.folder();
            if !folder.as_os_str().is_empty() {
                std::fs::create_dir_all(folder).with_context(|| folder.display().to_string())?;
            }
            jobs
        }
        (When::Rest, _) => vec![Job {
            frame: None,
            time_s: None,
            output: request.output.to_path_buf(),
        }],
        (_, _) => vec![Job {
            frame: None,
            time_s: match (request.when, animation) {
                (When::Time(t), Some(_)) => Some(t),
                _ => None,
            },
            output: request.output.to_path_buf(),
        }],
    };

    let options = SceneOptions {
        dq_blend,
        ..SceneOptions::with_method(method)
    };
    let bar = if jobs.len() > 1 {
        let bar = ProgressBar::new(jobs.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_message("frames");
        bar
    } else {
        ProgressBar::hidden()
    };
    // One scene skinner for every frame: the model's primitives prepared once (CoR centers
    // taken from the file or computed once), on the CPU or uploaded to the GPU once.
    let written = if request.gpu {
        let gpu = crate::gpu::open_gpu()?;
        let skinner = SceneSkinner::with_backend(&model, gpu, options, &mut |_, _, _| {})
            .with_context(context)?;
        write_poses(skinner, &model, animation, &jobs, &bar, file)
    } else {
        let skinner = SceneSkinner::cpu(&model, options).with_context(context)?;
        write_poses(skinner, &model, animation, &jobs, &bar, file)
    };
    let Written {
        records,
        total,
        vertices,
        skinned_nodes,
    } = match written {
        Ok(written) => written,
        Err(error) => {
            bar.finish_and_clear();
            return Err(error);
        }
    };
    bar.finish_and_clear();

    let animation_name = animation.map(|a| match &model.animations()[a].name {
        Some(name) => format!("animation {a} {name:?}"),
        None => format!("animation {a}"),
    });
    if request.json {
        let summary = json!({
            "file": file.display().to_string(),
            "method": method.name(),
            "backend": if request.gpu { "gpu" } else { "cpu" },
            "animation": animation,
            "animation_name": animation.and_then(|a| model.animations()[a].name.clone()),
            "rest": matches!(request.when, When::Rest) || animation.is_none(),
            "fps": match request.when { When::Frames { fps, .. } => Some(fps), _ => None },
            "poses": records,
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
    }
    let what = match (&jobs[..], &animation_name) {
        ([job], Some(name)) if job.time_s.is_some() => {
            format!("{name} at {} s", job.time_s.unwrap_or_default())
        }
        ([_], _) => "the rest pose".to_owned(),
        ([first, .., last], Some(name)) => format!(
            "{} frames ({}..{}) of {name}",
            jobs.len(),
            first.frame.unwrap_or_default(),
            last.frame.unwrap_or_default()
        ),
        _ => String::new(),
    };
    let wrote = match &jobs[..] {
        [job] => job.output.display().to_string(),
        [first, .., last] => format!("{} .. {}", first.output.display(), last.output.display()),
        [] => String::new(),
    };
    eprintln!(
        "skinblend: {}: {what} ({}{}): {skinned_nodes} skinned {}, {vertices} {}; {}; wrote \
         {wrote} in {:.2} s",
        file.display(),
        method.name(),
        if request.gpu { ", GPU" } else { "" },
        plural(skinned_nodes, "node", "nodes"),
        plural(vertices, "vertex", "vertices"),
        diagnostics_text(&total, jobs.len() > 1),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// What [`write_poses`] wrote.
struct Written {
    /// One JSON record per file.
    records: Vec<serde_json::Value>,
    /// Diagnostics summed over every file.
    total: Diagnostics,
    /// Skinned vertices of one pose.
    vertices: usize,
    /// Skinned nodes of one pose.
    skinned_nodes: usize,
}

/// Skins and writes every job with `skinner` (whatever its backend), advancing `bar`. An error
/// posing or skinning names the input `file`; one writing an output names that output only.
fn write_poses<B: SkinBackend>(
    mut skinner: SceneSkinner<'_, B>,
    model: &Model,
    animation: Option<usize>,
    jobs: &[Job],
    bar: &ProgressBar,
    file: &Path,
) -> Result<Written> {
    let context = || file.display().to_string();
    let mut written = Written {
        records: Vec::with_capacity(jobs.len()),
        total: Diagnostics::default(),
        vertices: 0,
        skinned_nodes: 0,
    };
    for job in jobs {
        let pose = match job.time_s {
            Some(t) => model.pose(animation, t).with_context(context)?,
            None => model.rest_pose(),
        };
        let posed = skinner.skin(&pose).with_context(context)?;
        export::write(model, &pose, posed, &job.output)?;
        bar.inc(1);
        let mut diagnostics = Diagnostics::default();
        written.vertices = 0;
        for node in posed {
            for primitive in &node.primitives {
                add(&mut diagnostics, &primitive.diagnostics);
                written.vertices += primitive.positions.len();
            }
        }
        written.skinned_nodes = posed.len();
        add(&mut written.total, &diagnostics);
        written.records.push(json!({
            "frame": job.frame,
            "time_s": job.time_s,
            "output": job.output.display().to_string(),
            "nodes": posed.iter().map(node_json).collect::<Vec<_>>(),
            "diagnostics": diagnostics_json(&diagnostics),
        }));
    }
    Ok(written)
}

/// The frames of `animation` at `fps` (all, or `range`), each with its time and file.
fn frame_jobs(
    model: &Model,
    animation: usize,
    fps: u32,
    range: Option<FrameRange>,
    template: &FrameTemplate,
) -> Result<Vec<Job>> {
    let clip = &model.animations()[animation];
    let duration_s = f64::from(clip.end_s - clip.start_s).max(0.0);
    // The last frame at or before the end; 1e-6 of a frame forgives the end time's rounding.
    let last_frame = (duration_s * f64::from(fps) + 1e-6).floor() as u64;
    let range = range.unwrap_or(FrameRange {
        first: 0,
        last: last_frame.min(u64::from(u32::MAX)) as u32,
    });
    if u64::from(range.last) > last_frame {
        anyhow::bail!(
            "animation {animation} lasts {duration_s:.3} s: frames 0..{last_frame} at {fps} fps; \
             --frames {}..{} goes past its end",
            range.first,
            range.last
        );
    }
    let count = u64::from(range.last - range.first) + 1;
    if count > crate::output::MAX_FRAMES as u64 {
        return usage(format!(
            "animation {animation} has {count} frames at {fps} fps; at most {} per run (use \
             --frames A..B)",
            crate::output::MAX_FRAMES
        ));
    }
    Ok((range.first..=range.last)
        .map(|frame| Job {
            frame: Some(frame),
            time_s: Some(frame_time_s(clip.start_s, frame, fps)),
            output: template.path(frame),
        })
        .collect())
}

/// The format of an output file by its extension (`.glb`, `.gltf`, `.obj`, any case).
///
/// # Errors
/// [`output::UsageError`] (exit 2) naming the path for any other extension or none.
pub(crate) fn output_format(path: &Path) -> Result<export::Format> {
    export::Format::from_path(path).or_else(|error| usage(error.to_string()))
}

/// The time of frame `frame` at `fps` of an animation starting at `start_s`.
fn frame_time_s(start_s: f32, frame: u32, fps: u32) -> f32 {
    (f64::from(start_s) + f64::from(frame) / f64::from(fps)) as f32
}

fn add(total: &mut Diagnostics, d: &Diagnostics) {
    total.singular_normal_matrices += d.singular_normal_matrices;
    total.non_rigid_joints += d.non_rigid_joints;
    total.sign_flips += d.sign_flips;
    total.unweighted_vertices += d.unweighted_vertices;
}

fn diagnostics_json(d: &Diagnostics) -> serde_json::Value {
    json!({
        "singular_normal_matrices": d.singular_normal_matrices,
        "non_rigid_joints": d.non_rigid_joints,
        "sign_flips": d.sign_flips,
        "unweighted_vertices": d.unweighted_vertices,
    })
}

fn node_json(node: &PosedNode) -> serde_json::Value {
    json!({
        "node": node.node,
        "mesh": node.mesh,
        "skin": node.skin,
        "primitives": node.primitives.iter().map(|p| json!({
            "vertices": p.positions.len(),
            "diagnostics": diagnostics_json(&p.diagnostics),
        })).collect::<Vec<_>>(),
    })
}

/// `one` for a count of 1, else `many`: "1 node", "2 nodes".
pub fn plural<'a>(count: usize, one: &'a str, many: &'a str) -> &'a str {
    if count == 1 {
        one
    } else {
        many
    }
}

/// The diagnostics as words, "no singular normal matrices, ..." (summed over frames).
fn diagnostics_text(d: &Diagnostics, over_frames: bool) -> String {
    let counts = [
        (
            d.singular_normal_matrices,
            "singular normal matrix",
            "singular normal matrices",
        ),
        (d.non_rigid_joints, "non-rigid joint", "non-rigid joints"),
        (d.sign_flips, "sign flip", "sign flips"),
        (
            d.unweighted_vertices,
            "unweighted vertex",
            "unweighted vertices",
        ),
    ];
    let text = counts
        .iter()
        .map(|&(n, one, many)| format!("{n} {}", plural(n, one, many)))
        .collect::<Vec<_>>()
        .join(", ");
    if over_frames {
        format!("{text} (summed over the frames)")
    } else {
        text
    }
}
