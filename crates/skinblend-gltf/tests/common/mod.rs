//! Shared test helpers: the sample-model directory, a glTF writer for generated test files,
//! and an independent f64 reference (its own GLB/JSON reading, sampling and skinning).
#![allow(dead_code)]

pub mod generated;
pub mod reference;

use serde_json::{json, Value};

// Not every test file that includes this module uses them.
#[allow(unused_imports)]
pub use skinblend_testkit::{models_dir, SAMPLES};

/// A glTF document written from code: JSON plus one binary buffer.
#[derive(Debug, Clone)]
pub struct Builder {
    /// The JSON being built.
    pub json: Value,
    /// The binary buffer (buffer 0).
    pub bin: Vec<u8>,
}

/// GL component types.
pub const BYTE: u32 = 5120;
pub const UNSIGNED_BYTE: u32 = 5121;
pub const SHORT: u32 = 5122;
pub const UNSIGNED_SHORT: u32 = 5123;
pub const UNSIGNED_INT: u32 = 5125;
pub const FLOAT: u32 = 5126;

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// An empty asset with one scene.
    pub fn new() -> Self {
        Self {
            json: json!({
                "asset": { "version": "2.0", "generator": "skinblend tests" },
                "scene": 0,
                "scenes": [{ "nodes": [] }],
                "nodes": [],
            }),
            bin: Vec::new(),
        }
    }

    fn push(&mut self, key: &str, value: Value) -> usize {
        if self.json.get(key).is_none() {
            self.json[key] = json!([]);
        }
        let array = self.json[key].as_array_mut().expect("array");
        array.push(value);
        array.len() - 1
    }

    /// Appends raw bytes as a buffer view; returns the view index.
    pub fn view(&mut self, bytes: &[u8]) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        self.push(
            "bufferViews",
            json!({ "buffer": 0, "byteOffset": offset, "byteLength": bytes.len() }),
        )
    }

    /// Appends an accessor over raw bytes; returns its index.
    pub fn accessor_bytes(
        &mut self,
        bytes: &[u8],
        component_type: u32,
        kind: &str,
        count: usize,
        normalized: bool,
    ) -> usize {
        let view = self.view(bytes);
        let mut accessor = json!({
            "bufferView": view, "componentType": component_type, "count": count, "type": kind,
        });
        if normalized {
            accessor["normalized"] = json!(true);
        }
        self.push("accessors", accessor)
    }

    /// Appends a float accessor (`kind` VEC3 gets min/max); returns its index.
    pub fn floats(&mut self, values: &[f32], kind: &str) -> usize {
        let width = match kind {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            _ => panic!("kind {kind}"),
        };
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let index = self.accessor_bytes(&bytes, FLOAT, kind, values.len() / width, false);
        if kind == "VEC3" || kind == "SCALAR" {
            let mut min = vec![f32::INFINITY; width];
            let mut max = vec![f32::NEG_INFINITY; width];
            for e in values.chunks(width) {
                for i in 0..width {
                    min[i] = min[i].min(e[i]);
                    max[i] = max[i].max(e[i]);
                }
            }
            self.json["accessors"][index]["min"] = json!(min);
            self.json["accessors"][index]["max"] = json!(max);
        }
        index
    }

    /// Appends a node; roots are added to scene 0. Returns its index.
    pub fn node(&mut self, node: Value, root: bool) -> usize {
        let index = self.push("nodes", node);
        if root {
            self.json["scenes"][0]["nodes"]
                .as_array_mut()
                .expect("scene nodes")
                .push(json!(index));
        }
        index
    }

    /// Appends any top-level object (`meshes`, `skins`, `animations`, …); returns its index.
    pub fn add(&mut self, key: &str, value: Value) -> usize {
        self.push(key, value)
    }

    /// The document as GLB bytes.
    pub fn glb(&self) -> Vec<u8> {
        let mut json = self.json.clone();
        if !self.bin.is_empty() {
            json["buffers"] = json!([{ "byteLength": self.bin.len() }]);
        }
        skinblend_testkit::glb_bytes(&serde_json::to_vec(&json).expect("json"), &self.bin)
    }
}

/// Flattens `[f32; N]` items.
pub fn flat<const N: usize>(items: &[[f32; N]]) -> Vec<f32> {
    items.iter().flatten().copied().collect()
}

/// Bytes of u8 values.
pub fn u8s(values: &[u8]) -> Vec<u8> {
    values.to_vec()
}

/// Little-endian bytes of u16 values.
pub fn u16s(values: &[u16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian bytes of i16 values.
pub fn i16s(values: &[i16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A small valid skinned file: a vertical strip of `rows` vertex pairs from y = 0 to y = 2,
/// two joints (joint 0 at the origin, joint 1 at y = 1, its child), weights blending from
/// joint 0 at the bottom to joint 1 at the top, a LINEAR rotation of joint 1 about +Z over
/// 1 s, and triangles. Returns the builder and (mesh node, joint 0, joint 1).
pub fn strip(rows: usize) -> (Builder, usize, usize, usize) {
    let mut b = Builder::new();
    let mut positions = Vec::new();
    let mut joints = Vec::new();
    let mut weights = Vec::new();
    for r in 0..rows {
        let y = 2.0 * r as f32 / (rows - 1) as f32;
        let w1 = (y / 2.0).clamp(0.0, 1.0);
        for x in [-0.25f32, 0.25] {
            positions.push([x, y, 0.0]);
            joints.extend_from_slice(&[0u16, 1, 0, 0]);
            weights.push([1.0 - w1, w1, 0.0, 0.0]);
        }
    }
    let mut indices = Vec::new();
    for r in 0..rows as u16 - 1 {
        let a = 2 * r;
        indices.extend_from_slice(&[a, a + 1, a + 2, a + 1, a + 3, a + 2]);
    }
    let position = b.floats(&flat(&positions), "VEC3");
    let joint_accessor = b.accessor_bytes(
        &u16s(&joints),
        UNSIGNED_SHORT,
        "VEC4",
        positions.len(),
        false,
    );
    let weight_accessor = b.floats(&flat(&weights), "VEC4");
    let index_accessor = b.accessor_bytes(
        &u16s(&indices),
        UNSIGNED_SHORT,
        "SCALAR",
        indices.len(),
        false,
    );
    b.add(
        "meshes",
        json!({ "primitives": [{
            "attributes": { "POSITION": position, "JOINTS_0": joint_accessor, "WEIGHTS_0": weight_accessor },
            "indices": index_accessor,
        }]}),
    );
    // Bind pose: joint 0 at the origin, joint 1 at y = 1.
    let mut ibm = glam::Mat4::IDENTITY.to_cols_array().to_vec();
    ibm.extend_from_slice(
        &glam::Mat4::from_translation(glam::Vec3::new(0.0, -1.0, 0.0)).to_cols_array(),
    );
    let ibm_accessor = b.floats(&ibm, "MAT4");
    let joint1 = 1; // indices fixed by the order below
    let joint0 = b.node(json!({ "name": "joint0", "children": [joint1] }), true);
    let joint1_index = b.node(
        json!({ "name": "joint1", "translation": [0.0, 1.0, 0.0] }),
        false,
    );
    assert_eq!(joint1, joint1_index);
    b.add(
        "skins",
        json!({ "joints": [joint0, joint1], "inverseBindMatrices": ibm_accessor }),
    );
    let mesh_node = b.node(json!({ "name": "strip", "mesh": 0, "skin": 0 }), true);
    let times = b.floats(&[0.0, 1.0], "SCALAR");
    let q = glam::Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let rotations = b.floats(&[0.0, 0.0, 0.0, 1.0, q.x, q.y, q.z, q.w], "VEC4");
    b.add(
        "animations",
        json!({ "name": "bend", "samplers": [{ "input": times, "output": rotations, "interpolation": "LINEAR" }],
                "channels": [{ "sampler": 0, "target": { "node": joint1, "path": "rotation" } }] }),
    );
    (b, mesh_node, joint0, joint1)
}
