//! What the viewer computes once, in the background, while the page shows the progress
//! (`/api/status`): the centers of rotation the file lacks (when CoR is shown) and `compare`'s
//! per-frame metrics of every animation.

use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use serde_json::{json, Value};
use skinblend::cor::CorOptions;
use skinblend::Method;
use skinblend_gltf::Model;
use skinblend_gpu::gpu_rotation_centers;
use skinblend_report::compare::{self, CompareOptions};

use crate::output::one_line;

/// Frames of `compare`'s per-frame metrics per animation: the report's default
/// (`skinblend compare --frames`), enough for a smooth curve over a clip.
pub const METRIC_FRAMES: usize = 48;

/// The progress and results of the background work, as `/api/status` reports it.
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

/// The background state locked, whether or not a thread panicked while holding it.
pub fn lock(state: &Mutex<Background>) -> std::sync::MutexGuard<'_, Background> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts the thread that computes, once, the centers of rotation of the shown primitives
/// `parts` (mesh, primitive) the file lacks (when `methods` has CoR) and `compare`'s per-frame
/// metrics of every animation, reporting progress in `state`; its error is kept there for the
/// page and printed (`shown`: the file as the command line named it).
pub fn start(
    model: &'static Model,
    shown: String,
    methods: Vec<Method>,
    dq_blend: Option<f32>,
    parts: Vec<(usize, usize)>,
    state: Arc<Mutex<Background>>,
) {
    std::thread::spawn(move || {
        let result = background(model, &shown, (&methods, dq_blend), &parts, &state);
        let mut state = lock(&state);
        state.stage = None;
        if let Err(error) = result {
            let line = one_line(&error);
            eprintln!("skinblend: {line}");
            state.error = Some(line);
        }
    });
}

fn set_progress(state: &Mutex<Background>, stage: &str, done: usize, total: usize) {
    let mut state = lock(state);
    state.stage = Some(stage.to_owned());
    state.done = done;
    state.total = total;
}

/// The background work of [`start`].
fn background(
    model: &'static Model,
    shown: &str,
    (methods, dq_blend): (&[Method], Option<f32>),
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
        let mut state = lock(state);
        state.centers = Some(Arc::new(centers));
        state.with_centers = Some(with_centers);
    }
    for a in 0..with_centers.animations().len() {
        let options = CompareOptions {
            animation: Some(a.to_string()),
            frames: METRIC_FRAMES,
            methods: methods.to_vec(),
            dq_blend,
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
        lock(state).metrics[a] = Some(Arc::new(json));
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
    let labels: Vec<&str> = methods.iter().map(|&m| m.label()).collect();
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
