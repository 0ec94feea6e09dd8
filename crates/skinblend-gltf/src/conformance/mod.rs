//! Conformance vectors: inputs and expected outputs of LBS, DQS and CoR that another engine's
//! skinning (a shader port, a C++ or C# implementation) can be checked against.
//!
//! [`write()`] fills a folder with:
//! - `manifest.json`: the format, the conventions, the tolerance with its reason, and one entry
//!   per case (its name, what it tests, its source file, counts, and the relative path of every
//!   array file, per frame and per method);
//! - `rigs/<name>.glb`: the built-in rigs as animated glTF (see [`crate::rigs`]);
//! - one folder per case: the vertices (`positions.f32` n×3, `normals.f32` n×3, `joints.u32`
//!   n×4, `weights.f32` n×4, `centers.f32` n×4: the center of rotation, w = 1 when the vertex
//!   has one, the glTF attribute `_SKINBLEND_COR`), the joints' bind origins
//!   (`joint_centers.f32` j×3), and per frame `frameN/`: `palette.f32` (j×16, the skin matrices
//!   `world_from_joint · joint_from_bind`, column-major), the prepared DQ form (`dual_quats.f32`
//!   j×8: real xyzw then dual xyzw; `residuals.f32` j×12: the residual's three rows;
//!   `rigid.u32` j: 1 when the residual is skipped) and the expected `<method>_positions.f32` and
//!   `<method>_normals.f32` (n×3) for `linear`, `dq` and `cor`.
//!
//! Every array file is raw little-endian 32-bit values, row after row, no header: a test in any
//! language reads it in one call (JavaScript: `new Float32Array(await (await
//! fetch(url)).arrayBuffer())`). Expected outputs come from the CPU scalar reference kernel
//! (`SkinOptions { simd: false, .. }`), weights divided by their sum, the joints' bind origins
//! as the DQS residual centers.
//!
//! The cases: every built-in rig at each angle of the evidence table (the 180° twist exactly
//! +180°, the bends, shear-and-cap with its sheared and mirrored joints), the cases engines get
//! wrong (quaternions stored with opposite signs, a scaled joint, a mirrored joint, weights that
//! do not sum to 1), and each sample model given at three times of its first animation.

mod cases;

use std::path::{Path, PathBuf};

use glam::{Affine3A, Vec3};
use serde_json::{json, Value};
use skinblend::fixtures;
use skinblend::{
    evidence, prepare, skin_into, DualQuat, Influences, Method, PreparedPalette, SkinInput,
    SkinOptions, SkinOutputs,
};

use crate::error::{GltfError, Result};
use crate::export::write_atomically;
use crate::rigs;

use cases::{fixture_case, hard_cases, model_cases, Case, Frame};

/// The manifest's `format` value.
pub const FORMAT: &str = "skinblend-conformance";
/// The manifest's `version`: raised when a file or key changes meaning.
pub const FORMAT_VERSION: u32 = 1;

/// Position tolerance, relative to the case's `scale` (its largest absolute expected
/// coordinate, at least 1): a port passes where `|p − expected| ≤ POSITION_TOLERANCE · scale`.
/// The reference and a GPU both compute in f32; a few dozen operations per vertex with other
/// operation orders and fused multiply-adds differ by tens of ulps (skinblend's own WGSL kernel
/// differs from the CPU by at most 1.3e-6 relative on lavapipe); 1e-5 leaves room for that, and a
/// real error (a wrong sign, a missing residual, unnormalized weights) is 1e-2 or more.
pub const POSITION_TOLERANCE: f32 = 1e-5;

/// Normal tolerance (unit vectors, absolute per component): normals go through a cofactor
/// matrix and a normalization, which loses a few more digits than positions where the blended
/// 3x3 is nearly singular; a wrong normal transform (no inverse transpose, no sign of the
/// determinant) is off by 1e-1 or more.
pub const NORMAL_TOLERANCE: f32 = 1e-4;

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

fn reference_options(method: Method) -> SkinOptions {
    SkinOptions {
        method,
        simd: false,
        parallel: false,
        ..SkinOptions::default()
    }
}

fn io_error(path: &Path, source: std::io::Error) -> GltfError {
    GltfError::Io {
        path: path.to_owned(),
        source,
    }
}

fn skin_error(case: &str, source: skinblend::SkinError) -> GltfError {
    GltfError::Skin {
        path: format!("conformance case {case}"),
        source,
    }
}

fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

fn u32_bytes(values: impl IntoIterator<Item = u32>) -> Vec<u8> {
    values.into_iter().flat_map(u32::to_le_bytes).collect()
}

fn rows(map: &Affine3A) -> [f32; 12] {
    let (x, y, z, t) = (
        map.matrix3.x_axis,
        map.matrix3.y_axis,
        map.matrix3.z_axis,
        map.translation,
    );
    [x.x, y.x, z.x, t.x, x.y, y.y, z.y, t.y, x.z, y.z, z.z, t.z]
}

/// The four influence slots of every vertex (unused slots: joint 0, weight 0).
fn slots4(influences: &Influences, case: &str) -> Result<(Vec<u32>, Vec<f32>)> {
    let k = influences.influences_per_vertex();
    if k > 4 {
        return Err(GltfError::invalid(
            format!("conformance case {case}"),
            format!("{k} influences per vertex; the vectors carry 4 (JOINTS_0/WEIGHTS_0)"),
        ));
    }
    let n = influences.vertex_count();
    let mut joints = vec![0u32; n * 4];
    let mut weights = vec![0f32; n * 4];
    for v in 0..n {
        if let Some((j, w)) = influences.vertex(v) {
            for slot in 0..k {
                joints[v * 4 + slot] = u32::from(j[slot]);
                weights[v * 4 + slot] = w[slot];
            }
        }
    }
    Ok((joints, weights))
}

/// Expected positions and normals of `method` for one frame.
fn expected(case: &Case, frame: &Frame, method: Method) -> Result<(Vec<Vec3>, Vec<Vec3>)> {
    let input = SkinInput::new(&case.positions, Some(&case.normals), None, &case.influences)
        .and_then(|i| i.with_rotation_centers(&case.centers))
        .map_err(|e| skin_error(&case.name, e))?;
    let prepared = prepare(
        &frame.palette,
        Some(&case.joint_centers),
        &reference_options(method),
    )
    .map_err(|e| skin_error(&case.name, e))?;
    let n = case.positions.len();
    let mut positions = vec![Vec3::ZERO; n];
    let mut normals = vec![Vec3::ZERO; n];
    skin_into(
        &input,
        &prepared,
        SkinOutputs {
            positions: &mut positions,
            normals: Some(&mut normals),
            tangents: None,
        },
        reference_options(method).run_options(),
    )
    .map_err(|e| skin_error(&case.name, e))?;
    Ok((positions, normals))
}

/// The prepared DQ form of a frame (the core's split), with `negate_joints` stored negated.
fn prepared_dual_quats(case: &Case, frame: &Frame) -> Result<PreparedPalette> {
    prepare(
        &frame.palette,
        Some(&case.joint_centers),
        &reference_options(Method::DualQuaternion),
    )
    .map_err(|e| skin_error(&case.name, e))
}

fn negated(dq: &DualQuat) -> DualQuat {
    DualQuat {
        real: -dq.real,
        dual: -dq.dual,
    }
}

/// `value` as the shortest decimal that reads back as it (1e-5, not 9.999999747378752e-6).
fn shortest(value: f32) -> f64 {
    value.to_string().parse().unwrap_or(f64::from(value))
}

struct Writer<'a> {
    root: &'a Path,
}

impl Writer<'_> {
    /// Writes `bytes` to `relative` under the root (atomically) and returns the relative path.
    fn file(&self, relative: &str, bytes: &[u8]) -> Result<String> {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
        }
        write_atomically(&path, bytes)?;
        Ok(relative.to_string())
    }
}

fn write_case(writer: &Writer<'_>, case: &Case) -> Result<(Value, usize)> {
    let n = case.positions.len();
    let dir = &case.name;
    let (joints, weights) = slots4(&case.influences, &case.name)?;
    let centers: Vec<f32> = case
        .centers
        .iter()
        .flat_map(|c| {
            if c.is_finite() {
                [c.x, c.y, c.z, 1.0]
            } else {
                [0.0; 4]
            }
        })
        .collect();
    let vertex_files = json!({
        "positions": writer.file(&format!("{dir}/positions.f32"), &f32_bytes(case.positions.iter().flat_map(|p| p.to_array())))?,
        "normals": writer.file(&format!("{dir}/normals.f32"), &f32_bytes(case.normals.iter().flat_map(|p| p.to_array())))?,
        "joints": writer.file(&format!("{dir}/joints.u32"), &u32_bytes(joints))?,
        "weights": writer.file(&format!("{dir}/weights.f32"), &f32_bytes(weights))?,
        "centers": writer.file(&format!("{dir}/centers.f32"), &f32_bytes(centers))?,
        "joint_centers": writer.file(&format!("{dir}/joint_centers.f32"), &f32_bytes(case.joint_centers.iter().flat_map(|p| p.to_array())))?,
    });
    let mut frames = Vec::new();
    let mut scale = 1.0f32;
    for (f, frame) in case.frames.iter().enumerate() {
        let fdir = format!("{dir}/frame{f}");
        let prepared = prepared_dual_quats(case, frame)?;
        let dqs: Vec<DualQuat> = prepared
            .dual_quats()
            .iter()
            .enumerate()
            .map(|(j, dq)| {
                if frame.negate_joints.contains(&j) {
                    negated(dq)
                } else {
                    *dq
                }
            })
            .collect();
        let mut expected_files = serde_json::Map::new();
        for method in [
            Method::Linear,
            Method::DualQuaternion,
            Method::CenterOfRotation,
        ] {
            let (positions, normals) = expected(case, frame, method)?;
            scale = positions
                .iter()
                .map(|p| p.abs().max_element())
                .fold(scale, f32::max);
            let name = method.name();
            expected_files.insert(
                name.to_string(),
                json!({
                    "positions": writer.file(&format!("{fdir}/{name}_positions.f32"), &f32_bytes(positions.iter().flat_map(|p| p.to_array())))?,
                    "normals": writer.file(&format!("{fdir}/{name}_normals.f32"), &f32_bytes(normals.iter().flat_map(|p| p.to_array())))?,
                }),
            );
        }
        frames.push(json!({
            "label": frame.label,
            "negated_dual_quats": frame.negate_joints,
            "palette": writer.file(&format!("{fdir}/palette.f32"), &f32_bytes(frame.palette.iter().flat_map(|m| m.to_cols_array())))?,
            "dual_quats": writer.file(&format!("{fdir}/dual_quats.f32"), &f32_bytes(dqs.iter().flat_map(|dq| dq.real.to_array().into_iter().chain(dq.dual.to_array()))))?,
            "residuals": writer.file(&format!("{fdir}/residuals.f32"), &f32_bytes(prepared.residuals().iter().flat_map(rows)))?,
            "rigid": writer.file(&format!("{fdir}/rigid.u32"), &u32_bytes(prepared.rigid_flags().iter().map(|&r| u32::from(r))))?,
            "expected": expected_files,
        }));
    }
    let entry = json!({
        "name": case.name,
        "description": case.description,
        "source": case.source,
        "vertex_count": n,
        "joint_count": case.joint_centers.len(),
        "scale": scale,
        "vertices": vertex_files,
        "frames": frames,
    });
    Ok((entry, n * case.frames.len()))
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
    let manifest = json!({
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "generator": format!("skinblend {}", env!("CARGO_PKG_VERSION")),
        "conventions": "Arrays: raw little-endian f32 (.f32) or u32 (.u32), row after row, no header. \
            Column vectors (v' = M v), right-handed, glTF units. palette.f32: per joint the skin matrix \
            world_from_joint * joint_from_bind, 16 floats column-major. dual_quats.f32: per joint real (x, y, z, w) \
            then dual (x, y, z, w) with dual = 1/2 (0, t) real, the rigid part of the core's Gram-Schmidt split \
            (signs as stored; some cases store them negated on purpose). residuals.f32: per joint the rows of the \
            residual map p -> S p + (c - S c) about the joint's bind origin c (joint_centers.f32). rigid.u32: 1 when \
            that residual is skipped. centers.f32: per vertex the center of rotation (xyz, w = 1 when it has one). \
            Expected outputs: the CPU scalar reference, weights divided by their sum.",
        "tolerance": {
            "position": shortest(POSITION_TOLERANCE),
            "position_is_relative_to": "the case's scale (its largest absolute expected coordinate, at least 1)",
            "normal": shortest(NORMAL_TOLERANCE),
            "reason": "the reference and an engine both compute in f32 with other operation orders and fused \
                multiply-adds: tens of ulps (skinblend's WGSL kernel is within 1.3e-6 relative of the CPU); \
                normals pass through a cofactor matrix and a normalization and lose a few digits more. A real \
                error (a sign, a missing residual or inverse transpose, unnormalized weights) is 1e-2 or more."
        },
        "methods": ["linear", "dq", "cor"],
        "cases": entries,
    });
    let text = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| GltfError::invalid("manifest.json", e.to_string()))?;
    write_atomically(&dir.join("manifest.json"), &text)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored quaternion signs do not matter to the reference: DQS from the negated dual
    /// quaternions equals DQS from the matrices (the opposite-signs case's expected outputs).
    #[test]
    fn negated_dual_quats_skin_like_the_matrices() {
        let cases = hard_cases().expect("hard cases");
        let case = &cases[0];
        let frame = &case.frames[1];
        let prepared = prepared_dual_quats(case, frame).expect("prepare");
        let dqs: Vec<DualQuat> = prepared
            .dual_quats()
            .iter()
            .enumerate()
            .map(|(j, dq)| if j % 2 == 1 { negated(dq) } else { *dq })
            .collect();
        let from_dqs =
            PreparedPalette::from_dual_quats(&dqs, &reference_options(Method::DualQuaternion))
                .expect("from dual quats");
        let input = SkinInput::new(&case.positions, None, None, &case.influences).expect("input");
        let mut positions = vec![Vec3::ZERO; case.positions.len()];
        skin_into(
            &input,
            &from_dqs,
            SkinOutputs {
                positions: &mut positions,
                normals: None,
                tangents: None,
            },
            reference_options(Method::DualQuaternion).run_options(),
        )
        .expect("skin");
        let (expected_positions, _) =
            expected(case, frame, Method::DualQuaternion).expect("expected");
        let worst = positions
            .iter()
            .zip(&expected_positions)
            .map(|(a, b)| (*a - *b).abs().max_element())
            .fold(0.0, f32::max);
        // Negation is exact in f32 and the pivot alignment undoes it exactly.
        assert!(worst <= 1e-6, "worst {worst}");
    }
}
