//! Generated files for what the samples lack: JOINTS_1 (8 influences), normalized u8/u16
//! weights, sparse accessors, KHR_mesh_quantization, morph targets on a skinned mesh, STEP and
//! CUBICSPLINE channels, non-uniform joint scale, a mirrored joint. Each expected value is
//! computed by hand in the test.

mod common;

use common::*;
use glam::{Mat4, Quat, Vec3};
use serde_json::json;
use skinblend::{Method, SkinOptions};
use skinblend_gltf::{export, Interp, Model, Sampler, SceneOptions, SceneSkinner};

/// f32 round-off on coordinates of order 1 after one or two matrix products.
const F32_TOLERANCE: f32 = 1e-5;

/// DQS on the quantized file: the residual acts about the joint's bind origin in quantized
/// units (y = 1000), so intermediates live near 1000 where one f32 ulp is 6.1e-5; four ulps.
const QUANTIZED_DQ_TOLERANCE: f32 = 2.5e-4;

fn close(a: Vec3, b: Vec3, tolerance: f32, what: &str) {
    assert!(
        (a - b).length() <= tolerance * b.length().max(1.0),
        "{what}: {a} vs {b} (difference {})",
        (a - b).length()
    );
}

fn skinned(model: &Model, animation: Option<usize>, time_s: f32, method: Method) -> Vec<Vec3> {
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
fn flat_rig(b: &mut Builder, joint_count: usize) -> Vec<usize> {
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
fn eight_influences_file() -> Builder {
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

fn joints_1_gives_eight_influences() {
    let b = eight_influences_file();
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    let primitive = &model.meshes()[0].primitives[0];
    assert_eq!(primitive.influence_sets, 2);
    let influences = primitive.influences.as_ref().unwrap();
    assert_eq!(influences.influences_per_vertex(), 8);
    let (_, weights) = influences.vertex(0).unwrap();
    assert_eq!(
        weights.iter().filter(|w| **w > 0.0).count(),
        8,
        "all eight influences kept"
    );
    // Joint j translated by (0, j, 0): vertex 0 moves up by Σ w_j j = Σ (j+1) j / 36 = 168/36.
    let expected_lift: f32 = (0..8).map(|j| (j + 1) as f32 * j as f32).sum::<f32>() / 36.0;
    for method in [Method::Linear, Method::DualQuaternion] {
        let out = skinned(&model, Some(0), 0.5, method);
        close(
            out[0],
            Vec3::new(0.0, 1.0 + expected_lift, 0.0),
            F32_TOLERANCE,
            "8 influences",
        );
        // Vertex 1 is fully on joint 4 (in JOINTS_1): up by 4.
        close(
            out[1],
            Vec3::new(1.0, 6.0, 3.0),
            F32_TOLERANCE,
            "JOINTS_1 only",
        );
    }
}

fn normalized_u8_and_u16_weights_decode_and_renormalize() {
    for (component_type, bytes, scale) in [
        (
            UNSIGNED_BYTE,
            u8s(&[128, 127, 0, 0, 100, 100, 0, 0]),
            255.0f32,
        ),
        (
            UNSIGNED_SHORT,
            u16s(&[40000, 25535, 0, 0, 1000, 1000, 0, 0]),
            65535.0,
        ),
    ] {
        let mut b = Builder::new();
        flat_rig(&mut b, 2);
        let position = b.floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0], "VEC3");
        let joints = b.accessor_bytes(
            &u8s(&[0, 1, 0, 0, 0, 1, 0, 0]),
            UNSIGNED_BYTE,
            "VEC4",
            2,
            false,
        );
        let weights = b.accessor_bytes(&bytes, component_type, "VEC4", 2, true);
        b.add("meshes", json!({ "primitives": [{ "attributes": { "POSITION": position, "JOINTS_0": joints, "WEIGHTS_0": weights } }] }));
        b.node(json!({ "mesh": 0, "skin": 0 }), true);
        let model = Model::from_bytes(&b.glb(), None).unwrap();
        let influences = model.meshes()[0].primitives[0].influences.as_ref().unwrap();
        let (_, w) = influences.vertex(0).unwrap();
        let first = if component_type == UNSIGNED_BYTE {
            128.0
        } else {
            40000.0
        };
        assert!((w[0] - first / scale).abs() < 1e-6, "c / {scale}: {w:?}");
        // Vertex 1's weights sum to 200/255 (or 2000/65535): renormalized to ½ each, counted.
        let (_, w) = influences.vertex(1).unwrap();
        assert_eq!(&w[..2], &[0.5, 0.5]);
        assert_eq!(
            model.repairs().vertices_renormalized,
            1,
            "only vertex 1 was off"
        );
    }
}

fn sparse_accessors_substitute_elements() {
    let mut b = Builder::new();
    flat_rig(&mut b, 1);
    let base = [
        [0.0f32, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [2.0, 0.0, 0.0],
        [3.0, 0.0, 0.0],
    ];
    let position = b.floats(&flat(&base), "VEC3");
    let indices = b.view(&u16s(&[1, 3]));
    let values = b.view(
        &flat(&[[1.0f32, 5.0, 0.0], [3.0, 7.0, 0.0]])
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>(),
    );
    b.json["accessors"][position]["sparse"] = json!({
        "count": 2,
        "indices": { "bufferView": indices, "componentType": UNSIGNED_SHORT },
        "values": { "bufferView": values },
    });
    b.json["accessors"][position]["max"] = json!([3.0, 7.0, 0.0]);
    // A morph target with no buffer view at all: zeros, then sparse.
    let delta_values = b.view(
        &[0.0f32, 0.0, 1.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>(),
    );
    let delta_indices = b.view(&u8s(&[2]));
    let delta = b.add("accessors", json!({ "componentType": FLOAT, "count": 4, "type": "VEC3",
        "sparse": { "count": 1, "indices": { "bufferView": delta_indices, "componentType": UNSIGNED_BYTE }, "values": { "bufferView": delta_values } } }));
    let joints = b.accessor_bytes(&[0u8; 16], UNSIGNED_BYTE, "VEC4", 4, false);
    let weights = b.floats(&flat(&[[1.0f32, 0.0, 0.0, 0.0]; 4]), "VEC4");
    b.add("meshes", json!({ "primitives": [{ "attributes": { "POSITION": position, "JOINTS_0": joints, "WEIGHTS_0": weights }, "targets": [{ "POSITION": delta }] }], "weights": [2.0] }));
    b.node(json!({ "mesh": 0, "skin": 0 }), true);
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    let p = &model.meshes()[0].primitives[0];
    assert_eq!(
        p.positions,
        vec![
            Vec3::ZERO,
            Vec3::new(1.0, 5.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(3.0, 7.0, 0.0)
        ]
    );
    assert_eq!(p.targets[0].positions.as_ref().unwrap()[2], Vec3::Z);
    let out = skinned(&model, None, 0.0, Method::Linear);
    assert_eq!(
        out[2],
        Vec3::new(2.0, 0.0, 2.0),
        "mesh default weight 2 on the sparse delta"
    );
}

/// A two-joint strip whose POSITION is SHORT millimetres and NORMAL normalized BYTE, with the
/// dequantization in the inverse bind matrices; joint 1 turns 90° about +Z over 1 s.
fn quantized_file() -> Builder {
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

fn mesh_quantization_puts_dequantization_in_the_inverse_bind_matrices() {
    let b = quantized_file();
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    assert_eq!(
        model.meshes()[0].primitives[0].normals.as_ref().unwrap()[0],
        Vec3::Y
    );
    // Rest pose = bind pose: the output is the dequantized mesh, for both methods.
    for method in [Method::Linear, Method::DualQuaternion] {
        let pose = model.rest_pose();
        let posed = model
            .skin_scene(
                &pose,
                &SkinOptions {
                    method,
                    ..SkinOptions::default()
                },
            )
            .unwrap();
        let result = &posed[0].primitives[0];
        assert_eq!(
            result.diagnostics.non_rigid_joints, 2,
            "the dequantization scale is not rigid"
        );
        let tolerance = if method == Method::Linear {
            F32_TOLERANCE
        } else {
            QUANTIZED_DQ_TOLERANCE
        };
        for (v, p) in result.positions.iter().enumerate() {
            let expected = Vec3::new(0.25, [0.0, 0.5, 1.5, 2.0][v], 0.0);
            close(*p, expected, tolerance, method.name());
        }
        // Normals come out unit length despite the 1/1000 scale.
        let normal = result.normals.as_ref().unwrap()[0];
        close(normal, Vec3::Y, F32_TOLERANCE, "normal");
    }
    // At t = 1, joint 1 has turned 90° about +Z at y = 1: (0.25, 1.5) → (0.5, 1.25)... the top
    // vertices rotate about the joint: (x, y) ↦ (−(y − 1), 1 + x).
    for (method, tolerance) in [
        (Method::Linear, F32_TOLERANCE),
        (Method::DualQuaternion, QUANTIZED_DQ_TOLERANCE),
    ] {
        let out = skinned(&model, Some(0), 1.0, method);
        close(out[2], Vec3::new(-0.5, 1.25, 0.0), tolerance, method.name());
        close(out[3], Vec3::new(-1.0, 1.25, 0.0), tolerance, method.name());
        close(out[0], Vec3::new(0.25, 0.0, 0.0), tolerance, method.name());
    }
    // Info reports the non-rigid joints at the rest pose.
    let summary = skinblend_gltf::info::summary(&model).unwrap();
    assert_eq!(summary["skins"][0]["non_rigid_joints_rest_pose"], 2);
}

fn morph_targets_on_a_skinned_mesh_take_node_mesh_or_animation_weights() {
    let (mut b, mesh_node, _, _) = strip(3);
    let delta_a = b.floats(&[1.0, 0.0, 0.0].repeat(6), "VEC3");
    let delta_b = b.floats(&[0.0, 0.0, 1.0].repeat(6), "VEC3");
    b.json["meshes"][0]["primitives"][0]["targets"] =
        json!([{ "POSITION": delta_a }, { "POSITION": delta_b }]);
    b.json["meshes"][0]["weights"] = json!([0.5, 0.0]);
    let base = b.clone();
    // Mesh default weights.
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    let out = skinned(&model, None, 0.0, Method::Linear);
    close(
        out[0],
        Vec3::new(0.25, 0.0, 0.0),
        F32_TOLERANCE,
        "mesh weights",
    );
    // Node weights override the mesh's.
    b.json["nodes"][mesh_node]["weights"] = json!([0.25, 1.0]);
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    let out = skinned(&model, None, 0.0, Method::Linear);
    close(
        out[0],
        Vec3::new(0.0, 0.0, 1.0),
        F32_TOLERANCE,
        "node weights",
    );
    // An animation's weights override both; LINEAR halfway between [0, 0] and [1, 0.5].
    let mut b = base;
    let times = b.floats(&[0.0, 1.0], "SCALAR");
    let values = b.floats(&[0.0, 0.0, 1.0, 0.5], "SCALAR");
    b.add("animations", json!({ "samplers": [{ "input": times, "output": values }], "channels": [{ "sampler": 0, "target": { "node": mesh_node, "path": "weights" } }] }));
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    // Animation 0 is the strip's bend; animation 1 the weights.
    let out = skinned(&model, Some(1), 0.5, Method::Linear);
    close(
        out[0],
        Vec3::new(-0.25 + 0.5, 0.0, 0.25),
        F32_TOLERANCE,
        "animated weights",
    );
    // The export applies the morph and removes the targets.
    let pose = model.pose(Some(1), 0.5).unwrap();
    let posed = model.skin_scene(&pose, &SkinOptions::default()).unwrap();
    let out = Model::from_bytes(&export::to_glb(&model, &pose, &posed).unwrap(), None).unwrap();
    assert!(out.meshes()[0].primitives[0].targets.is_empty());
    assert_eq!(
        out.meshes()[0].primitives[0].positions,
        posed[0].primitives[0].positions
    );
}

fn sampler(interpolation: Interp, times_s: &[f32], values: &[f32], width: usize) -> Sampler {
    Sampler {
        interpolation,
        times_s: times_s.to_vec(),
        values: values.to_vec(),
        width,
    }
}

fn step_holds_and_cubicspline_follows_the_hermite_curve() {
    let mut out = [0.0f32; 4];
    let step = sampler(Interp::Step, &[0.0, 1.0, 2.0], &[10.0, 20.0, 30.0], 1);
    for (t, v) in [
        (-1.0, 10.0),
        (0.0, 10.0),
        (0.99, 10.0),
        (1.0, 20.0),
        (1.5, 20.0),
        (2.0, 30.0),
        (9.0, 30.0),
    ] {
        skinblend_gltf::sample(&step, t, false, &mut out);
        assert_eq!(out[0], v, "STEP at {t}");
    }
    // Keys t = 0 and 2, values 0 and 1, out-tangent of key 0 = 1, in-tangent of key 1 = 0.
    // At s = ½: h00 = ½, h10 = ⅛, h01 = ½, h11 = −⅛; with tangents × Δt = 2:
    // ½·0 + ⅛·2·1 + ½·1 + (−⅛)·2·0 = 0.75.
    let cubic = sampler(
        Interp::CubicSpline,
        &[0.0, 2.0],
        &[9.0, 0.0, 1.0, 0.0, 1.0, 9.0],
        1,
    );
    skinblend_gltf::sample(&cubic, 1.0, false, &mut out);
    assert!((out[0] - 0.75).abs() < 1e-6, "{}", out[0]);
    skinblend_gltf::sample(&cubic, 2.0, false, &mut out);
    assert_eq!(out[0], 1.0);
    // Rotation CUBICSPLINE with zero tangents between two rotations: renormalized to unit.
    let a = Quat::IDENTITY;
    let b = Quat::from_rotation_y(1.0);
    let values = [
        [0.0f32; 4],
        a.to_array(),
        [0.0; 4],
        [0.0; 4],
        b.to_array(),
        [0.0; 4],
    ]
    .concat();
    let rotation = sampler(Interp::CubicSpline, &[0.0, 1.0], &values, 4);
    skinblend_gltf::sample(&rotation, 0.5, true, &mut out);
    let q = Quat::from_array(out);
    assert!((q.length() - 1.0).abs() < 1e-6);
    assert!((q.angle_between(Quat::from_rotation_y(0.5))) < 1e-3);
    // LINEAR rotation takes the shortest path even when the keys are stored in opposite signs.
    let linear = sampler(
        Interp::Linear,
        &[0.0, 1.0],
        &[a.to_array(), (-b).to_array()].concat(),
        4,
    );
    skinblend_gltf::sample(&linear, 0.5, true, &mut out);
    assert!(Quat::from_array(out).angle_between(Quat::from_rotation_y(0.5)) < 1e-5);
}

fn step_and_cubicspline_channels_drive_joints_in_a_file() {
    let (mut b, _, _, joint1) = strip(3);
    let times = b.floats(&[0.0, 1.0, 2.0], "SCALAR");
    let steps = b.floats(&[0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0], "VEC3");
    let cubic_times = b.floats(&[0.0, 2.0], "SCALAR");
    // Scale x of joint 1 along a Hermite curve from 1 to 2 with zero tangents: at t = 1, 1.5.
    let cubic = b.floats(
        &[
            [0.0f32; 3],
            [1.0, 1.0, 1.0],
            [0.0; 3],
            [0.0; 3],
            [2.0, 1.0, 1.0],
            [0.0; 3],
        ]
        .concat(),
        "VEC3",
    );
    b.json["animations"] = json!([{ "samplers": [
        { "input": times, "output": steps, "interpolation": "STEP" },
        { "input": cubic_times, "output": cubic, "interpolation": "CUBICSPLINE" }],
        "channels": [{ "sampler": 0, "target": { "node": joint1, "path": "translation" } },
                     { "sampler": 1, "target": { "node": joint1, "path": "scale" } }] }]);
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    let pose = model.pose(Some(0), 1.0).unwrap();
    assert_eq!(pose.trs[joint1].translation, Vec3::new(0.0, 2.0, 0.0));
    assert!((pose.trs[joint1].scale.x - 1.5).abs() < 1e-6);
    let pose = model.pose(Some(0), 0.999).unwrap();
    assert_eq!(
        pose.trs[joint1].translation,
        Vec3::new(0.0, 1.0, 0.0),
        "STEP holds the previous key"
    );
}

/// Single-influence vertices of a scaled or mirrored joint: LBS and DQS both give `M · p`
/// exactly (DQS via its residual about the joint's bind origin); and the counts say so.
fn scaled_joint_case(scale: Vec3) {
    let (mut b, _, _, joint1) = strip(5);
    b.json["animations"] = json!([]);
    b.json.as_object_mut().unwrap().remove("animations");
    b.json["nodes"][joint1]["scale"] = json!(scale.to_array());
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    let positions = model.meshes()[0].primitives[0].positions.clone();
    let joint_matrix = Mat4::from_translation(Vec3::Y)
        * Mat4::from_scale(scale)
        * Mat4::from_translation(-Vec3::Y);
    for method in [Method::Linear, Method::DualQuaternion] {
        let pose = model.rest_pose();
        let posed = model
            .skin_scene(
                &pose,
                &SkinOptions {
                    method,
                    ..SkinOptions::default()
                },
            )
            .unwrap();
        let result = &posed[0].primitives[0];
        assert_eq!(result.diagnostics.non_rigid_joints, 1, "{scale}");
        // The top row (y = 2) is fully on joint 1: exactly M · p.
        for v in [8, 9] {
            close(
                result.positions[v],
                joint_matrix.transform_point3(positions[v]),
                F32_TOLERANCE,
                method.name(),
            );
        }
        // The bottom row is fully on joint 0: unmoved.
        close(
            result.positions[0],
            positions[0],
            F32_TOLERANCE,
            method.name(),
        );
        assert!(result.positions.iter().all(|p| p.is_finite()));
    }
}

fn non_uniform_joint_scale_keeps_its_scale_under_both_methods() {
    scaled_joint_case(Vec3::new(1.0, 2.0, 0.5));
}

fn mirrored_joint_keeps_its_mirror_under_both_methods() {
    scaled_joint_case(Vec3::new(-1.0, 1.0, 1.0));
}

fn one_mesh_used_by_two_skinned_nodes_and_two_skins() {
    let (mut b, _, _, _) = strip(3);
    // A second skin over the same joints in reverse order, and a second node using the mesh.
    let ibm = b.json["skins"][0]["inverseBindMatrices"].clone();
    b.add(
        "skins",
        json!({ "joints": [1, 0], "inverseBindMatrices": ibm }),
    );
    let second = b.node(json!({ "name": "second", "mesh": 0, "skin": 1 }), true);
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    let pose = model.pose(Some(0), 1.0).unwrap();
    let posed = model.skin_scene(&pose, &SkinOptions::default()).unwrap();
    assert_eq!(posed.len(), 2);
    assert_eq!(posed[1].node, second);
    // The export gives the second node its own mesh; the first keeps mesh 0.
    let out = Model::from_bytes(&export::to_glb(&model, &pose, &posed).unwrap(), None).unwrap();
    assert_eq!(out.nodes()[posed[0].node].mesh, Some(0));
    assert_eq!(out.nodes()[second].mesh, Some(1));
    assert_eq!(
        out.meshes()[1].primitives[0].positions,
        posed[1].primitives[0].positions
    );
}

/// A strip with two morph targets and an animation of their weights.
fn morph_file() -> Builder {
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

/// A morph-target primitive's mesh is made and checked again only when the frame's weights
/// differ from the last frame's: the clip's weights change between t = 0 and t = 1 and stay at
/// the last key after it.
fn a_morphed_primitive_is_checked_again_only_when_its_weights_change() {
    let model = Model::from_bytes(&morph_file().glb(), None).unwrap();
    let before = skinblend::full_validations();
    let mut skinner = SceneSkinner::cpu(&model, SceneOptions::default()).unwrap();
    let made = skinblend::full_validations() - before;
    assert_eq!(
        made, 1,
        "one primitive, checked once when the skinner is made"
    );
    let mut checks = |time_s: f32| {
        let pose = model.pose(Some(0), time_s).unwrap();
        let before = skinblend::full_validations();
        skinner.skin(&pose).unwrap();
        skinblend::full_validations() - before
    };
    assert_eq!(checks(0.25), 1, "first frame: the morphed attributes");
    assert_eq!(checks(0.25), 0, "same weights: the same mesh");
    assert_eq!(checks(0.5), 1, "other weights: checked again");
    assert_eq!(checks(2.0), 1, "past the clip: the last key's weights");
    assert_eq!(checks(3.0), 0, "and they stay");
}

/// The exports of the generated files (quantized, eight influences, morph targets, the
/// plain strip) pass the Khronos glTF-Validator with 0 errors. Needs node and
/// `npm ci --prefix tools`; required under CI=true (`.ci/run` installs it).
fn generated_exports_pass_the_khronos_validator() {
    let out = skinblend_testkit::ScratchDir::new("generated");
    let mut files = Vec::new();
    for (name, builder) in [
        ("strip", strip(5).0),
        ("quantized", quantized_file()),
        ("eight", eight_influences_file()),
        ("morph", morph_file()),
    ] {
        let model = Model::from_bytes(&builder.glb(), None).unwrap();
        for method in [Method::Linear, Method::DualQuaternion] {
            let pose = model.pose(Some(0), 0.5).unwrap();
            let posed = model
                .skin_scene(
                    &pose,
                    &SkinOptions {
                        method,
                        ..SkinOptions::default()
                    },
                )
                .unwrap();
            let file = out.join(format!("{name}-{}.glb", method.name()));
            export::write(&model, &pose, &posed, &file).unwrap();
            files.push(file);
        }
    }
    let Some(script) = skinblend_testkit::gltf_validator() else {
        return;
    };
    let run = std::process::Command::new("node")
        .arg(&script)
        .args(&files)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&run.stdout);
    eprintln!("{report}");
    assert!(
        run.status.success(),
        "validator errors:\n{report}{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

skinblend_testkit::test_main!(
    a_morphed_primitive_is_checked_again_only_when_its_weights_change,
    joints_1_gives_eight_influences,
    normalized_u8_and_u16_weights_decode_and_renormalize,
    sparse_accessors_substitute_elements,
    mesh_quantization_puts_dequantization_in_the_inverse_bind_matrices,
    morph_targets_on_a_skinned_mesh_take_node_mesh_or_animation_weights,
    step_holds_and_cubicspline_follows_the_hermite_curve,
    step_and_cubicspline_channels_drive_joints_in_a_file,
    non_uniform_joint_scale_keeps_its_scale_under_both_methods,
    mirrored_joint_keeps_its_mirror_under_both_methods,
    one_mesh_used_by_two_skinned_nodes_and_two_skins,
    generated_exports_pass_the_khronos_validator,
);
