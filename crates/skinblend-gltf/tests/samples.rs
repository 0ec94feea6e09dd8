//! Every sample model in ../shared/models: loads, the bind pose reproduces POSITION, LBS at
//! several times of every animation agrees with the independent f64 reference, and the export
//! keeps everything but the posed attributes.

mod common;

use common::reference::{bbox_diagonal, RefDoc};
use common::{models_dir, SAMPLES};
use glam::{DVec3, Vec3};
use skinblend::{skin, Method, SkinInput, SkinOptions};
use skinblend_gltf::{export, Model};

/// Agreement with the f64 reference, as a fraction of the bounding-box diagonal: the issue's
/// bar. f32 round-off through a chain of about 20 joint matrices is of order 1e-6.
const REFERENCE_TOLERANCE: f64 = 1e-5;

/// Times sampled per animation: start, end and evenly between.
const TIMES_PER_ANIMATION: usize = 9;

fn library_lbs(model: &Model, animation: Option<(usize, f32)>) -> Vec<Vec<Vec3>> {
    let pose = match animation {
        Some((a, t)) => model.pose(Some(a), t).unwrap(),
        None => model.rest_pose(),
    };
    let options = SkinOptions {
        method: Method::Linear,
        ..SkinOptions::default()
    };
    model
        .skin_scene(&pose, &options)
        .unwrap()
        .into_iter()
        .flat_map(|n| n.primitives.into_iter().map(|p| p.positions))
        .collect()
}

fn max_deviation(ours: &[Vec<Vec3>], reference: &[Vec<DVec3>]) -> f64 {
    assert_eq!(ours.len(), reference.len(), "primitive count");
    let mut worst = 0f64;
    for (a, b) in ours.iter().zip(reference) {
        assert_eq!(a.len(), b.len(), "vertex count");
        for (p, q) in a.iter().zip(b) {
            worst = worst.max((p.as_dvec3() - *q).length());
        }
    }
    worst
}

fn every_sample_agrees_with_the_f64_reference_at_several_times() {
    let Some(dir) = models_dir() else { return };
    for name in SAMPLES {
        let path = dir.join(name);
        let model = Model::open(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let reference = RefDoc::open(&path);
        let diagonal = bbox_diagonal(&reference.bind_positions());
        assert!(diagonal > 0.0);
        let mut worst = max_deviation(&library_lbs(&model, None), &reference.skin(None)) / diagonal;
        let mut samples = 1;
        for a in 0..model.animations().len() {
            let (start, end) = reference.times(a);
            for i in 0..TIMES_PER_ANIMATION {
                let t = start + (end - start) * i as f64 / (TIMES_PER_ANIMATION - 1) as f64;
                // Sample both at the same f32 time.
                let t32 = t as f32;
                let ours = library_lbs(&model, Some((a, t32)));
                let theirs = reference.skin(Some((a, f64::from(t32))));
                worst = worst.max(max_deviation(&ours, &theirs) / diagonal);
                samples += 1;
            }
        }
        eprintln!("{name}: LBS vs f64 reference over {samples} poses: max deviation {worst:.2e} of the bbox diagonal ({diagonal:.4})");
        assert!(
            worst <= REFERENCE_TOLERANCE,
            "{name}: {worst:e} > {REFERENCE_TOLERANCE:e}"
        );
    }
}

fn every_sample_bind_pose_reproduces_position() {
    let Some(dir) = models_dir() else { return };
    for name in SAMPLES {
        let path = dir.join(name);
        let model = Model::open(&path).unwrap();
        let reference = RefDoc::open(&path);
        let bind = reference.bind_positions();
        let diagonal = bbox_diagonal(&bind);
        let mut ours = Vec::new();
        for method in [Method::Linear, Method::DualQuaternion] {
            ours.clear();
            for node in model.skinned_nodes() {
                let skin_index = model.nodes()[node].skin.unwrap();
                let palette = model.bind_palette(skin_index);
                let mesh = &model.meshes()[model.nodes()[node].mesh.unwrap()];
                for primitive in &mesh.primitives {
                    let influences = primitive.influences.as_ref().unwrap();
                    let input =
                        SkinInput::new(&primitive.positions, None, None, influences).unwrap();
                    let options = SkinOptions {
                        method,
                        ..SkinOptions::default()
                    };
                    let centers = &model.skins()[skin_index].joint_centers;
                    ours.push(
                        skin(&input, &palette, Some(centers), &options)
                            .unwrap()
                            .positions,
                    );
                }
            }
            let worst = max_deviation(&ours, &bind) / diagonal;
            eprintln!(
                "{name}: bind pose {} vs POSITION: {worst:.2e} of the diagonal",
                method.name()
            );
            assert!(
                worst <= REFERENCE_TOLERANCE,
                "{name} {}: {worst:e}",
                method.name()
            );
        }
    }
}

fn rigged_simple_ignores_the_skinned_nodes_own_transform() {
    let Some(dir) = models_dir() else { return };
    let model = Model::open(dir.join("RiggedSimple/RiggedSimple.glb")).unwrap();
    let node = model.skinned_nodes()[0];
    // The file gives the skinned node a transform of its own (the point of this sample).
    assert_ne!(
        model.rest_pose().world_from_node[node],
        glam::Mat4::IDENTITY
    );
    // The reference ignores it by construction; so must we: same result whatever it is.
    let mut moved = model.clone();
    moved
        .set_node_transform(
            node,
            glam::Mat4::from_translation(Vec3::new(100.0, -50.0, 3.0)),
        )
        .unwrap();
    assert_ne!(
        moved.rest_pose().world_from_node[node],
        model.rest_pose().world_from_node[node],
        "the node moved"
    );
    let a = library_lbs(&model, Some((0, 1.0)));
    let b = library_lbs(&moved, Some((0, 1.0)));
    assert_eq!(a, b);
}

fn every_sample_exports_keeping_all_but_the_posed_attributes() {
    let Some(dir) = models_dir() else { return };
    for name in SAMPLES {
        let model = Model::open(dir.join(name)).unwrap();
        let animation = (!model.animations().is_empty()).then_some(0);
        let pose = model.pose(animation, 0.5).unwrap();
        let options = SkinOptions {
            method: Method::DualQuaternion,
            ..SkinOptions::default()
        };
        let posed = model.skin_scene(&pose, &options).unwrap();
        let bytes = export::to_glb(&model, &pose, &posed).unwrap();
        let out =
            Model::from_bytes(&bytes, None).unwrap_or_else(|e| panic!("{name}: re-read: {e}"));
        check_export(name, &model, &out, &posed);
        let text = export::to_gltf(&model, &pose, &posed).unwrap();
        let out = Model::from_bytes(&text, None).unwrap();
        check_export(name, &model, &out, &posed);
    }
}

/// The export check shared with the generated files.
pub fn check_export(
    name: &str,
    input: &Model,
    output: &Model,
    posed: &[skinblend_gltf::PosedNode],
) {
    assert_eq!(
        input.nodes().len(),
        output.nodes().len(),
        "{name}: node count"
    );
    for (a, b) in input.nodes().iter().zip(output.nodes()) {
        assert_eq!(a.name, b.name, "{name}: node names keep their indices");
    }
    assert!(
        output.skinned_nodes().is_empty(),
        "{name}: skins removed from posed nodes"
    );
    let rest = output.rest_pose();
    for item in posed {
        let node = &output.nodes()[item.node];
        assert_eq!(
            rest.world_from_node[item.node],
            glam::Mat4::IDENTITY,
            "{name}: posed node at identity"
        );
        assert!(node.parent.is_none(), "{name}: posed node is a root");
        let in_json = &input.json()["meshes"][item.mesh];
        let out_mesh = node.mesh.unwrap();
        let out_json = &output.json()["meshes"][out_mesh];
        assert_eq!(
            in_json["primitives"].as_array().unwrap().len(),
            out_json["primitives"].as_array().unwrap().len()
        );
        for (p, result) in item.primitives.iter().enumerate() {
            let (ip, op) = (&in_json["primitives"][p], &out_json["primitives"][p]);
            assert_eq!(ip["material"], op["material"], "{name}: material");
            assert_eq!(ip["mode"], op["mode"], "{name}: mode");
            for (key, value) in ip["attributes"].as_object().unwrap() {
                let skinning = key.starts_with("JOINTS_") || key.starts_with("WEIGHTS_");
                let posed_attribute = matches!(key.as_str(), "POSITION" | "NORMAL" | "TANGENT");
                if skinning {
                    assert!(op["attributes"].get(key).is_none(), "{name}: {key} removed");
                } else if !posed_attribute {
                    let a = input
                        .read_accessor(value.as_u64().unwrap() as usize)
                        .unwrap();
                    let b = output
                        .read_accessor(op["attributes"][key].as_u64().unwrap() as usize)
                        .unwrap();
                    assert_eq!(a, b, "{name}: {key} unchanged");
                }
            }
            if let Some(i) = ip["indices"].as_u64() {
                let a = input.read_accessor(i as usize).unwrap();
                let b = output
                    .read_accessor(op["indices"].as_u64().unwrap() as usize)
                    .unwrap();
                assert_eq!(a, b, "{name}: indices unchanged");
            }
            let primitive = &output.meshes()[out_mesh].primitives[p];
            assert_eq!(
                primitive.positions, result.positions,
                "{name}: posed positions written exactly"
            );
            assert_eq!(
                primitive.normals, result.normals,
                "{name}: posed normals written exactly"
            );
            assert_eq!(
                primitive.tangents, result.tangents,
                "{name}: posed tangents written exactly"
            );
        }
    }
    for key in [
        "materials",
        "textures",
        "images",
        "samplers",
        "cameras",
        "extensionsUsed",
        "asset",
    ] {
        let (a, b) = (&input.json()[key], &output.json()[key]);
        if key == "images" {
            // Images may move from a URI into the buffer; everything else about them stays.
            assert_eq!(
                a.as_array().map(Vec::len),
                b.as_array().map(Vec::len),
                "{name}: images"
            );
        } else {
            assert_eq!(a, b, "{name}: {key} kept");
        }
    }
}

skinblend_testkit::test_main!(
    every_sample_agrees_with_the_f64_reference_at_several_times,
    every_sample_bind_pose_reproduces_position,
    rigged_simple_ignores_the_skinned_nodes_own_transform,
    every_sample_exports_keeping_all_but_the_posed_attributes,
);
