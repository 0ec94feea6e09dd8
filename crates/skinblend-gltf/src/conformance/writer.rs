//! One case written: its arrays as raw little-endian files (atomically, under the output
//! folder) and its entry in the manifest.

use std::path::Path;

use glam::Affine3A;
use serde_json::{json, Value};
use skinblend::{DualQuat, Influences, Method};

use super::cases::Case;
use super::expected::{expected, negated, prepared_dual_quats, undefined_normal_ratios};
use super::format::UNDEFINED_NORMAL_RELATIVE;
use crate::error::{GltfError, Result};
use crate::export::write_atomically;

pub(super) fn io_error(path: &Path, source: std::io::Error) -> GltfError {
    GltfError::Io {
        path: path.to_owned(),
        source,
    }
}

fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

fn u32_bytes(values: impl IntoIterator<Item = u32>) -> Vec<u8> {
    values.into_iter().flat_map(u32::to_le_bytes).collect()
}

/// A 3x4 affine map's three rows.
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

/// Writes files under `root`.
pub(super) struct Writer<'a> {
    pub(super) root: &'a Path,
}

impl Writer<'_> {
    /// Writes `bytes` to `relative` under the root (atomically) and returns the relative path.
    pub(super) fn file(&self, relative: &str, bytes: &[u8]) -> Result<String> {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
        }
        write_atomically(&path, bytes)?;
        Ok(relative.to_string())
    }
}

/// Writes `case`'s files; returns its manifest entry and its vertices over all frames.
pub(super) fn write_case(writer: &Writer<'_>, case: &Case) -> Result<(Value, usize)> {
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
        "blend_values": writer.file(&format!("{dir}/blend_values.f32"), &f32_bytes(case.blend_values.iter().copied()))?,
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
        for method in Method::ALL {
            let (positions, normals) = expected(case, frame, method)?;
            let undefined: Vec<usize> = undefined_normal_ratios(case, frame, method)?
                .iter()
                .enumerate()
                .filter(|(_, &r)| r <= UNDEFINED_NORMAL_RELATIVE)
                .map(|(v, _)| v)
                .collect();
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
                    "undefined_normals": undefined,
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
