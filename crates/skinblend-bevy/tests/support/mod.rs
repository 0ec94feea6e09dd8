//! Headless Bevy apps for the plugin's tests: Bevy's own plugins without a window, with a
//! renderer (pipelines compiled synchronously, an image render target, frames stepped by the
//! test, screenshots read back into memory; skips, or fails under `SKINBLEND_REQUIRE_GPU=1`,
//! where there is no Vulkan adapter) or without one (the plugin's CPU side).
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use bevy::app::PluginGroupBuilder;
use bevy::asset::RenderAssetUsages;
use bevy::camera::RenderTarget;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::image::Image;
use bevy::prelude::*;
use bevy::render::render_resource::{
    Extent3d, PollType, TextureDimension, TextureFormat, TextureUsages,
};
use bevy::render::renderer::RenderDevice;
use bevy::render::settings::WgpuSettings;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::render::RenderPlugin;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use skinblend_bevy::{
    CpuPoseNormals, PosedMesh, SkinblendMaterial, SkinblendPlugin, SkinblendSkinned, SkinningMethod,
};

/// Whether a Vulkan adapter is there; skips the calling test (or fails it where the GPU is
/// required) when not. Bevy's renderer panics without one, so the test asks wgpu first.
pub fn has_gpu() -> bool {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    match bevy::tasks::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())) {
        Ok(_) => true,
        Err(error) => {
            skinblend_testkit::skip_without_gpu(error);
            false
        }
    }
}

/// Bevy's default plugins for a test: no window, assets from `assets`; with `renderer`, pipelines
/// compiled synchronously (a Vulkan adapter is needed: see [`has_gpu`]), else no renderer at
/// all (Bevy's `WgpuSettings { backends: None }`: the plugin's CPU side only).
pub fn test_plugins(assets: &Path, renderer: bool) -> PluginGroupBuilder {
    let render = if renderer {
        RenderPlugin {
            synchronous_pipeline_compilation: true,
            ..default()
        }
    } else {
        RenderPlugin {
            render_creation: WgpuSettings {
                backends: None,
                ..default()
            }
            .into(),
            ..default()
        }
    };
    DefaultPlugins
        .set(WindowPlugin {
            primary_window: None,
            exit_condition: ExitCondition::DontExit,
            ..default()
        })
        .set(render)
        .set(AssetPlugin {
            file_path: assets.display().to_string(),
            ..default()
        })
        .disable::<WinitPlugin>()
}

/// An app of `plugins` with the plugin, finished and ready to step.
pub fn app_with(plugins: PluginGroupBuilder) -> App {
    let mut app = App::new();
    app.add_plugins(plugins).add_plugins(SkinblendPlugin);
    app.finish();
    app.cleanup();
    app
}

/// A headless app over `assets` (the asset folder) that renders, with the plugin, stepped by
/// [`step`].
pub fn app(assets: &Path) -> App {
    app_with(test_plugins(assets, true))
}

/// A headless app over `assets` without a renderer, with the plugin.
pub fn app_without_renderer(assets: &Path) -> App {
    app_with(test_plugins(assets, false))
}

/// Updates `app` until `done` (at most 2,000 frames); false when it never was.
pub fn step_until(app: &mut App, mut done: impl FnMut(&mut App) -> bool) -> bool {
    for _ in 0..2000 {
        app.update();
        if done(app) {
            return true;
        }
    }
    false
}

/// Spawns the scene of `file` (in the app's asset folder) with `SkinningMethod::Linear` and
/// `CpuPoseNormals`, and steps (at most 600 frames) until the plugin has posed it twice;
/// returns the scene's root.
pub fn spawn_posed_scene(app: &mut App, file: &str) -> Entity {
    let scene = app
        .world()
        .resource::<AssetServer>()
        .load(GltfAssetLabel::Scene(0).from_asset(file.to_owned()));
    let root = app
        .world_mut()
        .spawn((
            WorldAssetRoot(scene),
            SkinningMethod::Linear,
            CpuPoseNormals,
        ))
        .id();
    for _ in 0..600 {
        step(app);
        let world = app.world_mut();
        if world
            .query::<&PosedMesh>()
            .iter(world)
            .any(|p| p.frames_posed() >= 2)
        {
            break;
        }
    }
    root
}

/// One frame, then waits for the GPU.
pub fn step(app: &mut App) {
    app.update();
    let _ = app
        .world()
        .resource::<RenderDevice>()
        .wgpu_device()
        .poll(PollType::Wait {
            submission_index: None,
            timeout: None,
        });
}

/// An RGBA8 (sRGB) render target of `size_px` × `size_px`.
pub fn render_target(app: &mut App, size_px: u32) -> Handle<Image> {
    let mut target = Image::new_uninit(
        Extent3d {
            width: size_px,
            height: size_px,
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::RENDER_WORLD,
    );
    target.texture_descriptor.usage |= TextureUsages::RENDER_ATTACHMENT | TextureUsages::COPY_SRC;
    app.world_mut().resource_mut::<Assets<Image>>().add(target)
}

/// An orthographic camera rendering into `target`, `view_height_m` metres tall, at `eye`
/// looking at `center` (+Y up), no tonemapping (so pixel values are plain), black background.
pub fn spawn_camera(
    app: &mut App,
    target: &Handle<Image>,
    eye: Vec3,
    center: Vec3,
    view_height_m: f32,
) {
    app.world_mut().spawn((
        Camera3d::default(),
        Camera {
            clear_color: ClearColorConfig::Custom(Color::BLACK),
            ..default()
        },
        RenderTarget::Image(target.clone().into()),
        Projection::Orthographic(OrthographicProjection {
            scaling_mode: bevy::camera::ScalingMode::Fixed {
                width: view_height_m,
                height: view_height_m,
            },
            ..OrthographicProjection::default_3d()
        }),
        Tonemapping::None,
        Transform::from_translation(eye).looking_at(center, Vec3::Y),
    ));
}

/// A captured frame: width, height, RGBA8 rows top to bottom.
#[derive(Debug, Clone)]
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Frame {
    /// Whether pixel (x, y) is not the black background (any channel above `threshold`).
    pub fn covered(&self, x: u32, y: u32, threshold: u8) -> bool {
        let i = ((y * self.width + x) * 4) as usize;
        self.rgba[i..i + 3].iter().any(|&c| c > threshold)
    }

    /// Covered pixels in row `y`.
    pub fn row_coverage(&self, y: u32, threshold: u8) -> u32 {
        (0..self.width)
            .filter(|&x| self.covered(x, y, threshold))
            .count() as u32
    }

    /// Covered pixels in all.
    pub fn coverage(&self, threshold: u8) -> u32 {
        (0..self.height)
            .map(|y| self.row_coverage(y, threshold))
            .sum()
    }

    /// Pixels whose largest channel difference from `other` is above `levels`.
    pub fn differing_pixels(&self, other: &Frame, levels: u8) -> u32 {
        self.rgba
            .chunks_exact(4)
            .zip(other.rgba.chunks_exact(4))
            .filter(|(a, b)| {
                a.iter()
                    .zip(b.iter())
                    .take(3)
                    .any(|(&x, &y)| x.abs_diff(y) > levels)
            })
            .count() as u32
    }

    /// Writes the frame as a PNG (for a failing test's artefacts).
    pub fn save(&self, path: &Path) {
        let image = Image::new(
            Extent3d {
                width: self.width,
                height: self.height,
                depth_or_array_layers: 1,
            },
            TextureDimension::D2,
            self.rgba.clone(),
            TextureFormat::Rgba8UnormSrgb,
            RenderAssetUsages::MAIN_WORLD,
        );
        if let Ok(dynamic) = image.try_into_dynamic() {
            let _ = dynamic.to_rgba8().save(path);
        }
    }
}

/// Takes a screenshot of `target` and steps frames until it arrives (at most `max_frames`).
pub fn capture(app: &mut App, target: &Handle<Image>, max_frames: usize) -> Option<Frame> {
    let slot: Arc<Mutex<Option<Frame>>> = Arc::default();
    let sink = slot.clone();
    app.world_mut()
        .spawn(Screenshot::image(target.clone()))
        .observe(move |captured: On<ScreenshotCaptured>| {
            let image: &Image = &captured.image;
            let size = image.size();
            if let Some(data) = image.data.as_ref() {
                if let Ok(mut slot) = sink.lock() {
                    *slot = Some(Frame {
                        width: size.x,
                        height: size.y,
                        rgba: data.clone(),
                    });
                }
            }
        });
    for _ in 0..max_frames {
        step(app);
        if let Some(frame) = slot.lock().ok().and_then(|mut s| s.take()) {
            return Some(frame);
        }
    }
    None
}

/// Hides the (one) skinned entity, draws in its place a plain mesh of the vertices the plugin
/// posed on the CPU this frame (positions and normals, no skinning, the same
/// `StandardMaterial` and transform), and captures it.
pub fn cpu_posed_frame(app: &mut App, target: &Handle<Image>, method: SkinningMethod) -> Frame {
    let world = app.world_mut();
    let (entity, posed, mesh3d, material, transform) = world
        .query_filtered::<(
            Entity,
            &PosedMesh,
            &Mesh3d,
            &MeshMaterial3d<SkinblendMaterial>,
            &GlobalTransform,
        ), With<SkinblendSkinned>>()
        .iter(world)
        .map(|(e, p, m, mat, t)| (e, p.clone(), m.0.clone(), mat.0.clone(), *t))
        .next()
        .expect("a skinned entity");
    assert_eq!(
        posed.method(),
        Some(method),
        "the CPU pose is of the method drawn"
    );
    let base = world
        .resource::<Assets<SkinblendMaterial>>()
        .get(&material)
        .map(|m| m.base.clone())
        .expect("the plugin's material");
    let render_mesh = world
        .resource::<Assets<Mesh>>()
        .get(&mesh3d)
        .cloned()
        .expect("render mesh");
    let mut cpu_mesh = Mesh::new(
        render_mesh.primitive_topology(),
        RenderAssetUsages::default(),
    );
    cpu_mesh.insert_attribute(Mesh::ATTRIBUTE_POSITION, posed.positions().to_vec());
    if let Some(normals) = posed.normals() {
        cpu_mesh.insert_attribute(Mesh::ATTRIBUTE_NORMAL, normals.to_vec());
    }
    if let Some(uvs) = render_mesh.attribute(Mesh::ATTRIBUTE_UV_0) {
        cpu_mesh.insert_attribute(Mesh::ATTRIBUTE_UV_0, uvs.clone());
    }
    if let Some(indices) = render_mesh.indices() {
        cpu_mesh.insert_indices(indices.clone());
    }
    let cpu_mesh = world.resource_mut::<Assets<Mesh>>().add(cpu_mesh);
    let base = world.resource_mut::<Assets<StandardMaterial>>().add(base);
    world.entity_mut(entity).insert(Visibility::Hidden);
    world.spawn((
        Mesh3d(cpu_mesh),
        MeshMaterial3d(base),
        Transform::from_matrix(transform.to_matrix()),
    ));
    step(app);
    capture(app, target, 60).expect("a screenshot")
}

/// Fox's run clip: its animation index.
pub const FOX_RUN: usize = 2;

/// Fox's run clip as an animation graph, once Bevy has loaded the file.
pub fn fox_run_graph(app: &mut App) -> FoxAnimation {
    let server = app.world().resource::<AssetServer>().clone();
    let gltf: Handle<Gltf> = server.load("Fox/Fox.glb");
    assert!(
        step_until(app, |app| app
            .world()
            .resource::<Assets<Gltf>>()
            .contains(&gltf)),
        "Fox did not load"
    );
    let clip = app
        .world()
        .resource::<Assets<Gltf>>()
        .get(&gltf)
        .and_then(|g| g.animations.get(FOX_RUN).cloned())
        .expect("Fox's run clip");
    let (graph, node) = AnimationGraph::from_clip(clip);
    let graph = app
        .world_mut()
        .resource_mut::<Assets<AnimationGraph>>()
        .add(graph);
    FoxAnimation { graph, node }
}

#[derive(Resource)]
pub struct FoxAnimation {
    pub graph: Handle<AnimationGraph>,
    pub node: AnimationNodeIndex,
}

pub fn play_when_ready(
    mut commands: Commands,
    animation: Res<FoxAnimation>,
    mut players: Query<(Entity, &mut AnimationPlayer), Added<AnimationPlayer>>,
) {
    for (entity, mut player) in &mut players {
        player.play(animation.node).repeat();
        commands
            .entity(entity)
            .insert(AnimationGraphHandle(animation.graph.clone()));
    }
}
