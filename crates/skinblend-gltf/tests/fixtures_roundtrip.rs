//! The core's procedural fixtures (the seed's twisting and bending cylinders, the shear-and-cap
//! rig) written as .glb from code, loaded back, skinned: the same result as the core on the
//! fixture itself, for both methods, at several angles.

mod common;

use common::*;
use serde_json::json;
use skinblend::fixtures::{self, Fixture};
use skinblend::{skin, Method, SkinInput, SkinOptions};
use skinblend_gltf::{export, Model};

/// The file stores exactly the fixture's f32 data and the loader computes the same products,
/// so only the DQS centers (recomputed from the inverse bind matrices) may differ, by f32
/// round-off of an inverse: 1e-5 of the fixture's size (2 m).
const ROUND_TRIP_TOLERANCE: f32 = 1e-5;

/// Unit normals: the inverse transpose (LBS) or residual inverse (DQS) amplifies the same
/// round-off by the conditioning of the blended 3x3 (the shear-and-cap joints shear by 0.5).
const NORMAL_TOLERANCE: f32 = 1e-4;

/// The fixture posed at `angle_deg` as a GLB: one root node per joint with its
/// `world_from_joint` matrix, the skin's inverse bind matrices `joint_from_bind`, and the
/// mesh with POSITION, NORMAL, TANGENT, triangles and JOINTS_n/WEIGHTS_n.
fn fixture_glb(fixture: &Fixture, angle_deg: f32) -> Vec<u8> {
    let mut b = Builder::new();
    let world = fixture.world_from_joint(angle_deg);
    let joints: Vec<usize> = world
        .iter()
        .enumerate()
        .map(|(j, m)| {
            b.node(
                json!({ "name": format!("joint{j}"), "matrix": m.to_cols_array() }),
                true,
            )
        })
        .collect();
    let ibm: Vec<f32> = fixture
        .joint_from_bind
        .iter()
        .flat_map(|m| m.to_cols_array())
        .collect();
    let ibm = b.floats(&ibm, "MAT4");
    b.add(
        "skins",
        json!({ "joints": joints, "inverseBindMatrices": ibm }),
    );
    let positions: Vec<f32> = fixture
        .positions
        .iter()
        .flat_map(|v| v.to_array())
        .collect();
    let normals: Vec<f32> = fixture.normals.iter().flat_map(|v| v.to_array()).collect();
    let tangents: Vec<f32> = fixture.tangents.iter().flat_map(|v| v.to_array()).collect();
    let mut attributes = json!({
        "POSITION": b.floats(&positions, "VEC3"),
        "NORMAL": b.floats(&normals, "VEC3"),
        "TANGENT": b.floats(&tangents, "VEC4"),
    });
    let k = fixture.influences.influences_per_vertex();
    let sets = k.div_ceil(4);
    let vertices = fixture.influences.vertex_count();
    for set in 0..sets {
        let mut joint_values = Vec::new();
        let mut weight_values = Vec::new();
        for v in 0..vertices {
            let (j, w) = fixture.influences.vertex(v).unwrap();
            for slot in 4 * set..4 * set + 4 {
                joint_values.push(j.get(slot).copied().unwrap_or(0));
                weight_values.push(w.get(slot).copied().unwrap_or(0.0));
            }
        }
        attributes[format!("JOINTS_{set}")] = json!(b.accessor_bytes(
            &u16s(&joint_values),
            UNSIGNED_SHORT,
            "VEC4",
            vertices,
            false
        ));
        attributes[format!("WEIGHTS_{set}")] = json!(b.floats(&weight_values, "VEC4"));
    }
    let indices: Vec<u8> = fixture
        .triangles
        .iter()
        .flatten()
        .flat_map(|i| i.to_le_bytes())
        .collect();
    let indices = b.accessor_bytes(
        &indices,
        UNSIGNED_INT,
        "SCALAR",
        fixture.triangles.len() * 3,
        false,
    );
    b.add("meshes", json!({ "name": fixture.name, "primitives": [{ "attributes": attributes, "indices": indices }] }));
    b.node(json!({ "name": fixture.name, "mesh": 0, "skin": 0 }), true);
    b.glb()
}

#[test]
fn core_fixtures_round_trip_through_glb() {
    for fixture in [
        fixtures::twist_coarse(),
        fixtures::bend_fine(),
        fixtures::shear_cap(),
    ] {
        for angle_deg in [0.0f32, 45.0, 90.0, 180.0] {
            let model = Model::from_bytes(&fixture_glb(&fixture, angle_deg), None)
                .unwrap_or_else(|e| panic!("{}: {e}", fixture.name));
            let pose = model.rest_pose();
            let input = SkinInput::new(
                &fixture.positions,
                Some(&fixture.normals),
                Some(&fixture.tangents),
                &fixture.influences,
            )
            .unwrap();
            for method in [Method::Linear, Method::DualQuaternion] {
                let options = SkinOptions {
                    method,
                    ..SkinOptions::default()
                };
                let expected = skin(
                    &input,
                    &fixture.palette(angle_deg),
                    Some(&fixture.joint_centers),
                    &options,
                )
                .unwrap();
                let posed = model.skin_scene(&pose, &options).unwrap();
                let got = &posed[0].primitives[0];
                let worst = got
                    .positions
                    .iter()
                    .zip(&expected.positions)
                    .map(|(a, b)| (*a - *b).length())
                    .fold(0f32, f32::max);
                assert!(
                    worst <= ROUND_TRIP_TOLERANCE,
                    "{} {angle_deg}° {}: {worst}",
                    fixture.name,
                    method.name()
                );
                let normals = got.normals.as_ref().unwrap();
                let worst_normal = normals
                    .iter()
                    .zip(expected.normals.as_ref().unwrap())
                    .map(|(a, b)| (*a - *b).length())
                    .fold(0f32, f32::max);
                assert!(
                    worst_normal <= NORMAL_TOLERANCE,
                    "{} {angle_deg}° {} normals: {worst_normal}",
                    fixture.name,
                    method.name()
                );
                assert_eq!(
                    got.diagnostics.non_rigid_joints,
                    expected.diagnostics.non_rigid_joints
                );
                assert_eq!(got.diagnostics.sign_flips, expected.diagnostics.sign_flips);
                // And the export carries the posed mesh exactly.
                let out = Model::from_bytes(&export::to_glb(&model, &pose, &posed).unwrap(), None)
                    .unwrap();
                assert_eq!(out.meshes()[0].primitives[0].positions, got.positions);
            }
        }
    }
}
