//! A mesh uploaded once: its input buffers, output and palette buffers, and one bind group per
//! dispatch chunk (chunks keep every binding within the device's limits).

use std::num::NonZeroU64;

use skinblend::{SkinInput, VertexInput};
use wgpu::util::DeviceExt;

use crate::bindings::{params_flags, Params, COUNTER_BYTES, MIN_BUFFER_BYTES, WORKGROUP_SIZE};
use crate::error::ErrorScopes;
use crate::methods::GpuVertexInput;
use crate::palette::{GpuPalette, MAX_JOINT_BYTES};
use crate::{GpuError, GpuSkinner};

/// Dispatch chunks start at a multiple of this many vertices, so every binding's offset
/// (vertices × bytes per vertex) is a multiple of 256 bytes, the largest storage offset
/// alignment a device may demand, and the packed u16 joint indices start on a whole u32.
const CHUNK_GRANULE_VERTICES: u64 = 256;

/// A frame skinned on a mesh and not yet superseded: what readback needs besides the buffers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame {
    pub(crate) non_rigid_joints: usize,
}

/// One dispatch's worth of vertices and its bindings.
#[derive(Debug)]
pub(crate) struct Chunk {
    pub(crate) vertex_count: u32,
    /// The methods without a per-vertex input's: binding 9 (where the device has it) a dummy.
    pub(crate) bind_group: wgpu::BindGroup,
    /// Per uploaded per-vertex input, the same bindings with it at binding 9.
    pub(crate) input_bind_groups: Vec<(VertexInput, wgpu::BindGroup)>,
    pub(crate) params: wgpu::Buffer,
}

impl Chunk {
    /// The bind group with `input` at binding 9, where the mesh uploaded it.
    pub(crate) fn input_bind_group(&self, input: VertexInput) -> Option<&wgpu::BindGroup> {
        self.input_bind_groups
            .iter()
            .find(|(uploaded, _)| *uploaded == input)
            .map(|(_, group)| group)
    }
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
/// and blend values when the input has them) with its output buffer.
///
/// Skin it each frame with [`GpuSkinner::skin`]; read it with [`GpuSkinner::read_back`] or bind
/// [`GpuMesh::output_buffer`] as a vertex buffer (layout in [`GpuMesh::output_layout`]).
#[derive(Debug)]
pub struct GpuMesh {
    pub(crate) vertex_count: usize,
    pub(crate) influences_per_vertex: usize,
    pub(crate) joint_count: usize,
    /// The per-vertex inputs the input had (uploaded where the device has binding 9).
    pub(crate) vertex_inputs: Vec<VertexInput>,
    pub(crate) layout: OutputLayout,
    pub(crate) output: wgpu::Buffer,
    pub(crate) counters: wgpu::Buffer,
    pub(crate) palette: wgpu::Buffer,
    pub(crate) chunks: Vec<Chunk>,
    pub(crate) renormalize: bool,
    pub(crate) scratch: GpuPalette,
    pub(crate) frame: Option<Frame>,
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
    /// [`skinblend::Method::CenterOfRotation`]).
    #[must_use]
    pub fn has_rotation_centers(&self) -> bool {
        self.vertex_inputs.contains(&VertexInput::RotationCenters)
    }

    /// Whether the mesh was uploaded with blend values (needed by
    /// [`skinblend::Method::Blended`]).
    #[must_use]
    pub fn has_blend_values(&self) -> bool {
        self.vertex_inputs.contains(&VertexInput::BlendValues)
    }

    /// Number of dispatches one frame takes (1 unless the mesh exceeds a device limit or
    /// [`crate::GpuOptions::max_vertices_per_dispatch`]).
    #[must_use]
    pub fn dispatch_count(&self) -> usize {
        self.chunks.len()
    }
}

impl GpuSkinner {
    /// Uploads a mesh once: positions, normals and tangents when present, influences (any k;
    /// joint indices packed two u16 per u32), the centers of rotation when the input has them
    /// ([`SkinInput::with_rotation_centers`]; one `vec4` per vertex, `w` = 1 with a center, 0
    /// without, see [`crate::gpu_rotation_centers`]), the blend values when it has them
    /// ([`SkinInput::with_blend_values`]; one `f32` per vertex, a uniform value repeated), and
    /// creates the output, counter and palette buffers and per dispatch chunk one bind group, and
    /// one more per per-vertex input (each at binding 9, where its method's kernel reads it).
    /// Allocates GPU memory for all of them. A mesh with centers and blend values can be skinned
    /// by every method; one without centers not by CoR, one without blend values not by
    /// blended.
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
        // Per-vertex inputs (the centers, the blend values) are only worth uploading where their
        // methods' kernels can read them (binding 9).
        let vertex_inputs: Vec<VertexInput> = VertexInput::ALL
            .into_iter()
            .filter(|&vertex_input| input.has_vertex_input(vertex_input))
            .collect();
        let uploaded_inputs: &[VertexInput] = if self.with_vertex_inputs {
            &vertex_inputs
        } else {
            &[]
        };
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
        for vertex_input in uploaded_inputs {
            per_vertex.push((vertex_input.name(), vertex_input.bytes_per_vertex()));
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
        // Binding 9 of the bind group of the methods without a per-vertex input.
        let no_input = self.buffer_init("skinblend-gpu per-vertex input (none)", &[], storage);
        let input_buffers: Vec<(VertexInput, wgpu::Buffer)> = uploaded_inputs
            .iter()
            .filter_map(|&vertex_input| {
                let bytes = vertex_input.gpu_bytes(input)?;
                Some((
                    vertex_input,
                    self.buffer_init(vertex_input.buffer_label(), &bytes, storage),
                ))
            })
            .collect();
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
                entry(9, whole(&no_input)),
            ];
            let bind_group = |label, entries: &[wgpu::BindGroupEntry<'_>]| {
                self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(label),
                    layout: &self.layout,
                    entries,
                })
            };
            // Binding 9 exists only in a layout with the kernels that read it.
            let base_entries = if self.with_vertex_inputs {
                &entries[..]
            } else {
                &entries[..entries.len() - 1]
            };
            let base_bind_group = bind_group("skinblend-gpu chunk bind group", base_entries);
            let input_bind_groups = input_buffers
                .iter()
                .map(|(vertex_input, buffer)| {
                    let mut entries = entries.clone();
                    entries[9] = entry(9, range(buffer, vertex_input.bytes_per_vertex()));
                    let group = bind_group(
                        "skinblend-gpu chunk bind group (per-vertex input)",
                        &entries,
                    );
                    (*vertex_input, group)
                })
                .collect();
            chunks.push(Chunk {
                vertex_count: params.vertex_count,
                bind_group: base_bind_group,
                input_bind_groups,
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
            vertex_inputs,
            layout,
            output,
            counters,
            palette,
            chunks,
            renormalize: true,
            scratch: GpuPalette::Linear(Vec::new()),
            frame: None,
            _inputs: [positions, normals, tangents, joints, weights, no_input]
                .into_iter()
                .chain(input_buffers.into_iter().map(|(_, buffer)| buffer))
                .collect(),
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
