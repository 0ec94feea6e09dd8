//! `NativeSkinner`: one mesh checked once (a `SkinMesh`), skinned per frame or for many frames.

use std::borrow::Cow;
use std::cell::RefCell;

use glam::{Mat4, Vec3};
use numpy::{
    PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3, PyReadonlyArrayDyn, PyReadwriteArray2,
    PyReadwriteArray3, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use skinblend::{
    prepare, Diagnostics, Influences, PreparedPalette, SkinError, SkinMesh, SkinOptions,
    SkinOutputs,
};

use crate::convert::{
    check_columns, check_threads, diagnostics_dict, matrices, matrices_into, on_threads, out_slice,
    parse_method, skin_error, skin_on_threads, slice, vec3s, vec4s,
};

/// A mesh checked once (the core's `SkinMesh`, owning its attributes), and its palette
/// prepared for each frame into the same buffers: the engine of `skinblend.skin`,
/// `skinblend.skin_frames` and `skinblend.Skinner`. A frame checks only the palette and the
/// outputs' shapes.
#[pyclass(module = "skinblend._native")]
pub(crate) struct NativeSkinner {
    mesh: SkinMesh<'static>,
    bind_origins: Option<Vec<Vec3>>,
    options: SkinOptions,
    threads: Option<usize>,
    prepared: Option<PreparedPalette>,
    /// The last frame's palette as glam matrices, refilled by each `skin`: no allocation per
    /// frame once the joint count is reached.
    palette: Vec<Mat4>,
}

/// The arrays of a mesh as numpy gives them, before the core checks them.
pub(crate) struct MeshArrays<'py> {
    pub(crate) positions: PyReadonlyArray2<'py, f32>,
    pub(crate) normals: Option<PyReadonlyArray2<'py, f32>>,
    pub(crate) tangents: Option<PyReadonlyArray2<'py, f32>>,
    pub(crate) joints: PyReadonlyArray2<'py, u16>,
    pub(crate) weights: PyReadonlyArray2<'py, f32>,
    pub(crate) joint_count: usize,
    pub(crate) centers: Option<PyReadonlyArray2<'py, f32>>,
    /// Blended's blend values, one per vertex.
    pub(crate) blend_values: Option<PyReadonlyArray1<'py, f32>>,
}

/// The most bytes of influence arrays a thread keeps between one-shot calls.
const SPARE_INFLUENCES_MAX_BYTES: usize = 64 << 20;

thread_local! {
    /// The one-shot's influence arrays, kept between calls (up to
    /// [`SPARE_INFLUENCES_MAX_BYTES`]): refilled, not reallocated, so a call touches no fresh
    /// pages for them (2.4 MB at 100k vertices, four influences).
    static SPARE_INFLUENCES: RefCell<(Vec<u16>, Vec<f32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl MeshArrays<'_> {
    /// The influences, checked; their arrays are `spare`'s, refilled (see
    /// [`SPARE_INFLUENCES`]), where given.
    fn influences(&self, spare: Option<(Vec<u16>, Vec<f32>)>) -> PyResult<Influences> {
        let (joints, weights) = (
            slice("joints", &self.joints)?,
            slice("weights", &self.weights)?,
        );
        Influences::from_slices(
            self.joints.shape()[1],
            joints,
            weights,
            self.joint_count,
            spare.unwrap_or_default(),
        )
        .map_err(skin_error)
    }

    /// The mesh over these arrays and `influences`, checked once: positions, normals and
    /// centers borrowed from numpy without a copy (tangents too where 16-byte aligned).
    fn mesh<'a>(&'a self, influences: impl Into<Cow<'a, Influences>>) -> PyResult<SkinMesh<'a>> {
        let mut mesh =
            SkinMesh::new(vec3s("positions", &self.positions)?, influences).map_err(skin_error)?;
        if let Some(normals) = &self.normals {
            mesh = mesh
                .with_normals(vec3s("normals", normals)?)
                .map_err(skin_error)?;
        }
        if let Some(tangents) = &self.tangents {
            mesh = mesh
                .with_tangents(vec4s("tangents", tangents)?)
                .map_err(skin_error)?;
        }
        if let Some(centers) = &self.centers {
            mesh = mesh
                .with_rotation_centers(vec3s("centers", centers)?)
                .map_err(skin_error)?;
        }
        if let Some(values) = &self.blend_values {
            mesh = mesh
                .with_blend_values(slice("blend_values", values)?)
                .map_err(skin_error)?;
        }
        Ok(mesh)
    }
}

/// Output arrays as the kernels' slices, each checked for shape and layout.
fn outputs<'a>(
    positions: &'a mut PyReadwriteArray2<'_, f32>,
    normals: Option<&'a mut PyReadwriteArray2<'_, f32>>,
    tangents: Option<&'a mut PyReadwriteArray2<'_, f32>>,
) -> PyResult<SkinOutputs<'a>> {
    check_columns("out", positions.shape(), 3)?;
    let normals = match normals {
        Some(a) => {
            check_columns("out_normals", a.shape(), 3)?;
            Some(out_slice("out_normals", a)?)
        }
        None => None,
    };
    let tangents = match tangents {
        Some(a) => {
            check_columns("out_tangents", a.shape(), 4)?;
            Some(out_slice("out_tangents", a)?)
        }
        None => None,
    };
    Ok(SkinOutputs {
        positions: out_slice("out", positions)?,
        normals,
        tangents,
    })
}

/// Skins a mesh once (`skinblend.skin`): the mesh is checked once and borrowed from numpy
/// (see [`MeshArrays::mesh`]), skinned into the given arrays; returns the diagnostics.
#[pyfunction]
#[pyo3(signature = (positions, normals, tangents, joints, weights, joint_count, method, bind_origins, centers, blend_values, threads, palette, out_positions, out_normals=None, out_tangents=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn skin_once<'py>(
    py: Python<'py>,
    positions: PyReadonlyArray2<'py, f32>,
    normals: Option<PyReadonlyArray2<'py, f32>>,
    tangents: Option<PyReadonlyArray2<'py, f32>>,
    joints: PyReadonlyArray2<'py, u16>,
    weights: PyReadonlyArray2<'py, f32>,
    joint_count: usize,
    method: &str,
    bind_origins: Option<PyReadonlyArray2<'py, f32>>,
    centers: Option<PyReadonlyArray2<'py, f32>>,
    blend_values: Option<PyReadonlyArray1<'py, f32>>,
    threads: Option<usize>,
    palette: PyReadonlyArray3<'py, f32>,
    mut out_positions: PyReadwriteArray2<'py, f32>,
    mut out_normals: Option<PyReadwriteArray2<'py, f32>>,
    mut out_tangents: Option<PyReadwriteArray2<'py, f32>>,
) -> PyResult<Bound<'py, PyDict>> {
    check_threads(threads)?;
    let options = SkinOptions {
        method: parse_method(method)?,
        parallel: threads != Some(1),
        ..SkinOptions::default()
    };
    let palette = matrices("palette", slice("palette", &palette)?, palette.shape())?;
    let bind_origins = bind_origins
        .as_ref()
        .map(|b| vec3s("bind_origins", b))
        .transpose()?;
    let arrays = MeshArrays {
        positions,
        normals,
        tangents,
        joints,
        weights,
        joint_count,
        centers,
        blend_values,
    };
    let outputs = outputs(
        &mut out_positions,
        out_normals.as_mut(),
        out_tangents.as_mut(),
    )?;
    let spare = SPARE_INFLUENCES.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
    let influences = arrays.influences(Some(spare))?;
    let diagnostics = {
        let mesh = arrays.mesh(&influences)?;
        py.detach(|| {
            skin_on_threads(threads, || -> Result<Diagnostics, SkinError> {
                let prepared = prepare(&palette, bind_origins.as_deref(), &options)?;
                mesh.skin_into(&prepared, outputs, options.run_options())
            })
        })?
    };
    let (joints, weights) = influences.into_arrays();
    if joints.capacity() * 2 + weights.capacity() * 4 <= SPARE_INFLUENCES_MAX_BYTES {
        SPARE_INFLUENCES.with(|spare| *spare.borrow_mut() = (joints, weights));
    }
    diagnostics_dict(py, &diagnostics.map_err(skin_error)?)
}

#[pymethods]
impl NativeSkinner {
    #[new]
    #[pyo3(signature = (positions, normals, tangents, joints, weights, joint_count, method, bind_origins, centers, blend_values, threads))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        positions: PyReadonlyArray2<'_, f32>,
        normals: Option<PyReadonlyArray2<'_, f32>>,
        tangents: Option<PyReadonlyArray2<'_, f32>>,
        joints: PyReadonlyArray2<'_, u16>,
        weights: PyReadonlyArray2<'_, f32>,
        joint_count: usize,
        method: &str,
        bind_origins: Option<PyReadonlyArray2<'_, f32>>,
        centers: Option<PyReadonlyArray2<'_, f32>>,
        blend_values: Option<PyReadonlyArray1<'_, f32>>,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        check_threads(threads)?;
        let method = parse_method(method)?;
        let arrays = MeshArrays {
            positions,
            normals,
            tangents,
            joints,
            weights,
            joint_count,
            centers,
            blend_values,
        };
        let influences = arrays.influences(None)?;
        let mesh = arrays.mesh(influences)?.into_owned();
        Ok(Self {
            mesh,
            bind_origins: bind_origins
                .as_ref()
                .map(|b| vec3s("bind_origins", b).map(|b| b.into_owned()))
                .transpose()?,
            options: SkinOptions {
                method,
                parallel: threads != Some(1),
                ..SkinOptions::default()
            },
            threads,
            prepared: None,
            palette: Vec::new(),
        })
    }

    /// Skins one frame into the given arrays; returns the diagnostics as a dict.
    #[pyo3(signature = (palette, out_positions, out_normals=None, out_tangents=None))]
    fn skin<'py>(
        &mut self,
        py: Python<'py>,
        palette: PyReadonlyArray3<'py, f32>,
        mut out_positions: PyReadwriteArray2<'py, f32>,
        out_normals: Option<PyReadwriteArray2<'py, f32>>,
        out_tangents: Option<PyReadwriteArray2<'py, f32>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        matrices_into(
            "palette",
            slice("palette", &palette)?,
            palette.shape(),
            &mut self.palette,
        )?;
        let (mut out_normals, mut out_tangents) = (out_normals, out_tangents);
        let outputs = outputs(
            &mut out_positions,
            out_normals.as_mut(),
            out_tangents.as_mut(),
        )?;
        let threads = self.threads;
        let this = &mut *self;
        let diagnostics = py.detach(|| {
            skin_on_threads(threads, || -> Result<Diagnostics, SkinError> {
                let palette = &this.palette;
                match this.prepared.as_mut() {
                    Some(prepared) => prepared.update(palette)?,
                    None => {
                        this.prepared = Some(prepare(
                            palette,
                            this.bind_origins.as_deref(),
                            &this.options,
                        )?);
                    }
                }
                let prepared = this.prepared.as_ref().expect("prepared just above");
                this.mesh
                    .skin_into(prepared, outputs, this.options.run_options())
            })
        })?;
        diagnostics_dict(py, &diagnostics.map_err(skin_error)?)
    }

    /// Skins `F` frames (`palettes` `[F, J, 4, 4]`) into `out` `[F, N, 3]`, frames in parallel;
    /// returns the diagnostics summed over the frames.
    fn skin_frames<'py>(
        &self,
        py: Python<'py>,
        palettes: PyReadonlyArrayDyn<'py, f32>,
        mut out: PyReadwriteArray3<'py, f32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let shape = palettes.shape().to_vec();
        if shape.len() != 4 {
            return Err(PyValueError::new_err(format!(
                "palettes: expected shape (F, J, 4, 4), got {shape:?}"
            )));
        }
        let all = matrices("palettes", slice("palettes", &palettes)?, &shape[1..])?;
        let frames = shape[0];
        let n = self.mesh.vertex_count();
        if out.shape() != [frames, n, 3] {
            return Err(PyValueError::new_err(format!(
                "out: expected shape ({frames}, {n}, 3), got {:?}",
                out.shape()
            )));
        }
        let out: &mut [Vec3] = out_slice("out", &mut out)?;
        let joints = all.len().checked_div(frames).unwrap_or(0);
        if joints == 0 && frames > 0 {
            return Err(skin_error(SkinError::PaletteLength {
                expected: self.mesh.influences().joint_count(),
                found: 0,
            }));
        }
        let this = self;
        // One prepared palette per run of frames on a thread, updated frame by frame (O(joints),
        // no allocation) rather than prepared anew.
        let skin_frame = |slot: &mut Option<PreparedPalette>,
                          options: &SkinOptions,
                          (frame_out, palette): (&mut [Vec3], &[Mat4])| {
            let prepared = match slot {
                Some(prepared) => {
                    prepared.update(palette)?;
                    prepared
                }
                None => slot.insert(prepare(palette, this.bind_origins.as_deref(), options)?),
            };
            this.mesh.skin_into(
                prepared,
                SkinOutputs::positions(frame_out),
                options.run_options(),
            )
        };
        let result = py.detach(|| {
            if frames == 0 || n == 0 {
                return Ok(Ok(Diagnostics::default()));
            }
            if this.threads == Some(1) {
                // On the calling thread, as `skin` does: handing the frames to a one-thread pool
                // and back costs two context switches per call.
                let mut slot = None;
                return Ok(out
                    .chunks_mut(n)
                    .zip(all.chunks(joints))
                    .try_fold(Diagnostics::default(), |sum, frame| {
                        Ok(summed(sum, &skin_frame(&mut slot, &this.options, frame)?))
                    }));
            }
            on_threads(this.threads, || -> Result<Diagnostics, SkinError> {
                let options = SkinOptions {
                    // Frames are the parallel unit; each frame's vertices run serially on its
                    // thread unless there are fewer frames than threads.
                    parallel: this.options.parallel && frames < rayon::current_num_threads(),
                    ..this.options
                };
                out.par_chunks_mut(n)
                    .zip(all.par_chunks(joints))
                    .map_init(
                        || None::<PreparedPalette>,
                        |slot, frame| skin_frame(slot, &options, frame),
                    )
                    .try_fold(Diagnostics::default, |sum, d| Ok(summed(sum, &d?)))
                    .try_reduce(Diagnostics::default, |a, b| Ok(summed(a, &b)))
            })
        })?;
        diagnostics_dict(py, &result.map_err(skin_error)?)
    }

    /// Number of vertices.
    #[getter]
    fn vertex_count(&self) -> usize {
        self.mesh.vertex_count()
    }

    /// The kernel alone on this mesh, for the bench scripts' reference in the same process:
    /// `palette` prepared once, then `SkinMesh::skin_into` with this skinner's options into
    /// positions (and normals, where the mesh has them) allocated once, called once untimed,
    /// then back to back for at least `min_seconds` (at most 10); returns seconds per call.
    fn _kernel_seconds_per_call(
        &self,
        py: Python<'_>,
        palette: PyReadonlyArray3<'_, f32>,
        min_seconds: f64,
    ) -> PyResult<f64> {
        if !(min_seconds > 0.0 && min_seconds <= 10.0) {
            return Err(PyValueError::new_err(format!(
                "min_seconds: expected a number of seconds in (0, 10], got {min_seconds}"
            )));
        }
        let matrices = matrices("palette", slice("palette", &palette)?, palette.shape())?;
        let prepared =
            prepare(&matrices, self.bind_origins.as_deref(), &self.options).map_err(skin_error)?;
        let n = self.mesh.vertex_count();
        let mut positions = vec![Vec3::ZERO; n];
        let mut normals = self.mesh.normals().map(|_| vec![Vec3::ZERO; n]);
        let run = self.options.run_options();
        let (mesh, threads) = (&self.mesh, self.threads);
        py.detach(|| {
            skin_on_threads(threads, || -> Result<f64, SkinError> {
                let mut skin = || {
                    let outputs = SkinOutputs {
                        positions: &mut positions,
                        normals: normals.as_deref_mut(),
                        tangents: None,
                    };
                    mesh.skin_into(&prepared, outputs, run)
                };
                // One call before the clock: the fresh outputs' pages fault in there.
                skin()?;
                let (mut calls, start) = (0u32, std::time::Instant::now());
                loop {
                    skin()?;
                    calls += 1;
                    let elapsed = start.elapsed().as_secs_f64();
                    if elapsed >= min_seconds {
                        return Ok(elapsed / f64::from(calls));
                    }
                }
            })
        })?
        .map_err(skin_error)
    }

    /// Whether the input has normals.
    #[getter]
    fn has_normals(&self) -> bool {
        self.mesh.normals().is_some()
    }

    /// Whether the input has tangents.
    #[getter]
    fn has_tangents(&self) -> bool {
        self.mesh.tangents().is_some()
    }

    /// The method's name.
    #[getter]
    fn method(&self) -> &'static str {
        self.options.method.name()
    }
}

/// `sum` with every count of `frame` added (the diagnostics of many frames, summed).
fn summed(mut sum: Diagnostics, frame: &Diagnostics) -> Diagnostics {
    sum.singular_normal_matrices += frame.singular_normal_matrices;
    sum.non_rigid_joints += frame.non_rigid_joints;
    sum.sign_flips += frame.sign_flips;
    sum.unweighted_vertices += frame.unweighted_vertices;
    sum
}
