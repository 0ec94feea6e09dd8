//! The differential test's mutations: each changes one structural thing of a document and
//! says what, or returns `None` when the document has nothing it applies to. Here the table
//! of them and those of buffers, views, accessors and their values; those of the scene graph,
//! skins, animations and meshes are in structure.rs.

use serde_json::json;

use super::doc::{Doc, Rng};
use super::structure::{
    attributes, buffer, channel, document, key_times, node_children, node_refs, node_transform,
    primitive_mode, sampler, scene_roots, skin,
};

pub type Mutation = fn(&mut Doc, &mut Rng) -> Option<String>;

/// The named mutation classes.
pub const MUTATIONS: &[(&str, Mutation)] = &[
    ("view_offset", view_offset),
    ("view_length", view_length),
    ("view_stride", view_stride),
    ("accessor_offset", accessor_offset),
    ("accessor_count", accessor_count),
    ("component_type", component_type),
    ("accessor_type", accessor_type),
    ("normalized", normalized),
    ("min_max", min_max),
    ("index_value", index_value),
    ("joint_value", joint_value),
    ("weight_value", weight_value),
    ("float_value", float_value),
    ("key_times", key_times),
    ("node_children", node_children),
    ("node_transform", node_transform),
    ("node_refs", node_refs),
    ("scene_roots", scene_roots),
    ("skin", skin),
    ("sampler", sampler),
    ("channel", channel),
    ("buffer", buffer),
    ("attributes", attributes),
    ("primitive_mode", primitive_mode),
    ("document", document),
];

pub fn view_offset(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let v = d.pick(r, "bufferViews")?;
    let view = &mut d.json["bufferViews"][v];
    let offset = Doc::uint(view, "byteOffset").unwrap_or(0);
    let length = Doc::uint(view, "byteLength")?;
    let bin = d.bin.len();
    let new = r.choose(&[
        offset + 1,
        offset + 2,
        offset + 4,
        offset.saturating_sub(4),
        bin - length.min(bin),
        bin - length.min(bin) + 4,
        bin,
        0,
    ]);
    view["byteOffset"] = json!(new);
    Some(format!("bufferViews[{v}].byteOffset {offset} -> {new}"))
}

pub fn view_length(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let v = d.pick(r, "bufferViews")?;
    let view = &mut d.json["bufferViews"][v];
    let length = Doc::uint(view, "byteLength")?;
    let new = r.choose(&[
        length.saturating_sub(1),
        length.saturating_sub(4),
        length + 1,
        length + 4,
        0,
        length * 2,
        length / 2,
    ]);
    view["byteLength"] = json!(new);
    Some(format!("bufferViews[{v}].byteLength {length} -> {new}"))
}

pub fn view_stride(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let v = d.pick(r, "bufferViews")?;
    let view = &mut d.json["bufferViews"][v];
    let old = view.get("byteStride").cloned();
    let new = r.choose(&[0, 1, 3, 4, 6, 8, 12, 16, 20, 64, 252, 256]);
    if new == 0 {
        view.as_object_mut()?.remove("byteStride")?;
    } else {
        view["byteStride"] = json!(new);
    }
    Some(format!("bufferViews[{v}].byteStride {old:?} -> {new}"))
}

pub fn accessor_offset(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "accessors")?;
    let accessor = &mut d.json["accessors"][a];
    let offset = Doc::uint(accessor, "byteOffset").unwrap_or(0);
    let new = offset + r.choose(&[1, 2, 3, 4, 8, 12, 1000]);
    accessor["byteOffset"] = json!(new);
    Some(format!("accessors[{a}].byteOffset {offset} -> {new}"))
}

pub fn accessor_count(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "accessors")?;
    let accessor = &mut d.json["accessors"][a];
    let count = Doc::uint(accessor, "count")?;
    let new = r.choose(&[
        count.saturating_sub(1),
        count + 1,
        0,
        count * 2,
        count / 2,
        1,
        1 << 32,
    ]);
    accessor["count"] = json!(new);
    Some(format!("accessors[{a}].count {count} -> {new}"))
}

pub fn component_type(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "accessors")?;
    let accessor = &mut d.json["accessors"][a];
    let old = accessor["componentType"].clone();
    let new = r.choose(&[5120, 5121, 5122, 5123, 5124, 5125, 5126, 5130]);
    accessor["componentType"] = json!(new);
    Some(format!("accessors[{a}].componentType {old} -> {new}"))
}

pub fn accessor_type(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "accessors")?;
    let accessor = &mut d.json["accessors"][a];
    let old = accessor["type"].clone();
    let new = r.choose(&[
        "SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4", "VEC5",
    ]);
    accessor["type"] = json!(new);
    Some(format!("accessors[{a}].type {old} -> {new}"))
}

pub fn normalized(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "accessors")?;
    let accessor = &mut d.json["accessors"][a];
    let old = accessor["normalized"].as_bool().unwrap_or(false);
    accessor["normalized"] = json!(!old);
    Some(format!("accessors[{a}].normalized {old} -> {}", !old))
}

pub fn min_max(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "accessors")?;
    let accessor = d.json["accessors"][a].as_object_mut()?;
    match r.below(4)? {
        0 => {
            accessor.remove("min");
            accessor.remove("max");
            Some(format!("accessors[{a}]: min and max removed"))
        }
        1 => {
            let max = accessor.get_mut("max")?.as_array_mut()?;
            let first = max.first()?.as_f64()?;
            max[0] = json!(first - 1.0);
            Some(format!("accessors[{a}].max[0] {first} -> {}", first - 1.0))
        }
        2 => {
            let min = accessor.get_mut("min")?.as_array_mut()?;
            min.pop()?;
            Some(format!("accessors[{a}].min one value short"))
        }
        _ => {
            let min = accessor.get_mut("min")?.as_array_mut()?;
            let first = min.first()?.as_f64()?;
            min[0] = json!(first - 0.5);
            Some(format!(
                "accessors[{a}].min[0] {first} -> {} (loose)",
                first - 0.5
            ))
        }
    }
}

pub fn index_value(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let used = d.accessors_used_as("indices");
    let a = used[r.below(used.len())?];
    let count = Doc::uint(&d.json["accessors"][a], "count")?;
    let k = r.below(count)?;
    let (at, size) = d.locate(a, k, 0)?;
    let old = d.read(at, size);
    let vertices = {
        // The largest POSITION count in the file bounds every valid index.
        let positions = d.accessors_used_as("POSITION");
        positions
            .iter()
            .filter_map(|&p| Doc::uint(&d.json["accessors"][p], "count"))
            .max()? as u64
    };
    let max = (1u64 << (8 * size)) - 1;
    let new = r.choose(&[vertices, vertices + 7, max, max - 1]).min(max);
    d.write(at, size, new);
    Some(format!("accessors[{a}] element {k}: index {old} -> {new}"))
}

pub fn joint_value(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let used = d.accessors_used_as("JOINTS_0");
    let a = used[r.below(used.len())?];
    let count = Doc::uint(&d.json["accessors"][a], "count")?;
    let (k, c) = (r.below(count)?, r.below(4)?);
    let (at, size) = d.locate(a, k, c)?;
    let old = d.read(at, size);
    let joints = d.json["skins"].as_array().map_or(0, |skins| {
        skins
            .iter()
            .filter_map(|s| s["joints"].as_array().map(Vec::len))
            .max()
            .unwrap_or(0)
    }) as u64;
    let new = r.choose(&[joints, joints + 1, (1u64 << (8 * size)) - 1]);
    d.write(at, size, new.min((1u64 << (8 * size)) - 1));
    Some(format!(
        "accessors[{a}] element {k} joint {c}: {old} -> {new}"
    ))
}

pub fn weight_value(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let used = d.accessors_used_as("WEIGHTS_0");
    let a = used[r.below(used.len())?];
    let count = Doc::uint(&d.json["accessors"][a], "count")?;
    let (k, c) = (r.below(count)?, r.below(4)?);
    let (at, size) = d.locate(a, k, c)?;
    if size != 4 {
        return None;
    }
    let new = r.choose(&[-0.5f32, 2.0, 0.0, 0.25, f32::NAN, f32::INFINITY]);
    d.write(at, 4, u64::from(new.to_bits()));
    Some(format!("accessors[{a}] element {k} weight {c} -> {new}"))
}

pub fn float_value(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let what = r.choose(&["POSITION", "inverseBindMatrices", "output", "input"]);
    let used = d.accessors_used_as(what);
    let a = used[r.below(used.len())?];
    if d.json["accessors"][a]["componentType"] != json!(5126) {
        return None;
    }
    let count = Doc::uint(&d.json["accessors"][a], "count")?;
    let components = match d.json["accessors"][a]["type"].as_str()? {
        "SCALAR" => 1,
        "VEC3" => 3,
        "VEC4" => 4,
        "MAT4" => 16,
        _ => return None,
    };
    let (k, c) = (r.below(count)?, r.below(components)?);
    let (at, _) = d.locate(a, k, c)?;
    let new = r.choose(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e30, 0.0]);
    d.write(at, 4, u64::from(new.to_bits()));
    Some(format!(
        "{what} accessors[{a}] element {k} component {c} -> {new}"
    ))
}
