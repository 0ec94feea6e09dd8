//! What the viewer serves about the model: its description (`/api/model`), the bind-pose
//! vertex data (`/api/mesh`), the palettes of a pose (`/api/pose`), and what is computed once in
//! the background (centers of rotation, `compare`'s per-frame metrics).
//!
//! One file, a little over 600 lines, on purpose: every route reads the one `Viewer` state
//! and its background jobs, so splitting it would spread one lock discipline over several files.

use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use glam::Vec3;
use serde_json::{json, Value};
use skinblend::cor::CorOptions;
use skinblend::{prepare, CpuBackend, Method, SkinOptions};
use skinblend_gltf::{Model, SceneOptions, SceneSkinner};
use skinblend_gpu::shaders::{palette_entry_bytes, uniform_palette_joints};
use skinblend_gpu::{export_shader, gpu_rotation_centers, GpuPalette, ShaderLanguage};
use skinblend_report::color::{self, ColorMap};
use skinblend_report::compare::{self, CompareOptions};
use skinblend_report::evidence::{area_change_map, method_label, method_style};

/// Influences per vertex the GLSL ES functions take (`uvec4` joints, `vec4` weights).
const SHADER_INFLUENCES: usize = 4;

/// Frames of `compare`'s per-frame metrics per animation: the report's default
/// (`skinblend compare --frames`), enough for a smooth curve over a clip.
pub const METRIC_FRAMES: usize = 48;

/// One skinned primitive with triangles, as the page draws it.
#[derive(Debug)]
struct ViewPrimitive {
    /// JSON path, for errors and the page.
    path: String,
    mesh: usize,
    primitive: usize,
    /// Index into [`Viewer::skins`].
    skin_slot: usize,
    /// The skinned node that shows it.
    node: usize,
    /// Its triangles (vertex indices of the primitive).
    triangles: Vec<[u32; 3]>,
}

/// The progress of the background work, as `/api/status` reports it.
#[derive(Debug, Default)]
pub struct Background {
    /// What is being computed (`None` when done).
    pub stage: Option<String>,
    /// Steps done of `total` in the stage.
    pub done: usize,
    /// Steps in the stage.
    pub total: usize,
    /// Every primitive's centers (`vec4` per vertex, w = 1 with a center) once known.
    pub centers: Option<Arc<Vec<u8>>>,
    /// Per animation, the metrics JSON once computed.
    pub metrics: Vec<Option<Arc<String>>>,
    /// The one-line error that stopped the background work, shown on the page.
    pub error: Option<String>,
    /// The model with every shown primitive's centers of rotation (once known).
    pub with_centers: Option<&'static Model>,
}

/// Everything the server answers with, made once at start.
pub struct Viewer {
    model: &'static Model,
    /// The file as the command line named it.
    pub shown: String,
    methods: Vec<Method>,
    /// Model skin indices the primitives use, once each.
    skins: Vec<usize>,
    primitives: Vec<ViewPrimitive>,
    /// `/api/model`.
    pub model_json: String,
    /// `/api/mesh`.
    pub mesh_bytes: Vec<u8>,
    /// Per method name, the GLSL ES 3.00 source of `skinblend shaders --lang glsl-es`.
    pub shaders: Vec<(&'static str, String)>,
    /// The background work's state.
    pub background: Arc<Mutex<Background>>,
    /// One CPU scene skinner per method for the colour maps, made on first use; the server's
    /// workers take turns with them.
    skinners: Mutex<Option<Vec<SceneSkinner<'static, CpuBackend>>>>,
}

/// The colour maps of `/api/colors`, those of `compare`'s pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMapKind {
    /// Surface area change against the bind pose ([`color::area_change`], ±40%).
    AreaChange,
    /// Each vertex's distance from the first method's result, as a share of its bounding-box
    /// diagonal ([`color::displacement`]).
    DistanceFromFirst,
}

/// What `/api/colors` answers: the colours, and the top of the distance map's range.
pub struct Colors {
    /// Per method, per primitive, per vertex: sRGB bytes (r, g, b, 255).
    pub rgba: Vec<u8>,
    /// The map's largest value (a share of the diagonal for the distance, 0.4 for area).
    pub high: f32,
}

impl Viewer {
    /// Checks that the page can show `model` with `methods` (skinned triangles, at most four
    /// influences per vertex, palettes that fit the shaders' uniform blocks), lays out its
    /// data and starts the background work.
    pub fn new(model: &'static Model, shown: &str, methods: &[Method]) -> Result<Self> {
        if methods.is_empty() {
            bail!("no method to show");
        }
        let mut skins = Vec::new();
        let mut primitives = Vec::new();
        for node in model.skinned_nodes() {
            let (Some(m), Some(s)) = (model.nodes()[node].mesh, model.nodes()[node].skin) else {
                continue;
            };
            let skin_slot = match skins.iter().position(|&k| k == s) {
                Some(slot) => slot,
                None => {
                    skins.push(s);
                    skins.len() - 1
                }
            };
            for (p, primitive) in model.meshes()[m].primitives.iter().enumerate() {
                let path = format!("nodes[{node}] -> meshes[{m}].primitives[{p}]");
                let Some(influences) = primitive.influences.as_ref() else {
                    bail!("{path}: has no JOINTS_0");
                };
                let triangles = primitive.triangles();
                if triangles.is_empty() {
                    continue;
                }
                let k = influences.influences_per_vertex();
                if k > SHADER_INFLUENCES {
                    bail!(
                        "{path}: {k} influences per vertex; the viewer's shaders take \
                         {SHADER_INFLUENCES} (JOINTS_0/WEIGHTS_0)"
                    );
                }
                primitives.push(ViewPrimitive {
                    path,
                    mesh: m,
                    primitive: p,
                    skin_slot,
                    node,
                    triangles,
                });
            }
        }
        if primitives.is_empty() {
            bail!("no skinned mesh with triangles to show");
        }
        for &s in &skins {
            let joints = model.skins()[s].joints.len();
            for &method in methods {
                let capacity = uniform_palette_joints(method);
                if joints > capacity {
                    bail!(
                        "skins[{s}]: {joints} joints; the viewer's {method} shader holds \
                         {capacity} (a 16 KiB uniform block)"
                    );
                }
            }
        }
        let mut shaders = Vec::new();
        for &method in methods {
            let shader = export_shader(ShaderLanguage::GlslEs, method)?;
            shaders.push((method.name(), shader.source));
        }
        let mut viewer = Self {
            model,
            shown: shown.to_owned(),
            methods: methods.to_vec(),
            skins,
            primitives,
            model_json: String::new(),
            mesh_bytes: Vec::new(),
            shaders,
            skinners: Mutex::new(None),
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
        viewer.mesh_bytes = viewer.layout_mesh(&bounds)?;
        viewer.start_background();
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

    /// The bind-pose vertex data of every primitive, one after another (little-endian, each
    /// array 4-byte aligned): positions (3 f32), normals (3 f32, where the file has them),
    /// joints (4 u32), weights (4 f32), triangle indices (3 u32); and the model's description
    /// with each array's byte offset into `model_json`.
    fn layout_mesh(&mut self, bounds: &(Vec3, Vec3)) -> Result<Vec<u8>> {
        let mut bytes: Vec<u8> = Vec::new();
        let mut described = Vec::new();
        let floats = |bytes: &mut Vec<u8>, values: &mut dyn Iterator<Item = f32>| {
            let offset = bytes.len();
            for v in values {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            offset
        };
        for view in &self.primitives {
            let primitive = &self.model.meshes()[view.mesh].primitives[view.primitive];
            let influences = primitive
                .influences
                .as_ref()
                .with_context(|| format!("{}: has no JOINTS_0", view.path))?;
            let n = primitive.positions.len();
            let positions = floats(
                &mut bytes,
                &mut primitive.positions.iter().flat_map(|p| p.to_array()),
            );
            let normals = primitive
                .normals
                .as_ref()
                .map(|normals| floats(&mut bytes, &mut normals.iter().flat_map(|p| p.to_array())));
            let joints = bytes.len();
            let weights_of = |v: usize| influences.vertex(v).unwrap_or((&[], &[]));
            // Unused slots: joint 0 with weight 0.
            for v in 0..n {
                let (j, _) = weights_of(v);
                let padded = j.iter().copied().chain(std::iter::repeat(0));
                for joint in padded.take(SHADER_INFLUENCES) {
                    bytes.extend_from_slice(&u32::from(joint).to_le_bytes());
                }
            }
            let weights = floats(
                &mut bytes,
                &mut (0..n).flat_map(|v| {
                    let (_, w) = weights_of(v);
                    let padded = w.iter().copied().chain(std::iter::repeat(0.0));
                    padded.take(SHADER_INFLUENCES)
                }),
            );
            let triangles = &view.triangles;
            let indices = bytes.len();
            for index in triangles.iter().flatten() {
                bytes.extend_from_slice(&index.to_le_bytes());
            }
            described.push(json!({
                "path": view.path,
                "skin": view.skin_slot,
                "vertices": n,
                "triangles": triangles.len(),
                "offsets": {
                    "positions": positions,
                    "normals": normals,
                    "joints": joints,
                    "weights": weights,
                    "indices": indices,
                },
                "centers_in_file": primitive.rotation_centers.is_some(),
            }));
        }
        let methods: Vec<Value> = self
            .methods
            .iter()
            .map(|&m| {
                json!({
                    "name": m.name(),
                    "label": method_label(m),
                    "color": method_style(m).0,
                    "palette_entry_bytes": palette_entry_bytes(m),
                    "uniform_palette_joints": uniform_palette_joints(m),
                })
            })
            .collect();
        let animations: Vec<Value> = self
            .model
            .animations()
            .iter()
            .enumerate()
            .map(|(i, a)| {
                json!({
                    "name": a.name.clone().unwrap_or_else(|| format!("#{i}")),
                    "start_s": a.start_s,
                    "end_s": a.end_s,
                })
            })
            .collect();
        let skins: Vec<Value> = self
            .skins
            .iter()
            .map(|&s| json!({ "index": s, "joints": self.model.skins()[s].joints.len() }))
            .collect();
        let file = std::path::Path::new(&self.shown)
            .file_name()
            .map_or_else(|| self.shown.clone(), |n| n.to_string_lossy().into_owned());
        self.model_json = serde_json::to_string(&json!({
            "file": file,
            "version": env!("CARGO_PKG_VERSION"),
            "methods": methods,
            "animations": animations,
            "skins": skins,
            "primitives": described,
            "bounds": { "min": bounds.0.to_array(), "max": bounds.1.to_array() },
            "metric_frames": METRIC_FRAMES,
        }))?;
        Ok(bytes)
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
        for &s in &self.skins {
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
        let Some(model) = self
            .background
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .with_centers
        else {
            return Ok(None);
        };
        let pose = match animation {
            Some(a) if a >= model.animations().len() => {
                bail!("animation {a}: the file has {}", model.animations().len())
            }
            Some(a) => model.pose(Some(a), time_s)?,
            None => model.rest_pose(),
        };
        let mut guard = self
            .skinners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none() {
            let mut skinners = Vec::with_capacity(self.methods.len());
            for &method in &self.methods {
                let options = SceneOptions {
                    normals: false,
                    tangents: false,
                    ..SceneOptions::with_method(method)
                };
                skinners.push(SceneSkinner::cpu(model, options)?);
            }
            *guard = Some(skinners);
        }
        let skinners = guard.as_mut().map_or(&mut [][..], Vec::as_mut_slice);
        // Per method, per primitive: the skinned positions.
        let mut posed: Vec<Vec<Vec<Vec3>>> = Vec::with_capacity(skinners.len());
        for skinner in skinners.iter_mut() {
            let nodes = skinner.skin(&pose)?;
            let mut method = Vec::with_capacity(self.primitives.len());
            for p in &self.primitives {
                let positions = nodes
                    .iter()
                    .find(|posed| posed.node == p.node)
                    .and_then(|posed| posed.primitives.get(p.primitive))
                    .map(|posed| posed.positions.clone())
                    .with_context(|| format!("{}: not in the skinned scene", p.path))?;
                method.push(positions);
            }
            posed.push(method);
        }
        let (values, map) = match kind {
            ColorMapKind::AreaChange => {
                let values: Vec<Vec<Vec<f32>>> = posed
                    .iter()
                    .map(|method| {
                        self.primitives
                            .iter()
                            .zip(method)
                            .map(|(p, positions)| {
                                let rest =
                                    &model.meshes()[p.mesh].primitives[p.primitive].positions;
                                color::area_change(rest, positions, &p.triangles)
                            })
                            .collect()
                    })
                    .collect();
                (values, area_change_map())
            }
            ColorMapKind::DistanceFromFirst => {
                let (mut min, mut max) =
                    (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
                for &q in posed.first().into_iter().flatten().flatten() {
                    min = min.min(q);
                    max = max.max(q);
                }
                let diagonal = (max - min).length();
                let values: Vec<Vec<Vec<f32>>> = posed
                    .iter()
                    .map(|method| {
                        method
                            .iter()
                            .zip(&posed[0])
                            .map(|(positions, first)| {
                                color::displacement(first, positions, diagonal)
                            })
                            .collect()
                    })
                    .collect();
                // As compare's pictures: from 0 to the largest distance, at least the share
                // under which it calls results equal.
                let high = values
                    .iter()
                    .flatten()
                    .flatten()
                    .fold(compare::AGREEMENT_SHARE as f32, |a, &b| a.max(b));
                let label = format!(
                    "distance from the {} result, % of the bounding-box diagonal",
                    method_label(self.methods[0])
                );
                (values, ColorMap::sequential(high, &label, 100.0))
            }
        };
        let mut rgba = Vec::new();
        for &v in values.iter().flatten().flatten() {
            let [r, g, b] = map.color(v);
            rgba.extend_from_slice(&[r, g, b, 255]);
        }
        Ok(Some(Colors {
            rgba,
            high: map.high,
        }))
    }

    /// Starts the thread that computes, once, the centers of rotation the file lacks (when CoR
    /// is shown) and `compare`'s per-frame metrics of every animation, reporting progress in
    /// [`Viewer::background`]; its error is kept for the page and printed.
    fn start_background(&self) {
        let model = self.model;
        let shown = self.shown.clone();
        let methods = self.methods.clone();
        let state = Arc::clone(&self.background);
        let parts: Vec<(usize, usize)> = self
            .primitives
            .iter()
            .map(|p| (p.mesh, p.primitive))
            .collect();
        std::thread::spawn(move || {
            let result = background(model, &shown, &methods, &parts, &state);
            let mut state = state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state.stage = None;
            if let Err(error) = result {
                let line = crate::one_line(&error);
                eprintln!("skinblend: {line}");
                state.error = Some(line);
            }
        });
    }
}

fn set_progress(state: &Mutex<Background>, stage: &str, done: usize, total: usize) {
    let mut state = state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    state.stage = Some(stage.to_owned());
    state.done = done;
    state.total = total;
}

/// The background work of [`Viewer::start_background`].
fn background(
    model: &'static Model,
    shown: &str,
    methods: &[Method],
    parts: &[(usize, usize)],
    state: &Mutex<Background>,
) -> Result<()> {
    let needs_centers = methods.contains(&Method::CenterOfRotation)
        && parts
            .iter()
            .any(|&(m, p)| model.meshes()[m].primitives[p].rotation_centers.is_none());
    let with_centers: &'static Model = if needs_centers {
        let mut copy = model.clone();
        copy.compute_rotation_centers(&CorOptions::default(), &mut |done, total, _| {
            set_progress(state, "centers of rotation", done, total);
        })
        .with_context(|| format!("{shown}: centers of rotation"))?;
        Box::leak(Box::new(copy))
    } else {
        model
    };
    let mut centers = Vec::new();
    for &(m, p) in parts {
        let primitive = &with_centers.meshes()[m].primitives[p];
        let rows = match &primitive.rotation_centers {
            Some(c) => gpu_rotation_centers(c),
            // No CoR shown: no center, DQS (never drawn).
            None => vec![[0.0; 4]; primitive.positions.len()],
        };
        for v in rows.iter().flatten() {
            centers.extend_from_slice(&v.to_le_bytes());
        }
    }
    {
        let mut state = state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.centers = Some(Arc::new(centers));
        state.with_centers = Some(with_centers);
    }
    for a in 0..with_centers.animations().len() {
        let options = CompareOptions {
            animation: Some(a.to_string()),
            frames: METRIC_FRAMES,
            methods: methods.to_vec(),
            ..CompareOptions::default()
        };
        let stage = format!(
            "metrics of animation {}/{}",
            a + 1,
            model.animations().len()
        );
        let (name, frames) = compare::measure_animation(with_centers, shown, &options, &mut |p| {
            if p.stage == compare::Stage::Skinning {
                set_progress(state, &stage, p.done, p.total);
            }
        })?;
        let json = metrics_json(&name, methods, &frames)?;
        state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .metrics[a] = Some(Arc::new(json));
    }
    Ok(())
}

/// `compare`'s per-frame metrics as the page plots them: distances between methods in % of
/// the bounding-box diagonal (as frames.csv), volume and mean edge ratios per method.
fn metrics_json(
    name: &str,
    methods: &[Method],
    frames: &[compare::FrameMetrics],
) -> Result<String> {
    let labels: Vec<&str> = methods.iter().map(|&m| method_label(m)).collect();
    let pairs: Vec<Value> = frames.first().map_or_else(Vec::new, |f| {
        f.max_displacement
            .iter()
            .map(|&((i, j), _)| json!({ "a": i, "b": j, "label": format!("{}–{}", labels[j], labels[i]) }))
            .collect()
    });
    let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
    let rows: Vec<Value> = frames
        .iter()
        .map(|f| {
            json!({
                "time_s": f.time_s,
                "max_distance_percent": f.max_displacement.iter().map(|&(_, d)| d * 100.0).collect::<Vec<_>>(),
                "rms_distance_percent": f.rms_displacement.iter().map(|&(_, d)| d * 100.0).collect::<Vec<_>>(),
                "volume_ratio": f.volume_ratio.iter().map(|&v| finite(v)).collect::<Vec<_>>(),
                "mean_edge_ratio": f.mean_edge_ratio.iter().map(|&v| finite(v)).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(serde_json::to_string(&json!({
        "animation": name,
        "methods": labels,
        "pairs": pairs,
        "frames": rows,
    }))?)
}
