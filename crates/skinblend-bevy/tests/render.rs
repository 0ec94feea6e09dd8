//! The plugin as its users meet it, rendered headless (lavapipe in CI): the built-in twist rig,
//! written as a glTF file and loaded by Bevy's own glTF loader, twisted 180° and drawn with each
//! method; the silhouette's width at the twisted joint measured in the image; and the DQS image,
//! and the blended image with the rig's blend values from the file (`_SKINBLEND_DQ_BLEND`),
//! against an image of the mesh skinblend posed on the CPU.

mod support;

use std::f32::consts::PI;
use std::sync::atomic::{AtomicUsize, Ordering};

use bevy::prelude::*;
use skinblend::fixtures::{self, REST_RADIUS};
use skinblend_bevy::{SkinblendSkinned, SkinningMethod};
use support::{capture, step, Frame};

/// Image size, pixels.
const SIZE_PX: u32 = 256;
/// The orthographic view's height (and width), metres: the 2 m rig with room around it.
const VIEW_M: f32 = 2.5;
/// A pixel is covered when a channel is above this (the background is black, the lit mesh
/// far brighter).
const COVERED_LEVEL: u8 = 8;

/// The ring's silhouette width at bind pose, pixels: its diameter.
fn bind_width_px() -> f32 {
    2.0 * REST_RADIUS * SIZE_PX as f32 / VIEW_M
}

/// How far DQS and CoR may be from the bind pose's width at the twisted ring, pixels: one
/// pixel of rasterization at each edge, plus the 12-sided ring's flats (a regular 12-gon seen
/// from a side is between cos(15°) and 1 of its diameter wide: 1.7 px at 51 px).
const WIDTH_TOLERANCE_PX: f32 = 4.0;

/// LBS at 180°: the ring's vertices collapse onto the axis (0% of the radius); the rows through
/// it still see the neighbouring rings' slopes within a pixel or two of the center line.
const LBS_COLLAPSED_MAX_PX: f32 = 0.35;

/// DQS on the GPU against the mesh posed on the CPU and drawn without skinning: pixels whose
/// colour differs by more than `DIFFERENCE_LEVELS`. The positions agree within f32 rounding
/// (GPU_VS_CPU = 1e-5 relative, well under a pixel), so only edge pixels whose coverage flips
/// on that rounding may differ: at most 0.2% of the image.
const DIFFERENCE_LEVELS: u8 = 12;
const MAX_DIFFERING_PIXELS: u32 = SIZE_PX * SIZE_PX / 500;

/// Writes the twist rig as a GLB (`twist.glb`, with blended's values: DQS on the moving joint
/// by the joint rule, as `skinblend rigs` writes it) into a scratch folder, and returns the
/// folder: one per call, as the tests run at once in one process and each folder is removed
/// when its test ends.
fn twist_rig_folder() -> skinblend_testkit::ScratchDir {
    static FOLDERS: AtomicUsize = AtomicUsize::new(0);
    let n = FOLDERS.fetch_add(1, Ordering::Relaxed);
    let dir = skinblend_testkit::ScratchDir::new(&format!("skinblend-bevy-render-{n}"));
    let glb = skinblend_gltf::rigs::to_glb(&fixtures::twist_coarse()).expect("twist rig as GLB");
    std::fs::write(dir.path().join("twist.glb"), glb).expect("write twist.glb");
    dir
}

/// Sets the rig's joints to the 180° twist: joint 0 at rest, joint 1 turned 180° about +Y at
/// 1 m (the fixture's `world_from_joint(180)`; the rig's root node is the identity).
fn twist_joints(mut transforms: Query<&mut Transform>, skinned: Query<&SkinblendSkinned>) {
    for state in &skinned {
        if let [_, moving, ..] = state.joints() {
            if let Ok(mut transform) = transforms.get_mut(*moving) {
                *transform =
                    Transform::from_translation(Vec3::Y).with_rotation(Quat::from_rotation_y(PI));
            }
        }
    }
}

struct Scene {
    app: App,
    target: Handle<Image>,
    root: Entity,
    _dir: skinblend_testkit::ScratchDir,
}

/// The twist rig under a directional light, posed at 180°, its method set per test; with
/// `shadow_plane`, a blue wall behind it receives its shadow (so an image also compares what
/// the shadow pass drew).
fn scene(shadow_plane: bool) -> Option<Scene> {
    if !support::has_gpu() {
        return None;
    }
    let dir = twist_rig_folder();
    let mut app = support::app(dir.path());
    app.add_systems(Update, twist_joints);
    let target = support::render_target(&mut app, SIZE_PX);
    // Looking along -Z at the ring (y = 1 m): the twist axis is the image's vertical.
    support::spawn_camera(
        &mut app,
        &target,
        Vec3::new(0.0, 1.0, 5.0),
        Vec3::new(0.0, 1.0, 0.0),
        VIEW_M,
    );
    app.world_mut().spawn((
        DirectionalLight {
            shadow_maps_enabled: shadow_plane,
            ..default()
        },
        Transform::from_xyz(1.0, 1.5, 4.0).looking_at(Vec3::new(0.0, 1.0, 0.0), Vec3::Y),
    ));
    if shadow_plane {
        let wall = app
            .world_mut()
            .resource_mut::<Assets<Mesh>>()
            .add(Plane3d::new(Vec3::Z, Vec2::splat(2.0)));
        let white = app
            .world_mut()
            .resource_mut::<Assets<StandardMaterial>>()
            .add(Color::srgb(0.2, 0.3, 0.8));
        app.world_mut().spawn((
            Mesh3d(wall),
            MeshMaterial3d(white),
            Transform::from_xyz(0.0, 1.0, -0.8),
        ));
    }
    let root = support::spawn_posed_scene(&mut app, "twist.glb");
    Some(Scene {
        app,
        target,
        root,
        _dir: dir,
    })
}

/// Sets the method, lets two frames pass (the pose and the pipeline follow), captures.
fn render_with(scene: &mut Scene, method: SkinningMethod) -> Frame {
    scene.app.world_mut().entity_mut(scene.root).insert(method);
    step(&mut scene.app);
    step(&mut scene.app);
    let frame = capture(&mut scene.app, &scene.target, 60).expect("a screenshot");
    assert!(
        frame.coverage(COVERED_LEVEL) > 0,
        "{method:?}: nothing was drawn"
    );
    frame
}

/// The widest run of covered pixels across the rows within a pixel of the ring's row (the
/// image's middle row: the camera looks at the ring's center), pixels.
fn ring_width_px(frame: &Frame) -> f32 {
    let middle = frame.height / 2;
    (middle - 1..=middle)
        .map(|y| frame.row_coverage(y, COVERED_LEVEL))
        .max()
        .unwrap_or(0) as f32
}

fn save_on_failure(frame: &Frame, name: &str) {
    let path = std::env::temp_dir().join(format!("skinblend-bevy-{name}.png"));
    frame.save(&path);
    eprintln!("image: {}", path.display());
}

fn twist_180_ring_width_per_method() {
    let Some(mut scene) = scene(false) else {
        return;
    };
    let bind = bind_width_px();
    for method in [
        SkinningMethod::Linear,
        SkinningMethod::DualQuaternion,
        SkinningMethod::CenterOfRotation,
    ] {
        let mut frame = render_with(&mut scene, method);
        if method == SkinningMethod::CenterOfRotation {
            // The centers are computed in the background: wait for them (bounded), then draw again.
            for _ in 0..300 {
                step(&mut scene.app);
            }
            frame = render_with(&mut scene, method);
        }
        let width = ring_width_px(&frame);
        eprintln!("{method:?}: ring width {width} px (bind {bind:.1} px)");
        let ok = match method {
            SkinningMethod::Linear => width <= LBS_COLLAPSED_MAX_PX * bind,
            _ => (width - bind).abs() <= WIDTH_TOLERANCE_PX,
        };
        if !ok {
            save_on_failure(&frame, method.short_name());
        }
        assert!(
            ok,
            "{method:?}: ring width {width} px, bind pose {bind:.1} px (LBS must collapse below {:.1} px; DQS and CoR stay within {WIDTH_TOLERANCE_PX} px)",
            LBS_COLLAPSED_MAX_PX * bind
        );
    }
}

/// DQS drawn by the plugin (main pass and, on the wall, its shadow) against the CPU-posed
/// vertices drawn as a plain mesh by Bevy (its own main and shadow passes).
fn dual_quat_image_matches_cpu_posed_mesh() {
    let Some(mut scene) = scene(true) else { return };
    let linear = render_with(&mut scene, SkinningMethod::Linear);
    let gpu = render_with(&mut scene, SkinningMethod::DualQuaternion);
    let cpu = support::cpu_posed_frame(
        &mut scene.app,
        &scene.target,
        SkinningMethod::DualQuaternion,
    );
    let differing = gpu.differing_pixels(&cpu, DIFFERENCE_LEVELS);
    eprintln!("DQS on the GPU against the CPU-posed mesh: {differing} pixels differ by more than {DIFFERENCE_LEVELS} levels");
    if differing > MAX_DIFFERING_PIXELS {
        save_on_failure(&gpu, "dqs-gpu");
        save_on_failure(&cpu, "dqs-cpu");
    }
    assert!(
        differing <= MAX_DIFFERING_PIXELS,
        "{differing} pixels differ (at most {MAX_DIFFERING_PIXELS})"
    );
    // The comparison can see a difference: LBS's collapsed ring and its shadow are far from
    // the CPU's DQS pose.
    let linear_differing = linear.differing_pixels(&cpu, DIFFERENCE_LEVELS);
    eprintln!("LBS on the GPU against the CPU-posed DQS mesh: {linear_differing} pixels differ");
    if std::env::var_os("SKINBLEND_BEVY_SAVE_IMAGES").is_some() {
        save_on_failure(&linear, "lbs-gpu");
        save_on_failure(&gpu, "dqs-gpu");
        save_on_failure(&cpu, "dqs-cpu");
    }
    assert!(
        linear_differing > 10 * MAX_DIFFERING_PIXELS,
        "LBS and the CPU's DQS differ in only {linear_differing} pixels: the comparison is blind"
    );
}

/// Blended drawn by the plugin with the file's blend values (vertex attribute 15; the ring where
/// the joints meet takes half of each method), main pass and shadow, against the CPU-posed
/// vertices drawn by Bevy; LBS against that shows the comparison can see a difference.
fn blended_from_the_file_matches_cpu_posed_mesh() {
    let Some(mut scene) = scene(true) else {
        return;
    };
    let linear = render_with(&mut scene, SkinningMethod::Linear);
    let gpu = render_with(&mut scene, SkinningMethod::Blended);
    {
        let world = scene.app.world_mut();
        let state = world
            .query::<&SkinblendSkinned>()
            .iter(world)
            .next()
            .expect("the plugin skins the rig");
        assert!(
            matches!(
                state.cpu_mesh().blend_values(),
                Some(skinblend::BlendValues::PerVertex(_))
            ),
            "the file's blend values reached the plugin"
        );
    }
    let cpu = support::cpu_posed_frame(&mut scene.app, &scene.target, SkinningMethod::Blended);
    let differing = gpu.differing_pixels(&cpu, DIFFERENCE_LEVELS);
    eprintln!("blended on the GPU against the CPU-posed mesh: {differing} pixels differ by more than {DIFFERENCE_LEVELS} levels");
    if differing > MAX_DIFFERING_PIXELS {
        save_on_failure(&gpu, "blend-gpu");
        save_on_failure(&cpu, "blend-cpu");
    }
    assert!(
        differing <= MAX_DIFFERING_PIXELS,
        "{differing} pixels differ (at most {MAX_DIFFERING_PIXELS})"
    );
    let linear_differing = linear.differing_pixels(&cpu, DIFFERENCE_LEVELS);
    eprintln!(
        "LBS on the GPU against the CPU-posed blended mesh: {linear_differing} pixels differ"
    );
    assert!(
        linear_differing > 10 * MAX_DIFFERING_PIXELS,
        "LBS and the CPU's blended pose differ in only {linear_differing} pixels: the comparison is blind"
    );
}

skinblend_testkit::test_main!(
    twist_180_ring_width_per_method,
    dual_quat_image_matches_cpu_posed_mesh,
    blended_from_the_file_matches_cpu_posed_mesh
);
