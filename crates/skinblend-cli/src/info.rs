//! `skinblend info FILE [--json]`: describe a glTF file.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use skinblend_gltf::{info, Model};

/// Loads `file` and prints its summary as text or JSON.
pub fn run(file: &Path, json: bool) -> Result<()> {
    let model = Model::open(file).with_context(|| file.display().to_string())?;
    let summary = info::summary(&model).with_context(|| file.display().to_string())?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        write!(out, "{}: {}", file.display(), info::render_text(&summary))?;
    }
    Ok(())
}
