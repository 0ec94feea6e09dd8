//! `skinblend pose FILE [--animation NAME|INDEX] [--time SECONDS] [--method linear|dq|cor] -o OUT`.

use std::path::Path;

use anyhow::{Context, Result};
use skinblend::SkinOptions;
use skinblend_gltf::{export, Model, Pose};

/// Poses `file` at `time_s` of `animation` (the first animation when `None` and the file has
/// one; the rest pose when it has none) with `method`, and writes `output`.
pub fn run(
    file: &Path,
    animation: Option<&str>,
    time_s: f32,
    method: &str,
    output: &Path,
) -> Result<()> {
    let method: skinblend::Method = method.parse()?;
    export::Format::from_path(output)?;
    let (model, pose) = load_pose(file, animation, time_s)?;
    let options = SkinOptions {
        method,
        ..SkinOptions::default()
    };
    let posed = model
        .skin_scene(&pose, &options)
        .with_context(|| file.display().to_string())?;
    export::write(&model, &pose, &posed, output)?;
    Ok(())
}

/// Loads `file` and samples `animation` (the first when `None` and the file has one; the rest
/// pose when it has none) at `time_s`; errors name the file. Shared by the CPU and GPU paths.
pub fn load_pose(file: &Path, animation: Option<&str>, time_s: f32) -> Result<(Model, Pose)> {
    let context = || file.display().to_string();
    let model = Model::open(file).with_context(context)?;
    let animation = match animation {
        Some(name) => Some(model.find_animation(name).with_context(context)?),
        None => (!model.animations.is_empty()).then_some(0),
    };
    let pose = model.pose(animation, time_s).with_context(context)?;
    Ok((model, pose))
}
