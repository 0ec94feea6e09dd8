//! Conformance vectors: inputs and expected outputs of LBS, DQS, CoR and blended that another
//! engine's skinning (a shader port, a C++ or C# implementation) can be checked against.
//!
//! [`write()`] fills a folder with:
//! - `manifest.json`: the format, the conventions, the tolerance with its reason, the rules a
//!   port must follow (`rules`: weights and the unweighted passthrough, LBS, the DQS pivot, sign
//!   alignment, normalization, residual and its order, CoR, the normal matrix with its singular
//!   rule and threshold, normalization's fallback, which normals are undefined), and one entry
//!   per case (its name, what it tests, its source file, counts, and the relative path of every
//!   array file, per frame and per method, with per method the vertices whose expected normal is
//!   undefined, `undefined_normals`: see [`UNDEFINED_NORMAL_RELATIVE`]);
//! - `rigs/<name>.glb`: the built-in rigs as animated glTF (see [`crate::rigs`]);
//! - one folder per case: the vertices (`positions.f32` n×3, `normals.f32` n×3, `joints.u32`
//!   n×4, `weights.f32` n×4, `centers.f32` n×4: the center of rotation, w = 1 when the vertex
//!   has one, the glTF attribute `_SKINBLEND_COR`; `blend_values.f32` n: the blended method's
//!   blend value, 0 = LBS, 1 = DQS, the glTF attribute `_SKINBLEND_DQ_BLEND`), the joints'
//!   bind origins (`joint_centers.f32` j×3), and per frame `frameN/`: `palette.f32` (j×16, the skin matrices
//!   `world_from_joint · joint_from_bind`, column-major), the prepared DQ form (`dual_quats.f32`
//!   j×8: real xyzw then dual xyzw; `residuals.f32` j×12: the residual's three rows;
//!   `rigid.u32` j: 1 when the residual is skipped) and the expected `<method>_positions.f32` and
//!   `<method>_normals.f32` (n×3) for `linear`, `dq`, `cor` and `blended`.
//!
//! Every array file is raw little-endian 32-bit values, row after row, no header: a test in any
//! language reads it in one call (JavaScript: `new Float32Array(await (await
//! fetch(url)).arrayBuffer())`). Expected outputs come from the CPU scalar reference kernel
//! (`SkinOptions { simd: false, .. }`), weights divided by their sum, the joints' bind origins
//! as the DQS residual centers. The blend values: the built-in rigs' joint rule (DQS on the
//! moving joint, `Fixture::dq_blend_values`: 0, 1 and ½ at the ring), and for a sample model
//! the joint rule with every odd-numbered joint flagged (0, 1 and values between).
//!
//! The cases: every built-in rig at each angle of the evidence table (the 180° twist exactly
//! +180°, the bends, shear-and-cap with its sheared and mirrored joints), the cases engines get
//! wrong (quaternions stored with opposite signs, a scaled joint, a mirrored joint, weights that
//! do not sum to 1), and each sample model given at three times of its first animation.

mod cases;
mod expected;
mod format;
mod manifest;
#[cfg(test)]
mod tests;
mod writer;

use std::path::{Path, PathBuf};

use skinblend::{evidence, fixtures};

use crate::error::{GltfError, Result};
use crate::export::write_atomically;
use crate::rigs;

pub use format::{
    FORMAT, FORMAT_VERSION, NORMAL_TOLERANCE, POSITION_TOLERANCE, SINGULAR_RELATIVE,
    UNDEFINED_NORMAL_RELATIVE,
};

use cases::{fixture_case, hard_cases, model_cases};
use manifest::manifest;
use writer::{io_error, write_case, Writer};

/// What [`write()`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Case names, in the manifest's order.
    pub cases: Vec<String>,
    /// Frames over all cases.
    pub frames: usize,
    /// Vertices over all cases and frames (each checked for every method).
    pub vertices: usize,
}

/// Writes the conformance vectors into `dir` (created if missing): the built-in rigs, the hard
/// cases and each model in `models` (`.glb`/`.gltf` paths). `progress` gets each case's name as
/// it is written. Files are written atomically; `manifest.json` last.
///
/// # Errors
/// [`GltfError::Io`] naming the file that could not be written; the errors of [`Model::open`](crate::Model::open)
/// naming a model; [`GltfError::Skin`] naming the case.
pub fn write(dir: &Path, models: &[PathBuf], progress: &mut dyn FnMut(&str)) -> Result<Summary> {
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    let writer = Writer { root: dir };
    let mut cases = Vec::new();
    for fixture in fixtures::all() {
        writer.file(
            &format!("rigs/{}", rigs::file_name(&fixture)),
            &rigs::to_glb(&fixture)?,
        )?;
        cases.push(fixture_case(&fixture, evidence::angles_deg(&fixture))?);
    }
    cases.extend(hard_cases()?);
    for model in models {
        cases.extend(model_cases(model)?);
    }
    let mut entries = Vec::new();
    let mut summary = Summary {
        cases: Vec::new(),
        frames: 0,
        vertices: 0,
    };
    for case in &cases {
        progress(&case.name);
        let (entry, vertices) = write_case(&writer, case)?;
        entries.push(entry);
        summary.cases.push(case.name.clone());
        summary.frames += case.frames.len();
        summary.vertices += vertices;
    }
    let manifest = manifest(entries);
    let text = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| GltfError::invalid("manifest.json", e.to_string()))?;
    write_atomically(&dir.join("manifest.json"), &text)?;
    Ok(summary)
}
