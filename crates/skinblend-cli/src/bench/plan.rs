//! What `skinblend bench` measures and how it times a call: the matrix ([`Plan`]: methods,
//! attribute sets, influence counts, sizes, backends, crowds), the timing of one call
//! ([`call_times`]: samples, the median and the fastest call), and the CPU's name.

use std::time::{Duration, Instant};

use skinblend::Method;

/// Which vertex attributes are skinned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attributes {
    /// Positions only.
    P,
    /// Positions and normals.
    Pn,
    /// Positions, normals and tangents.
    Pnt,
}

impl Attributes {
    pub(super) fn name(self) -> &'static str {
        match self {
            Attributes::P => "p",
            Attributes::Pn => "pn",
            Attributes::Pnt => "pnt",
        }
    }
}

/// How the kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The scalar reference kernel on one thread.
    Scalar,
    /// The SIMD kernel on one thread.
    Simd,
    /// The SIMD kernel on every thread of the rayon pool.
    Parallel,
}

impl Backend {
    pub(super) fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Simd => "simd",
            Backend::Parallel => "parallel",
        }
    }
}

/// Skinned nodes in the `scene` row's file: with `shear_cap`'s 1,058 vertices each, 105,800
/// skinned vertices per frame.
pub const SCENE_COPIES: usize = 100;

/// The crowds measured: (meshes, vertices per mesh). Each mesh has its own palette of 24 to 64
/// joints (the joint count cycles through that range), K = 4.
pub const CROWDS: [(usize, usize); 2] = [(1_000, 2_000), (200, 10_000)];

/// The matrix to measure.
pub struct Plan {
    pub(super) methods: Vec<Method>,
    pub(super) attributes: Vec<Attributes>,
    pub(super) influences: Vec<usize>,
    pub(super) vertices: Vec<usize>,
    pub(super) backends: Vec<Backend>,
    /// Minimum time per measurement sample.
    pub(super) sample: Duration,
    /// Samples per measurement (the median is reported).
    pub(super) samples: usize,
    /// The crowds of the paths table: (meshes, vertices per mesh).
    pub(super) crowds: Vec<(usize, usize)>,
    /// Skinned nodes of the paths table's scene.
    pub(super) scene_copies: usize,
}

impl Plan {
    /// The full matrix of DESIGN.md.
    pub fn full() -> Self {
        Self {
            methods: Method::ALL.to_vec(),
            attributes: vec![Attributes::P, Attributes::Pn, Attributes::Pnt],
            influences: vec![1, 2, 4, 8],
            vertices: vec![10_000, 100_000, 1_000_000],
            backends: vec![Backend::Scalar, Backend::Simd, Backend::Parallel],
            sample: Duration::from_millis(40),
            samples: 5,
            crowds: CROWDS.to_vec(),
            scene_copies: SCENE_COPIES,
        }
    }

    /// The rows that matter most, in well under a minute: every method with positions and
    /// normals and with positions only, K = 4, the rows `tools/ozz-compare` sets beside
    /// ozz-animation's figures, with the ozz driver's sampling there (5 samples of 25 ms), so
    /// that both programs' fastest calls are taken from as many calls.
    pub fn quick() -> Self {
        Self {
            methods: Method::ALL.to_vec(),
            attributes: vec![Attributes::P, Attributes::Pn],
            influences: vec![4],
            vertices: vec![10_000, 100_000, 1_000_000],
            backends: vec![Backend::Scalar, Backend::Simd, Backend::Parallel],
            sample: Duration::from_millis(25),
            samples: 5,
            crowds: CROWDS.to_vec(),
            scene_copies: SCENE_COPIES,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.methods.len()
            * self.attributes.len()
            * self.influences.len()
            * self.vertices.len()
            * self.backends.len()
    }
}

/// The time per call: the median over samples, and the fastest single call.
pub(super) struct CallTimes {
    /// Median over `plan.samples` samples of the mean time per call.
    pub(super) median_seconds: f64,
    /// The fastest single call of all samples.
    pub(super) fastest_seconds: f64,
}

/// Times `call` in `plan.samples` samples, each repeating the call for at least `plan.sample`
/// (after one call that warms caches and the thread pool).
pub(super) fn call_times<E>(
    plan: &Plan,
    mut call: impl FnMut() -> Result<(), E>,
) -> Result<CallTimes, E> {
    call()?;
    let mut samples = Vec::with_capacity(plan.samples);
    let mut fastest = Duration::MAX;
    for _ in 0..plan.samples {
        let start = Instant::now();
        let mut calls = 0u32;
        let mut last = start;
        while last - start < plan.sample {
            call()?;
            let now = Instant::now();
            fastest = fastest.min(now - last);
            last = now;
            calls += 1;
        }
        samples.push((last - start).as_secs_f64() / f64::from(calls));
    }
    samples.sort_by(f64::total_cmp);
    Ok(CallTimes {
        median_seconds: samples[samples.len() / 2],
        fastest_seconds: fastest.as_secs_f64(),
    })
}

/// The CPU's model name, from /proc/cpuinfo where there is one.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}
