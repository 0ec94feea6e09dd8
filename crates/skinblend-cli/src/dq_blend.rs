//! Where the blended method's blend values come from on the command line (`--dq-blend`,
//! `--dq-joints`, shared by `pose`, `compare` and `view`), and `skinblend dq-blend`, which
//! writes them into a copy of a file as `_SKINBLEND_DQ_BLEND`.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use skinblend_gltf::{export, Model};

/// The blend values of `--method blended` when the file carries no `_SKINBLEND_DQ_BLEND`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BlendArgs {
    /// Blended method: one blend value for every vertex of a primitive the file gives none
    /// (0 = LBS, 1 = DQS).
    #[arg(long, value_name = "0..1", value_parser = parse_blend_value, conflicts_with = "dq_joints")]
    pub dq_blend: Option<f32>,
    /// Blended method: each vertex takes as much DQS as its weights put on these joints (node
    /// names, comma-separated), replacing the file's blend values.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub dq_joints: Vec<String>,
}

impl BlendArgs {
    /// Applies `--dq-joints` to `model` (its primitives' blend values) and returns
    /// `--dq-blend`, for `SceneOptions::dq_blend`.
    ///
    /// # Errors
    /// A joint name that no skinned mesh's skin has.
    pub fn apply(&self, model: &mut Model) -> Result<Option<f32>> {
        if !self.dq_joints.is_empty() {
            let names: Vec<&str> = self.dq_joints.iter().map(|n| n.trim()).collect();
            model.set_dq_blend_from_joints(&names)?;
        }
        Ok(self.dq_blend)
    }
}

/// A blend value: a number in `[0, 1]`.
fn parse_blend_value(text: &str) -> std::result::Result<f32, String> {
    let value: f32 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is not in [0, 1] (0 = LBS, 1 = DQS)"))
    }
}

/// `skinblend dq-blend FILE --dq-joints NAMES -o OUT`: a copy of `file` whose skinned primitives
/// carry the blend values of the joint rule as `_SKINBLEND_DQ_BLEND` (everything else kept), so
/// that `pose --method blended`, `compare` and `view` use them.
///
/// # Errors
/// The file's, an unknown joint name, an output that is an input, and writing's.
pub fn run(file: &Path, joints: &[String], output: &Path) -> Result<()> {
    crate::output::refuse_input(file, output)?;
    let start = Instant::now();
    let context = || file.display().to_string();
    let mut model = Model::open(file).with_context(context)?;
    let names: Vec<&str> = joints.iter().map(|n| n.trim()).collect();
    let summary = model
        .set_dq_blend_from_joints(&names)
        .with_context(context)?;
    export::write_skinning_attributes(&model, output)
        .with_context(|| output.display().to_string())?;
    let vertices: usize = summary.iter().map(|p| p.vertices).sum();
    let dq: usize = summary.iter().map(|p| p.dq_vertices).sum();
    let linear: usize = summary.iter().map(|p| p.linear_vertices).sum();
    eprintln!(
        "skinblend: {} primitives, {vertices} vertices: {dq} DQS, {linear} LBS, {} between; wrote {} in {:.2} s",
        summary.len(),
        vertices - dq - linear,
        output.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
