//! One frame: the palette upload and the compute pass that skins a mesh, and the readback of
//! the skinned vertices and the GPU-counted diagnostics.

use std::sync::mpsc;

use glam::{Vec3, Vec4};
use skinblend::{
    Diagnostics, PreparedPalette, RunOptions, SkinBackend, SkinError, SkinMesh, SkinOutputs,
    Skinned,
};

use crate::bindings::{
    params_flags, Params, COUNTER_BYTES, EXTRAS_STORAGE_BINDINGS, MIN_BUFFER_BYTES, WORKGROUP_SIZE,
};
use crate::error::ErrorScopes;
use crate::mesh::{Frame, GpuMesh};
use crate::methods::{method_index, method_kernel};
use crate::{GpuError, GpuSkinner};

impl GpuSkinner {
    /// Uploads this frame's palette and submits one compute pass that skins the whole mesh
    /// into [`GpuMesh::output_buffer`] (one dispatch, or one per chunk when the mesh exceeds a
    /// device limit). Returns without waiting for the GPU. The method comes from `palette`
    /// (prepared on the CPU by `skinblend::prepare`, so both paths share the split); of `run`,
    /// the GPU honours `renormalize` and ignores the CPU-only `parallel` and `simd`.
    /// Allocates nothing after the first frame of a method.
    ///
    /// # Errors
    /// `SkinError::PaletteLength` (as [`GpuError::Skin`]) when the palette has fewer joints
    /// than the influences address, `SkinError::MissingRotationCenters` (as [`GpuError::Skin`])
    /// for CoR on a mesh uploaded without centers, `SkinError::MissingBlendValues` for blended
    /// on a mesh uploaded without blend values, [`GpuError::UnsuitableAdapter`] for CoR or
    /// blended on a device without their kernels ([`GpuSkinner::supports`]),
    /// [`GpuError::DeviceLost`], [`GpuError::Wgpu`].
    pub fn skin(
        &self,
        mesh: &mut GpuMesh,
        palette: &PreparedPalette,
        run: RunOptions,
    ) -> Result<(), GpuError> {
        self.skin_timed(mesh, palette, run, None)
    }

    /// [`GpuSkinner::skin`] with optional timestamps written at the start and end of the pass.
    pub(crate) fn skin_timed(
        &self,
        mesh: &mut GpuMesh,
        palette: &PreparedPalette,
        run: RunOptions,
        timestamps: Option<&wgpu::QuerySet>,
    ) -> Result<(), GpuError> {
        self.check("skinning")?;
        mesh.frame = None;
        let kernel = method_kernel(palette.method());
        let pipeline = self.pipelines[method_index(kernel.method)]
            .as_ref()
            .ok_or_else(|| GpuError::UnsuitableAdapter {
                adapter: self.adapter_info.name.clone(),
                what: "max_storage_buffers_per_shader_stage (a ninth buffer, for the method's per-vertex input)",
                found: u64::from(self.limits.max_storage_buffers_per_shader_stage),
                needed: u64::from(EXTRAS_STORAGE_BINDINGS),
            })?;
        // The method's per-vertex input at binding 9, in its own bind groups (every chunk has
        // them where the mesh was uploaded with the input on a device with binding 9).
        let input_bind_groups = match kernel.vertex_input {
            Some(input) => {
                let groups = mesh
                    .chunks
                    .iter()
                    .map(|chunk| chunk.input_bind_group(input));
                if !mesh.vertex_inputs.contains(&input) || groups.clone().any(|g| g.is_none()) {
                    return Err(SkinError::missing_vertex_input(input, mesh.vertex_count).into());
                }
                Some(input)
            }
            None => None,
        };
        mesh.scratch.fill(palette, Some(mesh.joint_count))?;
        let scope = ErrorScopes::push(&self.device);
        let bytes = mesh.scratch.bytes();
        if !bytes.is_empty() {
            self.queue.write_buffer(&mesh.palette, 0, bytes);
        }
        let renormalize = run.renormalize;
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
                let bind_group = input_bind_groups
                    .and_then(|input| chunk.input_bind_group(input))
                    .unwrap_or(&chunk.bind_group);
                pass.set_bind_group(0, bind_group, &[]);
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
        let n = mesh.vertex_count;
        let mut positions = vec![Vec3::ZERO; n];
        let mut normals = mesh.layout.normal_offset.map(|_| vec![Vec3::ZERO; n]);
        let mut tangents = mesh.layout.tangent_offset.map(|_| vec![Vec4::ZERO; n]);
        let diagnostics = self.read_back_into(
            mesh,
            SkinOutputs {
                positions: &mut positions,
                normals: normals.as_deref_mut(),
                tangents: tangents.as_deref_mut(),
            },
        )?;
        Ok(Skinned {
            positions,
            normals,
            tangents,
            diagnostics,
        })
    }

    /// [`GpuSkinner::read_back`] into caller-owned buffers (one element per vertex; `None`
    /// skips an attribute). Allocates only the two staging buffers.
    ///
    /// # Errors
    /// Those of [`GpuSkinner::read_back`], and `SkinError::AttributeLength` /
    /// `SkinError::MissingInputAttribute` (as [`GpuError::Skin`]) for an output of the wrong
    /// length or one the mesh was uploaded without.
    pub fn read_back_into(
        &self,
        mesh: &GpuMesh,
        outputs: SkinOutputs<'_>,
    ) -> Result<Diagnostics, GpuError> {
        let n = mesh.vertex_count;
        let check = |attribute: &'static str, found: Option<usize>, uploaded: bool| match found {
            Some(_) if !uploaded => Err(SkinError::MissingInputAttribute { attribute }),
            Some(found) if found != n => Err(SkinError::AttributeLength {
                attribute,
                expected: n,
                found,
            }),
            _ => Ok(()),
        };
        check("output positions", Some(outputs.positions.len()), true)?;
        check(
            "normals",
            outputs.normals.as_deref().map(<[Vec3]>::len),
            mesh.layout.normal_offset.is_some(),
        )?;
        check(
            "tangents",
            outputs.tangents.as_deref().map(<[Vec4]>::len),
            mesh.layout.tangent_offset.is_some(),
        )?;
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
        if n > 0 {
            let view = vertices
                .get_mapped_range(..)
                .map_err(|e| map_error("output", e))?;
            let floats: &[f32] = bytemuck::cast_slice(&view[..output_bytes as usize]);
            let stride = (mesh.layout.stride_bytes / 4) as usize;
            let SkinOutputs {
                positions,
                mut normals,
                mut tangents,
            } = outputs;
            let normal_at = mesh.layout.normal_offset.map(|o| (o / 4) as usize);
            let tangent_at = mesh.layout.tangent_offset.map(|o| (o / 4) as usize);
            for (i, vertex) in floats.chunks_exact(stride).enumerate() {
                positions[i] = Vec3::from_slice(&vertex[..3]);
                if let (Some(out), Some(at)) = (normals.as_deref_mut(), normal_at) {
                    out[i] = Vec3::from_slice(&vertex[at..at + 3]);
                }
                if let (Some(out), Some(at)) = (tangents.as_deref_mut(), tangent_at) {
                    out[i] = Vec4::from_slice(&vertex[at..at + 4]);
                }
            }
        }
        Ok(Diagnostics {
            singular_normal_matrices: counts[0] as usize,
            non_rigid_joints: frame.non_rigid_joints,
            sign_flips: counts[1] as usize,
            unweighted_vertices: counts[2] as usize,
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
        run: RunOptions,
    ) -> Result<Skinned, GpuError> {
        self.skin(mesh, palette, run)?;
        self.read_back(mesh)
    }
}

/// The GPU as a [`SkinBackend`], so scene skinning (skinblend-gltf's `SceneSkinner`) runs here
/// as on the CPU: a mesh is uploaded once ([`GpuSkinner::upload`]); each frame is one dispatch
/// ([`GpuSkinner::skin`]) and a readback into the caller's buffers
/// ([`GpuSkinner::read_back_into`]). The `mesh` of `skin_mesh` is not read: the GPU skins the
/// copy it uploaded.
impl SkinBackend for GpuSkinner {
    type Mesh = GpuMesh;
    type Error = GpuError;

    fn load_mesh(&self, mesh: &SkinMesh<'_>) -> Result<GpuMesh, GpuError> {
        self.upload(&mesh.input())
    }

    fn skin_mesh(
        &self,
        loaded: &mut GpuMesh,
        _mesh: &SkinMesh<'_>,
        palette: &PreparedPalette,
        outputs: SkinOutputs<'_>,
        run: RunOptions,
    ) -> Result<Diagnostics, GpuError> {
        self.skin(loaded, palette, run)?;
        self.read_back_into(loaded, outputs)
    }
}
