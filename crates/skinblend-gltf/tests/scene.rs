//! The scene skinner (`SceneSkinner`), the one path of `pose`, `compare` and `skin_scene`:
//! centers of rotation computed once per primitive however many frames, a long-lived skinner
//! equal to the bit to a fresh one at every frame (nothing leaks from frame to frame), and the
//! attributes it was asked for.

mod common;

use common::{models_dir, SAMPLES};
use skinblend::Method;
use skinblend_gltf::{Model, PosedNode, SceneOptions, SceneSkinner};

/// Frames of a clip, as `skinblend compare` samples by default.
const FRAMES: usize = 48;

fn primitives(posed: &[PosedNode]) -> usize {
    posed.iter().map(|n| n.primitives.len()).sum()
}

fn times_s(model: &Model) -> Vec<f32> {
    let (start_s, end_s) = model
        .animations()
        .first()
        .map_or((0.0, 0.0), |a| (a.start_s, a.end_s));
    (0..FRAMES)
        .map(|f| start_s + (end_s - start_s) * f as f32 / (FRAMES - 1) as f32)
        .collect()
}

fn cor_centers_are_computed_once_per_primitive_over_a_clip() {
    let Some(dir) = models_dir() else { return };
    for sample in SAMPLES {
        let model = Model::open(dir.join(sample)).unwrap();
        let without_file_centers = model
            .skinned_nodes()
            .iter()
            .filter_map(|&n| model.nodes()[n].mesh)
            .flat_map(|m| &model.meshes()[m].primitives)
            .filter(|p| p.rotation_centers.is_none())
            .count();
        assert!(
            without_file_centers > 0,
            "{sample}: no primitive to compute"
        );
        let mut stages = 0;
        let mut skinner = SceneSkinner::with_backend(
            &model,
            skinblend::CpuBackend,
            SceneOptions::with_method(Method::CenterOfRotation),
            &mut |_, _, _| stages += 1,
        )
        .unwrap();
        let animation = (!model.animations().is_empty()).then_some(0);
        for time_s in times_s(&model) {
            let pose = model.pose(animation, time_s).unwrap();
            skinner.skin(&pose).unwrap();
        }
        assert_eq!(
            skinner.centers_computed(),
            without_file_centers,
            "{sample}: centers computed more than once per primitive over {FRAMES} frames"
        );
        assert!(
            stages > 0,
            "{sample}: the progress callback was never called"
        );
    }
}

fn a_long_lived_skinner_equals_a_fresh_one_at_every_frame() {
    let Some(dir) = models_dir() else { return };
    for sample in SAMPLES {
        let model = Model::open(dir.join(sample)).unwrap();
        let animation = (!model.animations().is_empty()).then_some(0);
        for method in [Method::Linear, Method::DualQuaternion] {
            let options = SceneOptions::with_method(method);
            let mut kept = SceneSkinner::cpu(&model, options).unwrap();
            for time_s in times_s(&model).into_iter().step_by(7) {
                let pose = model.pose(animation, time_s).unwrap();
                let from_kept = kept.skin(&pose).unwrap().to_vec();
                let fresh = model.skin_scene(&pose, &options.skin).unwrap();
                assert_eq!(primitives(&from_kept), primitives(&fresh));
                for (a, b) in from_kept.iter().zip(&fresh) {
                    for (p, q) in a.primitives.iter().zip(&b.primitives) {
                        // Exact: the same kernels on the same inputs; a palette refreshed by
                        // `update` must equal one made by `prepare`.
                        assert_eq!(
                            p.positions, q.positions,
                            "{sample} {method:?} at {time_s} s"
                        );
                        assert_eq!(p.normals, q.normals, "{sample} {method:?} at {time_s} s");
                        assert_eq!(p.diagnostics, q.diagnostics);
                    }
                }
            }
        }
    }
}

fn positions_only_skins_no_normals_and_the_same_positions() {
    let Some(dir) = models_dir() else { return };
    let model = Model::open(dir.join("CesiumMan/CesiumMan.glb")).unwrap();
    let pose = model.pose(Some(0), 0.5).unwrap();
    let all = SceneOptions::with_method(Method::DualQuaternion);
    let positions_only = SceneOptions {
        normals: false,
        tangents: false,
        ..all
    };
    let full = SceneSkinner::cpu(&model, all)
        .unwrap()
        .skin(&pose)
        .unwrap()
        .to_vec();
    let mut skinner = SceneSkinner::cpu(&model, positions_only).unwrap();
    let lean = skinner.skin(&pose).unwrap();
    assert!(full[0].primitives[0].normals.is_some());
    for (a, b) in lean.iter().zip(&full) {
        for (p, q) in a.primitives.iter().zip(&b.primitives) {
            assert!(p.normals.is_none() && p.tangents.is_none());
            assert_eq!(p.positions, q.positions);
        }
    }
}

/// A primitive without morph targets is checked once, when the skinner is made, and never per
/// frame (`skinblend::full_validations` counts full checks of a mesh's attributes).
fn each_primitive_is_checked_once_however_many_frames() {
    let bytes =
        skinblend_gltf::rigs::to_glb_with_copies(&skinblend::fixtures::twist_fine(), 3).unwrap();
    let model = Model::from_bytes(&bytes, None).unwrap();
    for method in Method::ALL {
        let before = skinblend::full_validations();
        // Blended by the values the rig's file carries.
        let mut skinner = SceneSkinner::cpu(&model, SceneOptions::with_method(method)).unwrap();
        assert_eq!(
            skinblend::full_validations() - before,
            3,
            "{method}: three skinned nodes, one check each"
        );
        for time_s in times_s(&model) {
            let pose = model.pose(Some(0), time_s).unwrap();
            assert_eq!(primitives(skinner.skin(&pose).unwrap()), 3);
        }
        assert_eq!(
            skinblend::full_validations() - before,
            3,
            "{method}: {FRAMES} frames checked no mesh again"
        );
    }
}

skinblend_testkit::test_main!(
    each_primitive_is_checked_once_however_many_frames,
    cor_centers_are_computed_once_per_primitive_over_a_clip,
    a_long_lived_skinner_equals_a_fresh_one_at_every_frame,
    positions_only_skins_no_normals_and_the_same_positions,
);
