//! An f64 reference written independently of the crate: its own GLB split, base64, JSON walk
//! (serde_json), accessor reading (dense FLOAT / UNSIGNED_BYTE / UNSIGNED_SHORT), animation
//! sampling (STEP, LINEAR with its own slerp, CUBICSPLINE) and linear blend skinning.

use std::path::Path;

use glam::{DMat4, DQuat, DVec3};
use serde_json::Value;

/// A document as the reference sees it.
pub struct RefDoc {
    pub json: Value,
    pub buffers: Vec<Vec<u8>>,
}

fn b64(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("bad base64"),
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

impl RefDoc {
    /// Reads a .gltf or .glb file.
    pub fn open(path: &Path) -> Self {
        let bytes = std::fs::read(path).expect("read");
        let (json_bytes, bin) = if &bytes[0..4] == b"glTF" {
            let u32_at =
                |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as usize;
            let json_len = u32_at(12);
            let json = bytes[20..20 + json_len].to_vec();
            let bin_at = 20 + json_len;
            let bin = (bin_at < bytes.len()).then(|| {
                let len = u32_at(bin_at);
                bytes[bin_at + 8..bin_at + 8 + len].to_vec()
            });
            (json, bin)
        } else {
            (bytes, None)
        };
        let json: Value = serde_json::from_slice(&json_bytes).expect("json");
        let buffers = json["buffers"]
            .as_array()
            .map(|bs| {
                bs.iter()
                    .map(|b| match b["uri"].as_str() {
                        None => bin.clone().expect("bin chunk"),
                        Some(uri) if uri.starts_with("data:") => {
                            b64(uri.split_once(',').unwrap().1)
                        }
                        Some(uri) => {
                            std::fs::read(path.parent().unwrap().join(uri)).expect("buffer")
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self { json, buffers }
    }

    /// Reads accessor `index` as f64 values (dense float, u8, u16; normalized honoured).
    pub fn accessor(&self, index: usize) -> (usize, Vec<f64>) {
        let a = &self.json["accessors"][index];
        let count = a["count"].as_u64().unwrap() as usize;
        let width = match a["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            t => panic!("type {t}"),
        };
        assert!(
            a.get("sparse").is_none(),
            "the reference reads dense accessors only"
        );
        let ct = a["componentType"].as_u64().unwrap();
        let normalized = a["normalized"].as_bool().unwrap_or(false);
        let size = match ct {
            5126 => 4,
            5121 => 1,
            5123 => 2,
            _ => panic!("component type {ct}"),
        };
        let v = &self.json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let buffer = &self.buffers[v["buffer"].as_u64().unwrap() as usize];
        let start = v["byteOffset"].as_u64().unwrap_or(0) as usize
            + a["byteOffset"].as_u64().unwrap_or(0) as usize;
        let stride = v["byteStride"]
            .as_u64()
            .map_or(width * size, |s| s as usize);
        let mut out = Vec::with_capacity(count * width);
        for e in 0..count {
            for c in 0..width {
                let o = start + e * stride + c * size;
                let x = match ct {
                    5126 => f32::from_le_bytes(buffer[o..o + 4].try_into().unwrap()) as f64,
                    5121 => buffer[o] as f64 / if normalized { 255.0 } else { 1.0 },
                    _ => {
                        u16::from_le_bytes([buffer[o], buffer[o + 1]]) as f64
                            / if normalized { 65535.0 } else { 1.0 }
                    }
                };
                out.push(x);
            }
        }
        (width, out)
    }

    fn local(&self, node: usize, overrides: &[(usize, &str, Vec<f64>)]) -> DMat4 {
        let n = &self.json["nodes"][node];
        let get = |key: &str| -> Option<Vec<f64>> {
            overrides
                .iter()
                .find(|(o, k, _)| *o == node && *k == key)
                .map(|(_, _, v)| v.clone())
                .or_else(|| {
                    n[key]
                        .as_array()
                        .map(|a| a.iter().map(|x| x.as_f64().unwrap()).collect())
                })
        };
        let animated = overrides.iter().any(|(o, _, _)| *o == node);
        if let (Some(m), false) = (n["matrix"].as_array(), animated) {
            let m: Vec<f64> = m.iter().map(|x| x.as_f64().unwrap()).collect();
            return DMat4::from_cols_slice(&m);
        }
        let t = get("translation").map_or(DVec3::ZERO, |v| DVec3::from_slice(&v));
        let r = get("rotation").map_or(DQuat::IDENTITY, |v| DQuat::from_slice(&v).normalize());
        let s = get("scale").map_or(DVec3::ONE, |v| DVec3::from_slice(&v));
        DMat4::from_translation(t) * DMat4::from_quat(r) * DMat4::from_scale(s)
    }

    /// World matrix of every node, by recursion from each node to its root (the reference
    /// finds parents by searching every node's children).
    pub fn world(&self, overrides: &[(usize, &str, Vec<f64>)]) -> Vec<DMat4> {
        let nodes = self.json["nodes"].as_array().unwrap();
        let parent_of = |i: usize| {
            nodes.iter().position(|n| {
                n["children"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|x| x.as_u64() == Some(i as u64)))
            })
        };
        (0..nodes.len())
            .map(|i| {
                let mut m = self.local(i, overrides);
                let mut at = i;
                while let Some(p) = parent_of(at) {
                    m = self.local(p, overrides) * m;
                    at = p;
                }
                m
            })
            .collect()
    }

    /// Samples every channel of animation `a` at `time_s` into (node, path, value) overrides.
    pub fn sample(&self, a: usize, time_s: f64) -> Vec<(usize, &'static str, Vec<f64>)> {
        let anim = &self.json["animations"][a];
        let mut out = Vec::new();
        for channel in anim["channels"].as_array().unwrap() {
            let node = channel["target"]["node"].as_u64().unwrap() as usize;
            let path: &'static str = match channel["target"]["path"].as_str().unwrap() {
                "translation" => "translation",
                "rotation" => "rotation",
                "scale" => "scale",
                _ => continue,
            };
            let sampler = &anim["samplers"][channel["sampler"].as_u64().unwrap() as usize];
            let (_, times) = self.accessor(sampler["input"].as_u64().unwrap() as usize);
            let (width, values) = self.accessor(sampler["output"].as_u64().unwrap() as usize);
            let interpolation = sampler["interpolation"].as_str().unwrap_or("LINEAR");
            let cubic = interpolation == "CUBICSPLINE";
            let key = |k: usize| -> Vec<f64> {
                let i = if cubic { 3 * k + 1 } else { k };
                values[i * width..(i + 1) * width].to_vec()
            };
            let n = times.len();
            let value = if time_s <= times[0] {
                key(0)
            } else if time_s >= times[n - 1] {
                key(n - 1)
            } else {
                let mut k = 0;
                while times[k + 1] <= time_s {
                    k += 1;
                }
                let s = (time_s - times[k]) / (times[k + 1] - times[k]);
                match interpolation {
                    "STEP" => key(k),
                    "LINEAR" if path == "rotation" => slerp(&key(k), &key(k + 1), s),
                    "LINEAR" => key(k)
                        .iter()
                        .zip(key(k + 1))
                        .map(|(a, b)| a + (b - a) * s)
                        .collect(),
                    _ => panic!("the reference samples the samples' interpolations only"),
                }
            };
            out.push((node, path, value));
        }
        out
    }

    /// LBS of every skinned primitive in f64: per skinned node (file order), per primitive,
    /// the positions `Σ wᵢ (world(jointᵢ) · ibmᵢ) p / Σ wᵢ`.
    pub fn skin(&self, animation: Option<(usize, f64)>) -> Vec<Vec<DVec3>> {
        let overrides = animation
            .map(|(a, t)| self.sample(a, t))
            .unwrap_or_default();
        let world = self.world(&overrides);
        let mut out = Vec::new();
        for node in self.json["nodes"].as_array().unwrap() {
            let (Some(mesh), Some(skin)) = (node["mesh"].as_u64(), node["skin"].as_u64()) else {
                continue;
            };
            let skin = &self.json["skins"][skin as usize];
            let joints: Vec<usize> = skin["joints"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j.as_u64().unwrap() as usize)
                .collect();
            let ibm = skin["inverseBindMatrices"]
                .as_u64()
                .map(|i| self.accessor(i as usize).1);
            let palette: Vec<DMat4> = joints
                .iter()
                .enumerate()
                .map(|(j, &node)| {
                    let inverse_bind = ibm.as_ref().map_or(DMat4::IDENTITY, |m| {
                        DMat4::from_cols_slice(&m[16 * j..16 * j + 16])
                    });
                    world[node] * inverse_bind
                })
                .collect();
            for primitive in self.json["meshes"][mesh as usize]["primitives"]
                .as_array()
                .unwrap()
            {
                let attributes = &primitive["attributes"];
                let (_, positions) =
                    self.accessor(attributes["POSITION"].as_u64().unwrap() as usize);
                let mut sets = Vec::new();
                let mut set = 0;
                while let Some(j) = attributes
                    .get(format!("JOINTS_{set}"))
                    .and_then(Value::as_u64)
                {
                    let w = attributes[format!("WEIGHTS_{set}")].as_u64().unwrap();
                    sets.push((self.accessor(j as usize).1, self.accessor(w as usize).1));
                    set += 1;
                }
                let skinned = (0..positions.len() / 3)
                    .map(|v| {
                        let p = DVec3::new(
                            positions[3 * v],
                            positions[3 * v + 1],
                            positions[3 * v + 2],
                        );
                        let mut sum = DVec3::ZERO;
                        let mut total = 0.0;
                        for (joints, weights) in &sets {
                            for s in 0..4 {
                                let w = weights[4 * v + s];
                                if w > 0.0 {
                                    sum +=
                                        w * palette[joints[4 * v + s] as usize].transform_point3(p);
                                    total += w;
                                }
                            }
                        }
                        if total > 0.0 {
                            sum / total
                        } else {
                            p
                        }
                    })
                    .collect();
                out.push(skinned);
            }
        }
        out
    }

    /// POSITION of every skinned primitive, in the same order as [`RefDoc::skin`].
    pub fn bind_positions(&self) -> Vec<Vec<DVec3>> {
        let mut out = Vec::new();
        for node in self.json["nodes"].as_array().unwrap() {
            let (Some(mesh), Some(_)) = (node["mesh"].as_u64(), node["skin"].as_u64()) else {
                continue;
            };
            for primitive in self.json["meshes"][mesh as usize]["primitives"]
                .as_array()
                .unwrap()
            {
                let (_, p) =
                    self.accessor(primitive["attributes"]["POSITION"].as_u64().unwrap() as usize);
                out.push(p.chunks(3).map(|c| DVec3::new(c[0], c[1], c[2])).collect());
            }
        }
        out
    }

    /// Key times of animation `a` (union over its samplers), and its end.
    pub fn times(&self, a: usize) -> (f64, f64) {
        let mut start = f64::INFINITY;
        let mut end = f64::NEG_INFINITY;
        for sampler in self.json["animations"][a]["samplers"].as_array().unwrap() {
            let (_, t) = self.accessor(sampler["input"].as_u64().unwrap() as usize);
            start = start.min(t[0]);
            end = end.max(t[t.len() - 1]);
        }
        (start, end)
    }
}

/// Shortest-path slerp in f64 (its own, not glam's).
fn slerp(a: &[f64], b: &[f64], s: f64) -> Vec<f64> {
    let norm = |q: &[f64]| q.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (na, nb) = (norm(a), norm(b));
    let a: Vec<f64> = a.iter().map(|x| x / na).collect();
    let mut b: Vec<f64> = b.iter().map(|x| x / nb).collect();
    let mut dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    if dot < 0.0 {
        b.iter_mut().for_each(|x| *x = -*x);
        dot = -dot;
    }
    let (wa, wb) = if dot > 1.0 - 1e-12 {
        (1.0 - s, s)
    } else {
        let theta = dot.clamp(-1.0, 1.0).acos();
        let sin = theta.sin();
        (((1.0 - s) * theta).sin() / sin, (s * theta).sin() / sin)
    };
    let q: Vec<f64> = a.iter().zip(&b).map(|(x, y)| wa * x + wb * y).collect();
    let n = norm(&q);
    q.iter().map(|x| x / n).collect()
}

/// Diagonal of the bounding box of all points.
pub fn bbox_diagonal(points: &[Vec<DVec3>]) -> f64 {
    let mut min = DVec3::splat(f64::INFINITY);
    let mut max = DVec3::splat(f64::NEG_INFINITY);
    for p in points.iter().flatten() {
        min = min.min(*p);
        max = max.max(*p);
    }
    (max - min).length()
}
