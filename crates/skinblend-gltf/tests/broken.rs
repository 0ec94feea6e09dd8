//! Broken files: each an error naming the place (a JSON path or GLB byte), never a panic.
//! Includes regression tests for the two known panics of gltf 1.4.1.

mod common;

use common::*;
use serde_json::json;
use skinblend_gltf::{GltfError, Model, MAX_NODE_DEPTH};

/// Loads `bytes` and returns the error text; fails the test if it loads.
fn error_of(bytes: &[u8]) -> String {
    match Model::from_bytes(bytes, None) {
        Ok(_) => panic!("a broken file loaded"),
        Err(e) => e.to_string(),
    }
}

fn expect_error(b: &Builder, path: &str) {
    let message = error_of(&b.glb());
    assert!(message.contains(path), "expected {path:?} in: {message}");
    assert!(!message.contains('\n'), "one line: {message}");
}

#[test]
fn the_valid_strip_loads() {
    let (b, ..) = strip(3);
    Model::from_bytes(&b.glb(), None).unwrap();
}

#[test]
fn truncated_glb_at_every_length_is_an_error() {
    let (b, ..) = strip(3);
    let glb = b.glb();
    for length in 0..glb.len() {
        let truncated = &glb[..length];
        // Once as cut (header length too large), once with the header patched to the cut length.
        let _ = error_of(truncated);
        if length >= 12 {
            let mut patched = truncated.to_vec();
            patched[8..12].copy_from_slice(&(length as u32).to_le_bytes());
            // Short of the full file, something is always missing (JSON or BIN chunk bytes).
            assert!(
                Model::from_bytes(&patched, None).is_err(),
                "length {length} loaded"
            );
        }
    }
}

#[test]
fn regression_glb_header_length_under_12_is_an_error_not_an_overflow() {
    // gltf 1.4.1 subtracts 12 from the declared length unchecked (panics with overflow checks).
    let (b, ..) = strip(3);
    let mut glb = b.glb();
    for declared in [0u32, 8, 11] {
        glb[8..12].copy_from_slice(&declared.to_le_bytes());
        let message = error_of(&glb);
        assert!(message.contains("GLB byte 8"), "{message}");
    }
}

#[test]
fn regression_attribute_naming_a_missing_accessor_is_an_error_not_a_panic() {
    // gltf 1.4.1 indexes `root.accessors[POSITION]` unchecked in its validation (panics in
    // release builds too).
    let (mut b, ..) = strip(3);
    b.json["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(99);
    expect_error(&b, r#"meshes[0].primitives[0].attributes["POSITION"]"#);
    let (mut b, ..) = strip(3);
    b.json["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"] = json!(1000);
    expect_error(&b, r#"meshes[0].primitives[0].attributes["JOINTS_0"]"#);
    let (mut b, ..) = strip(3);
    b.json["meshes"][0]["primitives"][0]["targets"] = json!([{ "POSITION": 77 }]);
    expect_error(&b, r#"meshes[0].primitives[0].targets[0]["POSITION"]"#);
}

#[test]
fn wrong_offsets_are_errors_with_the_path() {
    let (mut b, ..) = strip(3);
    b.json["bufferViews"][0]["byteOffset"] = json!(100000);
    expect_error(&b, "bufferViews[0]");
    let (mut b, ..) = strip(3);
    b.json["accessors"][0]["byteOffset"] = json!(4000);
    expect_error(
        &b,
        r#"meshes[0].primitives[0].attributes["POSITION"] -> accessors[0].byteOffset"#,
    );
    let (mut b, ..) = strip(3);
    b.json["accessors"][0]["count"] = json!(1000);
    expect_error(&b, "accessors[0]");
    let (mut b, ..) = strip(3);
    b.json["bufferViews"][0]["byteStride"] = json!(4);
    expect_error(&b, "bufferViews[0].byteStride");
}

#[test]
fn out_of_range_accessors_joints_and_nodes_are_errors() {
    let (mut b, ..) = strip(3);
    b.json["skins"][0]["inverseBindMatrices"] = json!(50);
    expect_error(&b, "skins[0].inverseBindMatrices");
    let (mut b, ..) = strip(3);
    b.json["animations"][0]["samplers"][0]["input"] = json!(50);
    expect_error(&b, "animations[0].samplers[0].input");
    let (mut b, ..) = strip(3);
    b.json["skins"][0]["joints"] = json!([0, 40]);
    expect_error(&b, "skins[0].joints[1]");
    let (mut b, ..) = strip(3);
    b.json["nodes"][0]["children"] = json!([1, 77]);
    expect_error(&b, "nodes[0].children[1]");
    let (mut b, ..) = strip(3);
    b.json["scenes"][0]["nodes"] = json!([0, 99]);
    expect_error(&b, "scenes[0].nodes[1]");
    let (mut b, ..) = strip(3);
    b.json["animations"][0]["channels"][0]["target"]["node"] = json!(42);
    expect_error(&b, "animations[0].channels[0].target.node");
    // A joint index beyond the skin's joints (the skin has 2): rewrite JOINTS_0 in the buffer.
    let (mut b, ..) = strip(3);
    let joints = b.json["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"]
        .as_u64()
        .unwrap() as usize;
    let view = b.json["accessors"][joints]["bufferView"].as_u64().unwrap() as usize;
    let offset = b.json["bufferViews"][view]["byteOffset"].as_u64().unwrap() as usize;
    b.bin[offset + 8 + 2..offset + 8 + 4].copy_from_slice(&5u16.to_le_bytes());
    let message = error_of(&b.glb());
    assert!(
        message.contains(r#"attributes["JOINTS_0"]"#) && message.contains("vertex 1"),
        "{message}"
    );
}

fn float_offset(b: &Builder, accessor: usize, element_float: usize) -> usize {
    let view = b.json["accessors"][accessor]["bufferView"]
        .as_u64()
        .unwrap() as usize;
    b.json["bufferViews"][view]["byteOffset"].as_u64().unwrap() as usize + 4 * element_float
}

#[test]
fn nan_in_matrices_and_weights_is_an_error() {
    let (mut b, ..) = strip(3);
    let ibm = b.json["skins"][0]["inverseBindMatrices"].as_u64().unwrap() as usize;
    let at = float_offset(&b, ibm, 16 + 5);
    b.bin[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let message = error_of(&b.glb());
    assert!(
        message.contains("skins[0].inverseBindMatrices") && message.contains("element 1"),
        "{message}"
    );

    let (mut b, ..) = strip(3);
    let weights = b.json["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"]
        .as_u64()
        .unwrap() as usize;
    let at = float_offset(&b, weights, 4 * 2 + 1);
    b.bin[at..at + 4].copy_from_slice(&f32::INFINITY.to_le_bytes());
    let message = error_of(&b.glb());
    assert!(
        message.contains(r#"attributes["WEIGHTS_0"]"#) && message.contains("element 2"),
        "{message}"
    );

    let (mut b, ..) = strip(3);
    let at = float_offset(&b, weights, 0);
    b.bin[at..at + 4].copy_from_slice(&(-0.5f32).to_le_bytes());
    expect_error(&b, r#"attributes["WEIGHTS_0"]"#);

    // An inverse bind matrix whose last row is not [0, 0, 0, 1].
    let (mut b, ..) = strip(3);
    let at = float_offset(&b, ibm, 3);
    b.bin[at..at + 4].copy_from_slice(&0.5f32.to_le_bytes());
    expect_error(&b, "skins[0].inverseBindMatrices");
    // Fewer inverse bind matrices than joints.
    let (mut b, ..) = strip(3);
    b.json["accessors"][ibm]["count"] = json!(1);
    expect_error(&b, "skins[0].inverseBindMatrices");
}

#[test]
fn decreasing_key_times_are_an_error() {
    let (mut b, ..) = strip(3);
    let input = b.json["animations"][0]["samplers"][0]["input"]
        .as_u64()
        .unwrap() as usize;
    let at = float_offset(&b, input, 1);
    b.bin[at..at + 4].copy_from_slice(&(-1.0f32).to_le_bytes());
    b.json["accessors"][input]["min"] = json!([-1.0]);
    b.json["accessors"][input]["max"] = json!([0.0]);
    let message = error_of(&b.glb());
    assert!(
        message.contains("animations[0].samplers[0].input") && message.contains("element 1"),
        "{message}"
    );
}

#[test]
fn cycles_several_parents_and_absurd_depth_are_errors() {
    let (mut b, ..) = strip(3);
    b.json["nodes"][1]["children"] = json!([0]);
    b.json["scenes"][0]["nodes"] = json!([2]);
    expect_error(&b, "cycle");
    let (mut b, ..) = strip(3);
    b.json["nodes"][1]["children"] = json!([1]);
    expect_error(&b, "nodes[1].children[0]");
    let (mut b, ..) = strip(3);
    b.json["nodes"][2]["children"] = json!([1]);
    expect_error(&b, "nodes[2].children[0]");
    // A chain deeper than the limit: an error, and no recursion to overflow the stack.
    let mut b = Builder::new();
    let count = MAX_NODE_DEPTH + 10;
    for i in 0..count {
        let node = if i + 1 < count {
            json!({ "children": [i + 1] })
        } else {
            json!({})
        };
        b.node(node, i == 0);
    }
    let message = error_of(&b.glb());
    assert!(message.contains("deeper than"), "{message}");
}

#[test]
fn garbage_and_wrong_json_are_errors() {
    assert!(matches!(
        Model::from_bytes(b"not json", None),
        Err(GltfError::NotGltf { .. })
    ));
    assert!(matches!(
        Model::from_bytes(b"{\"asset\": ", None),
        Err(GltfError::Json { .. })
    ));
    assert!(matches!(
        Model::from_bytes(b"{}", None),
        Err(GltfError::Invalid { .. } | GltfError::Json { .. })
    ));
    let (mut b, ..) = strip(3);
    b.json["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
    b.json["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
    expect_error(&b, "extensionsRequired[0]");
    let message = Model::open("/nonexistent/file.glb")
        .unwrap_err()
        .to_string();
    assert!(message.contains("/nonexistent/file.glb"), "{message}");
}

#[test]
fn every_single_byte_corruption_of_the_json_is_handled() {
    // Not every corruption is an error (a digit may change into another digit), but none may
    // panic, and whatever loads must also skin.
    let (b, ..) = strip(3);
    let glb = b.glb();
    let json_end = 20 + u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    for at in 20..json_end {
        for replacement in [b'9', b'"', b'-', b'}'] {
            let mut bytes = glb.clone();
            bytes[at] = replacement;
            if let Ok(model) = Model::from_bytes(&bytes, None) {
                for a in 0..model.animations().len() {
                    if let Ok(pose) = model.pose(Some(a), 0.5) {
                        let _ = model.skin_scene(&pose, &skinblend::SkinOptions::default());
                    }
                }
            }
        }
    }
}
