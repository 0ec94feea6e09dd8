//! Everything the viewer's server answers with about the model ([`Viewer`]): made once at start
//! (the shown primitives, `/api/model`, `/api/mesh`, the shaders), per request (the palettes of
//! a pose, the colour maps) and in the background (centers of rotation, metrics).

use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use glam::Vec3;
use skinblend::{prepare, Method, SkinOptions};
use skinblend_gltf::{Model, SceneOptions, SceneSkinner};
use skinblend_gpu::{export_shader, GpuPalette, ShaderLanguage};

use super::background::{self, Background};
use super::colors::{ColorMapKind, ColorSkinners, Colors};
use super::layout::layout;
use super::primitives::Shown;

/// Everything the server answers with, made once at start.
pub struct Viewer {
    model: &'static Model,
    /// The file as the command line named it.
    pub shown: String,
    methods: Vec<Method>,
    /// Blended's blend value for primitives the file gives none (`--dq-blend`).
    dq_blend: Option<f32>,
    /// The primitives the page shows and their skins.
    parts: Shown,
    /// `/api/model`.
    pub model_json: String,
    /// `/api/mesh`.
    pub mesh_bytes: Vec<u8>,
    /// Per method name, the GLSL ES 3.00 source of `skinblend shaders --lang glsl-es`.
    pub shaders: Vec<(&'static str, String)>,
    /// The background work's state.
    pub background: Arc<Mutex<Background>>,
    /// The scene skinners of the colour maps.
    skinners: ColorSkinners,
}

impl Viewer {
    /// Checks that the page can show `model` with `methods` (skinned triangles, at most four
    /// influences per vertex, palettes that fit the shaders' uniform blocks), lays out its
    /// data and starts the background work.
    pub fn new(
        model: &'static Model,
        shown: &str,
        methods: &[Method],
        dq_blend: Option<f32>,
    ) -> Result<Self> {
        if methods.is_empty() {
            bail!("no method to show");
        }
        let parts = Shown::find(model, methods)?;
        let mut shaders = Vec::new();
        for &method in methods {
            let shader = export_shader(ShaderLanguage::GlslEs, method)?;
            shaders.push((method.name(), shader.source));
        }
        let mut viewer = Self {
            model,
            shown: shown.to_owned(),
            methods: methods.to_vec(),
            dq_blend,
            parts,
            model_json: String::new(),
            mesh_bytes: Vec::new(),
            shaders,
            skinners: ColorSkinners::default(),
            background: Arc::new(Mutex::new(Background {
                metrics: vec![None; model.animations().len()],
                ..Background::default()
            })),
        };
        // The first frame's palettes must prepare: a broken pose is the command's error.
        let first = if model.animations().is_empty() {
            None
        } else {
            Some(0)
        };
        let start_s = model.animations().first().map_or(0.0, |a| a.start_s);
        viewer.pose_bytes(first, start_s)?;
        let bounds = viewer.bounds(first, start_s)?;
        let layout = layout(model, shown, (methods, dq_blend), &viewer.parts, &bounds)?;
        viewer.model_json = layout.model_json;
        viewer.mesh_bytes = layout.mesh_bytes;
        let parts = viewer
            .parts
            .primitives
            .iter()
            .map(|p| (p.mesh, p.primitive))
            .collect();
        background::start(
            model,
            viewer.shown.clone(),
            viewer.methods.clone(),
            dq_blend,
            parts,
            Arc::clone(&viewer.background),
        );
        Ok(viewer)
    }

    /// The skinned scene's box at the given pose (the CPU's LBS through the scene skinner),
    /// for the page's camera.
    fn bounds(&self, animation: Option<usize>, time_s: f32) -> Result<(Vec3, Vec3)> {
        let options = SceneOptions {
            normals: false,
            tangents: false,
            ..SceneOptions::with_method(Method::Linear)
        };
        let mut skinner = SceneSkinner::cpu(self.model, options)?;
        let pose = match animation {
            Some(a) => self.model.pose(Some(a), time_s)?,
            None => self.model.rest_pose(),
        };
        let posed = skinner.skin(&pose)?;
        let mut min = Vec3::splat(f32::INFINITY);
        let mut max = Vec3::splat(f32::NEG_INFINITY);
        for primitive in posed.iter().flat_map(|node| &node.primitives) {
            for &p in &primitive.positions {
                min = min.min(p);
                max = max.max(p);
            }
        }
        if !(min.is_finite() && max.is_finite()) {
            bail!("the skinned scene has no finite vertex to frame");
        }
        Ok((min, max))
    }

    /// How many animations the file has (`/api/pose?animation=INDEX` takes 0 to this - 1).
    pub fn animation_count(&self) -> usize {
        self.model.animations().len()
    }

    /// The palettes at `time_s` of `animation` (`None`: the rest pose) for every skin, then
    /// every method in order: each the joints' entries of the method's GLSL ES uniform block
    /// (skinblend_gpu's palette layout, [`GpuPalette::bytes`]); the page pads the block.
    pub fn pose_bytes(&self, animation: Option<usize>, time_s: f32) -> Result<Vec<u8>> {
        let pose = match animation {
            Some(a) if a >= self.model.animations().len() => {
                bail!(
                    "animation {a}: the file has {}",
                    self.model.animations().len()
                )
            }
            Some(a) => self.model.pose(Some(a), time_s)?,
            None => self.model.rest_pose(),
        };
        let mut bytes = Vec::new();
        for &s in &self.parts.skins {
            let palette = self.model.palette(&pose, s)?;
            for &method in &self.methods {
                let options = SkinOptions {
                    method,
                    ..SkinOptions::default()
                };
                let prepared = prepare(
                    &palette,
                    Some(&self.model.skins()[s].joint_centers),
                    &options,
                )
                .with_context(|| format!("skins[{s}] at {time_s} s ({method})"))?;
                let gpu = GpuPalette::from_prepared(&prepared, None)?;
                bytes.extend_from_slice(gpu.bytes());
            }
        }
        Ok(bytes)
    }

    /// The colour map `kind` of every method at `time_s` of `animation` (`None`: the rest
    /// pose), skinned on the CPU by the scene skinner; `None` until the centers of rotation are
    /// known.
    pub fn colors(
        &self,
        animation: Option<usize>,
        time_s: f32,
        kind: ColorMapKind,
    ) -> Result<Option<Colors>> {
        let Some(model) = background::lock(&self.background).with_centers else {
            return Ok(None);
        };
        self.skinners
            .colors(
                model,
                (&self.methods, self.dq_blend),
                &self.parts.primitives,
                animation,
                time_s,
                kind,
            )
            .map(Some)
    }
}
