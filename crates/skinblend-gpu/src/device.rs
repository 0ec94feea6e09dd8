//! The device and its pipelines: opening an adapter (or taking a renderer's device), the
//! compute pipelines of every method, and the callbacks that turn a lost device or an
//! uncaptured wgpu error into a [`GpuError`]. The kernels' bindings are in `bindings.rs`, the
//! error scopes in `error.rs`; uploading a mesh is in `mesh.rs`; skinning a frame and reading it
//! back in `dispatch.rs`.

use std::sync::{Arc, Mutex, PoisonError};

use skinblend::Method;

use crate::bindings::{bind_group_layout_entries, EXTRAS_STORAGE_BINDINGS, STORAGE_BINDINGS};
use crate::error::ErrorScopes;
use crate::methods::{method_index, method_kernels};
use crate::wgsl;
use crate::GpuError;

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

/// A wgpu device with the LBS, DQS, CoR and blended compute pipelines: uploads meshes, skins
/// them.
///
/// Create one per device and reuse it; it is cheap to share by reference. Every method returns
/// a [`GpuError`] instead of panicking, including when no adapter exists or the device is lost.
#[derive(Debug)]
pub struct GpuSkinner {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) adapter_info: wgpu::AdapterInfo,
    pub(crate) limits: wgpu::Limits,
    pub(crate) timestamps: bool,
    pub(crate) layout: wgpu::BindGroupLayout,
    /// Each method's pipeline, in the order of `methods::method_kernels`: `None` for a method
    /// with a per-vertex input (`MethodKernel::vertex_input`, read at binding 9) on a device
    /// with fewer than [`EXTRAS_STORAGE_BINDINGS`] storage buffers per stage, whose bind group
    /// layout then has no binding 9.
    pub(crate) pipelines: Vec<Option<wgpu::ComputePipeline>>,
    /// Whether the bind group layout has binding 9.
    pub(crate) with_vertex_inputs: bool,
    state: Arc<DeviceState>,
    pub(crate) max_vertices_per_dispatch: Option<u32>,
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
    /// needs 8 storage buffers per shader stage, and 9 for centers of rotation and blended
    /// skinning (with 8, CoR and blended are refused: see [`GpuSkinner::supports`]);
    /// `TIMESTAMP_QUERY` is used by the benchmark when enabled. Replaces the device's
    /// uncaptured-error handler and device-lost callback with ones that turn those events into
    /// [`GpuError`]s.
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

        let with_extras = limits.max_storage_buffers_per_shader_stage >= EXTRAS_STORAGE_BINDINGS;
        let scope = ErrorScopes::push(&device);
        let entries = bind_group_layout_entries();
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("skinblend-gpu bind group layout"),
            entries: if with_extras {
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
        let pipelines = method_kernels()
            .iter()
            .map(|kernel| {
                if kernel.vertex_input.is_some() && !with_extras {
                    return None;
                }
                let label = format!("skinblend-gpu {} skinning", kernel.description);
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&label),
                    source: wgpu::ShaderSource::Wgsl(wgsl::compute_source(kernel).into()),
                });
                Some(
                    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(&label),
                        layout: Some(&pipeline_layout),
                        module: &module,
                        entry_point: Some(kernel.compute_entry_point),
                        compilation_options: wgpu::PipelineCompilationOptions::default(),
                        cache: None,
                    }),
                )
            })
            .collect();
        scope.pop("building the compute pipelines")?;
        let skinner = Self {
            device,
            queue,
            adapter_info,
            limits,
            timestamps,
            layout,
            pipelines,
            with_vertex_inputs: with_extras,
            state,
            max_vertices_per_dispatch,
        };
        skinner.check("building the compute pipelines")?;
        Ok(skinner)
    }

    /// Whether this device can skin with `method`: LBS and DQS always; CoR and blended where
    /// the device has 9 storage buffers per shader stage (a device opened by
    /// [`GpuSkinner::new`] takes the adapter's own limit, well above 9 on common Vulkan drivers,
    /// lavapipe included; a device created with WebGPU's default limits, 8, has not).
    #[must_use]
    pub fn supports(&self, method: Method) -> bool {
        self.pipelines[method_index(method)].is_some()
    }

    /// The adapter's name, backend and driver, for reports.
    #[must_use]
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.adapter_info
    }

    /// The device (to bind [`crate::GpuMesh::output_buffer`] in your own pipelines).
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
    pub(crate) fn check(&self, operation: &'static str) -> Result<(), GpuError> {
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
}
