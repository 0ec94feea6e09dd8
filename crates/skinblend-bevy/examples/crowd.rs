//! Many animated characters: N copies of a glTF file (Fox-sized: any skinned, animated file)
//! laid out on a grid, each playing its first animation, skinned by skinblend (DQS unless
//! `--method` says otherwise; `blend`: the file's blend values, else 0.5) or, with `--bevy`, by
//! Bevy's own skinning. Every 120 frames it prints the mean frame time and the time per frame
//! spent in the plugin's systems.
//!
//! ```text
//! cargo run -p skinblend-bevy --release --example crowd -- FILE [--count N] [--bevy]
//!     [--method lbs|dqs|cor|blend] [--cpu-pose] [--headless] [--no-camera] [--frames N]
//! cargo run -p skinblend-bevy --release --example crowd -- path/to/Fox.glb --count 1000
//! ```
//!
//! - `--count N`: characters (default 1,000).
//! - `--bevy`: Bevy's own skinning (linear, in its vertex shader), no `SkinningMethod`.
//! - `--cpu-pose`: also ask every character for a CPU pose (`CpuPose`), to see its cost.
//! - `--headless`: render into an image instead of a window (no display needed).
//! - `--no-camera`: no camera at all: nothing is drawn, the plugin's systems still run for every
//!   character (the plugin's CPU time without the renderer's; Bevy's own skinning does its CPU
//!   work only for what a camera sees, so compare frame times with a camera).
//! - `--frames N`: stop after N frames (the reports cover whole periods of 120).
//!
//! "skinblend systems" is the wall time per frame from just before the plugin's first system
//! set to just after its last (`SkinblendSystems::Attach` to `SkinblendSystems::Pose`, which
//! run after transform propagation and before visibility): every system of the plugin, with
//! its parallel parts; other `PostUpdate` systems without an order against them may run in that
//! time too, so it is an upper bound (with `--bevy` the plugin has nothing to do: what remains
//! is that overlap).

mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bevy::camera::primitives::MeshAabb;
use bevy::camera::visibility::VisibilitySystems;
use bevy::gltf::GltfMesh;
use bevy::prelude::*;
use bevy::transform::TransformSystems;
use skinblend_bevy::{CpuPose, DqBlend, SkinblendPlugin, SkinblendSystems, SkinningMethod};

/// What the command line asked for.
#[derive(Resource, Debug, Clone)]
struct Options {
    file: PathBuf,
    count: usize,
    method: Option<SkinningMethod>,
    cpu_pose: bool,
    headless: bool,
    camera: bool,
    frames: Option<u64>,
}

const USAGE: &str = "usage: crowd FILE [--count N] [--bevy] [--method lbs|dqs|cor|blend] [--cpu-pose] [--headless] [--no-camera] [--frames N]";

fn count(flag: &str, value: Option<String>) -> Result<u64, String> {
    let value = value.ok_or_else(|| format!("{flag} needs a count"))?;
    value
        .parse()
        .map_err(|_| format!("{flag} {value}: not a count"))
}

fn parse() -> Result<Options, String> {
    let mut file = None;
    let mut options = Options {
        file: PathBuf::new(),
        count: 1000,
        method: Some(SkinningMethod::DualQuaternion),
        cpu_pose: false,
        headless: false,
        camera: true,
        frames: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--count" => {
                options.count = usize::try_from(count("--count", args.next())?)
                    .map_err(|_| "--count: too large".to_owned())?;
            }
            "--bevy" => options.method = None,
            "--method" => {
                options.method = Some(match args.next().as_deref() {
                    Some("lbs") => SkinningMethod::Linear,
                    Some("dqs") => SkinningMethod::DualQuaternion,
                    Some("cor") => SkinningMethod::CenterOfRotation,
                    Some("blend") => SkinningMethod::Blended,
                    other => {
                        return Err(format!(
                            "--method {other:?}: expected lbs, dqs, cor or blend"
                        ))
                    }
                });
            }
            "--cpu-pose" => options.cpu_pose = true,
            "--headless" => options.headless = true,
            "--no-camera" => options.camera = false,
            "--frames" => options.frames = Some(count("--frames", args.next())?),
            other if other.starts_with("--") => return Err(format!("unknown option {other}")),
            other => file = Some(PathBuf::from(other)),
        }
    }
    options.file = file.ok_or("no FILE given (a skinned, animated glTF, e.g. Fox.glb)")?;
    Ok(options)
}

fn main() -> std::process::ExitCode {
    let options = match parse() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("crowd: {message}\n{USAGE}");
            return std::process::ExitCode::from(2);
        }
    };
    let (folder, name) = match support::folder_and_name(&options.file) {
        Ok(found) => found,
        Err(message) => {
            eprintln!("crowd: {message}");
            return std::process::ExitCode::from(2);
        }
    };
    let mut app = support::app(folder, options.headless || !options.camera);
    app.add_plugins(SkinblendPlugin)
        .insert_resource(Scene {
            gltf: None,
            name,
            graph: None,
            spawned: false,
        })
        .insert_resource(options)
        .init_resource::<Timing>()
        .add_systems(Startup, load)
        .add_systems(Update, (spawn_when_loaded, play_new_players, report))
        .add_systems(
            PostUpdate,
            start_timer
                .after(TransformSystems::Propagate)
                .before(SkinblendSystems::Attach),
        )
        .add_systems(
            PostUpdate,
            stop_timer
                .after(SkinblendSystems::Pose)
                .before(VisibilitySystems::CheckVisibility),
        );
    app.run();
    std::process::ExitCode::SUCCESS
}

/// The file, its first animation, and whether the crowd is out.
#[derive(Resource)]
struct Scene {
    gltf: Option<Handle<Gltf>>,
    name: String,
    graph: Option<(Handle<AnimationGraph>, AnimationNodeIndex)>,
    spawned: bool,
}

/// The plugin's time per frame, summed over a report period.
#[derive(Resource, Default)]
struct Timing {
    start: Option<Instant>,
    plugin: Duration,
    frames: u32,
    period_start: Option<Instant>,
    total_frames: u64,
}

fn load(mut scene: ResMut<Scene>, assets: Res<AssetServer>) {
    scene.gltf = Some(assets.load(scene.name.clone()));
}

/// The largest extent of the file's meshes in their bind pose (metres, or the file's units).
fn extent(gltf: &Gltf, gltf_meshes: &Assets<GltfMesh>, meshes: &Assets<Mesh>) -> Option<f32> {
    let mut largest: Option<f32> = None;
    for gltf_mesh in gltf.meshes.iter().filter_map(|m| gltf_meshes.get(m)) {
        for primitive in &gltf_mesh.primitives {
            let aabb = meshes.get(&primitive.mesh)?.compute_aabb()?;
            let size = (aabb.half_extents * 2.0).max_element();
            largest = Some(largest.map_or(size, |l| l.max(size)));
        }
    }
    largest
}

/// Once the file and its meshes are loaded: the grid of characters (spaced by 1.5 times the
/// largest mesh extent), a light, and a camera that sees the whole grid.
#[allow(clippy::too_many_arguments)]
fn spawn_when_loaded(
    mut commands: Commands,
    mut scene: ResMut<Scene>,
    options: Res<Options>,
    gltfs: Res<Assets<Gltf>>,
    gltf_meshes: Res<Assets<GltfMesh>>,
    meshes: Res<Assets<Mesh>>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
    mut images: ResMut<Assets<Image>>,
    mut exit: MessageWriter<AppExit>,
    assets: Res<AssetServer>,
) {
    if scene.spawned {
        return;
    }
    if let Some(bevy::asset::LoadState::Failed(error)) =
        scene.gltf.as_ref().map(|h| assets.load_state(h))
    {
        eprintln!("crowd: {error}");
        exit.write(AppExit::error());
        scene.spawned = true;
        return;
    }
    let Some(gltf) = scene.gltf.as_ref().and_then(|h| gltfs.get(h)) else {
        return;
    };
    let Some(size) = extent(gltf, &gltf_meshes, &meshes) else {
        return; // meshes still loading
    };
    let Some(scene_handle) = gltf.scenes.first().cloned() else {
        eprintln!("crowd: {} has no scene", scene.name);
        exit.write(AppExit::error());
        scene.spawned = true;
        return;
    };
    scene.graph = gltf.animations.first().cloned().map(|clip| {
        let (graph, node) = AnimationGraph::from_clip(clip);
        (graphs.add(graph), node)
    });
    scene.spawned = true;
    let spacing = 1.5 * size.max(f32::MIN_POSITIVE);
    let side = (options.count as f32).sqrt().ceil().max(1.0) as usize;
    for i in 0..options.count {
        let (x, z) = ((i % side) as f32, (i / side) as f32);
        let position = Vec3::new(x - (side - 1) as f32 / 2.0, 0.0, -z) * spacing;
        let mut character = commands.spawn((
            WorldAssetRoot(scene_handle.clone()),
            Transform::from_translation(position),
        ));
        if let Some(method) = options.method {
            // Blended's values where the file has none (its `_SKINBLEND_DQ_BLEND` wins).
            character.insert((method, DqBlend(0.5)));
        }
        if options.cpu_pose {
            character.insert(CpuPose);
        }
    }
    let who = match options.method {
        Some(method) => format!("skinblend {}", method.short_name()),
        None => "Bevy's skinning".to_owned(),
    };
    println!(
        "{} characters of {} ({who}{}), spacing {spacing:.2}",
        options.count,
        scene.name,
        if options.cpu_pose { ", CPU pose" } else { "" }
    );
    commands.spawn((
        DirectionalLight::default(),
        Transform::from_xyz(3.0, 8.0, 5.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    if !options.camera {
        return;
    }
    let grid = side as f32 * spacing;
    let mut camera = commands.spawn((
        Camera3d::default(),
        Transform::from_xyz(0.0, grid * 0.5, grid * 0.6)
            .looking_at(Vec3::new(0.0, 0.0, -grid * 0.4), Vec3::Y),
    ));
    if options.headless {
        camera.insert(support::image_target(&mut images));
    }
}

/// Plays the first animation, repeating, on every new animation player.
fn play_new_players(
    mut commands: Commands,
    scene: Res<Scene>,
    mut players: Query<(Entity, &mut AnimationPlayer), Added<AnimationPlayer>>,
) {
    let Some((graph, node)) = scene.graph.clone() else {
        return;
    };
    for (entity, mut player) in &mut players {
        player.play(node).repeat();
        commands
            .entity(entity)
            .insert(AnimationGraphHandle(graph.clone()));
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

/// Every 120 frames once the crowd is out: the mean frame time and the plugin's time per frame.
fn report(
    mut timing: ResMut<Timing>,
    options: Res<Options>,
    scene: Res<Scene>,
    mut exit: MessageWriter<AppExit>,
) {
    timing.total_frames += 1;
    if options.frames.is_some_and(|n| timing.total_frames >= n) {
        exit.write(AppExit::Success);
    }
    if !scene.spawned {
        timing.plugin = Duration::ZERO;
        return;
    }
    let now = Instant::now();
    let Some(start) = timing.period_start else {
        // The clock starts with the crowd out; the next 120 frames make the first report.
        timing.period_start = Some(now);
        timing.plugin = Duration::ZERO;
        timing.frames = 0;
        return;
    };
    timing.frames += 1;
    if timing.frames == 120 {
        let frame_ms = now.duration_since(start).as_secs_f64() * 1e3 / 120.0;
        let plugin_ms = timing.plugin.as_secs_f64() * 1e3 / 120.0;
        println!("frame {frame_ms:.2} ms, skinblend systems {plugin_ms:.3} ms per frame");
        timing.frames = 0;
        timing.plugin = Duration::ZERO;
        timing.period_start = Some(now);
    }
}
