//! Builders of the generated test files (tests/generated.rs, tests/generated_animation.rs):
//! a row of joints, eight influences through JOINTS_1, a quantized strip, a strip with morph
//! targets; and the checks both files use.

use glam::{Mat4, Quat, Vec3};
use serde_json::json;
use skinblend::{Method, SkinOptions};
use skinblend_gltf::Model;

use super::{flat, i16s, strip, u8s, Builder, BYTE, SHORT, UNSIGNED_BYTE};

/// f32 round-off on coordinates of order 1 after one or two matrix products.
pub const F32_TOLERANCE: f32 = 1e-5;

/// Asserts `a` is within `tolerance` of `b`, relative to `|b|` (at least 1).
pub fn close(a: Vec3, b: Vec3, tolerance: f32, what: &str) {
    assert!(
        (a - b).length() <= tolerance * b.length().max(1.0),
        "{what}: {a} vs {b} (difference {})",
        (a - b).length()
    );
}

/// The first skinned primitive's positions at `time_s` of `animation` with `method`.
pub fn skinned(model: &Model, animation: Option<usize>, time_s: f32, method: Method) -> Vec<Vec3> {
    let pose = model.pose(animation, time_s).unwrap();
    let options = SkinOptions {
        method,
        ..SkinOptions::default()
    };
    let posed = model.skin_scene(&pose, &options).unwrap();
    posed[0].primitives[0].positions.clone()
}

/// `joint_count` joints at x = j under one root node (at the origin, so a joint's local
/// translation is its world one); returns the joint nodes.
pub fn flat_rig(b: &mut Builder, joint_count: usize) -> Vec<usize> {
    let root = b.node(json!({ "name": "rig" }), true);
    let mut joints = Vec::new();
    let mut ibm = Vec::new();
    for j in 0..joint_count {
        let at = Vec3::new(j as f32, 0.0, 0.0);
        joints.push(b.node(
            json!({ "name": format!("j{j}"), "translation": at.to_array() }),
            false,
        ));
        ibm.extend_from_slice(&Mat4::from_translation(-at).to_cols_array());
    }
    b.json["nodes"][root]["children"] = json!(joints);
    let ibm = b.floats(&ibm, "MAT4");
    b.add(
        "skins",
        json!({ "joints": joints, "inverseBindMatrices": ibm }),
    );
    joints
}

/// Eight joints in a row; vertex 0 weighs all eight through JOINTS_0 and JOINTS_1, vertex 1
/// only joint 4 (in JOINTS_1); an animation lifts joint j by j.
pub fn eight_influences_file() -> Builder {
    let mut b = Builder::new();
    let joints = flat_rig(&mut b, 8);
    let positions = [[0.0f32, 1.0, 0.0], [1.0, 2.0, 3.0]];
    let position = b.floats(&flat(&positions), "VEC3");
    // Vertex 0: weight j/36 on joint j (j = 1..8, joint 0 gets 0 → weights over joints 1..7 and 0).
    let w: Vec<f32> = (0..8).map(|j| (j + 1) as f32 / 36.0).collect();
    let j0 = b.accessor_bytes(
        &u8s(&[0, 1, 2, 3, 0, 1, 2, 3]),
        UNSIGNED_BYTE,
        "VEC4",
        2,
        false,
    );
    let j1 = b.accessor_bytes(
        &u8s(&[4, 5, 6, 7, 4, 5, 6, 7]),
        UNSIGNED_BYTE,
        "VEC4",
        2,
        false,
    );
    let w0 = b.floats(&[w[0], w[1], w[2], w[3], 0.0, 0.0, 0.0, 0.0], "VEC4");
    let w1 = b.floats(&[w[4], w[5], w[6], w[7], 1.0, 0.0, 0.0, 0.0], "VEC4");
    b.add("meshes", json!({ "primitives": [{ "attributes": {
        "POSITION": position, "JOINTS_0": j0, "WEIGHTS_0": w0, "JOINTS_1": j1, "WEIGHTS_1": w1 } }] }));
    b.node(json!({ "mesh": 0, "skin": 0 }), true);
    // Animate: joint j moves up by j (translation keys hold at the moved place).
    let times = b.floats(&[0.0, 1.0], "SCALAR");
    let mut channels = Vec::new();
    let mut samplers = Vec::new();
    for (j, &node) in joints.iter().enumerate() {
        let at = [j as f32, j as f32, 0.0];
        let out = b.floats(&[at, at].concat(), "VEC3");
        samplers.push(json!({ "input": times, "output": out }));
        channels.push(json!({ "sampler": j, "target": { "node": node, "path": "translation" } }));
    }
    b.add(
        "animations",
        json!({ "samplers": samplers, "channels": channels }),
    );
    b
}

/// A two-joint strip whose POSITION is SHORT millimetres and NORMAL normalized BYTE, with the
/// dequantization in the inverse bind matrices; joint 1 turns 90° about +Z over 1 s.
pub fn quantized_file() -> Builder {
    // Positions stored as SHORT millimetres; the inverse bind matrices scale by 1/1000, so every
    // joint is non-rigid even at the bind pose and DQS must carry that scale in its residual.
    let mut b = Builder::new();
    b.json["extensionsUsed"] = json!(["KHR_mesh_quantization"]);
    b.json["extensionsRequired"] = json!(["KHR_mesh_quantization"]);
    let dequantize = Mat4::from_scale(Vec3::splat(1e-3));
    let bind = [Vec3::ZERO, Vec3::new(0.0, 1.0, 0.0)];
    let j0 = b.node(json!({ "name": "j0", "children": [1] }), true);
    let j1 = b.node(
        json!({ "name": "j1", "translation": [0.0, 1.0, 0.0] }),
        false,
    );
    let ibm: Vec<f32> = bind
        .iter()
        .flat_map(|at| (Mat4::from_translation(-*at) * dequantize).to_cols_array())
        .collect();
    let ibm = b.floats(&ibm, "MAT4");
    b.add(
        "skins",
        json!({ "joints": [j0, j1], "inverseBindMatrices": ibm }),
    );
    let millimetres: [i16; 12] = [250, 0, 0, 250, 500, 0, 250, 1500, 0, 250, 2000, 0];
    let position = b.accessor_bytes(&i16s(&millimetres), SHORT, "VEC3", 4, false);
    b.json["accessors"][position]["min"] = json!([250, 0, 0]);
    b.json["accessors"][position]["max"] = json!([250, 2000, 0]);
    let normals = b.accessor_bytes(
        &[0u8, 127, 0, 0, 0, 127, 0, 0, 0, 127, 0, 0, 0, 127, 0, 0],
        BYTE,
        "VEC3",
        4,
        true,
    );
    // 4-byte aligned rows: the VEC3 of bytes is padded in the view by the stride.
    let normal_view = b.json["accessors"][normals]["bufferView"].as_u64().unwrap() as usize;
    b.json["bufferViews"][normal_view]["byteStride"] = json!(4);
    let joints = b.accessor_bytes(
        &u8s(&[0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0]),
        UNSIGNED_BYTE,
        "VEC4",
        4,
        false,
    );
    let weights = b.floats(
        &flat(&[
            [1.0f32, 0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
        ]),
        "VEC4",
    );
    b.add("meshes", json!({ "primitives": [{ "attributes": { "POSITION": position, "NORMAL": normals, "JOINTS_0": joints, "WEIGHTS_0": weights } }] }));
    b.node(json!({ "mesh": 0, "skin": 0 }), true);
    let times = b.floats(&[0.0, 1.0], "SCALAR");
    let q = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let rotations = b.floats(&[0.0, 0.0, 0.0, 1.0, q.x, q.y, q.z, q.w], "VEC4");
    b.add("animations", json!({ "samplers": [{ "input": times, "output": rotations }], "channels": [{ "sampler": 0, "target": { "node": j1, "path": "rotation" } }] }));
    b
}

/// A strip with two morph targets and an animation of their weights.
pub fn morph_file() -> Builder {
    let (mut b, mesh_node, _, _) = strip(3);
    let delta_a = b.floats(&[1.0, 0.0, 0.0].repeat(6), "VEC3");
    let delta_b = b.floats(&[0.0, 0.0, 1.0].repeat(6), "VEC3");
    b.json["meshes"][0]["primitives"][0]["targets"] =
        json!([{ "POSITION": delta_a }, { "POSITION": delta_b }]);
    b.json["meshes"][0]["weights"] = json!([0.5, 0.0]);
    let times = b.floats(&[0.0, 1.0], "SCALAR");
    let values = b.floats(&[0.0, 0.0, 1.0, 0.5], "SCALAR");
    b.json["animations"][0]["samplers"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "input": times, "output": values }));
    b.json["animations"][0]["channels"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "sampler": 1, "target": { "node": mesh_node, "path": "weights" } }));
    b
}
