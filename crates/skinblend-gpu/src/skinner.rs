//! The device, the pipelines, the uploaded mesh, one dispatch per frame, and readback.

use std::num::NonZeroU64;
use std::sync::{mpsc, Arc, Mutex, PoisonError};

use bytemuck::{Pod, Zeroable};
use glam::{Vec3, Vec4};
use skinblend::{Diagnostics, Method, PreparedPalette, SkinInput, Skinned};
use wgpu::util::DeviceExt;

use crate::palette::{gpu_rotation_center, GpuPalette, MAX_JOINT_BYTES};
use crate::wgsl;
use crate::GpuError;

/// Invocations per workgroup of the compute kernels (`@workgroup_size(64)` in the WGSL): a
/// multiple of every vendor's SIMD width (32 or 64) and small enough for any device.
pub const WORKGROUP_SIZE: u32 = 64;

/// Storage bindings the LBS and DQS kernels use in one stage (bindings 1 to 8 of
/// `shaders/compute.wgsl`); WebGPU's default limit is exactly this.
const STORAGE_BINDINGS: u32 = 8;

/// Storage bindings the CoR kernel uses in one stage: the eight above and the per-vertex
/// centers of rotation (binding 9). A device with fewer skins LBS and DQS but refuses CoR with
/// [`GpuError::UnsuitableAdapter`].
const COR_STORAGE_BINDINGS: u32 = 9;

/// Dispatch chunks start at a multiple of this many vertices, so every binding's offset
/// (vertices × bytes per vertex) is a multiple of 256 bytes, the largest storage offset
/// alignment a device may demand, and the packed u16 joint indices start on a whole u32.
const CHUNK_GRANULE_VERTICES: u64 = 256;

/// The smallest buffer the crate creates: bindings may not be empty, and 16 bytes holds one
/// `vec4` (the dummy tangent buffer of a mesh without tangents).
const MIN_BUFFER_BYTES: u64 = 16;

/// The per-chunk uniform `SkinParams` of `shaders/compute.wgsl`: 16 bytes, four u32.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
struct Params {
    vertex_count: u32,
    influences_per_vertex: u32,
    flags: u32,
    output_stride: u32,
}

const FLAG_NORMALS: u32 = 1;
const FLAG_TANGENTS: u32 = 2;
const FLAG_RENORMALIZE: u32 = 4;

/// The counters of `SkinCounters` in `shaders/compute.wgsl`: three u32 atomics, padded to 16.
const COUNTER_BYTES: u64 = 16;

/// How to choose the adapter and split dispatches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuOptions {
    /// Which adapter to prefer when there are several (default: high performance).
    pub power_preference: wgpu::PowerPreference,
    /// Caps the vertices of one dispatch (rounded up to a multiple of 256). `None` (default):
    /// as many as the device's binding-size and workgroup-count limits allow. Meshes above the
    /// cap are skinned by several dispatches in one pass, with the same results.
    pub max_vertices_per_dispatch: Option<u32>,
}

impl Default for GpuOptions {
    fn default() -> Self {
        Self {
            power_preference: wgpu::PowerPreference::HighPerformance,
            max_vertices_per_dispatch: None,
        }
    }
}

/// What the device's callbacks have reported; checked before and after every operation.
#[derive(Debug, Default)]
struct DeviceState {
    lost: Mutex<Option<String>>,
    uncaptured: Mutex<Option<String>>,
}

impl DeviceState {
    fn set(slot: &Mutex<Option<String>>, message: String) {
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(message);
        }
    }
}

/// A wgpu device with the LBS, DQS and CoR compute pipelines: uploads meshes, skins them.
///
/// Create one per device and reuse it; it is cheap to share by reference. Every method returns
/// a [`GpuError`] instead of panicking, including when no adapter exists or the device is lost.
#[derive(Debug)]
pub struct GpuSkinner {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter_info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    timestamps: bool,
    layout: wgpu::BindGroupLayout,
    linear: wgpu::ComputePipeline,
    dual_quat: wgpu::ComputePipeline,
    /// `None` on a device with fewer than [`COR_STORAGE_BINDINGS`] storage buffers per stage;
    /// the bind group layout then has no binding 9.
    center_of_rotation: Option<wgpu::ComputePipeline>,
    state: Arc<DeviceState>,
    max_vertices_per_dispatch: Option<u32>,
}

/// A frame skinned on a mesh and not yet superseded: what readback needs besides the buffers.
#[derive(Debug, Clone, Copy)]
struct Frame {
    non_rigid_joints: usize,
}

/// One dispatch's worth of vertices and its bindings.
#[derive(Debug)]
struct Chunk {
    vertex_count: u32,
    bind_group: wgpu::BindGroup,
    params: wgpu::Buffer,
}

/// Where each attribute sits in the output vertex buffer (see [`GpuMesh::output_buffer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLayout {
    /// Bytes from one vertex to the next: 12, plus 12 with normals, plus 16 with tangents.
    pub stride_bytes: u64,
    /// Offset of the position (`Float32x3`), always 0.
    pub position_offset: u64,
    /// Offset of the unit normal (`Float32x3`), when the mesh has normals: 12.
    pub normal_offset: Option<u64>,
    /// Offset of the tangent (`Float32x4`, `w` = handedness), when the mesh has tangents: 12 or
    /// 24.
    pub tangent_offset: Option<u64>,
}

/// A mesh uploaded once (positions, normals, tangents, influences, and the centers of rotation
/// when the input has them) with its output buffer.
///
/// Skin it each frame with [`GpuSkinner::skin`]; read it with [`GpuSkinner::read_back`] or bind
/// [`GpuMesh::output_buffer`] as a vertex buffer (layout in [`GpuMesh::output_layout`]).
#[derive(Debug)]
pub struct GpuMesh {
    vertex_count: usize,
    influences_per_vertex: usize,
    joint_count: usize,
    has_rotation_centers: bool,
    layout: OutputLayout,
    output: wgpu::Buffer,
    counters: wgpu::Buffer,
    palette: wgpu::Buffer,
    chunks: Vec<Chunk>,
    renormalize: bool,
    scratch: GpuPalette,
    frame: Option<Frame>,
    // The input buffers, kept alive for the bind groups.
    _inputs: Vec<wgpu::Buffer>,
}

impl GpuMesh {
    /// Number of vertices.
    #[must_use]
    pub fn vertex_count(&self) -> usize {
        self.vertex_count
    }

    /// The skinned vertices, interleaved per [`GpuMesh::output_layout`]; usages `STORAGE |
    /// VERTEX | COPY_SRC`, so a renderer can bind it as a vertex buffer after [`GpuSkinner::skin`]
    /// (wgpu orders the submissions).
    #[must_use]
    pub fn output_buffer(&self) -> &wgpu::Buffer {
        &self.output
    }

    /// Stride and attribute offsets of [`GpuMesh::output_buffer`].
    #[must_use]
    pub fn output_layout(&self) -> OutputLayout {
        self.layout
    }

    /// Whether the mesh was uploaded with centers of rotation (needed by
    /// [`Method::CenterOfRotation`]).
    #[must_use]
    pub fn has_rotation_centers(&self) -> bool {
        self.has_rotation_centers
    }

    /// Number of dispatches one frame takes (1 unless the mesh exceeds a device limit or
    /// [`GpuOptions::max_vertices_per_dispatch`]).
    #[must_use]
    pub fn dispatch_count(&self) -> usize {
        self.chunks.len()
    }
}

impl GpuSkinner {
    /// Opens the preferred adapter with default options (see [`GpuSkinner::with_options`]).
    ///
    /// # Errors
    /// As [`GpuSkinner::with_options`].
    pub fn new() -> Result<Self, GpuError> {
        Self::with_options(GpuOptions::default())
    }

    /// Opens an adapter (Vulkan; `WGPU_BACKEND`/`WGPU_ADAPTER_NAME` environment variables are
    /// honoured), creates a device with the adapter's own limits (so large meshes fit) and
    /// timestamp queries where available, and compiles the pipelines.
    ///
    /// # Errors
    /// [`GpuError::NoAdapter`], [`GpuError::RequestDevice`], [`GpuError::UnsuitableAdapter`]
    /// (fewer than 8 storage buffers per stage), [`GpuError::Wgpu`] if the shaders fail to build.
    pub fn with_options(options: GpuOptions) -> Result<Self, GpuError> {
        if wgpu::Instance::enabled_backend_features().is_empty() {
            return Err(GpuError::NoAdapter {
                reason: "this build has no wgpu backend for this platform (Vulkan only)".into(),
            });
        }
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: options.power_preference,
            ..Default::default()
        }))
        .map_err(|error| GpuError::NoAdapter {
            reason: error.to_string(),
        })?;
        let adapter_info = adapter.get_info();
        let adapter_limits = adapter.limits();
        if adapter_limits.max_storage_buffers_per_shader_stage < STORAGE_BINDINGS {
            return Err(GpuError::UnsuitableAdapter {
                adapter: adapter_info.name.clone(),
                what: "max_storage_buffers_per_shader_stage",
                found: u64::from(adapter_limits.max_storage_buffers_per_shader_stage),
                needed: u64::from(STORAGE_BINDINGS),
            });
        }
        // Timestamps are only for the benchmark; take them where the adapter has them.
        let required_features = adapter.features()
            & (wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("skinblend-gpu device"),
            required_features,
            required_limits: adapter_limits.clone(),
            memory_hints: wgpu::MemoryHints::Performance,
            ..Default::default()
        }))
        .map_err(|error| GpuError::RequestDevice {
            adapter: adapter_info.name.clone(),
            reason: error.to_string(),
        })?;
        Self::from_device(
            device,
            queue,
            adapter_info,
            options.max_vertices_per_dispatch,
        )
    }

    /// Uses a device you created (a renderer's), so the output buffers live on it. The device
    /// needs 8 storage buffers per shader stage, and 9 for centers of rotation (with 8, CoR is
    /// refused: see [`GpuSkinner::supports`]); `TIMESTAMP_QUERY` is used by the benchmark when
    /// enabled. Replaces the device's uncaptured-error handler and device-lost callback with
    /// ones that turn those events into [`GpuError`]s.
    ///
    /// # Errors
    /// [`GpuError::UnsuitableAdapter`], [`GpuError::Wgpu`] if the shaders fail to build.
    pub fn from_device(
        device: wgpu::Device,
        queue: wgpu::Queue,
        adapter_info: wgpu::AdapterInfo,
        max_vertices_per_dispatch: Option<u32>,
    ) -> Result<Self, GpuError> {
        let limits = device.limits();
        if limits.max_storage_buffers_per_shader_stage < STORAGE_BINDINGS {
            return Err(GpuError::UnsuitableAdapter {
                adapter: adapter_info.name.clone(),
                what: "max_storage_buffers_per_shader_stage",
                found: u64::from(limits.max_storage_buffers_per_shader_stage),
                needed: u64::from(STORAGE_BINDINGS),
            });
        }
        let timestamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let state = Arc::new(DeviceState::default());
        let on_error = Arc::clone(&state);
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            DeviceState::set(&on_error.uncaptured, error.to_string());
        }));
        let on_lost = Arc::clone(&state);
        device.set_device_lost_callback(move |reason, message| {
            DeviceState::set(&on_lost.lost, format!("{reason:?}: {message}"));
        });

        let with_centers = limits.max_storage_buffers_per_shader_stage >= COR_STORAGE_BINDINGS;
        let scope = ErrorScopes::push(&device);
        let entries = bind_group_layout_entries();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("skinblend-gpu bind group layout"),
            entries: if with_centers {
                &entries[..]
            } else {
                &entries[..entries.len() - 1]
            },
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("skinblend-gpu pipeline layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = |label: &'static str, source: String, entry_point: &'static str| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry_point),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                cache: None,
            })
        };
        let linear = pipeline(
            "skinblend-gpu linear blend skinning",
            wgsl::compute_linear_source(),
            "skin_linear_main",
        );
        let dual_quat = pipeline(
            "skinblend-gpu dual quaternion skinning",
            wgsl::compute_dual_quat_source(),
            "skin_dual_quat_main",
        );
        let center_of_rotation = with_centers.then(|| {
            pipeline(
                "skinblend-gpu centers of rotation skinning",
                wgsl::compute_cor_source(),
                "skin_cor_main",
            )
        });
        scope.pop("building the compute pipelines")?;
        let skinner = Self {
            device,
            queue,
            adapter_info,
            limits,
            timestamps,
            layout,
            linear,
            dual_quat,
            center_of_rotation,
            state,
            max_vertices_per_dispatch,
        };
        skinner.check("building the compute pipelines")?;
        Ok(skinner)
    }

    /// Whether this device can skin with `method`: LBS and DQS always; CoR where the device has
    /// 9 storage buffers per shader stage (a device opened by [`GpuSkinner::new`] takes the
    /// adapter's own limit, well above 9 on common Vulkan drivers, lavapipe included; a device
    /// created with WebGPU's default limits, 8, has not).
    #[must_use]
    pub fn supports(&self, method: Method) -> bool {
        match method {
            Method::Linear | Method::DualQuaternion => true,
            Method::CenterOfRotation => self.center_of_rotation.is_some(),
        }
    }

    /// The adapter's name, backend and driver, for reports.
    #[must_use]
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.adapter_info
    }

    /// The device (to bind [`GpuMesh::output_buffer`] in your own pipelines).
    #[must_use]
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue the dispatches are submitted to.
    #[must_use]
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// Whether the device has timestamp queries (kernel times in the benchmark).
    #[must_use]
    pub fn has_timestamps(&self) -> bool {
        self.timestamps
    }

    /// Returns the device-lost reason or the first uncaptured wgpu error, if any happened.
    fn check(&self, operation: &'static str) -> Result<(), GpuError> {
        let lost = self
            .state
            .lost
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(reason) = lost {
            return Err(GpuError::DeviceLost { operation, reason });
        }
        let uncaptured = self
            .state
            .uncaptured
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(message) = uncaptured {
            return Err(GpuError::Wgpu { operation, message });
        }
        Ok(())
    }

    /// Blocks until the queue is idle (callbacks such as buffer maps run here).
    pub(crate) fn wait(&self, operation: &'static str) -> Result<(), GpuError> {
        let polled = self.device.poll(wgpu::PollType::wait_indefinitely());
        self.check(operation)?;
        polled.map(|_| ()).map_err(|error| GpuError::Wgpu {
            operation,
            message: error.to_string(),
        })
    }

    /// Uploads a mesh once: positions, normals and tangents when present, influences (any k;
    /// joint indices packed two u16 per u32), the centers of rotation when the input has them
    /// ([`SkinInput::with_rotation_centers`]; one `vec4` per vertex, `w` = 1 with a center, 0
    /// without, see [`crate::gpu_rotation_centers`]), and creates the output, counter and
    /// palette buffers and one bind group per dispatch chunk. Allocates GPU memory for all of
    /// them. A mesh with centers can be skinned by every method; one without, by LBS and DQS.
    ///
    /// # Errors
    /// [`GpuError::BufferTooLarge`] when an attribute exceeds the device's `max_buffer_size`,
    /// [`GpuError::VertexTooLarge`], [`GpuError::DeviceLost`],
    /// [`GpuError::Wgpu`] (e.g. out of memory).
    pub fn upload(&self, input: &SkinInput<'_>) -> Result<GpuMesh, GpuError> {
        self.check("uploading a mesh")?;
        let influences = input.influences();
        let vertex_count = input.vertex_count();
        let k = influences.influences_per_vertex();
        let joint_count = influences.joint_count();
        let has_normals = input.normals().is_some();
        let has_tangents = input.tangents().is_some();
        // Centers are only worth uploading where the CoR kernel can read them.
        let with_centers_binding = self.center_of_rotation.is_some();
        let centers_in = input.rotation_centers();
        let has_centers = centers_in.is_some();
        let upload_centers = has_centers && with_centers_binding;
        let layout = output_layout(has_normals, has_tangents);
        let stride_floats = u32::try_from(layout.stride_bytes / 4).unwrap_or(u32::MAX);

        // Bytes per vertex of each chunked binding: a chunk must keep every one under the
        // device's binding size.
        let k64 = k as u64;
        let mut per_vertex: Vec<(&'static str, u64)> = vec![
            ("positions", 12),
            ("joints", 2 * k64),
            ("weights", 4 * k64),
            ("output", layout.stride_bytes),
        ];
        if has_normals {
            per_vertex.push(("normals", 12));
        }
        if has_tangents {
            per_vertex.push(("tangents", 16));
        }
        if upload_centers {
            per_vertex.push(("rotation centers", 16));
        }
        let n = vertex_count as u64;
        for &(buffer, bytes_per_vertex) in &per_vertex {
            let bytes = n.saturating_mul(bytes_per_vertex);
            if bytes > self.limits.max_buffer_size {
                return Err(GpuError::BufferTooLarge {
                    buffer,
                    bytes,
                    limit: self.limits.max_buffer_size,
                });
            }
        }
        let palette_bytes = (joint_count as u64 * MAX_JOINT_BYTES).max(MIN_BUFFER_BYTES);
        if palette_bytes > self.limits.max_buffer_size {
            return Err(GpuError::BufferTooLarge {
                buffer: "palette",
                bytes: palette_bytes,
                limit: self.limits.max_buffer_size,
            });
        }
        let chunk_vertices = chunk_vertices(
            &per_vertex,
            k64.max(u64::from(stride_floats)),
            &self.limits,
            self.max_vertices_per_dispatch,
        )?;

        let scope = ErrorScopes::push(&self.device);
        let storage = wgpu::BufferUsages::STORAGE;
        let positions = self.buffer_init(
            "skinblend-gpu positions",
            bytemuck::cast_slice(input.positions()),
            storage,
        );
        let normals = match input.normals() {
            Some(normals) => self.buffer_init(
                "skinblend-gpu normals",
                bytemuck::cast_slice(normals),
                storage,
            ),
            None => self.buffer_init("skinblend-gpu normals (none)", &[], storage),
        };
        let tangents = match input.tangents() {
            Some(tangents) => self.buffer_init(
                "skinblend-gpu tangents",
                bytemuck::cast_slice(tangents),
                storage,
            ),
            None => self.buffer_init("skinblend-gpu tangents (none)", &[], storage),
        };
        let centers_bytes: Vec<[f32; 4]> = match centers_in.filter(|_| upload_centers) {
            Some(centers) => centers.iter().map(|&c| gpu_rotation_center(c)).collect(),
            None => Vec::new(),
        };
        let centers = self.buffer_init(
            if upload_centers {
                "skinblend-gpu rotation centers"
            } else {
                "skinblend-gpu rotation centers (none)"
            },
            bytemuck::cast_slice(&centers_bytes),
            storage,
        );
        drop(centers_bytes);
        let joints = self.buffer_init(
            "skinblend-gpu joint indices",
            bytemuck::cast_slice(influences.joints()),
            storage,
        );
        let weights = self.buffer_init(
            "skinblend-gpu weights",
            bytemuck::cast_slice(influences.weights()),
            storage,
        );
        let output = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("skinblend-gpu skinned vertices"),
            size: (n * layout.stride_bytes).max(MIN_BUFFER_BYTES),
            usage: storage | wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let counters = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("skinblend-gpu diagnostics counters"),
            size: COUNTER_BYTES,
            usage: storage | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let palette = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("skinblend-gpu palette"),
            size: palette_bytes,
            usage: storage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });

        let mut chunks = Vec::new();
        let mut first = 0u64;
        while first < n {
            let count = chunk_vertices.min(n - first);
            let flags = params_flags(has_normals, has_tangents, true);
            let params = Params {
                // `chunk_vertices` fits in u32 (it is capped by the workgroup count).
                vertex_count: u32::try_from(count).unwrap_or(u32::MAX),
                influences_per_vertex: u32::try_from(k).unwrap_or(u32::MAX),
                flags,
                output_stride: stride_floats,
            };
            let params_buffer = self.buffer_init(
                "skinblend-gpu chunk parameters",
                bytemuck::bytes_of(&params),
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            );
            let range =
                |buffer, bytes_per_vertex| chunk_range(buffer, first, count, bytes_per_vertex);
            let whole = wgpu::Buffer::as_entire_binding;
            let entries = [
                entry(0, whole(&params_buffer)),
                entry(1, range(&positions, 12)),
                entry(
                    2,
                    if has_normals {
                        range(&normals, 12)
                    } else {
                        whole(&normals)
                    },
                ),
                entry(
                    3,
                    if has_tangents {
                        range(&tangents, 16)
                    } else {
                        whole(&tangents)
                    },
                ),
                entry(4, range(&joints, 2 * k64)),
                entry(5, range(&weights, 4 * k64)),
                entry(6, range(&output, layout.stride_bytes)),
                entry(7, whole(&counters)),
                entry(8, whole(&palette)),
                entry(
                    9,
                    if upload_centers {
                        range(&centers, 16)
                    } else {
                        whole(&centers)
                    },
                ),
            ];
            let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("skinblend-gpu chunk bind group"),
                layout: &self.layout,
                // Binding 9 exists only in a layout with the CoR kernel.
                entries: if with_centers_binding {
                    &entries[..]
                } else {
                    &entries[..entries.len() - 1]
                },
            });
            chunks.push(Chunk {
                vertex_count: params.vertex_count,
                bind_group,
                params: params_buffer,
            });
            first += count;
        }
        scope.pop("uploading a mesh")?;
        self.check("uploading a mesh")?;
        Ok(GpuMesh {
            vertex_count,
            influences_per_vertex: k,
            joint_count,
            has_rotation_centers: has_centers,
            layout,
            output,
            counters,
            palette,
            chunks,
            renormalize: true,
            scratch: GpuPalette::Linear(Vec::new()),
            frame: None,
            _inputs: vec![positions, normals, tangents, joints, weights, centers],
        })
    }

    fn buffer_init(
        &self,
        label: &'static str,
        contents: &[u8],
        usage: wgpu::BufferUsages,
    ) -> wgpu::Buffer {
        if contents.is_empty() {
            return self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: MIN_BUFFER_BYTES,
                usage,
                mapped_at_creation: false,
            });
        }
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
    }

    /// Uploads this frame's palette and submits one compute pass that skins the whole mesh
    /// into [`GpuMesh::output_buffer`] (one dispatch, or one per chunk when the mesh exceeds a
    /// device limit). Returns without waiting for the GPU. The method and options come from
    /// `palette` (prepared on the CPU by `skinblend::prepare`, so both paths share the split).
    /// Allocates nothing after the first frame of a method.
    ///
    /// # Errors
    /// `SkinError::PaletteLength` (as [`GpuError::Skin`]) when the palette has fewer joints
    /// than the influences address, `SkinError::MissingRotationCenters` (as [`GpuError::Skin`])
    /// for CoR on a mesh uploaded without centers, [`GpuError::UnsuitableAdapter`] for CoR on a
    /// device without its kernel ([`GpuSkinner::supports`]), [`GpuError::DeviceLost`],
    /// [`GpuError::Wgpu`].
    pub fn skin(&self, mesh: &mut GpuMesh, palette: &PreparedPalette) -> Result<(), GpuError> {
        self.skin_timed(mesh, palette, None)
    }

    /// [`GpuSkinner::skin`] with optional timestamps written at the start and end of the pass.
    pub(crate) fn skin_timed(
        &self,
        mesh: &mut GpuMesh,
        palette: &PreparedPalette,
        timestamps: Option<&wgpu::QuerySet>,
    ) -> Result<(), GpuError> {
        self.check("skinning")?;
        mesh.frame = None;
        let pipeline = match palette.options().method {
            Method::Linear => &self.linear,
            Method::DualQuaternion => &self.dual_quat,
            Method::CenterOfRotation => {
                let Some(pipeline) = &self.center_of_rotation else {
                    return Err(GpuError::UnsuitableAdapter {
                        adapter: self.adapter_info.name.clone(),
                        what: "max_storage_buffers_per_shader_stage (for centers of rotation)",
                        found: u64::from(self.limits.max_storage_buffers_per_shader_stage),
                        needed: u64::from(COR_STORAGE_BINDINGS),
                    });
                };
                if !mesh.has_rotation_centers {
                    return Err(skinblend::SkinError::MissingRotationCenters {
                        vertex_count: mesh.vertex_count,
                    }
                    .into());
                }
                pipeline
            }
        };
        mesh.scratch.fill(palette, Some(mesh.joint_count))?;
        let scope = ErrorScopes::push(&self.device);
        let bytes = mesh.scratch.bytes();
        if !bytes.is_empty() {
            self.queue.write_buffer(&mesh.palette, 0, bytes);
        }
        let renormalize = palette.options().renormalize;
        if renormalize != mesh.renormalize {
            for chunk in &mesh.chunks {
                let params = Params {
                    vertex_count: chunk.vertex_count,
                    influences_per_vertex: u32::try_from(mesh.influences_per_vertex)
                        .unwrap_or(u32::MAX),
                    flags: params_flags(
                        mesh.layout.normal_offset.is_some(),
                        mesh.layout.tangent_offset.is_some(),
                        renormalize,
                    ),
                    output_stride: u32::try_from(mesh.layout.stride_bytes / 4).unwrap_or(0),
                };
                self.queue
                    .write_buffer(&chunk.params, 0, bytemuck::bytes_of(&params));
            }
            mesh.renormalize = renormalize;
        }
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("skinblend-gpu skin frame"),
            });
        encoder.clear_buffer(&mesh.counters, 0, None);
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("skinblend-gpu skinning pass"),
                timestamp_writes: timestamps.map(|query_set| wgpu::ComputePassTimestampWrites {
                    query_set,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
            });
            pass.set_pipeline(pipeline);
            for chunk in &mesh.chunks {
                pass.set_bind_group(0, &chunk.bind_group, &[]);
                pass.dispatch_workgroups(chunk.vertex_count.div_ceil(WORKGROUP_SIZE), 1, 1);
            }
        }
        self.queue.submit([encoder.finish()]);
        scope.pop("skinning")?;
        self.check("skinning")?;
        mesh.frame = Some(Frame {
            non_rigid_joints: palette.non_rigid_joints(),
        });
        Ok(())
    }

    /// Waits for the last frame skinned on `mesh` and copies it back: positions, normals and
    /// tangents (when the mesh has them) and the diagnostics. `singular_normal_matrices`,
    /// `sign_flips` and `unweighted_vertices` are counted on the GPU with atomics (exact, as
    /// u32); `non_rigid_joints` comes from the palette. Allocates the result and two staging
    /// buffers.
    ///
    /// # Errors
    /// [`GpuError::NothingSkinned`], [`GpuError::ReadBack`], [`GpuError::DeviceLost`],
    /// [`GpuError::Wgpu`].
    pub fn read_back(&self, mesh: &GpuMesh) -> Result<Skinned, GpuError> {
        self.check("reading back")?;
        let frame = mesh.frame.ok_or(GpuError::NothingSkinned)?;
        let output_bytes = mesh.vertex_count as u64 * mesh.layout.stride_bytes;
        let scope = ErrorScopes::push(&self.device);
        let staging = |label, size| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let vertices = staging(
            "skinblend-gpu readback vertices",
            output_bytes.max(MIN_BUFFER_BYTES),
        );
        let counters = staging("skinblend-gpu readback counters", COUNTER_BYTES);
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("skinblend-gpu readback"),
            });
        if output_bytes > 0 {
            encoder.copy_buffer_to_buffer(&mesh.output, 0, &vertices, 0, output_bytes);
        }
        encoder.copy_buffer_to_buffer(&mesh.counters, 0, &counters, 0, COUNTER_BYTES);
        self.queue.submit([encoder.finish()]);
        let (sender, receiver) = mpsc::channel();
        for (name, buffer) in [("output", &vertices), ("counters", &counters)] {
            let sender = sender.clone();
            buffer.map_async(wgpu::MapMode::Read, .., move |result| {
                // The receiver outlives the wait below; a failed send only means it is gone.
                let _ = sender.send((name, result));
            });
        }
        drop(sender);
        self.wait("reading back")?;
        scope.pop("reading back")?;
        for (name, result) in receiver.try_iter() {
            result.map_err(|error| GpuError::ReadBack {
                buffer: name,
                message: error.to_string(),
            })?;
        }
        let map_error = |buffer, error: wgpu::MapRangeError| GpuError::ReadBack {
            buffer,
            message: error.to_string(),
        };
        let counts: [u32; 4] = {
            let view = counters
                .get_mapped_range(..)
                .map_err(|e| map_error("counters", e))?;
            bytemuck::pod_read_unaligned(&view[..16])
        };
        let n = mesh.vertex_count;
        let mut positions = Vec::with_capacity(n);
        let mut normals = mesh.layout.normal_offset.map(|_| Vec::with_capacity(n));
        let mut tangents = mesh.layout.tangent_offset.map(|_| Vec::with_capacity(n));
        if n > 0 {
            let view = vertices
                .get_mapped_range(..)
                .map_err(|e| map_error("output", e))?;
            let floats: &[f32] = bytemuck::cast_slice(&view[..output_bytes as usize]);
            let stride = (mesh.layout.stride_bytes / 4) as usize;
            let normal_at = mesh.layout.normal_offset.map(|o| (o / 4) as usize);
            let tangent_at = mesh.layout.tangent_offset.map(|o| (o / 4) as usize);
            for vertex in floats.chunks_exact(stride) {
                positions.push(Vec3::from_slice(&vertex[..3]));
                if let (Some(out), Some(at)) = (normals.as_mut(), normal_at) {
                    out.push(Vec3::from_slice(&vertex[at..at + 3]));
                }
                if let (Some(out), Some(at)) = (tangents.as_mut(), tangent_at) {
                    out.push(Vec4::from_slice(&vertex[at..at + 4]));
                }
            }
        }
        Ok(Skinned {
            positions,
            normals,
            tangents,
            diagnostics: Diagnostics {
                singular_normal_matrices: counts[0] as usize,
                non_rigid_joints: frame.non_rigid_joints,
                sign_flips: counts[1] as usize,
                unweighted_vertices: counts[2] as usize,
            },
        })
    }

    /// Skins one frame and reads it back ([`GpuSkinner::skin`] then [`GpuSkinner::read_back`]).
    ///
    /// # Errors
    /// Those of both.
    pub fn skin_and_read_back(
        &self,
        mesh: &mut GpuMesh,
        palette: &PreparedPalette,
    ) -> Result<Skinned, GpuError> {
        self.skin(mesh, palette)?;
        self.read_back(mesh)
    }
}

/// The `flags` of [`Params`].
fn params_flags(normals: bool, tangents: bool, renormalize: bool) -> u32 {
    let mut flags = 0;
    if normals {
        flags |= FLAG_NORMALS;
    }
    if tangents {
        flags |= FLAG_TANGENTS;
    }
    if renormalize {
        flags |= FLAG_RENORMALIZE;
    }
    flags
}

/// The binding of vertices `first .. first + count` of a buffer with `bytes_per_vertex` each.
fn chunk_range(
    buffer: &wgpu::Buffer,
    first: u64,
    count: u64,
    bytes_per_vertex: u64,
) -> wgpu::BindingResource<'_> {
    // Joint indices are u16: round the range up to whole u32 words (the buffer is padded to 4
    // bytes by `create_buffer_init`).
    let size = (count * bytes_per_vertex).div_ceil(4) * 4;
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer,
        offset: first * bytes_per_vertex,
        size: NonZeroU64::new(size.max(4)),
    })
}

fn entry(binding: u32, resource: wgpu::BindingResource<'_>) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry { binding, resource }
}

/// The layout of `shaders/compute.wgsl`'s bindings (see the table there), binding 9 (the CoR
/// kernel's centers) last so that a device without the CoR kernel can leave it off.
fn bind_group_layout_entries() -> [wgpu::BindGroupLayoutEntry; 10] {
    let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    [
        wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: NonZeroU64::new(std::mem::size_of::<Params>() as u64),
            },
            count: None,
        },
        storage(1, true),
        storage(2, true),
        storage(3, true),
        storage(4, true),
        storage(5, true),
        storage(6, false),
        storage(7, false),
        storage(8, true),
        storage(9, true),
    ]
}

/// The interleaved output layout for the attributes a mesh has.
#[must_use]
pub(crate) fn output_layout(has_normals: bool, has_tangents: bool) -> OutputLayout {
    let normal_offset = has_normals.then_some(12);
    let tangent_offset = has_tangents.then_some(if has_normals { 24 } else { 12 });
    OutputLayout {
        stride_bytes: 12 + 12 * u64::from(has_normals) + 16 * u64::from(has_tangents),
        position_offset: 0,
        normal_offset,
        tangent_offset,
    }
}

/// The most vertices one dispatch may cover: every binding within
/// `max_storage_buffer_binding_size`, the workgroup count within
/// `max_compute_workgroups_per_dimension`, every u32 index in range (`index_factor` is the
/// largest number of u32 elements per vertex in one array), a multiple of
/// [`CHUNK_GRANULE_VERTICES`], and at most `cap` when given.
pub(crate) fn chunk_vertices(
    per_vertex: &[(&'static str, u64)],
    index_factor: u64,
    limits: &wgpu::Limits,
    cap: Option<u32>,
) -> Result<u64, GpuError> {
    let granule = CHUNK_GRANULE_VERTICES.max(u64::from(limits.min_storage_buffer_offset_alignment));
    let binding = limits.max_storage_buffer_binding_size;
    let mut most =
        u64::from(limits.max_compute_workgroups_per_dimension) * u64::from(WORKGROUP_SIZE);
    for &(buffer, bytes_per_vertex) in per_vertex {
        let fit = binding / bytes_per_vertex.max(1);
        if fit < granule {
            return Err(GpuError::VertexTooLarge {
                buffer,
                bytes_per_vertex,
                limit: binding,
            });
        }
        most = most.min(fit);
    }
    most = most.min(u64::from(u32::MAX) / index_factor.max(1));
    if let Some(cap) = cap {
        most = most.min(u64::from(cap).div_ceil(granule) * granule);
    }
    let chunk = most / granule * granule;
    if chunk == 0 {
        // Only a vertex with billions of influence slots gets here.
        return Err(GpuError::VertexTooLarge {
            buffer: "u32 element index",
            bytes_per_vertex: 4 * index_factor,
            limit: 4 * u64::from(u32::MAX),
        });
    }
    Ok(chunk)
}

/// Validation, out-of-memory and internal error scopes around one operation.
struct ErrorScopes {
    guards: Vec<wgpu::ErrorScopeGuard>,
}

impl Drop for ErrorScopes {
    /// On an early return the scopes must still be popped innermost first: wgpu panics on any
    /// other order.
    fn drop(&mut self) {
        while let Some(guard) = self.guards.pop() {
            drop(guard);
        }
    }
}

impl ErrorScopes {
    fn push(device: &wgpu::Device) -> Self {
        Self {
            guards: vec![
                device.push_error_scope(wgpu::ErrorFilter::Validation),
                device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
                device.push_error_scope(wgpu::ErrorFilter::Internal),
            ],
        }
    }

    /// Pops the scopes (innermost first) and returns the first error any caught.
    fn pop(mut self, operation: &'static str) -> Result<(), GpuError> {
        let mut first = None;
        while let Some(guard) = self.guards.pop() {
            if let Some(error) = pollster::block_on(guard.pop()) {
                first.get_or_insert(error);
            }
        }
        match first {
            None => Ok(()),
            Some(error) => Err(GpuError::Wgpu {
                operation,
                message: error.to_string(),
            }),
        }
    }
}
