//! Generated files for the attribute encodings the samples lack: JOINTS_1 (8 influences),
//! normalized u8/u16 weights, sparse accessors, KHR_mesh_quantization; and the exports of the
//! generated files pass the Khronos glTF-Validator. Each expected value is computed by hand in
//! the test. Animation, morph targets and joint scale: tests/generated_animation.rs.

mod common;

use common::generated::{
    close, eight_influences_file, flat_rig, morph_file, quantized_file, skinned, F32_TOLERANCE,
};
use common::*;
use glam::Vec3;
use serde_json::json;
use skinblend::{Method, SkinOptions};
use skinblend_gltf::{export, Model};

/// DQS on the quantized file: the residual acts about the joint's bind origin in quantized
/// units (y = 1000), so intermediates live near 1000 where one f32 ulp is 6.1e-5; four ulps.
const QUANTIZED_DQ_TOLERANCE: f32 = 2.5e-4;

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
    eprintln!("{}", skinblend_testkit::validator_report(&script, &files));
}

skinblend_testkit::test_main!(
    joints_1_gives_eight_influences,
    normalized_u8_and_u16_weights_decode_and_renormalize,
    sparse_accessors_substitute_elements,
    mesh_quantization_puts_dequantization_in_the_inverse_bind_matrices,
    generated_exports_pass_the_khronos_validator,
);
