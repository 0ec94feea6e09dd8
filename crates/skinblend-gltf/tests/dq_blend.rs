//! The blended method on glTF files: blend 0 is LBS and blend 1 DQS to the bit on every sample
//! model, the joint rule's values interpolate the two results, `_SKINBLEND_DQ_BLEND` loads back
//! exactly from what `write_skinning_attributes` wrote, and bad attributes are clear errors.

mod common;

use common::{models_dir, strip, u16s, u8s, SAMPLES, UNSIGNED_BYTE, UNSIGNED_SHORT};
use glam::Vec3;
use serde_json::json;
use skinblend::Method;
use skinblend_gltf::{Model, PosedNode, SceneOptions, SceneSkinner, DQ_BLEND_ATTRIBUTE};

/// Every output bit of a posed scene: positions, normals, tangents.
fn bits(nodes: &[PosedNode]) -> Vec<u32> {
    let mut bits = Vec::new();
    for p in nodes.iter().flat_map(|n| &n.primitives) {
        bits.extend(
            p.positions
                .iter()
                .flat_map(|v| v.to_array())
                .map(f32::to_bits),
        );
        for n in p.normals.iter().flatten() {
            bits.extend(n.to_array().map(f32::to_bits));
        }
        for t in p.tangents.iter().flatten() {
            bits.extend(t.to_array().map(f32::to_bits));
        }
    }
    bits
}

fn posed(model: &Model, method: Method, dq_blend: Option<f32>, time_s: f32) -> Vec<PosedNode> {
    let options = SceneOptions {
        dq_blend,
        ..SceneOptions::with_method(method)
    };
    let pose = model.pose(Some(0), time_s).unwrap();
    SceneSkinner::cpu(model, options)
        .unwrap()
        .skin(&pose)
        .unwrap()
        .to_vec()
}

/// The joints of a model's first skin, by name, every other one: a rule that leaves vertices
/// at 0, at 1 and between on every sample.
fn every_other_joint(model: &Model) -> Vec<String> {
    let skin = &model.skins()[0];
    skin.joints
        .iter()
        .filter_map(|&j| model.nodes()[j].name.clone())
        .step_by(2)
        .collect()
}

fn blend_zero_is_lbs_and_one_is_dqs_on_every_sample() {
    let Some(dir) = models_dir() else { return };
    for name in SAMPLES {
        let model = Model::open(dir.join(name)).unwrap();
        if model.animations().is_empty() {
            continue;
        }
        let time_s = model.animations()[0].start_s + 0.5;
        let linear = bits(&posed(&model, Method::Linear, None, time_s));
        let dq = bits(&posed(&model, Method::DualQuaternion, None, time_s));
        let at_zero = bits(&posed(&model, Method::Blended, Some(0.0), time_s));
        let at_one = bits(&posed(&model, Method::Blended, Some(1.0), time_s));
        assert!(at_zero == linear, "{name}: blend 0 is not LBS to the bit");
        assert!(at_one == dq, "{name}: blend 1 is not DQS to the bit");
    }
}

/// The scene's blended positions against `(1 − b)·LBS + b·DQS` of the two methods' own scenes,
/// relative to the model's size: the interpolation's rounding and the kernels' (a few ulps of
/// coordinates of the model's scale); 1e-5 of the bounding-box diagonal leaves headroom.
const BLEND_VS_SEPARATE: f32 = 1e-5;

fn the_joint_rule_interpolates_lbs_and_dqs_on_every_sample() {
    let Some(dir) = models_dir() else { return };
    for name in SAMPLES {
        let mut model = Model::open(dir.join(name)).unwrap();
        if model.animations().is_empty() {
            continue;
        }
        let joints = every_other_joint(&model);
        if joints.is_empty() {
            // No named joint to state a rule with (SimpleSkin's joints have no names).
            continue;
        }
        let names: Vec<&str> = joints.iter().map(String::as_str).collect();
        let summary = model.set_dq_blend_from_joints(&names).unwrap();
        assert!(!summary.is_empty(), "{name}");
        let time_s = model.animations()[0].start_s + 0.5;
        let linear = posed(&model, Method::Linear, None, time_s);
        let dq = posed(&model, Method::DualQuaternion, None, time_s);
        let blended = posed(&model, Method::Blended, None, time_s);
        let all: Vec<Vec3> = linear
            .iter()
            .flat_map(|n| &n.primitives)
            .flat_map(|p| p.positions.iter().copied())
            .collect();
        let (lo, hi) = all
            .iter()
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &p| {
                (lo.min(p), hi.max(p))
            });
        let tolerance = BLEND_VS_SEPARATE * (hi - lo).length();
        for (n, node) in blended.iter().enumerate() {
            let values = model.meshes()[node.mesh]
                .primitives
                .iter()
                .map(|p| p.dq_blend.as_ref().unwrap());
            for ((p, primitive), values) in node.primitives.iter().enumerate().zip(values) {
                let l = &linear[n].primitives[p].positions;
                let d = &dq[n].primitives[p].positions;
                for (v, &b) in values.iter().enumerate() {
                    let expected = l[v].lerp(d[v], b);
                    let error = (primitive.positions[v] - expected).length();
                    assert!(
                        error <= tolerance,
                        "{name} node {} primitive {p} vertex {v} (b = {b}): off by {error}",
                        node.node
                    );
                }
            }
        }
    }
}

fn blend_values_load_back_exactly_and_leave_posed_exports() {
    let Some(dir) = models_dir() else { return };
    let out = skinblend_testkit::ScratchDir::new("dq-blend-attr");
    let mut model = Model::open(dir.join("CesiumMan/CesiumMan.glb")).unwrap();
    let joints = every_other_joint(&model);
    let names: Vec<&str> = joints.iter().map(String::as_str).collect();
    model.set_dq_blend_from_joints(&names).unwrap();
    let values = |m: &Model| -> Vec<u32> {
        m.meshes()
            .iter()
            .flat_map(|mesh| &mesh.primitives)
            .flat_map(|p| p.dq_blend.iter().flatten().map(|v| v.to_bits()))
            .collect()
    };
    let written = values(&model);
    assert!(!written.is_empty());
    for extension in ["glb", "gltf"] {
        let file = out.join(format!("blend.{extension}"));
        skinblend_gltf::export::write_skinning_attributes(&model, &file).unwrap();
        let loaded = Model::open(&file).unwrap();
        assert!(
            values(&loaded) == written,
            ".{extension}: the values changed"
        );
    }
    let loaded = Model::open(out.join("blend.glb")).unwrap();
    let posed_nodes = loaded
        .skin_scene(
            &loaded.rest_pose(),
            &skinblend::SkinOptions {
                method: Method::Blended,
                ..Default::default()
            },
        )
        .unwrap();
    let file = out.join("posed.glb");
    skinblend_gltf::export::write(&loaded, &loaded.rest_pose(), &posed_nodes, &file).unwrap();
    assert!(values(&Model::open(&file).unwrap()).is_empty());
}

fn normalized_integer_blend_values_decode_to_the_unit_interval() {
    let (mut b, ..) = strip(2);
    let accessor = b.accessor_bytes(&u8s(&[0, 255, 51, 102]), UNSIGNED_BYTE, "SCALAR", 4, true);
    b.json["meshes"][0]["primitives"][0]["attributes"][DQ_BLEND_ATTRIBUTE] = json!(accessor);
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    let values = model.meshes()[0].primitives[0].dq_blend.clone().unwrap();
    assert_eq!(values, vec![0.0, 1.0, 0.2, 0.4]);

    let (mut b, ..) = strip(2);
    let accessor = b.accessor_bytes(
        &u16s(&[0, 65535, 0, 65535]),
        UNSIGNED_SHORT,
        "SCALAR",
        4,
        true,
    );
    b.json["meshes"][0]["primitives"][0]["attributes"][DQ_BLEND_ATTRIBUTE] = json!(accessor);
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    assert_eq!(
        model.meshes()[0].primitives[0].dq_blend.clone().unwrap(),
        vec![0.0, 1.0, 0.0, 1.0]
    );
}

fn bad_blend_attributes_are_errors_naming_the_accessor() {
    let expect = |b: &common::Builder, needles: &[&str]| {
        let error = Model::from_bytes(&b.glb(), None).err().unwrap().to_string();
        for needle in needles {
            assert!(error.contains(needle), "{needle:?} not in {error}");
        }
    };
    // Outside [0, 1], and NaN (which the accessor reader refuses first).
    for (bad, shown) in [(1.5f32, "1.5"), (f32::NAN, "NaN"), (-0.25, "-0.25")] {
        let (mut b, ..) = strip(2);
        let accessor = b.floats(&[0.0, 0.5, bad, 1.0], "SCALAR");
        b.json["meshes"][0]["primitives"][0]["attributes"][DQ_BLEND_ATTRIBUTE] = json!(accessor);
        expect(&b, &[DQ_BLEND_ATTRIBUTE, "element 2", shown]);
    }
    // A VEC2, a wrong count, an integer type that is not normalized.
    let (mut b, ..) = strip(2);
    let accessor = b.floats(&[0.0; 8], "VEC2");
    b.json["meshes"][0]["primitives"][0]["attributes"][DQ_BLEND_ATTRIBUTE] = json!(accessor);
    expect(&b, &[DQ_BLEND_ATTRIBUTE]);
    let (mut b, ..) = strip(2);
    let accessor = b.floats(&[0.0; 3], "SCALAR");
    b.json["meshes"][0]["primitives"][0]["attributes"][DQ_BLEND_ATTRIBUTE] = json!(accessor);
    expect(&b, &[DQ_BLEND_ATTRIBUTE]);
    let (mut b, ..) = strip(2);
    let accessor = b.accessor_bytes(&u8s(&[0, 1, 0, 1]), UNSIGNED_BYTE, "SCALAR", 4, false);
    b.json["meshes"][0]["primitives"][0]["attributes"][DQ_BLEND_ATTRIBUTE] = json!(accessor);
    expect(&b, &[DQ_BLEND_ATTRIBUTE]);
}

fn blended_without_values_names_the_primitive() {
    let (b, ..) = strip(3);
    let model = Model::from_bytes(&b.glb(), None).unwrap();
    assert_eq!(
        model.skinnable_methods(None),
        vec![
            Method::Linear,
            Method::DualQuaternion,
            Method::CenterOfRotation
        ]
    );
    assert_eq!(model.skinnable_methods(Some(0.5)), Method::ALL.to_vec());
    let error = SceneSkinner::cpu(&model, SceneOptions::with_method(Method::Blended))
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("primitives[0]") && error.contains(DQ_BLEND_ATTRIBUTE),
        "{error}"
    );
    let mut model = model;
    let error = model
        .set_dq_blend_from_joints(&["nope"])
        .unwrap_err()
        .to_string();
    assert!(error.contains("\"nope\""), "{error}");
}

skinblend_testkit::test_main!(
    blend_zero_is_lbs_and_one_is_dqs_on_every_sample,
    the_joint_rule_interpolates_lbs_and_dqs_on_every_sample,
    blend_values_load_back_exactly_and_leave_posed_exports,
    normalized_integer_blend_values_decode_to_the_unit_interval,
    bad_blend_attributes_are_errors_naming_the_accessor,
    blended_without_values_names_the_primitive,
);
