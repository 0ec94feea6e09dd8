//! `skinblend centers FILE -o OUT`: precompute the centers of rotation of every skinned mesh
//! once and write them into a copy of the file, so `pose --method cor` and `compare` skip the
//! precomputation.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use skinblend::cor::{CorOptions, CorStage};
use skinblend_gltf::{export, Model, ROTATION_CENTER_ATTRIBUTE};

/// Computes the centers (the paper's σ and ε unless given) with a progress bar, writes `output`
/// (`.glb` or `.gltf`: the input with the attribute `_SKINBLEND_COR` on every skinned
/// primitive), and prints what it did on stderr.
pub fn run(file: &Path, sigma: f32, epsilon: f32, output: &Path) -> Result<()> {
    let start = Instant::now();
    // Bad usage (exit 2), before the input is read: an extension no command writes, or .obj.
    match crate::pose::output_format(output)? {
        export::Format::Obj => {
            return crate::output::usage(format!(
                "{}: centers of rotation are written to .glb or .gltf, not .obj",
                output.display()
            ))
        }
        export::Format::Glb | export::Format::Gltf => {}
    }
    crate::output::refuse_input(file, output)?;
    let context = || file.display().to_string();
    let mut model = Model::open(file).with_context(context)?;
    let options = CorOptions {
        sigma,
        subdivision_epsilon: epsilon,
        ..CorOptions::default()
    };
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{msg:>32} [{bar:40}] {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let mut on_progress = |primitive: usize, primitives: usize, p: skinblend::cor::CorProgress| {
        let stage = match p.stage {
            CorStage::Subdivide => "triangles",
            CorStage::Centers => "weight vectors",
        };
        bar.set_message(format!("primitive {}/{primitives}: {stage}", primitive + 1));
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
    };
    let result = model.compute_rotation_centers(&options, &mut on_progress);
    bar.finish_and_clear();
    let summary = result.with_context(context)?;
    if summary.is_empty() {
        anyhow::bail!("{}: no skinned mesh to compute centers for", file.display());
    }
    export::write_skinning_attributes(&model, output)?;
    let vertices: usize = summary.iter().map(|s| s.vertices).sum();
    let without: usize = summary.iter().map(|s| s.vertices_without_center).sum();
    eprintln!(
        "skinblend: {}: centers of rotation of {} {}, {vertices} {} ({without} without a \
         center, skinned by DQS) in {:.2} s; wrote {} with {ROTATION_CENTER_ATTRIBUTE}",
        file.display(),
        summary.len(),
        crate::pose::plural(summary.len(), "primitive", "primitives"),
        crate::pose::plural(vertices, "vertex", "vertices"),
        start.elapsed().as_secs_f64(),
        output.display()
    );
    Ok(())
}
