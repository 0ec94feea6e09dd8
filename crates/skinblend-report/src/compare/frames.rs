//! Skinning and measuring the frames: the scene joined into one mesh, each frame skinned with
//! every method and measured, the frames where the methods differ most picked, and the close-up.

use std::collections::HashMap;

use glam::Vec3;
use skinblend::metrics;
use skinblend::{CpuBackend, Method};
use skinblend_gltf::{Model, SceneOptions, SceneSkinner};

use crate::error::{ReportError, Result};
use crate::render::Bounds;

use super::types::{
    CompareOptions, FrameMetrics, Progress, Stage, AGREEMENT_SHARE, SAME_POSE_SHARE,
};

/// One skinned primitive of the scene and where its vertices start in the joined mesh.
pub(super) struct Part {
    /// Where the scene skinner's results hold it: (posed node, primitive of that node).
    pub(super) posed: (usize, usize),
    pub(super) offset: usize,
}

/// Every skinned primitive with triangles, joined into one mesh.
pub(super) struct Scene {
    pub(super) parts: Vec<Part>,
    pub(super) rest: Vec<Vec3>,
    pub(super) triangles: Vec<[u32; 3]>,
}

/// Whether two frames' results are the same pose: every method's vertices within
/// [`SAME_POSE_SHARE`] of the first method's bounding-box diagonal.
pub(super) fn same_pose(a: &[Vec<Vec3>], b: &[Vec<Vec3>]) -> bool {
    let Some(diagonal) = a.first().and_then(|p| Bounds::of(p)).map(|b| b.diagonal()) else {
        return false;
    };
    let tolerance = SAME_POSE_SHARE * diagonal;
    a.len() == b.len()
        && a.iter().zip(b).all(|(pa, pb)| {
            pa.len() == pb.len() && pa.iter().zip(pb).all(|(p, q)| p.distance(*q) <= tolerance)
        })
}

/// One scene skinner per method (positions only; for CoR the file's centers, else computed
/// once here, with progress), and the skinned primitives that have triangles joined into one
/// mesh.
pub(super) fn build_scene<'m>(
    model: &'m Model,
    methods: &[Method],
    dq_blend: Option<f32>,
    shown: &str,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Scene, Vec<SceneSkinner<'m, CpuBackend>>)> {
    let gltf_error = |what: String| move |source| ReportError::Gltf { what, source };
    let mut skinners = Vec::with_capacity(methods.len());
    for &method in methods {
        let options = SceneOptions {
            normals: false,
            tangents: false,
            dq_blend,
            ..SceneOptions::with_method(method)
        };
        let skinner =
            SceneSkinner::with_backend(model, CpuBackend, options, &mut |done, total, _| {
                progress(Progress {
                    stage: Stage::CentersOfRotation,
                    done,
                    total,
                });
            })
            .map_err(gltf_error(format!("{shown}: {method}")))?;
        skinners.push(skinner);
    }
    let mut scene = Scene {
        parts: Vec::new(),
        rest: Vec::new(),
        triangles: Vec::new(),
    };
    let Some(first) = skinners.first_mut() else {
        return Ok((scene, skinners));
    };
    // The layout of the results (nodes and primitives), from the rest pose.
    let layout = first
        .skin(&model.rest_pose())
        .map_err(gltf_error(format!("{shown}: rest pose")))?;
    for (n, posed) in layout.iter().enumerate() {
        for p in 0..posed.primitives.len() {
            let primitive = &model.meshes()[posed.mesh].primitives[p];
            let triangles = primitive.triangles();
            if triangles.is_empty() {
                continue;
            }
            let offset = scene.rest.len();
            let base = offset as u32;
            scene
                .triangles
                .extend(triangles.iter().map(|t| t.map(|v| v + base)));
            scene.rest.extend_from_slice(&primitive.positions);
            scene.parts.push(Part {
                posed: (n, p),
                offset,
            });
        }
    }
    Ok((scene, skinners))
}

/// The joined positions of every part at `time_s`, one vector per method (per skinner).
pub(super) fn skin_frame(
    model: &Model,
    scene: &Scene,
    skinners: &mut [SceneSkinner<'_, CpuBackend>],
    animation: usize,
    time_s: f32,
    shown: &str,
) -> Result<Vec<Vec<Vec3>>> {
    let pose = model
        .pose(Some(animation), time_s)
        .map_err(|source| ReportError::Gltf {
            what: format!("{shown}: pose at {time_s} s"),
            source,
        })?;
    let mut results = Vec::with_capacity(skinners.len());
    for skinner in skinners {
        let method = skinner.options().skin.method;
        let posed = skinner.skin(&pose).map_err(|source| ReportError::Gltf {
            what: format!("{shown}: at {time_s} s with {method}"),
            source,
        })?;
        let mut out = vec![Vec3::ZERO; scene.rest.len()];
        for part in &scene.parts {
            let positions = &posed[part.posed.0].primitives[part.posed.1].positions;
            out[part.offset..part.offset + positions.len()].copy_from_slice(positions);
        }
        results.push(out);
    }
    Ok(results)
}

pub(super) fn measure_frame(
    scene: &Scene,
    frame: usize,
    time_s: f32,
    posed: &[Vec<Vec3>],
    pairs: &[(usize, usize)],
    shown: &str,
) -> Result<FrameMetrics> {
    let what = || format!("{shown}: measuring frame {frame}");
    let mut max_displacement = Vec::with_capacity(pairs.len());
    let mut rms_displacement = Vec::with_capacity(pairs.len());
    for &(i, j) in pairs {
        let d = metrics::displacement(&posed[i], &posed[j]).map_err(ReportError::skin(what()))?;
        max_displacement.push(((i, j), d.map_or(0.0, |d| d.max_relative)));
        rms_displacement.push(((i, j), d.map_or(0.0, |d| d.rms_relative)));
    }
    let mut volume_ratio = Vec::with_capacity(posed.len());
    let mut mean_edge_ratio = Vec::with_capacity(posed.len());
    for positions in posed {
        volume_ratio.push(
            metrics::volume_ratio(&scene.rest, positions, &scene.triangles)
                .map_err(ReportError::skin(what()))?,
        );
        mean_edge_ratio.push(
            metrics::triangle_edge_ratios(&scene.rest, positions, &scene.triangles)
                .map_err(ReportError::skin(what()))?
                .map(|s| s.mean),
        );
    }
    Ok(FrameMetrics {
        frame,
        time_s,
        max_displacement,
        rms_displacement,
        volume_ratio,
        mean_edge_ratio,
    })
}

/// Share of the largest LBS–DQS distance above which a vertex is in the close-up.
pub(super) const CLOSEUP_SHARE: f32 = 0.5;

/// A box around the vertices where the first two results are furthest apart (distance at least
/// [`CLOSEUP_SHARE`] of the largest and above [`AGREEMENT_SHARE`] of the diagonal), in every
/// method's pose, made a cube with room around it and at least a sixth of the whole model's
/// size. `None` where a close-up would show the whole model (the figure without it already
/// does): with fewer than two results, where they do not differ beyond [`AGREEMENT_SHARE`], or
/// where the differing vertices spread over most of the model.
pub(super) fn closeup_bounds(posed: &[(String, Vec<Vec3>)]) -> Option<Bounds> {
    let (first, second) = (&posed.first()?.1, &posed.get(1)?.1);
    let whole = posed
        .iter()
        .filter_map(|(_, p)| Bounds::of(p))
        .reduce(Bounds::union)?;
    let distances: Vec<f32> = first
        .iter()
        .zip(second)
        .map(|(a, b)| a.distance(*b))
        .collect();
    let largest = distances.iter().copied().fold(0.0f32, f32::max);
    let floor = AGREEMENT_SHARE as f32 * whole.diagonal();
    if largest.is_nan() || largest <= floor {
        return None;
    }
    let threshold = (CLOSEUP_SHARE * largest).max(floor);
    let selected: Vec<Vec3> = distances
        .iter()
        .enumerate()
        .filter(|(_, &d)| d >= threshold)
        .flat_map(|(v, _)| posed.iter().filter_map(move |(_, p)| p.get(v).copied()))
        .collect();
    let around = Bounds::of(&selected)?;
    let center = (around.min + around.max) / 2.0;
    let half = ((around.max - around.min).max_element() * 0.8).max(whole.diagonal() / 12.0);
    // A cube as wide as most of the model is no close-up.
    if 2.0 * half >= 0.75 * (whole.max - whole.min).max_element() {
        return None;
    }
    Some(Bounds {
        min: center - Vec3::splat(half),
        max: center + Vec3::splat(half),
    })
}

pub(super) fn first_pair_max(frame: &FrameMetrics) -> Option<f64> {
    frame.max_displacement.first().map(|&(_, d)| d)
}

/// The `count` frames where the first two methods differ most (largest vertex distance), at
/// least a tenth of the animation apart so that one motion is not shown three times, and no
/// two the same pose by `same_pose` (a looping clip's first and last frame); most different
/// first. With one method, the first frames.
///
/// # Errors
/// Those of `same_pose`.
pub(super) fn pick_frames(
    frames: &[FrameMetrics],
    count: usize,
    same_pose: &mut dyn FnMut(usize, usize) -> Result<bool>,
) -> Result<Vec<usize>> {
    let mut order: Vec<usize> = (0..frames.len()).collect();
    order.sort_by(|&a, &b| {
        let (da, db) = (
            first_pair_max(&frames[a]).unwrap_or(0.0),
            first_pair_max(&frames[b]).unwrap_or(0.0),
        );
        db.total_cmp(&da).then(a.cmp(&b))
    });
    let gap = (frames.len() / 10).max(1);
    let mut picked: Vec<usize> = Vec::with_capacity(count);
    for candidate in order {
        if picked.len() == count {
            break;
        }
        if !picked.iter().all(|&p| p.abs_diff(candidate) >= gap) {
            continue;
        }
        let mut repeated = false;
        for &p in &picked {
            if same_pose(p, candidate)? {
                repeated = true;
                break;
            }
        }
        if !repeated {
            picked.push(candidate);
        }
    }
    Ok(picked)
}

/// Whether every undirected edge belongs to exactly two triangles.
pub(super) fn is_closed(triangles: &[[u32; 3]]) -> bool {
    let mut uses: HashMap<(u32, u32), u32> = HashMap::new();
    for t in triangles {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            *uses.entry((a.min(b), a.max(b))).or_insert(0) += 1;
        }
    }
    !uses.is_empty() && uses.values().all(|&n| n == 2)
}

/// What [`measure`] leaves for the report: the animation, the joined scene and its skinners,
/// the frame times, the method pairs and each frame's measurements.
pub(super) struct Measured<'m> {
    pub(super) animation: usize,
    pub(super) animation_name: String,
    pub(super) scene: Scene,
    pub(super) skinners: Vec<SceneSkinner<'m, CpuBackend>>,
    pub(super) times_s: Vec<f32>,
    pub(super) pairs: Vec<(usize, usize)>,
    pub(super) frames: Vec<FrameMetrics>,
}

/// Checks the request, picks the animation, builds the scene and measures every frame.
pub(super) fn measure<'m>(
    model: &'m Model,
    source: &str,
    options: &CompareOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Measured<'m>> {
    let request = |what: String| ReportError::Request { what };
    if options.frames == 0 {
        return Err(request("--frames must be at least 1".to_owned()));
    }
    let methods = if options.methods.is_empty() {
        model.skinnable_methods(options.dq_blend)
    } else {
        options.methods.clone()
    };
    let shown = source;
    let animation = match &options.animation {
        Some(name) => model
            .find_animation(name)
            .map_err(|source| ReportError::Gltf {
                what: format!("{shown}: --animation {name}"),
                source,
            })?,
        None if model.animations().is_empty() => {
            return Err(request(format!(
                "{shown} has no animation to compare the methods over"
            )))
        }
        None => 0,
    };
    let clip = &model.animations()[animation];
    let animation_name = clip.name.clone().unwrap_or_else(|| format!("#{animation}"));
    let (scene, mut skinners) = build_scene(model, &methods, options.dq_blend, shown, progress)?;
    if scene.triangles.is_empty() {
        return Err(request(format!(
            "{shown} has no skinned triangles to compare"
        )));
    }
    let times_s: Vec<f32> = (0..options.frames)
        .map(|i| {
            if options.frames == 1 {
                clip.start_s
            } else {
                clip.start_s + (clip.end_s - clip.start_s) * i as f32 / (options.frames - 1) as f32
            }
        })
        .collect();
    let pairs: Vec<(usize, usize)> = (0..methods.len())
        .flat_map(|i| (i + 1..methods.len()).map(move |j| (i, j)))
        .collect();
    let mut frames = Vec::with_capacity(times_s.len());
    for (frame, &time_s) in times_s.iter().enumerate() {
        let posed = skin_frame(model, &scene, &mut skinners, animation, time_s, shown)?;
        frames.push(measure_frame(&scene, frame, time_s, &posed, &pairs, shown)?);
        progress(Progress {
            stage: Stage::Skinning,
            done: frame + 1,
            total: times_s.len(),
        });
    }
    Ok(Measured {
        animation,
        animation_name,
        scene,
        skinners,
        times_s,
        pairs,
        frames,
    })
}
