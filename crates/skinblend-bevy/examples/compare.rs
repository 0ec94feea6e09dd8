//! A glTF file side by side with the three methods (left LBS, middle DQS, right CoR), each
//! playing the same animation; `Space` switches to the next animation, `M` cycles every copy's
//! method, `Esc` quits. Without a file it writes and shows skinblend's twist rig.
//!
//! ```text
//! cargo run -p skinblend-bevy --example compare                      # the twist rig
//! cargo run -p skinblend-bevy --example compare -- ../shared/models/Fox/Fox.glb
//! cargo run -p skinblend-bevy --example compare -- --crowd 1000 FILE  # 1,000 copies, DQS
//! cargo run -p skinblend-bevy --example compare -- --crowd 1000 --bevy FILE  # Bevy's LBS
//! ```
//!
//! `--crowd N` lays out N copies with DQS (or, with `--bevy`, Bevy's own skinning) and prints
//! every 120 frames the mean frame time and the CPU time of the plugin's systems per frame
//! (the `SkinblendSystems` sets: take-over, palettes, CPU poses, bounds, upload). `--headless`
//! renders into an image instead of a window (for machines without a display) and
//! `--frames N` stops after N frames.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bevy::app::ScheduleRunnerPlugin;
use bevy::asset::RenderAssetUsages;
use bevy::camera::RenderTarget;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat, TextureUsages};
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use skinblend_bevy::{SkinblendPlugin, SkinblendSystems, SkinningMethod};

/// What the command line asked for.
#[derive(Resource, Debug, Clone)]
struct Options {
    file: PathBuf,
    crowd: Option<usize>,
    bevy_skinning: bool,
    headless: bool,
    frames: Option<u64>,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        file: PathBuf::new(),
        crowd: None,
        bevy_skinning: false,
        headless: false,
        frames: None,
    };
    let mut args = std::env::args().skip(1);
    let mut file = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--crowd" => {
                let n = args.next().ok_or("--crowd needs a count")?;
                options.crowd = Some(n.parse().map_err(|_| format!("--crowd {n}: not a count"))?);
            }
            "--bevy" => options.bevy_skinning = true,
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
    let file = options
        .file
        .canonicalize()
        .unwrap_or_else(|_| options.file.clone());
    let (folder, name) = match (file.parent(), file.file_name()) {
        (Some(folder), Some(name)) => (folder.to_path_buf(), name.to_string_lossy().into_owned()),
        _ => {
            eprintln!("compare: {} is not a file", file.display());
            return std::process::ExitCode::from(2);
        }
    };
    let mut app = App::new();
    let asset_plugin = AssetPlugin {
        file_path: folder.display().to_string(),
        ..default()
    };
    if options.headless {
        app.add_plugins(
            DefaultPlugins
                .set(asset_plugin)
                .set(WindowPlugin {
                    primary_window: None,
                    exit_condition: ExitCondition::DontExit,
                    ..default()
                })
                .disable::<WinitPlugin>(),
        )
        .add_plugins(ScheduleRunnerPlugin::run_loop(Duration::ZERO));
    } else {
        app.add_plugins(DefaultPlugins.set(asset_plugin));
    }
    app.add_plugins(SkinblendPlugin)
        .insert_resource(SceneFile(name))
        .insert_resource(options)
        .init_resource::<Timing>()
        .add_systems(Startup, setup)
        .add_systems(Update, (start_animations, keys, report))
        .add_systems(PostUpdate, start_timer.before(SkinblendSystems::Attach))
        .add_systems(PostUpdate, stop_timer.after(SkinblendSystems::Pose));
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

/// The plugin's CPU time per frame, summed over a report period.
#[derive(Resource, Default)]
struct Timing {
    start: Option<Instant>,
    plugin: Duration,
    frames: u32,
    period_start: Option<Instant>,
    total_frames: u64,
}

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
    let (copies, extent_m): (Vec<(Vec3, Option<SkinningMethod>)>, f32) = match options.crowd {
        None => (
            SkinningMethod::ALL
                .iter()
                .enumerate()
                .map(|(i, &m)| (Vec3::X * (i as f32 - 1.0) * spacing_m, Some(m)))
                .collect(),
            3.0 * spacing_m,
        ),
        Some(n) => {
            let side = (n as f32).sqrt().ceil().max(1.0) as usize;
            let method = (!options.bevy_skinning).then_some(SkinningMethod::DualQuaternion);
            (
                (0..n)
                    .map(|i| {
                        let (x, z) = ((i % side) as f32, (i / side) as f32);
                        (
                            Vec3::new(x - side as f32 / 2.0, 0.0, -z) * spacing_m,
                            method,
                        )
                    })
                    .collect(),
                side as f32 * spacing_m,
            )
        }
    };
    for (position, method) in copies {
        let mut copy = commands.spawn((
            WorldAssetRoot(scene.clone()),
            Transform::from_translation(position),
            Copy,
        ));
        if let Some(method) = method {
            copy.insert(method);
        }
    }
    println!("left to right: LBS, DQS, CoR (Space: next animation, M: cycle methods)");
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
        let mut target = Image::new_uninit(
            Extent3d {
                width: 640,
                height: 360,
                depth_or_array_layers: 1,
            },
            TextureDimension::D2,
            TextureFormat::Rgba8UnormSrgb,
            RenderAssetUsages::RENDER_WORLD,
        );
        target.texture_descriptor.usage |= TextureUsages::RENDER_ATTACHMENT;
        camera.insert(RenderTarget::Image(images.add(target).into()));
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

fn start_timer(mut timing: ResMut<Timing>) {
    timing.start = Some(Instant::now());
}

fn stop_timer(mut timing: ResMut<Timing>) {
    if let Some(start) = timing.start.take() {
        timing.plugin += start.elapsed();
    }
}

/// Every 120 frames: the mean frame time and the plugin's CPU time per frame.
fn report(mut timing: ResMut<Timing>, options: Res<Options>, mut exit: MessageWriter<AppExit>) {
    let now = Instant::now();
    let start = *timing.period_start.get_or_insert(now);
    timing.frames += 1;
    timing.total_frames += 1;
    if timing.frames == 120 {
        let frame_ms = now.duration_since(start).as_secs_f64() * 1e3 / 120.0;
        let plugin_ms = timing.plugin.as_secs_f64() * 1e3 / 120.0;
        let who = if options.bevy_skinning {
            "Bevy's skinning"
        } else {
            "skinblend DQS"
        };
        println!(
            "{who}, {} copies: frame {frame_ms:.2} ms, skinblend systems {plugin_ms:.3} ms per frame",
            options.crowd.unwrap_or(3)
        );
        timing.frames = 0;
        timing.plugin = Duration::ZERO;
        timing.period_start = Some(now);
    }
    if options.frames.is_some_and(|n| timing.total_frames >= n) {
        exit.write(AppExit::Success);
    }
}
