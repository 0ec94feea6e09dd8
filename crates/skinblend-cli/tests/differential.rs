//! Differential test against the Khronos glTF-Validator: structural mutants of the sample models
//! and of a small generated file, each checked by the validator and by `skinblend info` and
//! `skinblend pose`.
//!
//! The contract, for every mutant:
//! - the validator reports an error → `info` and `pose` both exit 1 with one line on stderr that
//!   names the file (no panic, no hang, no output file);
//! - the validator reports no error → `info` and `pose` exit 0 and the posed export passes the
//!   validator too, or the refusal is on [`KNOWN_STRICTER`] with its reason.
//!
//! Anything else fails the test, which prints the counts per class and each disagreement (file,
//! mutation, validator codes, skinblend's line). Deterministic: mutant `i` depends only on the
//! seed and `i`. Environment:
//! - `SKINBLEND_DIFF_COUNT` mutants (default [`DEFAULT_COUNT`], sized for CI);
//! - `SKINBLEND_DIFF_SEED` (default [`DEFAULT_SEED`]);
//! - `SKINBLEND_DIFF_KEEP=DIR` writes the mutants into DIR and keeps them (they are also kept,
//!   in a temporary folder named in the output, when the test fails).
//!
//! Needs node and `npm ci --prefix tools` (the validator); required under `CI=true`. The sample
//! models come from `../shared/models` (required under `CI=true`; without them only the
//! generated file is mutated).
//!
//! Run longer by hand:
//! `SKINBLEND_DIFF_COUNT=3000 cargo test --release -p skinblend-cli --test differential -- --nocapture`

#[path = "../../skinblend-gltf/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Mutants in a default run: 1000 take about 40 s with the validator in a debug build on two
/// shared cores (1500 took 58 s there).
const DEFAULT_COUNT: u64 = 1000;
/// The default seed.
const DEFAULT_SEED: u64 = 11;
/// A `skinblend` run that takes longer than this is a hang (the largest sample loads and poses
/// in well under a second in a debug build; the margin is for a loaded CI machine).
const HANG_LIMIT: Duration = Duration::from_secs(60);
/// Files per validator process (keeps the command line far below the system's limit).
const VALIDATOR_BATCH: usize = 300;

/// Files the validator accepts and skinblend refuses on purpose: the text of skinblend's error
/// and why. Short by design; each entry is a decision, not a bug.
const KNOWN_STRICTER: &[(&str, &str)] = &[
    (
        "required extension not supported",
        "the specification says a loader MUST refuse a file whose extensionsRequired it does not \
         implement; the validator only warns that it does not know the extension",
    ),
    (
        "interpolation: invalid",
        "an interpolation other than STEP, LINEAR or CUBICSPLINE cannot be sampled; the \
         validator only warns (the schema allows other strings for extensions)",
    ),
    (
        "is not invertible",
        "a singular inverse bind matrix has no bind pose to skin from (no joint origin for \
         DQS or CoR); the validator does not check invertibility",
    ),
    (
        "attributes[\"POSITION\"]: required value missing",
        "a primitive without POSITION has nothing to skin or draw; the specification allows it \
         (an extension may supply the geometry) but skinblend implements none that does",
    ),
    (
        "target.path: invalid",
        "a channel path other than translation, rotation, scale or weights names no property \
         skinblend can pose; the validator only warns",
    ),
];

/// Validator error codes for data that skinblend repairs on purpose and reports under
/// `repairs` in `skinblend info` (weights renormalized to sum 1, a joint listed twice merged):
/// a mutant whose every validator error is one of these may be accepted.
const KNOWN_REPAIRED: &[(&str, &str)] = &[
    (
        "ACCESSOR_WEIGHTS_NON_NORMALIZED",
        "weights are renormalized and counted in repairs.vertices_renormalized (quantized \
         weights rarely sum to exactly 1)",
    ),
    (
        "ACCESSOR_JOINTS_INDEX_DUPLICATE",
        "a joint listed twice for a vertex is merged and counted in \
         repairs.vertices_with_repeated_joints",
    ),
];

// ---------------------------------------------------------------------------------------------
// Deterministic random numbers (SplitMix64).

struct Rng(u64);

impl Rng {
    fn new(seed: u64, index: u64) -> Self {
        let mut rng = Self(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        rng.next();
        rng
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (`None` when `n` is 0).
    fn below(&mut self, n: usize) -> Option<usize> {
        (n > 0).then(|| (self.next() % n as u64) as usize)
    }

    fn choose<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len()).expect("non-empty")].clone()
    }
}

// ---------------------------------------------------------------------------------------------
// A document to mutate: the JSON and buffer 0 (the GLB BIN chunk).

#[derive(Clone)]
struct Doc {
    json: Value,
    bin: Vec<u8>,
}

fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn base64_decode(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut accumulator, mut bits) = (0u32, 0u32);
    for byte in text.trim_end_matches('=').bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64"),
        };
        accumulator = (accumulator << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((accumulator >> bits) as u8);
            accumulator &= (1 << bits) - 1;
        }
    }
    out
}

impl Doc {
    /// A valid source file: a GLB, or a .gltf whose one buffer is a data: URI (made the BIN
    /// chunk, so that every mutant is one self-contained GLB).
    fn parse(bytes: &[u8]) -> Self {
        if bytes.starts_with(b"glTF") {
            let json_length = read_u32(bytes, 12) as usize;
            let json = serde_json::from_slice(&bytes[20..20 + json_length]).unwrap();
            let bin_at = 20 + json_length;
            let bin = if bin_at + 8 <= bytes.len() {
                let length = read_u32(bytes, bin_at) as usize;
                bytes[bin_at + 8..bin_at + 8 + length].to_vec()
            } else {
                Vec::new()
            };
            return Self { json, bin };
        }
        let mut json: Value = serde_json::from_slice(bytes).unwrap();
        let uri = json["buffers"][0]["uri"]
            .as_str()
            .expect("one data: buffer");
        let bin = base64_decode(uri.split_once(',').expect("data: URI").1);
        json["buffers"][0]
            .as_object_mut()
            .unwrap()
            .remove("uri")
            .unwrap();
        Self { json, bin }
    }

    fn glb(&self) -> Vec<u8> {
        skinblend_testkit::glb_bytes(&serde_json::to_vec(&self.json).unwrap(), &self.bin)
    }

    fn len(&self, key: &str) -> usize {
        self.json
            .get(key)
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    }

    /// A random index into the top-level array `key`.
    fn pick(&self, rng: &mut Rng, key: &str) -> Option<usize> {
        rng.below(self.len(key))
    }

    fn uint(value: &Value, key: &str) -> Option<usize> {
        value.get(key).and_then(Value::as_u64).map(|v| v as usize)
    }

    /// Accessors used as `what` (`"POSITION"`, `"JOINTS_0"`, `"WEIGHTS_0"`, `"indices"`,
    /// `"inverseBindMatrices"`, `"input"`, `"output"`).
    fn accessors_used_as(&self, what: &str) -> Vec<usize> {
        let mut found = Vec::new();
        let empty = Vec::new();
        let list = |key: &str| {
            self.json
                .get(key)
                .and_then(Value::as_array)
                .unwrap_or(&empty)
        };
        match what {
            "inverseBindMatrices" => {
                for skin in list("skins") {
                    found.extend(Self::uint(skin, what));
                }
            }
            "input" | "output" => {
                for animation in list("animations") {
                    for sampler in animation["samplers"].as_array().unwrap_or(&empty) {
                        found.extend(Self::uint(sampler, what));
                    }
                }
            }
            _ => {
                for mesh in list("meshes") {
                    for primitive in mesh["primitives"].as_array().unwrap_or(&empty) {
                        if what == "indices" {
                            found.extend(Self::uint(primitive, what));
                        } else {
                            found.extend(Self::uint(&primitive["attributes"], what));
                        }
                    }
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The byte in buffer 0 where component `component` of element `element` of `accessor`
    /// starts, and the component's size (non-matrix accessors and MAT4 of floats).
    fn locate(&self, accessor: usize, element: usize, component: usize) -> Option<(usize, usize)> {
        let a = &self.json["accessors"][accessor];
        let view = &self.json["bufferViews"][Self::uint(a, "bufferView")?];
        if Self::uint(view, "buffer")? != 0 {
            return None;
        }
        let size = match a["componentType"].as_u64()? {
            5120 | 5121 => 1,
            5122 | 5123 => 2,
            _ => 4,
        };
        let components = match a["type"].as_str()? {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            _ => return None,
        };
        if element >= Self::uint(a, "count")? || component >= components {
            return None;
        }
        let stride = Self::uint(view, "byteStride").unwrap_or(size * components);
        let at = Self::uint(view, "byteOffset").unwrap_or(0)
            + Self::uint(a, "byteOffset").unwrap_or(0)
            + element * stride
            + component * size;
        (at + size <= self.bin.len()).then_some((at, size))
    }

    fn write(&mut self, at: usize, size: usize, value: u64) {
        self.bin[at..at + size].copy_from_slice(&value.to_le_bytes()[..size]);
    }

    fn read(&self, at: usize, size: usize) -> u64 {
        let mut bytes = [0u8; 8];
        bytes[..size].copy_from_slice(&self.bin[at..at + size]);
        u64::from_le_bytes(bytes)
    }
}

// ---------------------------------------------------------------------------------------------
// Mutations: each changes one structural thing and says what, or returns `None` when the
// document has nothing it applies to.

type Mutation = fn(&mut Doc, &mut Rng) -> Option<String>;

/// The named mutation classes.
const MUTATIONS: &[(&str, Mutation)] = &[
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

fn view_offset(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn view_length(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn view_stride(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn accessor_offset(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "accessors")?;
    let accessor = &mut d.json["accessors"][a];
    let offset = Doc::uint(accessor, "byteOffset").unwrap_or(0);
    let new = offset + r.choose(&[1, 2, 3, 4, 8, 12, 1000]);
    accessor["byteOffset"] = json!(new);
    Some(format!("accessors[{a}].byteOffset {offset} -> {new}"))
}

fn accessor_count(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn component_type(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "accessors")?;
    let accessor = &mut d.json["accessors"][a];
    let old = accessor["componentType"].clone();
    let new = r.choose(&[5120, 5121, 5122, 5123, 5124, 5125, 5126, 5130]);
    accessor["componentType"] = json!(new);
    Some(format!("accessors[{a}].componentType {old} -> {new}"))
}

fn accessor_type(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "accessors")?;
    let accessor = &mut d.json["accessors"][a];
    let old = accessor["type"].clone();
    let new = r.choose(&[
        "SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4", "VEC5",
    ]);
    accessor["type"] = json!(new);
    Some(format!("accessors[{a}].type {old} -> {new}"))
}

fn normalized(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let a = d.pick(r, "accessors")?;
    let accessor = &mut d.json["accessors"][a];
    let old = accessor["normalized"].as_bool().unwrap_or(false);
    accessor["normalized"] = json!(!old);
    Some(format!("accessors[{a}].normalized {old} -> {}", !old))
}

fn min_max(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn index_value(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn joint_value(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn weight_value(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn float_value(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn key_times(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn node_children(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn node_transform(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn node_refs(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn scene_roots(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn skin(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn sampler(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn channel(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn buffer(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn attributes(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

fn primitive_mode(d: &mut Doc, r: &mut Rng) -> Option<String> {
    let m = d.pick(r, "meshes")?;
    let primitives = d.json["meshes"][m]["primitives"].as_array_mut()?;
    let p = r.below(primitives.len())?;
    let mode = r.below(8)?;
    primitives[p]["mode"] = json!(mode);
    Some(format!("meshes[{m}].primitives[{p}].mode = {mode}"))
}

fn document(d: &mut Doc, r: &mut Rng) -> Option<String> {
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

// ---------------------------------------------------------------------------------------------
// Running the validator and skinblend.

/// What the validator said about one file.
#[derive(Debug, Clone, Default)]
struct Verdict {
    errors: u64,
    codes: Vec<String>,
    /// The validator threw instead of reporting (a bug of its own), with its message.
    crashed: Option<String>,
}

fn validate(script: &Path, files: &[PathBuf]) -> BTreeMap<PathBuf, Verdict> {
    let mut verdicts = BTreeMap::new();
    for batch in files.chunks(VALIDATOR_BATCH) {
        let run = Command::new("node")
            .arg(script)
            .arg("--lines")
            .args(batch)
            .output()
            .expect("run node");
        assert!(
            run.status.code().is_some_and(|c| c <= 1),
            "validator failed: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        for line in String::from_utf8_lossy(&run.stdout).lines() {
            let v: Value = serde_json::from_str(line).expect("validator line");
            // Each code once, with its first place (a broken accessor repeats per element).
            let mut codes: Vec<String> = Vec::new();
            for issue in v["issues"].as_array().map_or(&[][..], Vec::as_slice) {
                let code = issue["code"].as_str().unwrap();
                if !codes.iter().any(|c| c.starts_with(code)) {
                    codes.push(format!("{code} at {}", issue["pointer"]));
                }
            }
            verdicts.insert(
                PathBuf::from(v["file"].as_str().unwrap()),
                Verdict {
                    errors: v["errors"].as_u64().unwrap_or(0),
                    codes,
                    crashed: v["crashed"].as_str().map(str::to_owned),
                },
            );
        }
    }
    assert_eq!(verdicts.len(), files.len(), "one validator line per file");
    verdicts
}

/// How one `skinblend` run ended.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Accepted,
    /// Exit 1 with one line that names the file.
    Refused(String),
    /// Anything else: a panic, another exit code, several lines, a line without the file name,
    /// a hang.
    Broken(String),
}

fn run_skinblend(args: &[&str], file: &Path) -> Outcome {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skinblend"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run skinblend");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > HANG_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let text = reader.join().unwrap();
    let Some(status) = status else {
        return Outcome::Broken(format!("no exit after {HANG_LIMIT:?} (hang)"));
    };
    let name = file.file_name().unwrap().to_string_lossy();
    match status.code() {
        Some(0) => Outcome::Accepted,
        Some(1)
            if text.trim_end().lines().count() == 1
                && text.contains(name.as_ref())
                && !text.contains("panicked") =>
        {
            Outcome::Refused(text.trim_end().to_owned())
        }
        code => Outcome::Broken(format!("exit {code:?}: {}", text.trim_end())),
    }
}

struct Mutant {
    file: PathBuf,
    posed: PathBuf,
    source: String,
    class: &'static str,
    what: String,
    info: Outcome,
    pose: Outcome,
}

fn sources() -> Vec<(String, Doc)> {
    let mut sources = Vec::new();
    let (strip, ..) = common::strip(4);
    sources.push((
        "strip".to_owned(),
        Doc {
            json: {
                let mut json = strip.json.clone();
                json["buffers"] = json!([{ "byteLength": strip.bin.len() }]);
                json
            },
            bin: strip.bin.clone(),
        },
    ));
    if let Some(dir) = skinblend_testkit::models_dir_if_present() {
        for name in common::SAMPLES {
            let stem = Path::new(name).file_stem().unwrap().to_string_lossy();
            let bytes = std::fs::read(dir.join(name)).unwrap();
            sources.push((stem.into_owned(), Doc::parse(&bytes)));
        }
    }
    sources
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
    })
}

fn skinblend_refuses_what_the_khronos_validator_refuses() {
    let Some(script) = skinblend_testkit::gltf_validator() else {
        return;
    };
    let count = env_u64("SKINBLEND_DIFF_COUNT", DEFAULT_COUNT);
    let seed = env_u64("SKINBLEND_DIFF_SEED", DEFAULT_SEED);
    let keep = std::env::var_os("SKINBLEND_DIFF_KEEP").map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("skinblend-differential-{}", std::process::id()))
    });
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    // The sources themselves must be valid and accepted, or every mutant inherits their faults.
    let sources = sources();
    let source_files: Vec<PathBuf> = sources
        .iter()
        .map(|(name, doc)| {
            let file = dir.join(format!("source-{name}.glb"));
            std::fs::write(&file, doc.glb()).unwrap();
            file
        })
        .collect();
    for (file, verdict) in validate(&script, &source_files) {
        assert!(
            verdict.errors == 0 && verdict.crashed.is_none(),
            "{}: {verdict:?}",
            file.display()
        );
    }

    // The regression files kept from earlier findings (crates/skinblend-gltf/tests/data/validator,
    // tested against the loader in validator_findings.rs) are what the validator says they are.
    let findings_dir =
        skinblend_testkit::repository_root().join("crates/skinblend-gltf/tests/data/validator");
    let mut findings: Vec<PathBuf> = std::fs::read_dir(&findings_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    findings.sort();
    for (file, verdict) in validate(&script, &findings) {
        let accepted = file
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("accepted-");
        assert_eq!(
            verdict.errors == 0 && verdict.crashed.is_none(),
            accepted,
            "{}: {:?}",
            file.display(),
            verdict.codes
        );
    }

    // Mutants: source i mod n, a class drawn until one applies.
    let mut mutants = Vec::new();
    for i in 0..count {
        let mut rng = Rng::new(seed, i);
        let (name, source) = &sources[(i % sources.len() as u64) as usize];
        for _ in 0..100 {
            let (class, mutate) = MUTATIONS[rng.below(MUTATIONS.len()).unwrap()];
            let mut doc = source.clone();
            if let Some(what) = mutate(&mut doc, &mut rng) {
                let file = dir.join(format!("{i:05}-{name}-{class}.glb"));
                std::fs::write(&file, doc.glb()).unwrap();
                mutants.push(Mutant {
                    posed: dir.join(format!("{i:05}-{name}-{class}.posed.glb")),
                    file,
                    source: name.clone(),
                    class,
                    what,
                    info: Outcome::Accepted,
                    pose: Outcome::Accepted,
                });
                break;
            }
        }
    }

    // skinblend on every mutant, on every core.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<(usize, Outcome, Outcome)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(m) = mutants.get(i) else { break };
                        let file = m.file.to_str().unwrap();
                        let info = run_skinblend(&["info", file], &m.file);
                        let pose = run_skinblend(
                            &[
                                "pose",
                                file,
                                "--time",
                                "0.5",
                                "-o",
                                m.posed.to_str().unwrap(),
                            ],
                            &m.file,
                        );
                        done.push((i, info, pose));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (i, info, pose) in results {
        mutants[i].info = info;
        mutants[i].pose = pose;
    }

    let files: Vec<PathBuf> = mutants.iter().map(|m| m.file.clone()).collect();
    let verdicts = validate(&script, &files);
    let posed: Vec<PathBuf> = mutants
        .iter()
        .filter(|m| m.pose == Outcome::Accepted)
        .map(|m| m.posed.clone())
        .collect();
    let posed_verdicts = validate(&script, &posed);

    // Classify.
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut per_class: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut validator_errors = 0;
    for m in &mutants {
        let verdict = &verdicts[&m.file];
        let invalid = verdict.errors > 0;
        validator_errors += usize::from(invalid);
        if verdict.crashed.is_some()
            && !matches!(m.info, Outcome::Broken(_))
            && !matches!(m.pose, Outcome::Broken(_))
        {
            // No verdict to compare with; skinblend still must not break.
            let outcome = if m.info == Outcome::Accepted && m.pose == Outcome::Accepted {
                "validator crashed, skinblend accepts"
            } else {
                "validator crashed, skinblend refuses"
            };
            *counts.entry(outcome).or_default() += 1;
            *per_class.entry((outcome, m.class)).or_default() += 1;
            continue;
        }
        let refusal = |o: &Outcome| match o {
            Outcome::Refused(line) => Some(line.clone()),
            _ => None,
        };
        let outcome = match (&m.info, &m.pose) {
            (Outcome::Broken(why), _) | (_, Outcome::Broken(why)) => (
                "broken (panic, hang, exit code or message)",
                Some(why.clone()),
            ),
            (Outcome::Refused(_), Outcome::Refused(_)) if invalid => ("agree: both refuse", None),
            (Outcome::Accepted, Outcome::Accepted) if !invalid => {
                let out = &posed_verdicts[&m.posed];
                if out.errors == 0 && out.crashed.is_none() {
                    ("agree: both accept", None)
                } else {
                    (
                        "posed export has validator errors",
                        Some(format!(
                            "{}{}",
                            out.codes.join("; "),
                            out.crashed.clone().unwrap_or_default()
                        )),
                    )
                }
            }
            (Outcome::Accepted, Outcome::Accepted)
                if verdict.codes.iter().all(|code| {
                    KNOWN_REPAIRED
                        .iter()
                        .any(|(known, _)| code.starts_with(&format!("{known} ")))
                }) =>
            {
                ("validator error, skinblend repairs (known)", None)
            }
            (info, pose) if invalid => (
                "validator error, skinblend accepts",
                Some(format!(
                    "info {}, pose {}",
                    refusal(info).unwrap_or_else(|| "accepts".into()),
                    refusal(pose).unwrap_or_else(|| "accepts".into())
                )),
            ),
            (info, pose) => {
                let line = refusal(info).or_else(|| refusal(pose)).unwrap_or_default();
                match KNOWN_STRICTER.iter().find(|(text, _)| line.contains(text)) {
                    Some(_) => ("validator accepts, skinblend refuses (known)", None),
                    None => (
                        "validator accepts, skinblend refuses",
                        Some(format!(
                            "info {}, pose {}",
                            refusal(info).unwrap_or_else(|| "accepts".into()),
                            refusal(pose).unwrap_or_else(|| "accepts".into())
                        )),
                    ),
                }
            }
        };
        *counts.entry(outcome.0).or_default() += 1;
        *per_class.entry((outcome.0, m.class)).or_default() += 1;
        if let Some(detail) = outcome.1 {
            failures.push(format!(
                "{} [{}] {} ({}): {}\n    validator: {}\n    skinblend: {detail}",
                outcome.0,
                m.source,
                m.file.file_name().unwrap().to_string_lossy(),
                m.what,
                m.class,
                if verdict.codes.is_empty() {
                    "no errors".to_owned()
                } else {
                    verdict.codes.join("; ")
                }
            ));
        }
    }
    let mut summary = format!(
        "differential test, seed {seed}: {} mutants of {} sources, {validator_errors} with validator errors\n",
        mutants.len(),
        sources.len()
    );
    for (outcome, n) in &counts {
        summary.push_str(&format!("  {n:5}  {outcome}\n"));
    }
    for ((outcome, class), n) in &per_class {
        if !outcome.starts_with("agree") {
            summary.push_str(&format!("    {n:5}  {outcome}: {class}\n"));
        }
    }
    eprint!("{summary}");
    // Also where CI prints it after `cargo test` (which hides a passing test's output).
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential-counts.txt"),
        &summary,
    );
    if failures.is_empty() && keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        failures.is_empty(),
        "{} disagreements (mutants kept in {}):\n{}",
        failures.len(),
        dir.display(),
        failures.join("\n")
    );
}

skinblend_testkit::test_main!(skinblend_refuses_what_the_khronos_validator_refuses,);
