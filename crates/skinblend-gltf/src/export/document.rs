//! The glTF JSON of an export: the input's buffers merged into one, and the posed document
//! (skinned nodes turned into static meshes in scene space, joints at the sampled pose).

use std::collections::{BTreeMap, BTreeSet};

use glam::{Mat4, Quat, Vec3};
use serde_json::{json, Value};

use crate::container;
use crate::error::{GltfError, Result};
use crate::model::{Model, DQ_BLEND_ATTRIBUTE, ROTATION_CENTER_ATTRIBUTE};
use crate::pose::Pose;
use crate::scene::PosedNode;

/// Appends `value` to the top-level array `key` (created when absent); returns its index.
pub(super) fn push_value(document: &mut Value, key: &str, value: Value) -> usize {
    let Some(object) = document.as_object_mut() else {
        return 0;
    };
    let entry = object.entry(key).or_insert_with(|| json!([]));
    if !entry.is_array() {
        *entry = json!([]);
    }
    match entry {
        Value::Array(array) => {
            array.push(value);
            array.len() - 1
        }
        _ => 0,
    }
}

/// Appends bytes to the merged buffer as a new buffer view (4-byte aligned); returns its index.
pub(super) fn push_view(
    document: &mut Value,
    bin: &mut Vec<u8>,
    bytes: &[u8],
    target: Option<u32>,
) -> usize {
    bin.resize(bin.len().next_multiple_of(4), 0);
    let offset = bin.len();
    bin.extend_from_slice(bytes);
    let mut view = json!({ "buffer": 0, "byteOffset": offset, "byteLength": bytes.len() });
    if let Some(target) = target {
        view["target"] = json!(target);
    }
    push_value(document, "bufferViews", view)
}

/// GL_ARRAY_BUFFER: a vertex attribute view.
pub(super) const ARRAY_BUFFER: u32 = 34962;
/// GL_FLOAT.
pub(super) const FLOAT: u32 = 5126;

/// Appends a float vertex accessor of `width` components; returns its index.
pub(super) fn push_float_accessor(
    document: &mut Value,
    bin: &mut Vec<u8>,
    values: &[f32],
    width: usize,
    with_bounds: bool,
) -> usize {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let view = push_view(document, bin, &bytes, Some(ARRAY_BUFFER));
    let kind = match width {
        3 => "VEC3",
        4 => "VEC4",
        2 => "VEC2",
        _ => "SCALAR",
    };
    let count = values.len() / width.max(1);
    let mut accessor = json!({
        "bufferView": view,
        "componentType": FLOAT,
        "count": count,
        "type": kind,
    });
    if with_bounds && count > 0 {
        let mut min = vec![f32::INFINITY; width];
        let mut max = vec![f32::NEG_INFINITY; width];
        for element in values.chunks_exact(width) {
            for (i, &v) in element.iter().enumerate() {
                min[i] = min[i].min(v);
                max[i] = max[i].max(v);
            }
        }
        // f32 → f64 is exact, so the JSON bounds equal the stored floats bit for bit.
        accessor["min"] = json!(min.iter().map(|&v| f64::from(v)).collect::<Vec<_>>());
        accessor["max"] = json!(max.iter().map(|&v| f64::from(v)).collect::<Vec<_>>());
    }
    push_value(document, "accessors", accessor)
}

pub(super) fn image_mime(bytes: &[u8], uri: &str) -> Option<&'static str> {
    if bytes.starts_with(&[0x89, b'P', b'N', b'G']) {
        return Some("image/png");
    }
    if bytes.starts_with(&[0xFF, 0xD8]) {
        return Some("image/jpeg");
    }
    if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some("image/webp");
    }
    if bytes.starts_with(&[0xAB, b'K', b'T', b'X', b' ', b'2', b'0']) {
        return Some("image/ktx2");
    }
    let lower = uri.to_ascii_lowercase();
    [
        ("png", "image/png"),
        ("jpg", "image/jpeg"),
        ("jpeg", "image/jpeg"),
    ]
    .iter()
    .find(|(ext, _)| lower.ends_with(ext))
    .map(|&(_, mime)| mime)
}

/// A node's local matrix as written in the JSON (`matrix`, else TRS).
pub(super) fn json_local(node: &Value) -> Mat4 {
    let floats = |key: &str, n: usize| -> Option<Vec<f32>> {
        let array = node.get(key)?.as_array()?;
        (array.len() == n).then(|| {
            array
                .iter()
                .map(|v| v.as_f64().unwrap_or(0.0) as f32)
                .collect()
        })
    };
    if let Some(m) = floats("matrix", 16) {
        return Mat4::from_cols_slice(&m);
    }
    let t = floats("translation", 3).map_or(Vec3::ZERO, |v| Vec3::from_slice(&v));
    let r = floats("rotation", 4).map_or(Quat::IDENTITY, |v| Quat::from_slice(&v).normalize());
    let s = floats("scale", 3).map_or(Vec3::ONE, |v| Vec3::from_slice(&v));
    Mat4::from_scale_rotation_translation(s, r, t)
}

pub(super) fn clear_transform(node: &mut Value) {
    if let Some(object) = node.as_object_mut() {
        for key in ["matrix", "translation", "rotation", "scale"] {
            object.remove(key);
        }
    }
}

pub(super) fn set_trs(node: &mut Value, scale: Vec3, rotation: Quat, translation: Vec3) {
    clear_transform(node);
    let f = |v: &[f32]| json!(v.iter().map(|&x| f64::from(x)).collect::<Vec<_>>());
    if translation != Vec3::ZERO {
        node["translation"] = f(&translation.to_array());
    }
    if rotation != Quat::IDENTITY {
        node["rotation"] = f(&rotation.to_array());
    }
    if scale != Vec3::ONE {
        node["scale"] = f(&scale.to_array());
    }
}

pub(super) fn set_matrix(node: &mut Value, matrix: Mat4) {
    clear_transform(node);
    if matrix != Mat4::IDENTITY {
        node["matrix"] = json!(matrix
            .to_cols_array()
            .iter()
            .map(|&x| f64::from(x))
            .collect::<Vec<_>>());
    }
}

pub(super) fn remove_child(node: &mut Value, child: usize) {
    if let Some(children) = node.get_mut("children").and_then(Value::as_array_mut) {
        children.retain(|c| c.as_u64() != Some(child as u64));
        if children.is_empty() {
            if let Some(object) = node.as_object_mut() {
                object.remove("children");
            }
        }
    }
}

pub(super) fn add_child(node: &mut Value, child: usize) {
    if !node.get("children").is_some_and(Value::is_array) {
        node["children"] = json!([]);
    }
    if let Some(children) = node.get_mut("children").and_then(Value::as_array_mut) {
        children.push(json!(child));
    }
}

/// The model's JSON document with every buffer merged into one (returned) and external images
/// embedded: the base every written document starts from.
pub(super) fn merged_document(model: &Model) -> Result<(Value, Vec<u8>)> {
    let mut document = model.json.clone();
    let mut bin = Vec::new();

    // 1. Merge every buffer into one, 4-byte aligned so every view keeps its alignment.
    let mut base = Vec::with_capacity(model.buffers.len());
    for (b, buffer) in model.buffers.iter().enumerate() {
        bin.resize(bin.len().next_multiple_of(4), 0);
        base.push(bin.len());
        let length = model.root.buffers[b].byte_length.0 as usize;
        bin.extend_from_slice(&buffer[..length.min(buffer.len())]);
    }
    let views = document
        .get_mut("bufferViews")
        .and_then(Value::as_array_mut);
    for view in views.into_iter().flatten() {
        let buffer = view.get("buffer").and_then(Value::as_u64).unwrap_or(0) as usize;
        let offset = view.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
        view["buffer"] = json!(0);
        view["byteOffset"] = json!(offset + base.get(buffer).copied().unwrap_or(0));
    }

    // 2. Embed external images (a relative URI would break beside the output file).
    let image_count = document
        .get("images")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    for i in 0..image_count {
        let Some(uri) = document["images"][i]
            .get("uri")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            continue;
        };
        if uri.starts_with("data:") {
            continue;
        }
        let bytes =
            container::read_uri(&format!("images[{i}].uri"), &uri, model.base_dir.as_deref())?;
        let mime = image_mime(&bytes, &uri).ok_or_else(|| {
            GltfError::invalid(
                format!("images[{i}].uri"),
                "cannot tell the image type to embed it",
            )
        })?;
        let view = push_view(&mut document, &mut bin, &bytes, None);
        let image = &mut document["images"][i];
        if let Some(object) = image.as_object_mut() {
            object.remove("uri");
        }
        image["bufferView"] = json!(view);
        image["mimeType"] = json!(mime);
    }
    Ok((document, bin))
}

/// The JSON document of the posed scene and its merged binary buffer.
pub(super) fn posed_document(
    model: &Model,
    pose: &Pose,
    posed: &[PosedNode],
) -> Result<(Value, Vec<u8>)> {
    let (mut document, mut bin) = merged_document(model)?;

    // 3. Posed meshes.
    // A mesh only posed nodes use is rewritten in place by the first of them; any other posed
    // user, or a posed user of a mesh a static node also shows, gets a copy.
    let mut shared_with_static: BTreeSet<usize> = BTreeSet::new();
    for (n, node) in model.nodes.iter().enumerate() {
        if let Some(m) = node.mesh {
            if !posed.iter().any(|p| p.node == n) {
                shared_with_static.insert(m);
            }
        }
    }
    let mut rewritten: BTreeSet<usize> = BTreeSet::new();
    let mut dropped_targets: BTreeSet<usize> = BTreeSet::new();
    for item in posed {
        dropped_targets.insert(item.node);
        dropped_targets.extend(model.skins[item.skin].joints.iter().copied());
    }
    // Joints of posed skins take the sampled pose (their animations are dropped below); a
    // joint given by an unanimated `matrix` keeps it exactly.
    let rest = model.rest_pose();
    for &joint in &dropped_targets {
        if posed.iter().any(|p| p.node == joint) {
            continue;
        }
        let trs = pose.trs[joint];
        let node = &mut document["nodes"][joint];
        if node.get("matrix").is_none()
            || pose.parent_from_node[joint] != rest.parent_from_node[joint]
        {
            set_trs(node, trs.scale, trs.rotation, trs.translation);
        }
    }
    for item in posed {
        let mesh_index = if shared_with_static.contains(&item.mesh) || !rewritten.insert(item.mesh)
        {
            let copy = document["meshes"][item.mesh].clone();
            push_value(&mut document, "meshes", copy)
        } else {
            item.mesh
        };
        for (p, result) in item.primitives.iter().enumerate() {
            let positions: Vec<f32> = result.positions.iter().flat_map(|v| v.to_array()).collect();
            let position = push_float_accessor(&mut document, &mut bin, &positions, 3, true);
            let normal = result.normals.as_ref().map(|n| {
                let values: Vec<f32> = n.iter().flat_map(|v| v.to_array()).collect();
                push_float_accessor(&mut document, &mut bin, &values, 3, false)
            });
            let tangent = result.tangents.as_ref().map(|t| {
                let values: Vec<f32> = t.iter().flat_map(|v| v.to_array()).collect();
                push_float_accessor(&mut document, &mut bin, &values, 4, false)
            });
            let primitive = &mut document["meshes"][mesh_index]["primitives"][p];
            if let Some(object) = primitive.as_object_mut() {
                object.remove("targets");
            }
            if let Some(attributes) = primitive
                .get_mut("attributes")
                .and_then(Value::as_object_mut)
            {
                attributes.retain(|name, _| {
                    !(name.starts_with("JOINTS_")
                        || name.starts_with("WEIGHTS_")
                        || name == ROTATION_CENTER_ATTRIBUTE
                        || name == DQ_BLEND_ATTRIBUTE)
                });
                attributes.insert("POSITION".into(), json!(position));
                if let Some(normal) = normal {
                    attributes.insert("NORMAL".into(), json!(normal));
                }
                if let Some(tangent) = tangent {
                    attributes.insert("TANGENT".into(), json!(tangent));
                }
            }
        }
        if let Some(object) = document["meshes"][mesh_index].as_object_mut() {
            object.remove("weights");
            if let Some(extras) = object.get_mut("extras").and_then(Value::as_object_mut) {
                extras.remove("targetNames");
            }
        }
        let node = &mut document["nodes"][item.node];
        if let Some(object) = node.as_object_mut() {
            object.remove("skin");
            object.remove("weights");
        }
        node["mesh"] = json!(mesh_index);
    }

    // 4. Move each posed node to the scene root with an identity transform; its children go to
    //    its former parent (or the scene roots) with the node's local transform folded in.
    let animated: BTreeSet<usize> = model
        .animations
        .iter()
        .flat_map(|a| a.channels.iter().map(|c| c.node))
        .filter(|n| !dropped_targets.contains(n))
        .collect();
    for item in posed {
        let n = item.node;
        let parent = model.nodes[n].parent;
        let local_n = json_local(&document["nodes"][n]);
        let children: Vec<usize> = document["nodes"][n]
            .get("children")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .filter_map(|v| v.as_u64().map(|v| v as usize))
                    .collect()
            })
            .unwrap_or_default();
        let mut top = n;
        while let Some(p) = model.nodes[top].parent {
            top = p;
        }
        let scene_count = document
            .get("scenes")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let scenes_with_n: Vec<usize> = (0..scene_count)
            .filter(|&s| {
                document["scenes"][s]["nodes"]
                    .as_array()
                    .is_some_and(|roots| roots.iter().any(|r| r.as_u64() == Some(top as u64)))
            })
            .collect();
        for &child in &children {
            let local_c = json_local(&document["nodes"][child]);
            let composed = local_n * local_c;
            let node = &mut document["nodes"][child];
            if animated.contains(&child) {
                let (s, r, t) = composed.to_scale_rotation_translation();
                set_trs(node, s, r, t);
            } else {
                set_matrix(node, composed);
            }
            match parent {
                Some(p) => add_child(&mut document["nodes"][p], child),
                None => {
                    for &s in &scenes_with_n {
                        if let Some(roots) = document["scenes"][s]["nodes"].as_array_mut() {
                            roots.push(json!(child));
                        }
                    }
                }
            }
        }
        let node = &mut document["nodes"][n];
        clear_transform(node);
        if let Some(object) = node.as_object_mut() {
            object.remove("children");
        }
        if let Some(p) = parent {
            remove_child(&mut document["nodes"][p], n);
            for &s in &scenes_with_n {
                if let Some(roots) = document["scenes"][s]["nodes"].as_array_mut() {
                    if !roots.iter().any(|r| r.as_u64() == Some(n as u64)) {
                        roots.push(json!(n));
                    }
                }
            }
        }
    }

    // 5. Drop channels that target posed joints or nodes; drop samplers no channel uses and
    //    animations left without channels.
    if let Some(animations) = document.get_mut("animations").and_then(Value::as_array_mut) {
        for animation in animations.iter_mut() {
            let channels: Vec<Value> = animation["channels"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|c| {
                    let target = c["target"]["node"].as_u64().map(|v| v as usize);
                    !target.is_some_and(|t| dropped_targets.contains(&t))
                })
                .collect();
            let samplers = animation["samplers"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let mut remap: BTreeMap<u64, usize> = BTreeMap::new();
            let mut kept = Vec::new();
            let mut new_channels = Vec::new();
            for mut channel in channels {
                let old = channel["sampler"].as_u64().unwrap_or(0);
                let new = *remap.entry(old).or_insert_with(|| {
                    kept.push(samplers.get(old as usize).cloned().unwrap_or(Value::Null));
                    kept.len() - 1
                });
                channel["sampler"] = json!(new);
                new_channels.push(channel);
            }
            animation["channels"] = Value::Array(new_channels);
            animation["samplers"] = Value::Array(kept);
        }
        animations.retain(|a| a["channels"].as_array().is_some_and(|c| !c.is_empty()));
        if animations.is_empty() {
            if let Some(object) = document.as_object_mut() {
                object.remove("animations");
            }
        }
    }
    if bin.is_empty() {
        if let Some(object) = document.as_object_mut() {
            object.remove("buffers");
        }
    }
    Ok((document, bin))
}
