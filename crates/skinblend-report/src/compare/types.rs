//! The terms of a comparison: what it is asked ([`CompareOptions`]), the progress it reports,
//! what it measures per frame ([`FrameMetrics`]) and the shares under which it calls results
//! the same.

use skinblend::Method;

/// What [`write_report`](super::write_report) does and how much.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// Animation name or index; `None`: the first.
    pub animation: Option<String>,
    /// Frames sampled evenly from the animation's start to its end, both included (at least 1).
    pub frames: usize,
    /// Methods, in column order; the first is the reference for displacements and the first
    /// two pick the frames. Default (empty): every method of [`Method::ALL`] the model can run
    /// (`skinblend_gltf::Model::skinnable_methods`: blended where it has blend values).
    pub methods: Vec<Method>,
    /// The blend value of [`Method::Blended`] for primitives the file gives none
    /// (`skinblend_gltf::SceneOptions::dq_blend`).
    pub dq_blend: Option<f32>,
    /// How many frames to render (those where the first two methods differ most).
    pub picked_frames: usize,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            animation: None,
            frames: 48,
            methods: Vec::new(),
            dq_blend: None,
            picked_frames: 3,
        }
    }
}

/// Which part of the work a [`Progress`] report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Precomputing centers of rotation, one step per primitive.
    CentersOfRotation,
    /// Skinning every method at every frame, one step per frame.
    Skinning,
    /// Rendering the picked frames, one step per figure.
    Rendering,
}

impl Stage {
    /// A short description for a progress bar.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Stage::CentersOfRotation => "centers of rotation",
            Stage::Skinning => "skinning frames",
            Stage::Rendering => "rendering frames",
        }
    }
}

/// `done` of `total` steps of `stage` are finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The stage.
    pub stage: Stage,
    /// Steps finished.
    pub done: usize,
    /// Steps in the stage.
    pub total: usize,
}

/// One frame's measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameMetrics {
    /// Frame number, from 0.
    pub frame: usize,
    /// Animation time, seconds.
    pub time_s: f32,
    /// Per method pair `(i, j)`, `i < j`: largest vertex distance ÷ the bounding-box diagonal
    /// of method `i`'s result.
    pub max_displacement: Vec<((usize, usize), f64)>,
    /// Per method pair: root-mean-square vertex distance ÷ the same diagonal.
    pub rms_displacement: Vec<((usize, usize), f64)>,
    /// Per method: posed ÷ rest signed volume of all skinned triangles (`None` for zero rest
    /// volume). Only a true volume for a closed mesh.
    pub volume_ratio: Vec<Option<f64>>,
    /// Per method: mean posed ÷ rest length of the triangles' edges.
    pub mean_edge_ratio: Vec<Option<f64>>,
}

/// Largest distance between two methods' results, as a share of the bounding-box diagonal, at
/// or below which this report calls the methods in agreement: 1e-5 (0.001%). Results of the
/// same rigid transform computed three ways differ by `f32` rounding, a few 1e-7 of the
/// coordinates' size; this leaves room for models placed far from their origin, and is still
/// 200 times smaller than a pixel of the 460-pixel renders (a pixel is about 1/460 of the
/// diagonal), so results within it look the same in every picture.
pub const AGREEMENT_SHARE: f64 = 1e-5;

/// Largest vertex distance, as a share of the bounding-box diagonal, at or below which two
/// frames are the same pose and only one is rendered: 1e-4, a twentieth of a pixel of the
/// renders, so frames within it would give the same picture (a looping clip's first and last
/// frame, a held pose). It is larger than [`AGREEMENT_SHARE`] because keyframe interpolation
/// at the two ends of a loop may round differently.
pub const SAME_POSE_SHARE: f32 = 1e-4;
