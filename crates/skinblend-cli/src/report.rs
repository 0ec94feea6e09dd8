//! `skinblend evidence --out DIR` and `skinblend compare FILE --out DIR`: the picture reports of
//! skinblend-report, with a progress bar for the glTF comparison.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use skinblend_report::compare::{self, CompareOptions, Progress, Stage};

/// Writes the evidence report (renders, plots, `index.html`) into `out` and says where.
pub fn evidence(out: &Path) -> Result<()> {
    let start = Instant::now();
    let files = skinblend_report::evidence::write_report(out)
        .with_context(|| format!("writing the evidence report to {}", out.display()))?;
    eprintln!(
        "skinblend: wrote {} files to {} in {:.1} s; open {}",
        files.len(),
        out.display(),
        start.elapsed().as_secs_f64(),
        out.join("index.html").display()
    );
    Ok(())
}

/// Writes the comparison report of `file` over an animation into `out`, showing progress.
pub fn compare(
    file: &Path,
    animation: Option<String>,
    frames: usize,
    blend: &crate::dq_blend::BlendArgs,
    out: &Path,
) -> Result<()> {
    crate::output::refuse_input_in_report(file, out)?;
    let start = Instant::now();
    let context = || file.display().to_string();
    let mut model = skinblend_gltf::Model::open(file).with_context(context)?;
    let dq_blend = blend.apply(&mut model).with_context(context)?;
    let options = CompareOptions {
        animation,
        frames,
        dq_blend,
        ..CompareOptions::default()
    };
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{msg:>20} [{bar:40}] {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let mut stage: Option<Stage> = None;
    let mut on_progress = |p: Progress| {
        if stage != Some(p.stage) {
            stage = Some(p.stage);
            bar.reset();
            bar.set_message(p.stage.describe());
        }
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
    };
    let shown = file.display().to_string();
    let result = compare::write_model_report(&model, &shown, &options, out, &mut on_progress);
    bar.finish_and_clear();
    let summary = result.with_context(|| format!("comparing methods on {}", file.display()))?;
    eprintln!(
        "skinblend: {} ({} vertices, {} triangles), animation {:?}, {} frames; most different \
         frames {:?}; wrote {} files to {} in {:.1} s; open {}",
        file.display(),
        summary.vertex_count,
        summary.triangle_count,
        summary.animation,
        summary.frames.len(),
        summary.picked,
        summary.files.len(),
        out.display(),
        start.elapsed().as_secs_f64(),
        out.join("index.html").display()
    );
    Ok(())
}
