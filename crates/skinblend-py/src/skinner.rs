//! `NativeSkinner`: one mesh checked once (a `SkinMesh`), skinned per frame or for many frames.

use glam::{Vec3, Vec4};
use numpy::{
    PyReadonlyArray2, PyReadonlyArray3, PyReadonlyArrayDyn, PyReadwriteArray2, PyReadwriteArray3,
    PyUntypedArrayMethods,
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
    check_columns, check_threads, diagnostics_dict, matrices, on_threads, out_slice, parse_method,
    skin_error, slice, vec3s, vec4s,
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
}

/// The mesh of the given attributes, checked once.
fn mesh(
    positions: Vec<Vec3>,
    normals: Option<Vec<Vec3>>,
    tangents: Option<Vec<Vec4>>,
    influences: Influences,
    centers: Option<Vec<Vec3>>,
) -> Result<SkinMesh<'static>, SkinError> {
    let mut mesh = SkinMesh::new(positions, influences)?;
    if let Some(normals) = normals {
        mesh = mesh.with_normals(normals)?;
    }
    if let Some(tangents) = tangents {
        mesh = mesh.with_tangents(tangents)?;
    }
    match centers {
        Some(centers) => mesh.with_rotation_centers(centers),
        None => Ok(mesh),
    }
}

#[pymethods]
impl NativeSkinner {
    #[new]
    #[pyo3(signature = (positions, normals, tangents, joints, weights, joint_count, method, bind_origins, centers, threads))]
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
        threads: Option<usize>,
    ) -> PyResult<Self> {
        check_threads(threads)?;
        let method = parse_method(method)?;
        let k = joints.shape()[1];
        let influences = Influences::new(
            k,
            slice("joints", &joints)?.to_vec(),
            slice("weights", &weights)?.to_vec(),
            joint_count,
        )
        .map_err(skin_error)?;
        let mesh = mesh(
            vec3s("positions", &positions)?,
            normals.map(|n| vec3s("normals", &n)).transpose()?,
            tangents.map(|t| vec4s("tangents", &t)).transpose()?,
            influences,
            centers.map(|c| vec3s("centers", &c)).transpose()?,
        )
        .map_err(skin_error)?;
        Ok(Self {
            mesh,
            bind_origins: bind_origins
                .map(|b| vec3s("bind_origins", &b))
                .transpose()?,
            options: SkinOptions {
                method,
                parallel: threads != Some(1),
                ..SkinOptions::default()
            },
            threads,
            prepared: None,
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
        let palette = matrices("palette", slice("palette", &palette)?, palette.shape())?;
        check_columns("out", out_positions.shape(), 3)?;
        let positions: &mut [Vec3] = out_slice("out", &mut out_positions)?;
        let mut out_normals = out_normals;
        let normals: Option<&mut [Vec3]> = match out_normals.as_mut() {
            Some(a) => {
                check_columns("out_normals", a.shape(), 3)?;
                Some(out_slice("out_normals", a)?)
            }
            None => None,
        };
        let mut out_tangents = out_tangents;
        let tangents: Option<&mut [Vec4]> = match out_tangents.as_mut() {
            Some(a) => {
                check_columns("out_tangents", a.shape(), 4)?;
                Some(out_slice("out_tangents", a)?)
            }
            None => None,
        };
        let threads = self.threads;
        let this = &mut *self;
        let diagnostics = py.detach(|| {
            on_threads(threads, || -> Result<Diagnostics, SkinError> {
                match this.prepared.as_mut() {
                    Some(prepared) => prepared.update(&palette)?,
                    None => {
                        this.prepared = Some(prepare(
                            &palette,
                            this.bind_origins.as_deref(),
                            &this.options,
                        )?);
                    }
                }
                let prepared = this.prepared.as_ref().expect("prepared just above");
                this.mesh.skin_into(
                    prepared,
                    SkinOutputs {
                        positions,
                        normals,
                        tangents,
                    },
                    this.options.run_options(),
                )
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
        let result = py.detach(|| {
            on_threads(this.threads, || -> Result<Diagnostics, SkinError> {
                if frames == 0 || n == 0 {
                    return Ok(Diagnostics::default());
                }
                let options = SkinOptions {
                    // Frames are the parallel unit; each frame's vertices run serially on its
                    // thread unless there are fewer frames than threads.
                    parallel: this.options.parallel && frames < rayon::current_num_threads(),
                    ..this.options
                };
                out.par_chunks_mut(n)
                    .zip(all.par_chunks(joints))
                    .map(|(frame_out, palette)| {
                        let prepared = prepare(palette, this.bind_origins.as_deref(), &options)?;
                        this.mesh.skin_into(
                            &prepared,
                            SkinOutputs::positions(frame_out),
                            options.run_options(),
                        )
                    })
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
