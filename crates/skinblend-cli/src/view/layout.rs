//! The model as the page loads it once: the bind-pose vertex data of every shown primitive
//! (`/api/mesh`) and the description of the model with each array's place in that data
//! (`/api/model`).

use anyhow::{Context, Result};
use glam::Vec3;
use serde_json::{json, Value};
use skinblend::Method;
use skinblend_gltf::Model;
use skinblend_gpu::shaders::{palette_entry_bytes, uniform_palette_joints};
use skinblend_report::evidence::method_style;

use super::background::METRIC_FRAMES;
use super::primitives::{Shown, SHADER_INFLUENCES};

/// `/api/model` and `/api/mesh`.
pub struct Layout {
    /// The model's description (`/api/model`).
    pub model_json: String,
    /// The vertex data (`/api/mesh`).
    pub mesh_bytes: Vec<u8>,
}

/// The bind-pose vertex data of every shown primitive, one after another (little-endian, each
/// array 4-byte aligned): positions (3 f32), normals (3 f32, where the file has them), joints
/// (4 u32), weights (4 f32), triangle indices (3 u32), and where blended is shown its blend
/// values (1 f32: the file's, else `dq_blend` for every vertex); and the model's description (the file's
/// name from `shown`, the methods, animations, skins and primitives, and `bounds`, the box the
/// page's camera frames) with each array's byte offset into the data.
///
/// # Errors
/// A shown primitive without influences (a bug: [`Shown::find`] checked them).
pub fn layout(
    model: &Model,
    shown_file: &str,
    (methods, dq_blend): (&[Method], Option<f32>),
    shown: &Shown,
    bounds: &(Vec3, Vec3),
) -> Result<Layout> {
    let mut bytes: Vec<u8> = Vec::new();
    let mut described = Vec::new();
    let floats = |bytes: &mut Vec<u8>, values: &mut dyn Iterator<Item = f32>| {
        let offset = bytes.len();
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        offset
    };
    for view in &shown.primitives {
        let primitive = &model.meshes()[view.mesh].primitives[view.primitive];
        let influences = primitive
            .influences
            .as_ref()
            .with_context(|| format!("{}: has no JOINTS_0", view.path))?;
        let n = primitive.positions.len();
        let positions = floats(
            &mut bytes,
            &mut primitive.positions.iter().flat_map(|p| p.to_array()),
        );
        let normals = primitive
            .normals
            .as_ref()
            .map(|normals| floats(&mut bytes, &mut normals.iter().flat_map(|p| p.to_array())));
        let joints = bytes.len();
        let weights_of = |v: usize| influences.vertex(v).unwrap_or((&[], &[]));
        // Unused slots: joint 0 with weight 0.
        for v in 0..n {
            let (j, _) = weights_of(v);
            let padded = j.iter().copied().chain(std::iter::repeat(0));
            for joint in padded.take(SHADER_INFLUENCES) {
                bytes.extend_from_slice(&u32::from(joint).to_le_bytes());
            }
        }
        let weights = floats(
            &mut bytes,
            &mut (0..n).flat_map(|v| {
                let (_, w) = weights_of(v);
                let padded = w.iter().copied().chain(std::iter::repeat(0.0));
                padded.take(SHADER_INFLUENCES)
            }),
        );
        let triangles = &view.triangles;
        let indices = bytes.len();
        for index in triangles.iter().flatten() {
            bytes.extend_from_slice(&index.to_le_bytes());
        }
        let blend = if methods.contains(&Method::Blended) {
            let values = blend_values(primitive, dq_blend).with_context(|| {
                format!("{}: no blend values for the blended method", view.path)
            })?;
            Some(floats(&mut bytes, &mut values.into_iter()))
        } else {
            None
        };
        described.push(json!({
            "path": view.path,
            "skin": view.skin_slot,
            "vertices": n,
            "triangles": triangles.len(),
            "offsets": {
                "positions": positions,
                "normals": normals,
                "joints": joints,
                "weights": weights,
                "indices": indices,
                "blend": blend,
            },
            "centers_in_file": primitive.rotation_centers.is_some(),
        }));
    }
    let methods: Vec<Value> = methods
        .iter()
        .map(|&m| {
            json!({
                "name": m.name(),
                "label": m.label(),
                "color": method_style(m).0,
                "palette_entry_bytes": palette_entry_bytes(m),
                "uniform_palette_joints": uniform_palette_joints(m),
            })
        })
        .collect();
    let animations: Vec<Value> = model
        .animations()
        .iter()
        .enumerate()
        .map(|(i, a)| {
            json!({
                "name": a.name.clone().unwrap_or_else(|| format!("#{i}")),
                "start_s": a.start_s,
                "end_s": a.end_s,
            })
        })
        .collect();
    let skins: Vec<Value> = shown
        .skins
        .iter()
        .map(|&s| json!({ "index": s, "joints": model.skins()[s].joints.len() }))
        .collect();
    let model_json = serde_json::to_string(&json!({
        "file": file_name(shown_file),
        "version": env!("CARGO_PKG_VERSION"),
        "methods": methods,
        "animations": animations,
        "skins": skins,
        "primitives": described,
        "bounds": { "min": bounds.0.to_array(), "max": bounds.1.to_array() },
        "metric_frames": METRIC_FRAMES,
    }))?;
    Ok(Layout {
        model_json,
        mesh_bytes: bytes,
    })
}

/// The blend values blended skins `primitive` with: the file's (`_SKINBLEND_DQ_BLEND`, or the
/// joint rule's), else `dq_blend` for every vertex; `None` without either.
pub fn blend_values(
    primitive: &skinblend_gltf::Primitive,
    dq_blend: Option<f32>,
) -> Option<Vec<f32>> {
    match (&primitive.dq_blend, dq_blend) {
        (Some(values), _) => Some(values.clone()),
        (None, Some(value)) => Some(vec![value; primitive.positions.len()]),
        (None, None) => None,
    }
}

/// The file name of `shown` (the file as the command line named it), or `shown` itself when
/// it has none: what the page shows of the path (an absolute path says more about this machine
/// than the page needs).
pub fn file_name(shown: &str) -> String {
    std::path::Path::new(shown)
        .file_name()
        .map_or_else(|| shown.to_owned(), |n| n.to_string_lossy().into_owned())
}
