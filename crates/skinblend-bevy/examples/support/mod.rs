//! What the examples share: a Bevy app over a file's folder, in a window or headless (frames
//! rendered into an image, for machines without a display).

use std::path::Path;
use std::time::Duration;

use bevy::app::ScheduleRunnerPlugin;
use bevy::asset::RenderAssetUsages;
use bevy::camera::RenderTarget;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat, TextureUsages};
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;

/// The folder of `file` (Bevy's asset folder) and its name in it.
///
/// # Errors
/// A message naming the file when it does not exist or is not a file.
pub fn folder_and_name(file: &Path) -> Result<(String, String), String> {
    let file = file
        .canonicalize()
        .map_err(|error| format!("{}: {error}", file.display()))?;
    match (file.parent(), file.file_name()) {
        (Some(folder), Some(name)) if file.is_file() => Ok((
            folder.display().to_string(),
            name.to_string_lossy().into_owned(),
        )),
        _ => Err(format!("{} is not a file", file.display())),
    }
}

/// An app with Bevy's default plugins over the asset folder `folder`: with a window, or
/// without one (`headless`: frames run back to back and cameras render into images).
pub fn app(folder: String, headless: bool) -> App {
    let asset_plugin = AssetPlugin {
        file_path: folder,
        ..default()
    };
    let mut app = App::new();
    if headless {
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
    app
}

/// A 640 × 360 image for a headless camera to render into.
pub fn image_target(images: &mut Assets<Image>) -> RenderTarget {
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
    RenderTarget::Image(images.add(target).into())
}
