//! A description of a document for `skinblend info`: scenes, meshes, skins, animations and
//! the repairs the loader made, as JSON and as text.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::{json, Value};
use skinblend::{prepare, Method, SkinOptions};

use crate::error::{GltfError, Result};
use crate::model::{ChannelPath, Model};

fn non_rigid(model: &Model, pose: &crate::Pose, skin: usize) -> Result<usize> {
    let palette = model.palette(pose, skin)?;
    let options = SkinOptions {
        method: Method::Linear,
        ..SkinOptions::default()
    };
    let prepared = prepare(&palette, None, &options).map_err(|source| GltfError::Skin {
        path: format!("skins[{skin}]"),
        source,
    })?;
    Ok(prepared.non_rigid_joints())
}

/// The document described as JSON (the schema is what `skinblend info --json` prints).
///
/// Skins report their joint count, the most non-zero influences of any vertex they skin, and
/// the non-rigid joints (scale, shear or mirror beyond the core's rigid tolerance) at the rest
/// pose and, per animation, the most at any of its key times.
///
/// # Errors
/// [`GltfError::Skin`] if a palette at some key time is not finite.
pub fn summary(model: &Model) -> Result<Value> {
    let scenes: Vec<Value> = model
        .root
        .scenes
        .iter()
        .map(|s| json!({ "name": s.name, "roots": s.nodes.iter().map(|n| n.value()).collect::<Vec<_>>() }))
        .collect();
    let meshes: Vec<Value> = model
        .meshes
        .iter()
        .enumerate()
        .map(|(m, mesh)| {
            let primitives: Vec<Value> = mesh
                .primitives
                .iter()
                .enumerate()
                .map(|(p, primitive)| {
                    let attributes: Vec<String> = model.root.meshes[m].primitives[p]
                        .attributes
                        .keys()
                        .map(|k| match k {
                            gltf::json::validation::Checked::Valid(s) => s.to_string(),
                            gltf::json::validation::Checked::Invalid => "?".to_owned(),
                        })
                        .collect();
                    json!({
                        "vertices": primitive.positions.len(),
                        "indices": primitive.indices.as_ref().map(Vec::len),
                        "mode": format!("{:?}", primitive.mode),
                        "attributes": attributes,
                        "morph_targets": primitive.targets.len(),
                        "influence_sets": primitive.influence_sets,
                    })
                })
                .collect();
            json!({ "name": mesh.name, "primitives": primitives })
        })
        .collect();

    let rest = model.rest_pose();
    let mut skins = Vec::new();
    for (s, skin) in model.skins.iter().enumerate() {
        let mut max_influences = 0usize;
        let mut vertices = 0usize;
        for node in model.nodes.iter().filter(|n| n.skin == Some(s)) {
            let Some(mesh) = node.mesh.and_then(|m| model.meshes.get(m)) else {
                continue;
            };
            for primitive in &mesh.primitives {
                let Some(influences) = &primitive.influences else {
                    continue;
                };
                vertices += influences.vertex_count();
                for v in 0..influences.vertex_count() {
                    if let Some((_, weights)) = influences.vertex(v) {
                        max_influences =
                            max_influences.max(weights.iter().filter(|w| **w > 0.0).count());
                    }
                }
            }
        }
        let mut per_animation = Vec::new();
        for (a, animation) in model.animations.iter().enumerate() {
            let times: BTreeSet<u32> = animation
                .samplers
                .iter()
                .flat_map(|s| s.times_s.iter().map(|t| t.to_bits()))
                .collect();
            let mut most = 0usize;
            for bits in times {
                let pose = model.pose(Some(a), f32::from_bits(bits))?;
                most = most.max(non_rigid(model, &pose, s)?);
            }
            per_animation.push(json!({ "animation": a, "max_non_rigid_joints": most }));
        }
        skins.push(json!({
            "name": skin.name,
            "joints": skin.joints.len(),
            "skinned_vertices": vertices,
            "max_influences": max_influences,
            "non_rigid_joints_rest_pose": non_rigid(model, &rest, s)?,
            "non_rigid_joints_per_animation": per_animation,
        }));
    }

    let animations: Vec<Value> = model
        .animations
        .iter()
        .map(|a| {
            let interpolations: BTreeSet<&str> =
                a.samplers.iter().map(|s| s.interpolation.name()).collect();
            let paths: BTreeSet<&str> = a
                .channels
                .iter()
                .map(|c| match c.path {
                    ChannelPath::Translation => "translation",
                    ChannelPath::Rotation => "rotation",
                    ChannelPath::Scale => "scale",
                    ChannelPath::Weights => "weights",
                })
                .collect();
            json!({
                "name": a.name,
                "start_s": a.start_s,
                "end_s": a.end_s,
                "duration_s": a.end_s - a.start_s,
                "channels": a.channels.len(),
                "interpolations": interpolations,
                "paths": paths,
            })
        })
        .collect();
    let repairs = model.repairs;
    Ok(json!({
        "scenes": scenes,
        "default_scene": model.root.scene.map(|s| s.value()),
        "nodes": model.nodes.len(),
        "skinned_nodes": model.skinned_nodes(),
        "meshes": meshes,
        "skins": skins,
        "animations": animations,
        "repairs": {
            "vertices_renormalized": repairs.vertices_renormalized,
            "vertices_with_repeated_joints": repairs.vertices_with_repeated_joints,
            "vertices_unweighted": repairs.vertices_unweighted,
            "rotations_normalized": repairs.rotations_normalized,
        },
    }))
}

/// The summary as human-readable text.
#[must_use]
pub fn render_text(summary: &Value) -> String {
    let mut t = String::new();
    let name = |v: &Value| {
        v.as_str()
            .map_or_else(|| "(unnamed)".to_owned(), |s| format!("{s:?}"))
    };
    // "1 vertex", "2 vertices": the count and the word that goes with it.
    let count = |v: &Value, one: &str, many: &str| {
        let word = if v.as_u64() == Some(1) { one } else { many };
        format!("{v} {word}")
    };
    let empty = Vec::new();
    let list = |v: &Value| -> Vec<Value> { v.as_array().unwrap_or(&empty).clone() };
    let _ = writeln!(
        t,
        "nodes: {}  skinned nodes: {}",
        summary["nodes"], summary["skinned_nodes"]
    );
    for (i, s) in list(&summary["scenes"]).iter().enumerate() {
        let _ = writeln!(t, "scene {i} {}: roots {}", name(&s["name"]), s["roots"]);
    }
    for (i, m) in list(&summary["meshes"]).iter().enumerate() {
        let _ = writeln!(t, "mesh {i} {}:", name(&m["name"]));
        for (p, prim) in list(&m["primitives"]).iter().enumerate() {
            let attributes: Vec<String> = list(&prim["attributes"])
                .iter()
                .filter_map(|a| a.as_str().map(str::to_owned))
                .collect();
            let _ = writeln!(
                t,
                "  primitive {p}: {}, {}, {}, {}, attributes {}",
                count(&prim["vertices"], "vertex", "vertices"),
                prim["mode"].as_str().unwrap_or(""),
                count(&prim["morph_targets"], "morph target", "morph targets"),
                count(&prim["influence_sets"], "influence set", "influence sets"),
                attributes.join(" ")
            );
        }
    }
    for (i, s) in list(&summary["skins"]).iter().enumerate() {
        let per: Vec<String> = list(&s["non_rigid_joints_per_animation"])
            .iter()
            .map(|a| {
                format!(
                    "animation {}: {}",
                    a["animation"], a["max_non_rigid_joints"]
                )
            })
            .collect();
        let _ = writeln!(
            t,
            "skin {i} {}: {}, {}, at most {} per vertex; non-rigid joints at rest pose {}{}",
            name(&s["name"]),
            count(&s["joints"], "joint", "joints"),
            count(&s["skinned_vertices"], "skinned vertex", "skinned vertices"),
            count(&s["max_influences"], "influence", "influences"),
            s["non_rigid_joints_rest_pose"],
            if per.is_empty() {
                String::new()
            } else {
                format!(", most at any key time: {}", per.join(", "))
            }
        );
    }
    for (i, a) in list(&summary["animations"]).iter().enumerate() {
        let join = |v: &Value| {
            list(v)
                .iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = writeln!(
            t,
            "animation {i} {}: {:.3} s ({}..{} s), {}, {} ({})",
            name(&a["name"]),
            a["duration_s"].as_f64().unwrap_or(0.0),
            a["start_s"],
            a["end_s"],
            count(&a["channels"], "channel", "channels"),
            join(&a["interpolations"]),
            join(&a["paths"])
        );
    }
    let r = &summary["repairs"];
    let _ = writeln!(
        t,
        "repairs: {} renormalized, {} with repeated joints, {} unweighted, {} normalized",
        count(&r["vertices_renormalized"], "vertex", "vertices"),
        r["vertices_with_repeated_joints"],
        r["vertices_unweighted"],
        count(&r["rotations_normalized"], "rotation", "rotations")
    );
    t
}
