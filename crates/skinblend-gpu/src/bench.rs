//! The GPU benchmark: kernel time, end-to-end time per frame, and the GPU's own memory floor
//! (a buffer copy of the same bytes in the same run), on a synthetic rig.
//!
//! Units: seconds per frame (medians over the timed frames) and million vertices per second.

use std::time::Instant;

use glam::{Mat4, Vec3, Vec4};
use skinblend::fixtures::{benchmark_mesh, BenchmarkMesh};
use skinblend::{prepare, BlendValues, Influences, Method, SkinInput, SkinOptions, VertexInput};

use crate::methods::GpuVertexInput;
use crate::{GpuError, GpuSkinner};

/// Joints of the benchmark rig: a typical game character's skeleton size (ozz-animation's
/// SkinningJob figures use 64 as well).
pub const BENCH_JOINTS: usize = 64;

/// One benchmark case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuBenchCase {
    /// The method.
    pub method: Method,
    /// Vertices in the synthetic mesh.
    pub vertices: usize,
    /// Influences per vertex (`k`).
    pub influences: usize,
    /// Whether the mesh has normals (skinned too).
    pub normals: bool,
    /// Whether the mesh has tangents (skinned too).
    pub tangents: bool,
    /// Timed frames (after two warm-up frames); the medians are reported.
    pub frames: usize,
}

/// How a time was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// GPU timestamp queries around the work (excludes submission and waiting).
    Timestamps,
    /// Wall clock from submission to completion (includes driver overhead).
    WallClock,
}

/// The result of one case.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuBenchRow {
    /// The case measured.
    pub case: GpuBenchCase,
    /// The adapter's name.
    pub adapter: String,
    /// Bytes one frame's kernel reads from the mesh and writes to the output (the palette,
    /// a few KiB, is not counted; CoR's per-vertex centers and blended's blend values are).
    pub bytes_per_frame: u64,
    /// The compute pass alone, from timestamps; `None` when the device has no timestamp queries.
    pub kernel_s: Option<f64>,
    /// Palette conversion and upload, dispatch, and waiting for completion (wall clock).
    pub end_to_end_s: f64,
    /// A buffer-to-buffer copy of `bytes_per_frame / 2` bytes (so it also reads and writes
    /// `bytes_per_frame` in all): the memory floor of this GPU in this run.
    pub copy_s: f64,
    /// How `copy_s` was measured: timestamps when the device can write them inside an
    /// encoder, else wall clock (then compare it with `end_to_end_s`).
    pub copy_timing: Timing,
}

impl GpuBenchRow {
    fn rate(&self, seconds: f64) -> f64 {
        self.case.vertices as f64 / seconds / 1e6
    }

    /// Million vertices per second of the kernel alone, when timed.
    #[must_use]
    pub fn kernel_mvps(&self) -> Option<f64> {
        self.kernel_s.map(|s| self.rate(s))
    }

    /// Million vertices per second end to end.
    #[must_use]
    pub fn end_to_end_mvps(&self) -> f64 {
        self.rate(self.end_to_end_s)
    }

    /// The memory floor in million vertices per second: the copy's bytes per second divided by
    /// the kernel's bytes per vertex.
    #[must_use]
    pub fn copy_floor_mvps(&self) -> f64 {
        self.rate(self.copy_s)
    }

    /// The kernel's speed as a share of the copy floor (1 = as fast as a copy of the same
    /// bytes): kernel time when timestamped and the copy was too, else end-to-end time.
    #[must_use]
    pub fn share_of_floor(&self) -> f64 {
        match (self.kernel_s, self.copy_timing) {
            (Some(kernel), Timing::Timestamps) => self.copy_s / kernel,
            _ => self.copy_s / self.end_to_end_s,
        }
    }
}

/// Bytes one vertex's kernel reads and writes under `method` (see
/// [`GpuBenchRow::bytes_per_frame`]).
#[must_use]
pub fn bytes_per_vertex(method: Method, influences: usize, normals: bool, tangents: bool) -> u64 {
    let k = influences as u64;
    let attributes = 12 + 12 * u64::from(normals) + 16 * u64::from(tangents);
    // And the method's per-vertex input: CoR's center of rotation (a vec4), blended's blend
    // value (an f32).
    let extra = crate::methods::method_kernel(method)
        .vertex_input
        .map_or(0, |input| input.bytes_per_vertex());
    // Read: attributes, u16 joint indices, f32 weights; write: the same attributes.
    attributes + 2 * k + 4 * k + extra + attributes
}

/// The benchmark rig ([`bench_rig`]) as the GPU benchmark uploads it, with a center of rotation
/// for every vertex (CoR's full path) and a blend value strictly between 0 and 1 for every
/// vertex (blended's full path: both blends).
#[derive(Debug, Clone)]
pub struct SyntheticRig {
    /// Bind-pose positions.
    pub positions: Vec<Vec3>,
    /// Unit normals.
    pub normals: Vec<Vec3>,
    /// Tangents, `w = 1`.
    pub tangents: Vec<Vec4>,
    /// The influences.
    pub influences: Influences,
    /// Skin matrices, one per joint.
    pub palette: Vec<Mat4>,
    /// Centers of rotation, one per vertex: the vertex itself, so every vertex takes CoR's full
    /// path (no precomputation: the benchmark measures the kernel, not the centers).
    pub rotation_centers: Vec<Vec3>,
    /// Blend values, one per vertex, cycling through 1/8 .. 7/8: every vertex evaluates both
    /// LBS and DQS (at 0 or 1 only one would run, and the benchmark would measure that method).
    pub blend_values: Vec<f32>,
}

impl SyntheticRig {
    /// Builds the rig (allocates it; O(vertices · k)): [`bench_rig`], the CPU benchmark's mesh,
    /// with a center of rotation at every vertex (CoR's full path, as the CPU benchmark has it)
    /// and a blend value between 0 and 1 at every vertex.
    ///
    /// # Errors
    /// Only if `influences` is 0 ([`skinblend::SkinError::ZeroInfluencesPerVertex`]).
    pub fn new(vertices: usize, influences: usize) -> Result<Self, GpuError> {
        if influences == 0 {
            return Err(skinblend::SkinError::ZeroInfluencesPerVertex.into());
        }
        let mesh = bench_rig(vertices, influences);
        Ok(Self {
            rotation_centers: mesh.positions.clone(),
            blend_values: (0..vertices).map(|v| (v % 7 + 1) as f32 / 8.0).collect(),
            positions: mesh.positions,
            normals: mesh.normals,
            tangents: mesh.tangents,
            influences: mesh.influences,
            palette: mesh.palette,
        })
    }
}

/// Seed of the benchmark rig.
pub const BENCH_SEED: u64 = 0x5EED;

/// The one benchmark rig of `skinblend bench`, CPU and GPU alike:
/// [`skinblend::fixtures::benchmark_mesh`] with `influences` per vertex over [`BENCH_JOINTS`]
/// joints, seeded with [`BENCH_SEED`].
#[must_use]
pub fn bench_rig(vertices: usize, influences: usize) -> BenchmarkMesh {
    benchmark_mesh(vertices, influences, BENCH_JOINTS, BENCH_SEED)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Reads two timestamps resolved from `query_set` and returns their difference in seconds.
fn read_timestamps(gpu: &GpuSkinner, query_set: &wgpu::QuerySet) -> Result<f64, GpuError> {
    let device = gpu.device();
    let resolve = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("skinblend-gpu bench timestamps"),
        size: 16,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("skinblend-gpu bench timestamps readback"),
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("skinblend-gpu bench resolve"),
    });
    encoder.resolve_query_set(query_set, 0..2, &resolve, 0);
    encoder.copy_buffer_to_buffer(&resolve, 0, &staging, 0, 16);
    gpu.queue().submit([encoder.finish()]);
    let (sender, receiver) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, .., move |result| {
        let _ = sender.send(result);
    });
    gpu.wait("reading timestamps")?;
    let read_error = |message: String| GpuError::ReadBack {
        buffer: "timestamps",
        message,
    };
    receiver
        .try_recv()
        .map_err(|e| read_error(e.to_string()))?
        .map_err(|e| read_error(e.to_string()))?;
    let view = staging
        .get_mapped_range(..)
        .map_err(|e| read_error(e.to_string()))?;
    let ticks: [u64; 2] = bytemuck::pod_read_unaligned(&view[..16]);
    let period_ns = f64::from(gpu.queue().get_timestamp_period());
    Ok(ticks[1].saturating_sub(ticks[0]) as f64 * period_ns * 1e-9)
}

/// Measures one case on `gpu`: builds the synthetic rig, uploads it, times `case.frames` frames
/// (after two warm-up frames) and as many copies of the same bytes, and returns the medians.
/// Allocates the rig and its GPU buffers (about three times `bytes_per_frame`).
///
/// # Errors
/// Any [`GpuError`] of upload or skinning (e.g. [`GpuError::BufferTooLarge`] for a mesh the
/// device cannot hold).
pub fn run(gpu: &GpuSkinner, case: &GpuBenchCase) -> Result<GpuBenchRow, GpuError> {
    let rig = SyntheticRig::new(case.vertices, case.influences)?;
    let mut input = SkinInput::new(
        &rig.positions,
        case.normals.then_some(&rig.normals[..]),
        case.tangents.then_some(&rig.tangents[..]),
        &rig.influences,
    )?;
    input = match crate::methods::method_kernel(case.method).vertex_input {
        Some(VertexInput::RotationCenters) => input.with_rotation_centers(&rig.rotation_centers)?,
        Some(VertexInput::BlendValues) => {
            input.with_blend_values(BlendValues::PerVertex(&rig.blend_values))?
        }
        None => input,
    };
    let mut mesh = gpu.upload(&input)?;
    let options = SkinOptions {
        method: case.method,
        ..SkinOptions::default()
    };
    let palette = prepare(&rig.palette, None, &options)?;
    let bytes_per_frame =
        bytes_per_vertex(case.method, case.influences, case.normals, case.tangents)
            * case.vertices as u64;
    let device = gpu.device();
    let features = device.features();
    let query_set = features.contains(wgpu::Features::TIMESTAMP_QUERY).then(|| {
        device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("skinblend-gpu bench timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        })
    });
    let encoder_timestamps =
        query_set.is_some() && features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);

    let frames = case.frames.max(1);
    let mut kernel = Vec::with_capacity(frames);
    let mut end_to_end = Vec::with_capacity(frames);
    for frame in 0..frames + 2 {
        let start = Instant::now();
        gpu.skin_timed(
            &mut mesh,
            &palette,
            options.run_options(),
            query_set.as_ref(),
        )?;
        gpu.wait("benchmark frame")?;
        let elapsed = start.elapsed().as_secs_f64();
        let kernel_s = match &query_set {
            Some(query_set) => Some(read_timestamps(gpu, query_set)?),
            None => None,
        };
        if frame >= 2 {
            end_to_end.push(elapsed);
            kernel.extend(kernel_s);
        }
    }
    drop(mesh);

    // The copy floor: half the bytes, since a copy reads and writes each byte.
    let copy_bytes = (bytes_per_frame / 2).div_ceil(4).max(1) * 4;
    let limit = device.limits().max_buffer_size;
    if copy_bytes > limit {
        return Err(GpuError::BufferTooLarge {
            buffer: "benchmark copy",
            bytes: copy_bytes,
            limit,
        });
    }
    let buffer = |label, usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: copy_bytes,
            usage,
            mapped_at_creation: false,
        })
    };
    let source = buffer(
        "skinblend-gpu bench copy source",
        wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::STORAGE,
    );
    let target = buffer(
        "skinblend-gpu bench copy target",
        wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::STORAGE,
    );
    let mut copies = Vec::with_capacity(frames);
    for frame in 0..frames + 2 {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("skinblend-gpu bench copy"),
        });
        let timed = query_set.as_ref().filter(|_| encoder_timestamps);
        if let Some(query_set) = timed {
            encoder.write_timestamp(query_set, 0);
        }
        encoder.copy_buffer_to_buffer(&source, 0, &target, 0, copy_bytes);
        if let Some(query_set) = timed {
            encoder.write_timestamp(query_set, 1);
        }
        let start = Instant::now();
        gpu.queue().submit([encoder.finish()]);
        gpu.wait("benchmark copy")?;
        let elapsed = start.elapsed().as_secs_f64();
        let seconds = match timed {
            Some(query_set) => read_timestamps(gpu, query_set)?,
            None => elapsed,
        };
        if frame >= 2 {
            copies.push(seconds);
        }
    }
    Ok(GpuBenchRow {
        case: *case,
        adapter: gpu.adapter_info().name.clone(),
        bytes_per_frame,
        kernel_s: (!kernel.is_empty()).then(|| median(&mut kernel)),
        end_to_end_s: median(&mut end_to_end),
        copy_s: median(&mut copies),
        copy_timing: if encoder_timestamps {
            Timing::Timestamps
        } else {
            Timing::WallClock
        },
    })
}
