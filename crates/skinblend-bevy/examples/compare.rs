//! A glTF file side by side with the four methods (left to right LBS, DQS, CoR, blended: the
//! file's `_SKINBLEND_DQ_BLEND`, else 0.5 everywhere), each playing the same animation; `Space` switches to the next animation, `M` cycles every copy's
//! method, `Esc` quits. Without a file it writes and shows skinblend's twist rig.
//!
//! ```text
//! cargo run -p skinblend-bevy --example compare                      # the twist rig
//! cargo run -p skinblend-bevy --example compare -- ../shared/models/Fox/Fox.glb
//! ```
//!
//! `--headless` renders into an image instead of a window (for machines without a display) and
//! `--frames N` stops after N frames. Many characters and their cost: the `crowd` example.

mod support;

use std::path::PathBuf;

use bevy::prelude::*;
use skinblend_bevy::{DqBlend, SkinblendPlugin, SkinningMethod};

/// What the command line asked for.
#[derive(Resource, Debug, Clone)]
struct Options {
    file: PathBuf,
    headless: bool,
    frames: Option<u64>,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        file: PathBuf::new(),
        headless: false,
        frames: None,
    };
    let mut args = std::env::args().skip(1);
    let mut file = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--headless" => options.headless = true,
            "--frames" => {
                let n = args.next().ok_or("--frames needs a count")?;
                options.frames = Some(
                    n.parse()
                        .map_err(|_| format!("--frames {n}: not a count"))?,
                );
            }
            other if other.starts_with("--") => return Err(format!("unknown option {other}")),
            other => file = Some(PathBuf::from(other)),
        }
    }
    options.file = match file {
        Some(file) => file,
        None => write_twist_rig()?,
    };
    Ok(options)
}

/// skinblend's twist rig as a GLB in the temporary folder.
fn write_twist_rig() -> Result<PathBuf, String> {
    let path = std::env::temp_dir().join("skinblend-bevy-twist.glb");
    let glb = skinblend_gltf::rigs::to_glb(&skinblend::fixtures::twist_coarse())
        .map_err(|e| e.to_string())?;
    std::fs::write(&path, glb).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

fn main() -> std::process::ExitCode {
    let options = match parse() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("compare: {message}");
            return std::process::ExitCode::from(2);
        }
    };
    let (folder, name) = match support::folder_and_name(&options.file) {
        Ok(found) => found,
        Err(message) => {
            eprintln!("compare: {message}");
            return std::process::ExitCode::from(2);
        }
    };
    let mut app = support::app(folder, options.headless);
    app.add_plugins(SkinblendPlugin)
        .insert_resource(SceneFile(name))
        .insert_resource(options)
        .init_resource::<FrameCount>()
        .add_systems(Startup, setup)
        .add_systems(Update, (start_animations, keys, stop_after_frames));
    app.run();
    std::process::ExitCode::SUCCESS
}

#[derive(Resource)]
struct SceneFile(String);

/// The animations of the file and the one playing.
#[derive(Resource)]
struct Animations {
    gltf: Handle<Gltf>,
    graph: Option<Handle<AnimationGraph>>,
    nodes: Vec<AnimationNodeIndex>,
    playing: usize,
}

/// Frames run so far (for `--frames`).
#[derive(Resource, Default)]
struct FrameCount(u64);

/// Marks a copy of the scene (for the method key).
#[derive(Component)]
struct Copy;

fn setup(
    mut commands: Commands,
    assets: Res<AssetServer>,
    file: Res<SceneFile>,
    options: Res<Options>,
    mut images: ResMut<Assets<Image>>,
) {
    let scene = assets.load(GltfAssetLabel::Scene(0).from_asset(file.0.clone()));
    commands.insert_resource(Animations {
        gltf: assets.load(file.0.clone()),
        graph: None,
        nodes: Vec::new(),
        playing: 0,
    });
    let spacing_m = 2.0;
    let extent_m = 4.0 * spacing_m;
    let middle = (SkinningMethod::ALL.len() as f32 - 1.0) / 2.0;
    let copies = SkinningMethod::ALL
        .iter()
        .enumerate()
        .map(|(i, &m)| (Vec3::X * (i as f32 - middle) * spacing_m, m));
    for (position, method) in copies {
        commands.spawn((
            WorldAssetRoot(scene.clone()),
            Transform::from_translation(position),
            Copy,
            method,
            // Blended's values where the file has none (its `_SKINBLEND_DQ_BLEND` wins).
            DqBlend(0.5),
        ));
    }
    let names: Vec<&str> = SkinningMethod::ALL.iter().map(|m| m.short_name()).collect();
    println!(
        "left to right: {} (Space: next animation, M: cycle methods)",
        names.join(", ")
    );
    commands.spawn((
        DirectionalLight {
            shadow_maps_enabled: true,
            ..default()
        },
        Transform::from_xyz(3.0, 8.0, 5.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    let mut camera = commands.spawn((
        Camera3d::default(),
        Transform::from_xyz(0.0, extent_m * 0.4, extent_m * 0.9)
            .looking_at(Vec3::new(0.0, 0.8, 0.0), Vec3::Y),
    ));
    if options.headless {
        camera.insert(support::image_target(&mut images));
    }
}

/// Builds the animation graph once the file is loaded and plays the current clip on every
/// new animation player.
fn start_animations(
    mut commands: Commands,
    mut animations: ResMut<Animations>,
    gltfs: Res<Assets<Gltf>>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
    mut players: Query<(Entity, &mut AnimationPlayer), Added<AnimationPlayer>>,
) {
    if animations.graph.is_none() {
        let Some(gltf) = gltfs.get(&animations.gltf) else {
            return;
        };
        let (graph, nodes) = AnimationGraph::from_clips(gltf.animations.iter().cloned());
        animations.nodes = nodes;
        animations.graph = Some(graphs.add(graph));
    }
    let (Some(graph), Some(&node)) = (
        animations.graph.clone(),
        animations.nodes.get(animations.playing),
    ) else {
        return;
    };
    for (entity, mut player) in &mut players {
        player.play(node).repeat();
        commands
            .entity(entity)
            .insert(AnimationGraphHandle(graph.clone()));
    }
}

fn keys(
    input: Res<ButtonInput<KeyCode>>,
    mut animations: ResMut<Animations>,
    mut players: Query<&mut AnimationPlayer>,
    mut copies: Query<&mut SkinningMethod, With<Copy>>,
    mut exit: MessageWriter<AppExit>,
) {
    if input.just_pressed(KeyCode::Escape) {
        exit.write(AppExit::Success);
    }
    if input.just_pressed(KeyCode::Space) && !animations.nodes.is_empty() {
        animations.playing = (animations.playing + 1) % animations.nodes.len();
        let node = animations.nodes[animations.playing];
        for mut player in &mut players {
            player.stop_all();
            player.play(node).repeat();
        }
        println!("animation {}", animations.playing);
    }
    if input.just_pressed(KeyCode::KeyM) {
        for mut method in &mut copies {
            let next = (SkinningMethod::ALL
                .iter()
                .position(|m| *m == *method)
                .unwrap_or(0)
                + 1)
                % 3;
            *method = SkinningMethod::ALL[next];
        }
    }
}

/// Stops the app after `--frames` frames.
fn stop_after_frames(
    mut count: ResMut<FrameCount>,
    options: Res<Options>,
    mut exit: MessageWriter<AppExit>,
) {
    count.0 += 1;
    if options.frames.is_some_and(|n| count.0 >= n) {
        exit.write(AppExit::Success);
    }
}
