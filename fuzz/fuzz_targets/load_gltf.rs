//! `skinblend_gltf::Model::from_bytes` on arbitrary `.glb` / `.gltf` bytes, then everything
//! downstream of a successful load: the info summary, animation sampling, poses, palettes,
//! morph targets, skinning every skinned node with every method (SIMD and scalar), and export
//! to GLB, glTF and OBJ in memory (and loading the exported GLB again).
//!
//! Property: no panic, whatever the bytes; errors are fine.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skinblend::{Method, SkinOptions};
use skinblend_gltf::{export, info, morphed, sample, ChannelPath, Model};

/// Larger inputs are skipped: the work per input must stay bounded.
const MAX_INPUT_BYTES: usize = 1 << 20;

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_INPUT_BYTES {
        return;
    }
    let Ok(model) = Model::from_bytes(data, None) else {
        return;
    };
    exercise(&model);
});

fn exercise(model: &Model) {
    if let Ok(summary) = info::summary(model) {
        let _ = info::render_text(&summary);
    }
    let _ = model.find_animation("0");
    let _ = model.find_animation("walk");

    // Every channel's sampler at the keys' ends, between and beyond.
    for animation in model.animations() {
        let (start, end) = (animation.start_s, animation.end_s);
        let times = [start - 1.0, start, 0.5 * (start + end), end, end + 1.0];
        for channel in &animation.channels {
            let Some(sampler) = animation.samplers.get(channel.sampler) else {
                continue;
            };
            let mut out = vec![0.0; sampler.width];
            let rotation = channel.path == ChannelPath::Rotation;
            for &t in &times {
                sample(sampler, t, rotation, &mut out);
            }
        }
    }

    for skin in 0..model.skins().len() {
        let _ = model.bind_palette(skin);
    }

    // The rest pose, then each animation (at most a few) at its start, middle and end.
    let mut poses = vec![model.rest_pose()];
    for (a, animation) in model.animations().iter().enumerate().take(4) {
        let middle = 0.5 * (animation.start_s + animation.end_s);
        for t in [animation.start_s, middle, animation.end_s + 1.0] {
            if let Ok(pose) = model.pose(Some(a), t) {
                poses.push(pose);
            }
        }
    }
    let _ = model.pose(Some(model.animations().len()), 0.0);
    let _ = model.pose(None, f32::NAN);

    for (p, pose) in poses.iter().enumerate() {
        for skin in 0..model.skins().len() {
            let _ = model.palette(pose, skin);
        }
        for &n in model.order() {
            let Some(mesh) = model.nodes()[n].mesh.and_then(|m| model.meshes().get(m)) else {
                continue;
            };
            for primitive in &mesh.primitives {
                let _ = morphed(primitive, &pose.weights[n]);
            }
        }
        for (m, method) in Method::ALL.into_iter().enumerate() {
            let options = SkinOptions {
                method,
                simd: (p + m) % 2 == 0,
                ..SkinOptions::default()
            };
            let Ok(posed) = model.skin_scene(pose, &options) else {
                continue;
            };
            let _ = export::to_obj(model, pose, &posed);
            if p == 0 && m == 0 {
                let _ = export::to_gltf(model, pose, &posed);
                if let Ok(glb) = export::to_glb(model, pose, &posed) {
                    let _ = Model::from_bytes(&glb, None);
                }
            }
        }
    }
    let _ = "no such method".parse::<Method>();
}
