//! Centers of rotation on the sample models: the precomputation's time per model (the issue's
//! target is under a second each), and the path `skinblend pose --method cor` takes
//! (`skin_scene` with `Method::CenterOfRotation`): the rest pose reproduces LBS, and every
//! animation's middle skins to finite positions with the same diagnostics as DQS.

mod common;

use std::time::Instant;

use common::{models_dir, SAMPLES};
use glam::Vec3;
use gltf::json::mesh::Mode;
use skinblend::cor::{rotation_centers, CorOptions};
use skinblend::{Method, SkinOptions};
use skinblend_gltf::{Model, PosedNode};

/// A loose guard against a pathological slowdown, well above the one-second target so that a
/// debug build on a loaded machine does not fail; the measured times are printed.
const SECONDS_PER_MODEL_GUARD: f64 = 10.0;

/// CoR at the rest pose against LBS, relative to the bounding-box diagonal: identity joints
/// leave only the f32 rounding of the blended center (as `REL_F32` in the core's tests).
const REST_POSE_TOLERANCE: f32 = 1e-5;

fn options(method: Method) -> SkinOptions {
    SkinOptions {
        method,
        ..SkinOptions::default()
    }
}

fn positions(nodes: &[PosedNode]) -> Vec<Vec3> {
    nodes
        .iter()
        .flat_map(|n| {
            n.primitives
                .iter()
                .flat_map(|p| p.positions.iter().copied())
        })
        .collect()
}

fn cor_is_a_method_name_of_pose() {
    assert_eq!("cor".parse::<Method>().unwrap(), Method::CenterOfRotation);
}

fn every_sample_precomputes_its_centers_and_poses_with_cor() {
    let Some(dir) = models_dir() else { return };
    for name in SAMPLES {
        let model = Model::open(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));

        let start = Instant::now();
        let (mut vertices, mut without_center, mut sub_triangles, mut clusters) = (0, 0, 0, 0);
        for primitive in model.meshes().iter().flat_map(|m| &m.primitives) {
            let Some(influences) = &primitive.influences else {
                continue;
            };
            assert_eq!(
                primitive.mode,
                Mode::Triangles,
                "{name}: samples are triangles"
            );
            let index: Vec<u32> = primitive
                .indices
                .clone()
                .unwrap_or_else(|| (0..primitive.positions.len() as u32).collect());
            let triangles: Vec<[u32; 3]> =
                index.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
            let result = rotation_centers(
                &primitive.positions,
                &triangles,
                influences,
                &CorOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            vertices += result.centers.len();
            without_center += result.vertices_without_center;
            sub_triangles += result.subdivided_triangles;
            clusters += result.triangle_clusters;
        }
        let seconds = start.elapsed().as_secs_f64();
        eprintln!(
            "{name}: centers of rotation for {vertices} vertices in {:.1} ms \
             ({without_center} without a center; {sub_triangles} sub-triangles in {clusters} \
             clusters)",
            seconds * 1e3
        );
        assert!(seconds < SECONDS_PER_MODEL_GUARD, "{name}: {seconds} s");

        // The rest pose: CoR reproduces LBS (the bind pose, up to the file's own precision).
        let rest = model.rest_pose();
        let cor = positions(
            &model
                .skin_scene(&rest, &options(Method::CenterOfRotation))
                .unwrap(),
        );
        let lbs = positions(&model.skin_scene(&rest, &options(Method::Linear)).unwrap());
        let (low, high) = lbs.iter().fold(
            (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
            |(low, high), p| (low.min(*p), high.max(*p)),
        );
        let diagonal = (high - low).length();
        let worst = cor
            .iter()
            .zip(&lbs)
            .map(|(a, b)| a.distance(*b))
            .fold(0.0f32, f32::max);
        assert!(
            worst <= REST_POSE_TOLERANCE * diagonal,
            "{name}: rest pose moves by {worst} (diagonal {diagonal})"
        );

        // Each animation's middle: finite, and DQS's sign handling and counts.
        for (a, animation) in model.animations().iter().enumerate() {
            let pose = model
                .pose(Some(a), (animation.start_s + animation.end_s) / 2.0)
                .unwrap();
            let cor = model
                .skin_scene(&pose, &options(Method::CenterOfRotation))
                .unwrap();
            let dq = model
                .skin_scene(&pose, &options(Method::DualQuaternion))
                .unwrap();
            assert!(positions(&cor).iter().all(|p| p.is_finite()), "{name}");
            for (c, d) in cor
                .iter()
                .flat_map(|n| &n.primitives)
                .zip(dq.iter().flat_map(|n| &n.primitives))
            {
                assert_eq!(c.diagnostics, d.diagnostics, "{name}, animation {a}");
            }
        }
    }
}

/// The centers' bits, NaN (no center) included, for exact comparison.
fn center_bits(model: &Model) -> Vec<[u32; 3]> {
    model
        .meshes()
        .iter()
        .flat_map(|m| &m.primitives)
        .flat_map(|p| p.rotation_centers.iter().flatten())
        .map(|c| {
            if skinblend::cor::has_rotation_center(*c) {
                c.to_array().map(f32::to_bits)
            } else {
                [u32::MAX; 3]
            }
        })
        .collect()
}

fn centers_saved_in_the_file_load_back_exactly_and_pose_the_same() {
    let Some(dir) = models_dir() else { return };
    let out = skinblend_testkit::ScratchDir::new("cor-attr");
    for name in ["CesiumMan/CesiumMan.glb", "SimpleSkin/SimpleSkin.gltf"] {
        let mut model = Model::open(dir.join(name)).unwrap();
        assert!(center_bits(&model).is_empty(), "{name} carries no centers");
        let mut reports = 0;
        let summary = model
            .compute_rotation_centers(&CorOptions::default(), &mut |done, total, _| {
                assert!(done < total);
                reports += 1;
            })
            .unwrap();
        assert!(!summary.is_empty() && reports > 0, "{name}");
        let computed = center_bits(&model);
        assert_eq!(
            computed.len(),
            summary.iter().map(|s| s.vertices).sum::<usize>()
        );
        let pose = model.pose(Some(0), 0.5).unwrap();
        let expected = positions(
            &model
                .skin_scene(&pose, &options(Method::CenterOfRotation))
                .unwrap(),
        );
        for extension in ["glb", "gltf"] {
            let file = out.join(format!("centers.{extension}"));
            skinblend_gltf::export::write_skinning_attributes(&model, &file).unwrap();
            let loaded = Model::open(&file).unwrap();
            assert!(
                center_bits(&loaded) == computed,
                "{name} as .{extension}: the centers changed"
            );
            let posed = positions(
                &loaded
                    .skin_scene(
                        &loaded.pose(Some(0), 0.5).unwrap(),
                        &options(Method::CenterOfRotation),
                    )
                    .unwrap(),
            );
            assert!(
                posed == expected,
                "{name} as .{extension}: posed differently"
            );
        }
    }
    // Not to OBJ, and a posed export drops the attribute with the skin.
    let model = Model::open(out.join("centers.glb")).unwrap();
    assert!(skinblend_gltf::export::write_skinning_attributes(&model, out.join("x.obj")).is_err());
    let posed = model
        .skin_scene(&model.rest_pose(), &options(Method::CenterOfRotation))
        .unwrap();
    let file = out.join("posed.glb");
    skinblend_gltf::export::write(&model, &model.rest_pose(), &posed, &file).unwrap();
    assert!(center_bits(&Model::open(&file).unwrap()).is_empty());
}

fn a_center_attribute_with_a_bad_flag_is_an_error() {
    use serde_json::json;
    let (mut b, ..) = common::strip(2);
    let values: Vec<f32> = [
        [0.0, 1.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 0.5],
        [0.0; 4],
        [0.0; 4],
    ]
    .concat();
    let accessor = b.floats(&values, "VEC4");
    b.json["meshes"][0]["primitives"][0]["attributes"]["_SKINBLEND_COR"] = json!(accessor);
    let error = Model::from_bytes(&b.glb(), None).err().unwrap().to_string();
    assert!(
        error.contains("_SKINBLEND_COR") && error.contains("vertex 1"),
        "{error}"
    );
}

skinblend_testkit::test_main!(
    cor_is_a_method_name_of_pose,
    every_sample_precomputes_its_centers_and_poses_with_cor,
    centers_saved_in_the_file_load_back_exactly_and_pose_the_same,
    a_center_attribute_with_a_bad_flag_is_an_error,
);
