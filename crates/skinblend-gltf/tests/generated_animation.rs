//! Generated files for what the samples lack in animation and scenes: morph targets on a skinned
//! mesh (their weights from the node, the mesh or the animation, and when a morphed primitive is
//! checked again), STEP and CUBICSPLINE sampling and channels, non-uniform and mirrored joint
//! scale, one mesh under two skinned nodes. Each expected value is computed by hand in the test.

mod common;

use common::generated::{close, morph_file, skinned, F32_TOLERANCE};
use common::*;
use glam::{Mat4, Quat, Vec3};
use serde_json::json;
use skinblend::{Method, SkinOptions};
use skinblend_gltf::{export, Interp, Model, Sampler, SceneOptions, SceneSkinner};

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

skinblend_testkit::test_main!(
    morph_targets_on_a_skinned_mesh_take_node_mesh_or_animation_weights,
    step_holds_and_cubicspline_follows_the_hermite_curve,
    step_and_cubicspline_channels_drive_joints_in_a_file,
    non_uniform_joint_scale_keeps_its_scale_under_both_methods,
    mirrored_joint_keeps_its_mirror_under_both_methods,
    one_mesh_used_by_two_skinned_nodes_and_two_skins,
    a_morphed_primitive_is_checked_again_only_when_its_weights_change,
);
