//! The built-in rigs written by `skinblend_gltf::rigs` as animated GLB files, loaded back and
//! posed at the time of an angle: the same result as skinning the core's fixture at that angle,
//! for every rig and every method (blended by the values the file carries, the fixture's own).

use skinblend::fixtures::{self, Fixture};
use skinblend::{evidence, skin, BlendValues, Method, SkinInput, SkinOptions};
use skinblend_gltf::{rigs, Model};

/// Positions, relative to the 2 m rig. At a keyframe the file holds the fixture's own
/// rotations and translations in f32, and the loader forms `world_from_joint ·
/// joint_from_bind` itself: f32 round-off of that product and of the DQS centers recomputed
/// from the inverse bind matrices, ~1e-7. Between keyframes slerp of two rotations about one
/// axis adds ~1e-7 more. 1e-5 is a hundred times that and far below any skinning difference
/// (LBS and DQS differ by up to 0.25 m on these rigs).
const POSITION_TOLERANCE: f32 = 1e-5;

/// Unit normals: the same round-off amplified by the conditioning of the blended 3x3 (the
/// shear-and-cap joints shear by 0.5 and scale by 0.6..1.5).
const NORMAL_TOLERANCE: f32 = 1e-4;

fn largest_difference<T: Copy>(a: &[T], b: &[T], distance: impl Fn(T, T) -> f32) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(&x, &y)| distance(x, y))
        .fold(0.0, f32::max)
}

fn check(fixture: &Fixture, model: &Model, angle_deg: f32, method: Method) {
    let options = SkinOptions {
        method,
        ..SkinOptions::default()
    };
    let centers = evidence::fixture_rotation_centers(fixture).unwrap();
    let blend_values = fixture.dq_blend_values();
    let input = SkinInput::new(
        &fixture.positions,
        Some(&fixture.normals),
        Some(&fixture.tangents),
        &fixture.influences,
    )
    .unwrap()
    .with_rotation_centers(&centers)
    .unwrap()
    .with_blend_values(BlendValues::PerVertex(&blend_values))
    .unwrap();
    let expected = skin(
        &input,
        &fixture.palette(angle_deg),
        Some(&fixture.joint_centers),
        &options,
    )
    .unwrap();
    let animation = model.find_animation(rigs::ANIMATION_NAME).unwrap();
    let pose = model
        .pose(Some(animation), rigs::time_s_of_angle(angle_deg))
        .unwrap();
    let posed = model.skin_scene(&pose, &options).unwrap();
    assert_eq!(posed.len(), 1, "{}: one skinned node", fixture.name);
    let got = &posed[0].primitives[0];
    let what = format!("{} at {angle_deg}° with {}", fixture.name, method.name());
    let worst = largest_difference(&got.positions, &expected.positions, |a, b| (a - b).length());
    assert!(
        worst <= POSITION_TOLERANCE,
        "{what}: positions differ by {worst}"
    );
    let worst = largest_difference(
        got.normals.as_ref().unwrap(),
        expected.normals.as_ref().unwrap(),
        |a, b| (a - b).length(),
    );
    assert!(
        worst <= NORMAL_TOLERANCE,
        "{what}: normals differ by {worst}"
    );
    // Sign flips are left out: they count the sign of each joint's rotation as extracted from
    // its palette matrix, and shear_cap's mirrored joint at 90° is a half turn (w ≈ 0) whose
    // sign f32 round-off of the file's product picks; DQS ignores that sign (positions and
    // normals above agree).
    let (g, e) = (&got.diagnostics, &expected.diagnostics);
    assert_eq!(
        (
            g.singular_normal_matrices,
            g.non_rigid_joints,
            g.unweighted_vertices
        ),
        (
            e.singular_normal_matrices,
            e.non_rigid_joints,
            e.unweighted_vertices
        ),
        "{what}: diagnostics"
    );
}

#[test]
fn every_rig_posed_at_the_time_of_an_angle_equals_the_fixture_at_that_angle() {
    for fixture in fixtures::all() {
        let bytes = rigs::to_glb(&fixture).unwrap();
        let model = Model::from_bytes(&bytes, None).unwrap();
        let largest = rigs::largest_angle_deg(&fixture);
        assert!(largest > 0.0, "{}: the sweep turns", fixture.name);
        let animation = &model.animations()[0];
        assert_eq!(animation.end_s, rigs::time_s_of_angle(largest));
        // Every evidence angle (keyframes), and one between keyframes (slerp).
        let mut angles = evidence::angles_deg(&fixture).to_vec();
        angles.push(rigs::KEYFRAME_STEP_DEG * 2.5);
        for angle_deg in angles {
            for method in Method::ALL {
                check(&fixture, &model, angle_deg, method);
            }
        }
    }
}

#[test]
fn keyframes_cover_the_sweep_and_include_every_evidence_angle() {
    for fixture in fixtures::all() {
        let keys = rigs::keyframe_angles_deg(&fixture);
        assert_eq!(keys.first(), Some(&0.0));
        assert_eq!(keys.last(), Some(&rigs::largest_angle_deg(&fixture)));
        for angle in evidence::angles_deg(&fixture) {
            assert!(
                keys.contains(angle),
                "{}: {angle}° is a keyframe",
                fixture.name
            );
        }
    }
}

#[test]
fn a_rig_is_not_written_as_obj_and_the_write_is_atomic() {
    let dir = skinblend_testkit::ScratchDir::new("rigs");
    let fixture = fixtures::twist_coarse();
    let error = rigs::write(&fixture, dir.join("twist.obj")).unwrap_err();
    assert!(error.to_string().contains(".obj"), "{error}");
    assert!(!dir.join("twist.obj").exists());
    rigs::write(&fixture, dir.join("twist.gltf")).unwrap();
    let model = Model::open(dir.join("twist.gltf")).unwrap();
    assert_eq!(model.animations().len(), 1);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
