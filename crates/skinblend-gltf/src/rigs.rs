//! The core's built-in rigs ([`skinblend::fixtures`]) as animated glTF 2.0 files.
//!
//! [`to_glb`] writes a fixture as a real glTF 2.0 scene: a root node `rig` whose children are
//! the joints (one node each, translation/rotation/scale), a skin with the inverse bind matrices,
//! a mesh with POSITION, NORMAL, TANGENT, indices, `JOINTS_n`/`WEIGHTS_n` and blended's values
//! (`_SKINBLEND_DQ_BLEND`, [`Fixture::dq_blend_values`]: those `skinblend evidence` skins with),
//! and one animation `sweep` that turns the rig's moving joints from 0° to the rig's largest
//! angle ([`largest_angle_deg`]) at [`DEGREES_PER_SECOND`], with a keyframe every
//! [`KEYFRAME_STEP_DEG`]. Posed at [`time_s_of_angle`]`(a)`, the file gives the fixture's own
//! palette at `a`, so skinning it equals skinning the fixture (exactly at keyframes, up to the
//! slerp of neighbouring keyframes about the same axis between them).
//!
//! glTF nodes cannot shear (a node's matrix must decompose into translation, rotation and
//! scale), so a joint whose deformation is not a scale along its axes (the sheared joint 3 of
//! `shear_cap`) keeps only its translation in its node and carries the deformation in its
//! inverse bind matrix: the product `world_from_joint · joint_from_bind` is the fixture's.

use std::path::Path;

use glam::{Mat3, Mat4, Quat, Vec3};
use serde_json::{json, Value};
use skinblend::evidence;
use skinblend::fixtures::{rotation_about, Fixture, Motion};

use crate::container;
use crate::error::{GltfError, Result};
use crate::export::{self, Format};
use crate::model::DQ_BLEND_ATTRIBUTE;

/// How fast the `sweep` animation turns: degrees per second (a 180° twist lasts 2 s).
pub const DEGREES_PER_SECOND: f32 = 90.0;

/// Angle between keyframes of the `sweep` animation, degrees. Every angle the evidence table
/// shows (multiples of 45°) is a keyframe, and slerp between keyframes 15° apart about one axis
/// turns by the angle in between.
pub const KEYFRAME_STEP_DEG: f32 = 15.0;

/// Name of the one animation of a rig file.
pub const ANIMATION_NAME: &str = "sweep";

/// How far a node's translation/rotation/scale may put a joint from the fixture's own
/// `world_from_joint` (relative to the 2 m rig) before [`to_glb`] refuses: f32 round-off of a
/// product of three transforms is ~1e-7; 1e-5 leaves room and still catches any real mismatch.
const NODE_TOLERANCE: f32 = 1e-5;

/// The largest angle of `fixture`'s sweep: the largest angle the evidence table shows it at
/// (180° for a twist, 135° for a bend, 90° for shear-and-cap).
#[must_use]
pub fn largest_angle_deg(fixture: &Fixture) -> f32 {
    evidence::angles_deg(fixture)
        .iter()
        .copied()
        .fold(0.0, f32::max)
}

/// The time in the `sweep` animation at which the rig is at `angle_deg`.
#[must_use]
pub fn time_s_of_angle(angle_deg: f32) -> f32 {
    angle_deg / DEGREES_PER_SECOND
}

/// The keyframe angles of `fixture`'s sweep, degrees: 0, [`KEYFRAME_STEP_DEG`], … up to and
/// including [`largest_angle_deg`].
#[must_use]
pub fn keyframe_angles_deg(fixture: &Fixture) -> Vec<f32> {
    let largest = largest_angle_deg(fixture);
    let steps = (largest / KEYFRAME_STEP_DEG).ceil() as usize;
    (0..=steps)
        .map(|i| (i as f32 * KEYFRAME_STEP_DEG).min(largest))
        .collect()
}

/// The file name a rig is written under: `<fixture name>.glb`.
#[must_use]
pub fn file_name(fixture: &Fixture) -> String {
    format!("{}.glb", fixture.name)
}

/// The rotation of `joint` of `fixture` at `angle_deg` (identity for a joint that does not
/// turn); the same rotations [`Fixture::world_from_joint`] builds, checked against it by
/// [`to_glb`].
fn joint_rotation(fixture: &Fixture, joint: usize, angle_deg: f32) -> Quat {
    match (fixture.motion, joint) {
        (Motion::Twist, 1) => rotation_about(Vec3::Y, angle_deg),
        (Motion::Bend, 1) => rotation_about(Vec3::X, angle_deg),
        (Motion::ShearCap, 2) => rotation_about(Vec3::X, angle_deg / 2.0),
        (Motion::ShearCap, 4) => rotation_about(Vec3::Y, angle_deg),
        _ => Quat::IDENTITY,
    }
}

/// One joint as a node: its translation and scale (fixed), and what remains for its inverse
/// bind matrix.
struct JointNode {
    translation: Vec3,
    scale: Vec3,
    joint_from_bind: Mat4,
}

/// Splits each joint's `world_from_joint` at 0° into the node's translation and scale and, for
/// a deformation that is not an axis-aligned scale, moves the deformation into the inverse bind
/// matrix (see the module docs).
fn joint_nodes(fixture: &Fixture) -> Vec<JointNode> {
    fixture
        .world_from_joint(0.0)
        .iter()
        .zip(&fixture.joint_from_bind)
        .map(|(world_from_joint, &joint_from_bind)| {
            let linear = Mat3::from_mat4(*world_from_joint);
            let translation = world_from_joint.w_axis.truncate();
            let diagonal = Vec3::new(linear.x_axis.x, linear.y_axis.y, linear.z_axis.z);
            if Mat3::from_diagonal(diagonal) == linear {
                JointNode {
                    translation,
                    scale: diagonal,
                    joint_from_bind,
                }
            } else {
                JointNode {
                    translation,
                    scale: Vec3::ONE,
                    joint_from_bind: Mat4::from_mat3(linear) * joint_from_bind,
                }
            }
        })
        .collect()
}

/// Vertex data and accessors gathered into one binary buffer.
struct Buffers {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

const FLOAT: u32 = 5126;
const UNSIGNED_BYTE: u32 = 5121;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;

impl Buffers {
    /// Appends `bytes` as a buffer view (4-byte aligned) and an accessor over it; returns the
    /// accessor's index.
    fn accessor(
        &mut self,
        bytes: &[u8],
        target: Option<u32>,
        component_type: u32,
        kind: &str,
        count: usize,
        min_max: Option<(Vec<f32>, Vec<f32>)>,
    ) -> usize {
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        let mut view = json!({
            "buffer": 0,
            "byteOffset": self.bin.len(),
            "byteLength": bytes.len(),
        });
        if let Some(target) = target {
            view["target"] = json!(target);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(view);
        let mut accessor = json!({
            "bufferView": self.views.len() - 1,
            "componentType": component_type,
            "count": count,
            "type": kind,
        });
        if let Some((min, max)) = min_max {
            accessor["min"] = json!(min);
            accessor["max"] = json!(max);
        }
        self.accessors.push(accessor);
        self.accessors.len() - 1
    }

    /// Float accessor of `width`-wide elements; `bounded` adds min/max (POSITION and animation
    /// inputs need them).
    fn floats(
        &mut self,
        values: &[f32],
        kind: &str,
        width: usize,
        target: Option<u32>,
        bounded: bool,
    ) -> usize {
        let count = values.len() / width;
        let min_max = bounded.then(|| {
            let mut min = vec![f32::INFINITY; width];
            let mut max = vec![f32::NEG_INFINITY; width];
            for element in values.chunks_exact(width) {
                for (c, &v) in element.iter().enumerate() {
                    min[c] = min[c].min(v);
                    max[c] = max[c].max(v);
                }
            }
            (min, max)
        });
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.accessor(&bytes, target, FLOAT, kind, count, min_max)
    }
}

/// The glTF document and its binary buffer for `fixture` (see the module docs).
///
/// # Errors
/// [`GltfError::Invalid`] if the nodes built for the fixture do not reproduce its
/// `world_from_joint` at every keyframe (the fixture gained a motion this module does not know).
pub fn to_document(fixture: &Fixture) -> Result<(Value, Vec<u8>)> {
    let joint_count = fixture.joint_from_bind.len();
    let nodes_of_joints = joint_nodes(fixture);
    let keyframes = keyframe_angles_deg(fixture);
    for &angle_deg in &keyframes {
        for (joint, (node, world_from_joint)) in nodes_of_joints
            .iter()
            .zip(fixture.world_from_joint(angle_deg))
            .enumerate()
        {
            let rotation = joint_rotation(fixture, joint, angle_deg);
            let built =
                Mat4::from_scale_rotation_translation(node.scale, rotation, node.translation)
                    * node.joint_from_bind;
            let expected = world_from_joint * fixture.joint_from_bind[joint];
            if !built.abs_diff_eq(expected, NODE_TOLERANCE) {
                return Err(GltfError::Invalid {
                    path: format!("{}: joint {joint} at {angle_deg}°", fixture.name),
                    what: "its node and inverse bind matrix do not reproduce the rig's palette"
                        .into(),
                });
            }
        }
    }

    let mut buffers = Buffers {
        bin: Vec::new(),
        views: Vec::new(),
        accessors: Vec::new(),
    };
    let vertex_count = fixture.positions.len();
    let flat3 = |v: &[Vec3]| -> Vec<f32> { v.iter().flat_map(|p| p.to_array()).collect() };
    let mut attributes = serde_json::Map::new();
    attributes.insert(
        "POSITION".into(),
        json!(buffers.floats(
            &flat3(&fixture.positions),
            "VEC3",
            3,
            Some(ARRAY_BUFFER),
            true
        )),
    );
    attributes.insert(
        "NORMAL".into(),
        json!(buffers.floats(
            &flat3(&fixture.normals),
            "VEC3",
            3,
            Some(ARRAY_BUFFER),
            false
        )),
    );
    let tangents: Vec<f32> = fixture.tangents.iter().flat_map(|t| t.to_array()).collect();
    attributes.insert(
        "TANGENT".into(),
        json!(buffers.floats(&tangents, "VEC4", 4, Some(ARRAY_BUFFER), false)),
    );
    // Blended's values as the evidence skins the fixture with them (DQS on the moving joint).
    attributes.insert(
        DQ_BLEND_ATTRIBUTE.into(),
        json!(buffers.floats(
            &fixture.dq_blend_values(),
            "SCALAR",
            1,
            Some(ARRAY_BUFFER),
            false
        )),
    );
    let influences = &fixture.influences;
    let k = influences.influences_per_vertex();
    for set in 0..k.div_ceil(4) {
        let mut joints = Vec::with_capacity(vertex_count * 4);
        let mut weights = Vec::with_capacity(vertex_count * 4);
        for v in 0..vertex_count {
            let (j, w) = influences.vertex(v).unwrap_or((&[], &[]));
            for slot in 4 * set..4 * set + 4 {
                let weight = w.get(slot).copied().unwrap_or(0.0);
                // An unused slot (or a zero weight) names joint 0 with weight 0.
                joints.push(if weight > 0.0 {
                    j.get(slot).copied().unwrap_or(0)
                } else {
                    0
                });
                weights.push(weight);
            }
        }
        let joint_accessor = if joint_count <= 256 {
            let bytes: Vec<u8> = joints.iter().map(|&j| j as u8).collect();
            buffers.accessor(
                &bytes,
                Some(ARRAY_BUFFER),
                UNSIGNED_BYTE,
                "VEC4",
                vertex_count,
                None,
            )
        } else {
            let bytes: Vec<u8> = joints.iter().flat_map(|j| j.to_le_bytes()).collect();
            buffers.accessor(
                &bytes,
                Some(ARRAY_BUFFER),
                UNSIGNED_SHORT,
                "VEC4",
                vertex_count,
                None,
            )
        };
        attributes.insert(format!("JOINTS_{set}"), json!(joint_accessor));
        attributes.insert(
            format!("WEIGHTS_{set}"),
            json!(buffers.floats(&weights, "VEC4", 4, Some(ARRAY_BUFFER), false)),
        );
    }
    let indices: Vec<u32> = fixture.triangles.iter().flatten().copied().collect();
    let index_accessor = if vertex_count <= usize::from(u16::MAX) {
        let bytes: Vec<u8> = indices
            .iter()
            .flat_map(|&i| (i as u16).to_le_bytes())
            .collect();
        buffers.accessor(
            &bytes,
            Some(ELEMENT_ARRAY_BUFFER),
            UNSIGNED_SHORT,
            "SCALAR",
            indices.len(),
            None,
        )
    } else {
        let bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        buffers.accessor(
            &bytes,
            Some(ELEMENT_ARRAY_BUFFER),
            UNSIGNED_INT,
            "SCALAR",
            indices.len(),
            None,
        )
    };
    let inverse_bind: Vec<f32> = nodes_of_joints
        .iter()
        .flat_map(|n| n.joint_from_bind.to_cols_array())
        .collect();
    let inverse_bind = buffers.floats(&inverse_bind, "MAT4", 16, None, false);

    // Nodes: 0 = rig (root of the joints), 1..=joint_count = joints, then the mesh.
    let mut nodes = vec![json!({
        "name": "rig",
        "children": (1..=joint_count).collect::<Vec<_>>(),
    })];
    for (joint, node) in nodes_of_joints.iter().enumerate() {
        let mut value = json!({ "name": format!("joint{joint}") });
        if node.translation != Vec3::ZERO {
            value["translation"] = json!(node.translation.to_array());
        }
        if node.scale != Vec3::ONE {
            value["scale"] = json!(node.scale.to_array());
        }
        nodes.push(value);
    }
    let mesh_node = nodes.len();
    nodes.push(json!({ "name": fixture.name, "mesh": 0, "skin": 0 }));

    // The sweep: one rotation channel per joint that turns.
    let times: Vec<f32> = keyframes.iter().map(|&a| time_s_of_angle(a)).collect();
    let input = buffers.floats(&times, "SCALAR", 1, None, true);
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    let largest = largest_angle_deg(fixture);
    for joint in 0..joint_count {
        if joint_rotation(fixture, joint, largest) == Quat::IDENTITY {
            continue;
        }
        let rotations: Vec<f32> = keyframes
            .iter()
            .flat_map(|&a| joint_rotation(fixture, joint, a).to_array())
            .collect();
        let output = buffers.floats(&rotations, "VEC4", 4, None, false);
        samplers.push(json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
        channels.push(json!({
            "sampler": samplers.len() - 1,
            "target": { "node": 1 + joint, "path": "rotation" },
        }));
    }

    let document = json!({
        "asset": {
            "version": "2.0",
            "generator": concat!("skinblend-gltf ", env!("CARGO_PKG_VERSION"), " rigs"),
        },
        "scene": 0,
        "scenes": [{ "name": fixture.name, "nodes": [0, mesh_node] }],
        "nodes": nodes,
        "meshes": [{
            "name": fixture.name,
            "primitives": [{ "attributes": attributes, "indices": index_accessor, "mode": 4 }],
        }],
        "skins": [{
            "name": fixture.name,
            "joints": (1..=joint_count).collect::<Vec<_>>(),
            "skeleton": 0,
            "inverseBindMatrices": inverse_bind,
        }],
        "animations": [{ "name": ANIMATION_NAME, "samplers": samplers, "channels": channels }],
        "accessors": buffers.accessors,
        "bufferViews": buffers.views,
        "buffers": [{ "byteLength": buffers.bin.len() }],
    });
    Ok((document, buffers.bin))
}

/// `fixture` as GLB bytes (see the module docs).
///
/// # Errors
/// As [`to_document`].
pub fn to_glb(fixture: &Fixture) -> Result<Vec<u8>> {
    let (document, bin) = to_document(fixture)?;
    let text = serde_json::to_vec(&document).map_err(|e| GltfError::Json {
        message: e.to_string(),
    })?;
    Ok(container::assemble_glb(&text, &bin))
}

/// `fixture` as GLB bytes with its skinned node shown `copies` times (at least once): every copy
/// uses the same mesh and skin, so a scene skinner skins `copies` primitives per frame under
/// one palette. A scene of a known size for benchmarks (`skinblend bench`).
///
/// # Errors
/// As [`to_document`].
pub fn to_glb_with_copies(fixture: &Fixture, copies: usize) -> Result<Vec<u8>> {
    let (mut document, bin) = to_document(fixture)?;
    let mesh_node = document["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().position(|n| n.get("skin").is_some()))
        .ok_or_else(|| GltfError::invalid("nodes", "the rig has no skinned node"))?;
    let node = document["nodes"][mesh_node].clone();
    let first = document["nodes"].as_array().map_or(0, Vec::len);
    let added = (1..copies).map(|copy| {
        let mut value = node.clone();
        value["name"] = json!(format!("{}-{copy}", fixture.name));
        value
    });
    if let Some(nodes) = document["nodes"].as_array_mut() {
        nodes.extend(added);
    }
    if let Some(roots) = document["scenes"][0]["nodes"].as_array_mut() {
        roots.extend((first..first + copies.saturating_sub(1)).map(|i| json!(i)));
    }
    let text = serde_json::to_vec(&document).map_err(|e| GltfError::Json {
        message: e.to_string(),
    })?;
    Ok(container::assemble_glb(&text, &bin))
}

/// Writes `fixture` to `path` (`.glb`, or `.gltf` with the buffer as a base64 data: URI),
/// atomically (a temporary name beside it, then renamed).
///
/// # Errors
/// [`GltfError::Request`] for another extension, [`GltfError::Io`] when writing fails, and as
/// [`to_document`].
pub fn write(fixture: &Fixture, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let bytes = match Format::from_path(path)? {
        Format::Glb => to_glb(fixture)?,
        Format::Gltf => {
            let (mut document, bin) = to_document(fixture)?;
            document["buffers"] = json!([{
                "byteLength": bin.len(),
                "uri": format!(
                    "data:application/octet-stream;base64,{}",
                    container::base64_encode(&bin)
                ),
            }]);
            serde_json::to_vec_pretty(&document).map_err(|e| GltfError::Json {
                message: e.to_string(),
            })?
        }
        Format::Obj => {
            return Err(GltfError::Request {
                what: format!(
                "{}: a rig is written to .glb or .gltf, not .obj (it has a skin and an animation)",
                path.display()
            ),
            })
        }
    };
    export::write_atomically(path, &bytes)
}
