//! The loaded `Model` is read-only from outside; its two editing methods check what they are
//! given and leave the model unchanged when they refuse it.

mod common;

use common::models_dir;
use glam::Mat4;
use skinblend::Influences;
use skinblend_gltf::{GltfError, Model};

fn simple_skin() -> Option<Model> {
    let dir = models_dir()?;
    Some(Model::open(dir.join("SimpleSkin/SimpleSkin.gltf")).unwrap())
}

fn invalid_at(error: GltfError) -> String {
    match error {
        GltfError::Invalid { path, .. } => path,
        other => panic!("expected an Invalid error, got {other}"),
    }
}

fn influences_naming_more_joints_than_the_skin_are_refused() {
    let Some(mut model) = simple_skin() else {
        return;
    };
    let joints = model.skins()[0].joints.len();
    let vertices = model.meshes()[0].primitives[0].positions.len();
    let before = model.palette(&model.rest_pose(), 0).unwrap();
    // One joint past the skin's last: the loader refuses this in a file; so must the setter.
    let too_far = Influences::new(
        1,
        vec![joints as u16; vertices],
        vec![1.0; vertices],
        joints + 1,
    )
    .unwrap();
    let path = invalid_at(model.set_influences(0, 0, too_far).unwrap_err());
    assert_eq!(path, "meshes[0].primitives[0]");
    // A wrong vertex count and a primitive that does not exist.
    let short = Influences::new(1, vec![0; vertices - 1], vec![1.0; vertices - 1], joints).unwrap();
    assert!(model.set_influences(0, 0, short).is_err());
    let fine = Influences::new(1, vec![0; vertices], vec![1.0; vertices], joints).unwrap();
    assert!(model.set_influences(0, 9, fine.clone()).is_err());
    // Unchanged after the refusals; the same palette.
    assert_eq!(model.palette(&model.rest_pose(), 0).unwrap(), before);
    // A valid rebind is taken, and skinning still works.
    model.set_influences(0, 0, fine).unwrap();
    let primitive = &model.meshes()[0].primitives[0];
    assert_eq!(
        primitive
            .influences
            .as_ref()
            .unwrap()
            .influences_per_vertex(),
        1
    );
    assert_eq!(primitive.influence_sets, 1);
    assert!(primitive.rotation_centers.is_none());
    assert!(model
        .skin_scene(&model.rest_pose(), &skinblend::SkinOptions::default())
        .is_ok());
}

fn node_transforms_that_are_not_finite_affine_matrices_are_refused() {
    let Some(mut model) = simple_skin() else {
        return;
    };
    let nodes = model.nodes().len();
    let before = model.nodes()[0].matrix;
    let mut projective = Mat4::IDENTITY;
    projective.x_axis.w = 0.5;
    let path = invalid_at(model.set_node_transform(0, projective).unwrap_err());
    assert_eq!(path, "nodes[0].matrix");
    let path = invalid_at(
        model
            .set_node_transform(0, Mat4::from_translation(glam::Vec3::NAN))
            .unwrap_err(),
    );
    assert_eq!(path, "nodes[0].matrix");
    let path = invalid_at(model.set_node_transform(nodes, Mat4::IDENTITY).unwrap_err());
    assert_eq!(path, format!("nodes[{nodes}]"));
    assert_eq!(model.nodes()[0].matrix, before, "unchanged after refusals");
    let moved = Mat4::from_translation(glam::Vec3::new(1.0, 2.0, 3.0));
    model.set_node_transform(0, moved).unwrap();
    assert_eq!(model.nodes()[0].matrix, Some(moved));
    assert_eq!(model.rest_pose().parent_from_node[0], moved);
}

skinblend_testkit::test_main!(
    influences_naming_more_joints_than_the_skin_are_refused,
    node_transforms_that_are_not_finite_affine_matrices_are_refused,
);
