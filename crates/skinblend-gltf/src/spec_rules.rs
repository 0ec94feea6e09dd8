//! Rules of the glTF 2.0 specification checked on the raw JSON, before the `gltf` crate reads
//! it: the ones its schema validation lets through and the Khronos glTF-Validator reports as
//! errors (empty arrays, extension declarations, the asset version, duplicate entries, a node
//! with both a matrix and TRS, attribute names and sets, animation channels).
//!
//! Each error names the JSON path, as the rest of the loader does. The differential test
//! (`crates/skinblend-cli/tests/differential.rs`) holds these against the validator.

use std::collections::HashSet;

use serde_json::Value;

use crate::error::{GltfError, Result};

/// Tolerance on the length of a rotation quaternion (node `rotation`, animation rotation
/// outputs): the Khronos validator's own (`ROTATION_NON_UNIT`), so that a file it accepts is
/// accepted here (and normalized).
pub(crate) const UNIT_QUATERNION_TOLERANCE: f32 = 0.00769;
/// Tolerance on the length of a unit vector (NORMAL, TANGENT's xyz): the validator's own
/// (`ACCESSOR_VECTOR3_NON_UNIT`).
pub(crate) const UNIT_VECTOR_TOLERANCE: f32 = 0.00674;

/// Arrays that the schema requires to be non-empty when present, as `(parent, key)`: the
/// top-level ones (`parent` empty) and those inside each element of a top-level array.
const NON_EMPTY_ARRAYS: &[(&str, &str)] = &[
    ("", "extensionsUsed"),
    ("", "extensionsRequired"),
    ("", "accessors"),
    ("", "animations"),
    ("", "buffers"),
    ("", "bufferViews"),
    ("", "cameras"),
    ("", "images"),
    ("", "materials"),
    ("", "meshes"),
    ("", "nodes"),
    ("", "samplers"),
    ("", "scenes"),
    ("", "skins"),
    ("", "textures"),
    ("animations", "channels"),
    ("animations", "samplers"),
    ("meshes", "primitives"),
    ("meshes", "weights"),
    ("nodes", "children"),
    ("nodes", "weights"),
    ("scenes", "nodes"),
    ("skins", "joints"),
];

/// Attribute-name prefixes whose sets must be numbered 0, 1, 2, … without a gap.
const INDEXED_SEMANTICS: &[&str] = &["TEXCOORD_", "COLOR_", "JOINTS_", "WEIGHTS_"];

fn elements<'a>(json: &'a Value, key: &str) -> &'a [Value] {
    json.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Checks the rules above on the document's JSON.
///
/// # Errors
/// [`GltfError::Invalid`] at the JSON path of the first offending value.
pub(crate) fn check(json: &Value) -> Result<()> {
    check_asset(json)?;
    check_extensions(json)?;
    check_non_empty(json)?;
    check_unique(json)?;
    check_nodes(json)?;
    check_attributes(json)?;
    check_channels(json)?;
    check_sizes(json)?;
    Ok(())
}

/// Accessor counts and buffer view lengths are at least 1; an image's buffer view has no
/// byteStride.
fn check_sizes(json: &Value) -> Result<()> {
    for (key, field) in [("accessors", "count"), ("bufferViews", "byteLength")] {
        for (i, item) in elements(json, key).iter().enumerate() {
            if item.get(field).and_then(Value::as_u64) == Some(0) {
                return Err(GltfError::invalid(
                    format!("{key}[{i}].{field}"),
                    "is 0 (at least 1)",
                ));
            }
        }
    }
    let views = elements(json, "bufferViews");
    for (i, image) in elements(json, "images").iter().enumerate() {
        let Some(view) = image.get("bufferView").and_then(Value::as_u64) else {
            continue;
        };
        if views
            .get(view as usize)
            .is_some_and(|v| v.get("byteStride").is_some())
        {
            return Err(GltfError::invalid(
                format!("images[{i}].bufferView"),
                format!("bufferViews[{view}] has a byteStride, which image data cannot have"),
            ));
        }
    }
    Ok(())
}

fn check_asset(json: &Value) -> Result<()> {
    let Some(version) = json.pointer("/asset/version").and_then(Value::as_str) else {
        // A missing asset or version is the schema's, reported by the `gltf` crate.
        return Ok(());
    };
    let major_minor = |text: &str| -> Option<(u64, u64)> {
        let (major, minor) = text.split_once('.')?;
        Some((major.parse().ok()?, minor.parse().ok()?))
    };
    let Some(parsed) = major_minor(version) else {
        return Err(GltfError::invalid(
            "asset.version",
            format!("{version:?} is not of the form MAJOR.MINOR"),
        ));
    };
    if parsed.0 != 2 {
        return Err(GltfError::invalid(
            "asset.version",
            format!("{version:?}: only glTF 2.x is read"),
        ));
    }
    if let Some(min) = json.pointer("/asset/minVersion").and_then(Value::as_str) {
        match major_minor(min) {
            Some(min_parsed) if min_parsed <= parsed => {}
            _ => {
                return Err(GltfError::invalid(
                    "asset.minVersion",
                    format!("{min:?} is not a version at most {version:?}"),
                ))
            }
        }
    }
    Ok(())
}

fn check_extensions(json: &Value) -> Result<()> {
    let used: Vec<&str> = elements(json, "extensionsUsed")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for (i, required) in elements(json, "extensionsRequired").iter().enumerate() {
        let Some(name) = required.as_str() else {
            continue;
        };
        if !used.contains(&name) {
            return Err(GltfError::invalid(
                format!("extensionsRequired[{i}]"),
                format!("{name:?} is required but not listed in extensionsUsed"),
            ));
        }
    }
    Ok(())
}

fn check_non_empty(json: &Value) -> Result<()> {
    for &(parent, key) in NON_EMPTY_ARRAYS {
        if parent.is_empty() {
            if json
                .get(key)
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                return Err(GltfError::invalid(
                    key,
                    "is empty (leave it out or give at least one)",
                ));
            }
            continue;
        }
        for (i, item) in elements(json, parent).iter().enumerate() {
            if item
                .get(key)
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                return Err(GltfError::invalid(
                    format!("{parent}[{i}].{key}"),
                    "is empty (leave it out or give at least one)",
                ));
            }
        }
    }
    for (m, mesh) in elements(json, "meshes").iter().enumerate() {
        for (p, primitive) in elements(mesh, "primitives").iter().enumerate() {
            if primitive
                .get("attributes")
                .and_then(Value::as_object)
                .is_some_and(serde_json::Map::is_empty)
            {
                return Err(GltfError::invalid(
                    format!("meshes[{m}].primitives[{p}].attributes"),
                    "is empty",
                ));
            }
        }
    }
    Ok(())
}

/// Arrays whose items must be unique: extension names, scene roots, children, skin joints.
fn check_unique(json: &Value) -> Result<()> {
    let unique = |path: String, items: &[Value]| -> Result<()> {
        for (i, item) in items.iter().enumerate() {
            if items[..i].contains(item) {
                return Err(GltfError::invalid(
                    format!("{path}[{i}]"),
                    format!("{item} appears twice"),
                ));
            }
        }
        Ok(())
    };
    unique("extensionsUsed".into(), elements(json, "extensionsUsed"))?;
    unique(
        "extensionsRequired".into(),
        elements(json, "extensionsRequired"),
    )?;
    for (key, list) in [
        ("scenes", "nodes"),
        ("nodes", "children"),
        ("skins", "joints"),
    ] {
        for (i, item) in elements(json, key).iter().enumerate() {
            unique(format!("{key}[{i}].{list}"), elements(item, list))?;
        }
    }
    Ok(())
}

fn check_nodes(json: &Value) -> Result<()> {
    for (n, node) in elements(json, "nodes").iter().enumerate() {
        if node.get("skin").is_some() && node.get("mesh").is_none() {
            return Err(GltfError::invalid(
                format!("nodes[{n}].skin"),
                "is given, but the node has no mesh to skin",
            ));
        }
        if node.get("matrix").is_some() {
            if let Some(key) = ["translation", "rotation", "scale"]
                .into_iter()
                .find(|key| node.get(key).is_some())
            {
                return Err(GltfError::invalid(
                    format!("nodes[{n}]"),
                    format!("has both matrix and {key} (a node has one or the other)"),
                ));
            }
        }
        if let Some(rotation) = node.get("rotation").and_then(Value::as_array) {
            let length = rotation
                .iter()
                .filter_map(Value::as_f64)
                .map(|v| (v as f32) * (v as f32))
                .sum::<f32>()
                .sqrt();
            if (length - 1.0).abs() > UNIT_QUATERNION_TOLERANCE {
                return Err(GltfError::invalid(
                    format!("nodes[{n}].rotation"),
                    format!("has length {length}, not a unit quaternion"),
                ));
            }
        }
    }
    Ok(())
}

fn check_attributes(json: &Value) -> Result<()> {
    for (m, mesh) in elements(json, "meshes").iter().enumerate() {
        for (p, primitive) in elements(mesh, "primitives").iter().enumerate() {
            let path = format!("meshes[{m}].primitives[{p}].attributes");
            let Some(attributes) = primitive.get("attributes").and_then(Value::as_object) else {
                continue;
            };
            let mut sets = [0usize; 4];
            for name in attributes.keys() {
                if name.starts_with('_')
                    || ["POSITION", "NORMAL", "TANGENT"].contains(&name.as_str())
                {
                    continue;
                }
                let known = INDEXED_SEMANTICS
                    .iter()
                    .enumerate()
                    .find_map(|(k, prefix)| {
                        let set = name.strip_prefix(prefix)?;
                        let canonical = set.parse::<usize>().ok()?;
                        (canonical.to_string() == set).then_some((k, canonical))
                    });
                let Some((k, _)) = known else {
                    return Err(GltfError::invalid(
                        format!("{path}[\"{name}\"]"),
                        "is not an attribute of the specification (custom ones start with _)",
                    ));
                };
                sets[k] += 1;
            }
            for (k, prefix) in INDEXED_SEMANTICS.iter().enumerate() {
                for set in 0..sets[k] {
                    if !attributes.contains_key(&format!("{prefix}{set}")) {
                        return Err(GltfError::invalid(
                            &path,
                            format!(
                                "has {} {prefix}n sets but no {prefix}{set} (sets are numbered from 0 without gaps)",
                                sets[k]
                            ),
                        ));
                    }
                }
            }
            // Every texture a primitive's material reads needs its TEXCOORD_n.
            let material = primitive
                .get("material")
                .and_then(Value::as_u64)
                .and_then(|m| elements(json, "materials").get(m as usize));
            if let Some(material) = material {
                for pointer in [
                    "/pbrMetallicRoughness/baseColorTexture",
                    "/pbrMetallicRoughness/metallicRoughnessTexture",
                    "/normalTexture",
                    "/occlusionTexture",
                    "/emissiveTexture",
                ] {
                    let Some(texture) = material.pointer(pointer) else {
                        continue;
                    };
                    let set = texture.get("texCoord").and_then(Value::as_u64).unwrap_or(0);
                    if !attributes.contains_key(&format!("TEXCOORD_{set}")) {
                        return Err(GltfError::invalid(
                            &path,
                            format!(
                                "has no TEXCOORD_{set}, which its material's {} reads",
                                pointer.trim_start_matches('/').replace('/', ".")
                            ),
                        ));
                    }
                }
            }
            if sets[2] != sets[3] {
                return Err(GltfError::invalid(
                    &path,
                    format!(
                        "{} JOINTS_n sets but {} WEIGHTS_n sets (they come in pairs)",
                        sets[2], sets[3]
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Two channels of an animation must not drive the same property of the same node, and a
/// node given by `matrix` cannot be animated in translation, rotation or scale.
fn check_channels(json: &Value) -> Result<()> {
    let nodes = elements(json, "nodes");
    for (a, animation) in elements(json, "animations").iter().enumerate() {
        let mut targets = HashSet::new();
        for (c, channel) in elements(animation, "channels").iter().enumerate() {
            let Some(node) = channel.pointer("/target/node").and_then(Value::as_u64) else {
                continue;
            };
            let Some(property) = channel.pointer("/target/path").and_then(Value::as_str) else {
                continue;
            };
            if !targets.insert((node, property)) {
                return Err(GltfError::invalid(
                    format!("animations[{a}].channels[{c}].target"),
                    format!("{property} of node {node} is already animated by another channel"),
                ));
            }
            let has_matrix = nodes
                .get(node as usize)
                .is_some_and(|n| n.get("matrix").is_some());
            if has_matrix && ["translation", "rotation", "scale"].contains(&property) {
                return Err(GltfError::invalid(
                    format!("animations[{a}].channels[{c}].target"),
                    format!("animates {property} of nodes[{node}], which is given by a matrix"),
                ));
            }
        }
    }
    Ok(())
}

/// The document as the `gltf` crate can read it: animation channels without a target node
/// (which the specification says to ignore) removed. Returns it and, per animation, the index
/// each remaining channel had in the file (for error paths).
pub(crate) fn without_untargeted_channels(json: &Value) -> (Option<Value>, Vec<Vec<usize>>) {
    let animations = elements(json, "animations");
    let mut numbers: Vec<Vec<usize>> = Vec::with_capacity(animations.len());
    let mut changed = false;
    for animation in animations {
        let channels = elements(animation, "channels");
        let kept: Vec<usize> = (0..channels.len())
            .filter(|&c| {
                channels[c]
                    .get("target")
                    .is_none_or(|target| target.get("node").is_some())
            })
            .collect();
        changed |= kept.len() != channels.len();
        numbers.push(kept);
    }
    if !changed {
        return (None, numbers);
    }
    let mut copy = json.clone();
    if let Some(animations) = copy.get_mut("animations").and_then(Value::as_array_mut) {
        for (animation, kept) in animations.iter_mut().zip(&numbers) {
            if let Some(channels) = animation.get_mut("channels").and_then(Value::as_array_mut) {
                let old = std::mem::take(channels);
                *channels = kept.iter().map(|&c| old[c].clone()).collect();
            }
        }
    }
    (Some(copy), numbers)
}
