//! The differential test's mutations of the scene graph (nodes, scenes), skins, animations
//! (key times, samplers, channels), buffers, mesh attributes and the document itself.

use serde_json::json;

use super::doc::{Doc, Rng};

pub fn key_times(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let used = d.accessors_used_as("input");
    let a = used[r.below(used.len())?];
    let count = Doc::uint(&d.json["accessors"][a], "count")?;
    if count < 2 {
        return None;
    }
    let k = r.below(count - 1)?;
    let (at0, _) = d.locate(a, k, 0)?;
    let (at1, _) = d.locate(a, k + 1, 0)?;
    let (t0, t1) = (d.read(at0, 4), d.read(at1, 4));
    if r.below(2)? == 0 {
        // Swap two keys (their min/max stay right unless the ends move).
        d.write(at0, 4, t1);
        d.write(at1, 4, t0);
        Some(format!(
            "accessors[{a}] key times {k} and {} swapped",
            k + 1
        ))
    } else {
        d.write(at1, 4, t0);
        Some(format!("accessors[{a}] key time {} repeats key {k}", k + 1))
    }
}

pub fn node_children(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let n = d.len("nodes");
    let a = d.pick(r, "nodes")?;
    let b = r.below(n)?;
    let node = &mut d.json["nodes"][a];
    match r.below(4)? {
        0 => {
            node["children"] = json!([a]);
            Some(format!("nodes[{a}].children = [{a}] (itself)"))
        }
        1 => {
            let target = r.choose(&[n, n + 5]);
            node["children"] = json!([target]);
            Some(format!("nodes[{a}].children = [{target}] (out of range)"))
        }
        2 => {
            if node.get("children").is_none() {
                node["children"] = json!([]);
            }
            node["children"].as_array_mut()?.push(json!(b));
            Some(format!("nodes[{a}].children += {b}"))
        }
        _ => {
            let children = node.get_mut("children")?.as_array_mut()?;
            let first = children.first()?.clone();
            children.push(first.clone());
            Some(format!("nodes[{a}].children: {first} twice"))
        }
    }
}

pub fn node_transform(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "nodes")?;
    let node = &mut d.json["nodes"][a];
    match r.below(5)? {
        0 => {
            node["matrix"] = json!([2.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
            node["translation"] = json!([0.0, 1.0, 0.0]);
            Some(format!("nodes[{a}]: matrix and translation"))
        }
        1 => {
            node["matrix"] = json!([1.0, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
            for key in ["translation", "rotation", "scale"] {
                node.as_object_mut()?.remove(key);
            }
            Some(format!("nodes[{a}].matrix projective"))
        }
        2 => {
            node["rotation"] = json!(r.choose(&[[0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0]]));
            node.as_object_mut()?.remove("matrix");
            Some(format!("nodes[{a}].rotation {}", node["rotation"]))
        }
        3 => {
            node["scale"] = json!(r.choose(&[[0.0, 1.0, 1.0], [-1.0, 1.0, 1.0]]));
            node.as_object_mut()?.remove("matrix");
            Some(format!("nodes[{a}].scale {}", node["scale"]))
        }
        _ => {
            node["translation"] = json!([0.0, 1.0]);
            node.as_object_mut()?.remove("matrix");
            Some(format!("nodes[{a}].translation of two values"))
        }
    }
}

pub fn node_refs(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "nodes")?;
    let (meshes, skins) = (d.len("meshes"), d.len("skins"));
    let m = d.pick(r, "meshes");
    let s = d.pick(r, "skins");
    let node = d.json["nodes"][a].as_object_mut()?;
    match r.below(5)? {
        0 => {
            node.insert("mesh".into(), json!(meshes));
            Some(format!("nodes[{a}].mesh = {meshes} (out of range)"))
        }
        1 => {
            node.insert("skin".into(), json!(skins));
            Some(format!("nodes[{a}].skin = {skins} (out of range)"))
        }
        2 => {
            node.insert("skin".into(), json!(s?));
            Some(format!("nodes[{a}].skin = {}", s?))
        }
        3 => {
            node.insert("mesh".into(), json!(m?));
            Some(format!("nodes[{a}].mesh = {}", m?))
        }
        _ => {
            node.remove("skin")?;
            Some(format!("nodes[{a}].skin removed"))
        }
    }
}

pub fn scene_roots(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let n = d.len("nodes");
    let b = r.below(n)?;
    match r.below(5)? {
        0 => {
            d.json["scene"] = json!(d.len("scenes"));
            Some("scene out of range".into())
        }
        1 => {
            let roots = d.json["scenes"][0].get_mut("nodes")?.as_array_mut()?;
            roots.push(json!(b));
            Some(format!("scenes[0].nodes += {b}"))
        }
        2 => {
            d.json["scenes"][0]["nodes"] = json!([n]);
            Some(format!("scenes[0].nodes = [{n}] (out of range)"))
        }
        3 => {
            d.json["scenes"][0]["nodes"] = json!([]);
            Some("scenes[0].nodes = []".into())
        }
        _ => {
            let root = d.json.as_object_mut()?;
            root.remove("scenes");
            root.remove("scene");
            Some("no scenes".into())
        }
    }
}

pub fn skin(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let s = d.pick(r, "skins")?;
    let n = d.len("nodes");
    let a = d.len("accessors");
    let b = r.below(n)?;
    let other = r.below(a)?;
    let skin = d.json["skins"][s].as_object_mut()?;
    match r.below(6)? {
        0 => {
            let joints = skin.get_mut("joints")?.as_array_mut()?;
            let first = joints.first()?.clone();
            joints.push(first.clone());
            Some(format!("skins[{s}].joints: {first} twice"))
        }
        1 => {
            skin.insert("joints".into(), json!([]));
            Some(format!("skins[{s}].joints = []"))
        }
        2 => {
            skin.remove("inverseBindMatrices")?;
            Some(format!("skins[{s}].inverseBindMatrices removed"))
        }
        3 => {
            skin.insert("inverseBindMatrices".into(), json!(other));
            Some(format!("skins[{s}].inverseBindMatrices = {other}"))
        }
        4 => {
            skin.insert("skeleton".into(), json!(b));
            Some(format!("skins[{s}].skeleton = {b}"))
        }
        _ => {
            let joints = skin.get_mut("joints")?.as_array_mut()?;
            joints.pop()?;
            Some(format!("skins[{s}].joints: last removed"))
        }
    }
}

pub fn sampler(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "animations")?;
    let other = d.pick(r, "accessors")?;
    let samplers = d.json["animations"][a]["samplers"].as_array_mut()?;
    let s = r.below(samplers.len())?;
    let sampler = samplers[s].as_object_mut()?;
    match r.below(4)? {
        0 => {
            sampler.insert("input".into(), json!(other));
            Some(format!("animations[{a}].samplers[{s}].input = {other}"))
        }
        1 => {
            sampler.insert("output".into(), json!(other));
            Some(format!("animations[{a}].samplers[{s}].output = {other}"))
        }
        _ => {
            let new = r.choose(&["STEP", "LINEAR", "CUBICSPLINE", "SMOOTH"]);
            sampler.insert("interpolation".into(), json!(new));
            Some(format!(
                "animations[{a}].samplers[{s}].interpolation = {new}"
            ))
        }
    }
}

pub fn channel(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "animations")?;
    let n = d.len("nodes");
    let b = r.below(n)?;
    let samplers = d.json["animations"][a]["samplers"].as_array()?.len();
    let channels = d.json["animations"][a]["channels"].as_array_mut()?;
    let c = r.below(channels.len())?;
    match r.below(5)? {
        0 => {
            let path = r.choose(&["translation", "rotation", "scale", "weights", "color"]);
            channels[c]["target"]["path"] = json!(path);
            Some(format!(
                "animations[{a}].channels[{c}].target.path = {path}"
            ))
        }
        1 => {
            channels[c]["target"]["node"] = json!(b);
            Some(format!("animations[{a}].channels[{c}].target.node = {b}"))
        }
        2 => {
            channels[c]["sampler"] = json!(samplers);
            Some(format!(
                "animations[{a}].channels[{c}].sampler = {samplers} (out of range)"
            ))
        }
        3 => {
            let copy = channels[c].clone();
            channels.push(copy);
            Some(format!("animations[{a}].channels[{c}] twice"))
        }
        _ => {
            channels[c]["target"].as_object_mut()?.remove("node")?;
            Some(format!("animations[{a}].channels[{c}].target.node removed"))
        }
    }
}

pub fn buffer(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let length = Doc::uint(&d.json["buffers"][0], "byteLength")?;
    match r.below(4)? {
        0 => {
            let new = r.choose(&[length + 1, length + 4, length * 2]);
            d.json["buffers"][0]["byteLength"] = json!(new);
            Some(format!("buffers[0].byteLength {length} -> {new}"))
        }
        1 => {
            let new = r.choose(&[length.saturating_sub(4), length / 2, 1]);
            d.json["buffers"][0]["byteLength"] = json!(new);
            Some(format!("buffers[0].byteLength {length} -> {new}"))
        }
        2 => {
            let cut = r.choose(&[4, 16, d.bin.len() / 2]).min(d.bin.len());
            d.bin.truncate(d.bin.len() - cut);
            Some(format!("BIN chunk {cut} bytes short"))
        }
        _ => {
            d.bin.clear();
            Some("no BIN chunk".into())
        }
    }
}

pub fn attributes(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let m = d.pick(r, "meshes")?;
    let other = d.pick(r, "accessors")?;
    let primitives = d.json["meshes"][m]["primitives"].as_array_mut()?;
    let p = r.below(primitives.len())?;
    let attributes = primitives[p]["attributes"].as_object_mut()?;
    let path = format!("meshes[{m}].primitives[{p}].attributes");
    match r.below(5)? {
        0 => {
            let name = r.choose(&["POSITION", "NORMAL", "JOINTS_0", "WEIGHTS_0", "TEXCOORD_0"]);
            attributes.remove(name)?;
            Some(format!("{path}: {name} removed"))
        }
        1 => {
            let name = r.choose(&["POSITION", "NORMAL", "JOINTS_0", "WEIGHTS_0", "TEXCOORD_0"]);
            attributes.insert(name.into(), json!(other));
            Some(format!("{path}[{name}] = {other}"))
        }
        2 => {
            let name = r.choose(&["JOINTS_1", "WEIGHTS_1", "TEXCOORD_1", "COLOR_0"]);
            attributes.insert(name.into(), json!(other));
            Some(format!("{path}[{name}] = {other} (added)"))
        }
        3 => {
            let joints = attributes.get("JOINTS_0")?.clone();
            let weights = attributes.get("WEIGHTS_0")?.clone();
            attributes.insert("JOINTS_1".into(), joints);
            attributes.insert("WEIGHTS_1".into(), weights);
            Some(format!("{path}: JOINTS_1/WEIGHTS_1 repeat set 0"))
        }
        _ => {
            let new = r.choose(&["positions", "_CUSTOM", "TEXCOORD", "JOINTS_2"]);
            attributes.insert(new.into(), json!(other));
            Some(format!("{path}[{new}] = {other}"))
        }
    }
}

pub fn primitive_mode(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let m = d.pick(r, "meshes")?;
    let primitives = d.json["meshes"][m]["primitives"].as_array_mut()?;
    let p = r.below(primitives.len())?;
    let mode = r.below(8)?;
    primitives[p]["mode"] = json!(mode);
    Some(format!("meshes[{m}].primitives[{p}].mode = {mode}"))
}

pub fn document(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let root = d.json.as_object_mut()?;
    match r.below(5)? {
        0 => {
            root.remove("asset")?;
            Some("no asset".into())
        }
        1 => {
            root.insert("asset".into(), json!({ "version": "1.0" }));
            Some("asset.version 1.0".into())
        }
        2 => {
            root.insert("extensionsRequired".into(), json!(["KHR_unknown"]));
            root.insert("extensionsUsed".into(), json!(["KHR_unknown"]));
            Some("extensionsRequired unknown".into())
        }
        3 => {
            root.insert(
                "extensionsRequired".into(),
                json!(["KHR_mesh_quantization"]),
            );
            Some("extensionsRequired KHR_mesh_quantization, not in extensionsUsed".into())
        }
        _ => {
            let key = r.choose(&["nodes", "meshes", "accessors", "skins", "animations"]);
            root.insert(key.into(), json!({}));
            Some(format!("{key} is an object"))
        }
    }
}
