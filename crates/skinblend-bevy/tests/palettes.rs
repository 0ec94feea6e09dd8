//! The palettes the plugin builds from Bevy's `GlobalTransform`s (Fox, loaded by Bevy's own glTF
//! loader and animated by Bevy) against skinblend-gltf's own, within a stated tolerance (no GPU
//! needed: Bevy's renderer is off).

mod support;

use bevy::prelude::*;
use skinblend_bevy::{SkinblendSkinned, SkinningMethod};
use skinblend_gltf::Model;

/// Bevy's skin matrices against skinblend-gltf's palette (both in the mesh's space): per
/// entry, relative to 1 for the 3×3 part and, for the translation, to the largest translation
/// of the skin's inverse bind matrices (how far its joints are from the origin: the size of the
/// terms the translations are summed from; a skin matrix near the identity has a translation
/// near 0 made of such terms). Both chain the same f32 node transforms (Fox: up to 12 deep) in another order
/// (Bevy: affine products; skinblend-gltf: 4×4 products) and invert a matrix (Bevy the mesh's
/// world transform, both the inverse bind matrices come from the file): each product rounds by
/// a few ulps (1.2e-7) of its largest term, so 12 levels and an inverse stay within 1e-5; a
/// wrong order, transform or joint is off by far more (checked below: another time of the clip
/// is more than 100 times the tolerance away).
const PALETTE_REL: f32 = 1e-5;

/// The largest difference between two palettes, as [`PALETTE_REL`] measures it.
fn palette_difference(
    ours: &[skinblend::glam::Mat4],
    theirs: &[skinblend::glam::Mat4],
    translation_scale: f32,
) -> f32 {
    ours.iter()
        .zip(theirs)
        .map(|(a, b)| {
            let rotation = (0..3)
                .map(|c| (a.col(c) - b.col(c)).abs().max_element())
                .fold(0f32, f32::max);
            let translation = (a.w_axis - b.w_axis).abs().max_element() / translation_scale;
            rotation.max(translation)
        })
        .fold(0f32, f32::max)
}

/// The palettes the plugin builds from Bevy's `GlobalTransform`s equal skinblend-gltf's own
/// (`Model::palette` in the mesh's space) within [`PALETTE_REL`]: Fox at its rest pose and
/// paused at five times of its run clip, with Bevy's own glTF loader and animation player.
fn palettes_from_bevy_transforms_match_skinblend_gltf() {
    let Some(dir) = skinblend_testkit::models_dir() else {
        return;
    };
    let model = Model::open(dir.join("Fox/Fox.glb")).expect("Fox loads in skinblend-gltf");
    let node = model.skinned_nodes()[0];
    let skin = model.nodes()[node]
        .skin
        .expect("Fox's skinned node has a skin");
    let theirs = |pose: &skinblend_gltf::Pose| -> Vec<skinblend::glam::Mat4> {
        let mesh_from_world = pose.world_from_node[node].inverse();
        model
            .palette(pose, skin)
            .expect("palette")
            .iter()
            .map(|m| mesh_from_world * *m)
            .collect()
    };
    let translation_scale = model.skins()[skin]
        .joint_from_bind
        .iter()
        .fold(1f32, |m, p| m.max(p.w_axis.truncate().abs().max_element()));
    let ours = |app: &mut App| -> Vec<skinblend::glam::Mat4> {
        let world = app.world_mut();
        let mut states = world.query::<&SkinblendSkinned>();
        let state = states.iter(world).next().expect("the plugin took Fox");
        state.skin_matrices().to_vec()
    };
    // Fox spawned in `app` with the plugin (and Bevy's animation player set up where `animate`).
    let spawn = |app: &mut App| {
        let server = app.world().resource::<AssetServer>().clone();
        app.world_mut().spawn((
            WorldAssetRoot(server.load(GltfAssetLabel::Scene(0).from_asset("Fox/Fox.glb"))),
            SkinningMethod::Linear,
        ));
        assert!(
            support::step_until(app, |app| {
                let world = app.world_mut();
                world
                    .query::<&SkinblendSkinned>()
                    .iter(world)
                    .next()
                    .is_some()
            }),
            "the plugin never took Fox"
        );
        app.update();
    };
    let mut app = support::app_without_renderer(&dir);
    spawn(&mut app);
    let rest = palette_difference(
        &ours(&mut app),
        &theirs(&model.rest_pose()),
        translation_scale,
    );
    eprintln!("rest pose: palettes differ by {rest:e}");
    assert!(
        rest <= PALETTE_REL,
        "rest pose: palettes differ by {rest:e} (at most {PALETTE_REL:e})"
    );

    let mut app = support::app_without_renderer(&dir);
    let run = support::fox_run_graph(&mut app);
    let animation_node = run.node;
    app.world_mut().insert_resource(run);
    app.add_systems(Update, support::play_when_ready);
    spawn(&mut app);
    let player = {
        let world = app.world_mut();
        let mut players = world.query_filtered::<Entity, With<AnimationPlayer>>();
        players.iter(world).next().expect("Fox's animation player")
    };
    let animation = &model.animations()[support::FOX_RUN];
    let mut previous: Option<Vec<skinblend::glam::Mat4>> = None;
    for i in 0..5 {
        let time_s = animation.start_s + (animation.end_s - animation.start_s) * i as f32 / 5.0;
        {
            let mut player = app
                .world_mut()
                .get_mut::<AnimationPlayer>(player)
                .expect("player");
            player.play(animation_node).seek_to(time_s).pause();
        }
        app.update();
        app.update();
        let bevy = ours(&mut app);
        let skinblend = theirs(&model.pose(Some(support::FOX_RUN), time_s).expect("pose"));
        let difference = palette_difference(&bevy, &skinblend, translation_scale);
        eprintln!("run at {time_s:.3} s: palettes differ by {difference:e}");
        assert!(
            difference <= PALETTE_REL,
            "run at {time_s} s: palettes differ by {difference:e} (at most {PALETTE_REL:e})"
        );
        if let Some(previous) = previous.replace(bevy.clone()) {
            let apart = palette_difference(&previous, &bevy, translation_scale);
            assert!(
                apart > 100.0 * PALETTE_REL,
                "two times of the run are only {apart:e} apart: the comparison is blind"
            );
        }
    }
}

skinblend_testkit::test_main!(palettes_from_bevy_transforms_match_skinblend_gltf);
