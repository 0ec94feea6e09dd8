//! `skinblend._native`: the compiled half of the `skinblend` Python package.
//!
//! Thin wrappers over the skinblend crates; the public, documented API is the Python package
//! (`python/skinblend/__init__.py`), which checks dtypes and shapes, names the argument in its
//! errors, and hands this module C-contiguous `float32`/`uint16` arrays.
//!
//! # Conventions
//! - Arrays are row-major numpy arrays. A vertex attribute is `[N, 3]` (`[N, 4]` for tangents,
//!   `w` the handedness). A palette is `[J, 4, 4]` in the mathematical layout, `v' = M @ [v, 1]`,
//!   translation in `M[:3, 3]`; it is transposed into glam's column-major `Mat4` here, once.
//! - Errors: the core's and the glTF crate's one-line messages, as `ValueError`,
//!   `FileNotFoundError` (a file that does not exist) or `skinblend.GltfError`. No panic reaches
//!   Python: every fallible call returns a `PyResult`.
//! - Skinning runs with the GIL released (`Python::detach`).
#![warn(missing_docs)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use glam::{Mat4, Vec3, Vec4};
use numpy::{
    IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray2, PyReadonlyArray3, PyReadonlyArrayDyn,
    PyReadwriteArray2, PyReadwriteArray3, PyUntypedArrayMethods,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use rayon::prelude::*;
use skinblend::cor::CorOptions;
use skinblend::metrics::RatioStats;
use skinblend::{
    prepare, skin_into, Diagnostics, Influences, Method, PreparedPalette, SkinError, SkinInput,
    SkinOptions, SkinOutputs,
};
use skinblend_gltf::{export, GltfError, Model, Pose, SceneOptions, SceneSkinner};

create_exception!(
    _native,
    PyGltfError,
    PyValueError,
    "A glTF file is malformed, breaks the specification, or asks for something unsupported; \
     the message names the JSON path (a subclass of ValueError)."
);

/// A core error as `ValueError`, with the core's one-line message.
fn skin_error(error: SkinError) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// A glTF error about `file` as the CLI prints it (`FILE: message`, the file named once):
/// `FileNotFoundError` when the file does not exist, `GltfError` otherwise.
fn gltf_error(file: &Path, error: GltfError) -> PyErr {
    let file = file.display().to_string();
    let text = error.to_string().replace(['\n', '\r'], " ");
    let line = if text.starts_with(&file) {
        text
    } else {
        format!("{file}: {text}")
    };
    match &error {
        GltfError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(line)
        }
        _ => PyGltfError::new_err(line),
    }
}

fn parse_method(method: &str) -> PyResult<Method> {
    method.parse::<Method>().map_err(skin_error)
}

/// A C-contiguous array's data, or a `ValueError` naming the argument.
fn slice<'a, T: numpy::Element, D: numpy::ndarray::Dimension>(
    name: &str,
    array: &'a numpy::PyReadonlyArray<'_, T, D>,
) -> PyResult<&'a [T]> {
    array
        .as_slice()
        .map_err(|_| PyValueError::new_err(format!("{name}: expected a C-contiguous array")))
}

fn vec3s(name: &str, array: &PyReadonlyArray2<'_, f32>) -> PyResult<Vec<Vec3>> {
    check_columns(name, array.shape(), 3)?;
    // Copied element by element: numpy data need only be 4-byte aligned.
    Ok(slice(name, array)?
        .chunks_exact(3)
        .map(Vec3::from_slice)
        .collect())
}

fn vec4s(name: &str, array: &PyReadonlyArray2<'_, f32>) -> PyResult<Vec<Vec4>> {
    check_columns(name, array.shape(), 4)?;
    Ok(slice(name, array)?
        .chunks_exact(4)
        .map(Vec4::from_slice)
        .collect())
}

/// A writable output array's data as `T`s (`Vec3`, `Vec4`), or a `ValueError` naming it when it
/// is not C-contiguous or not aligned for `T` (glam's `Vec4` needs 16 bytes).
fn out_slice<'a, T: bytemuck::Pod, D: numpy::ndarray::Dimension>(
    name: &str,
    array: &'a mut numpy::PyReadwriteArray<'_, f32, D>,
) -> PyResult<&'a mut [T]> {
    let data = array
        .as_slice_mut()
        .map_err(|_| PyValueError::new_err(format!("{name}: expected a C-contiguous array")))?;
    bytemuck::try_cast_slice_mut(data).map_err(|_| {
        PyValueError::new_err(format!(
            "{name}: expected an array aligned to {} bytes (numpy.empty gives one)",
            std::mem::align_of::<T>()
        ))
    })
}

fn check_columns(name: &str, shape: &[usize], columns: usize) -> PyResult<()> {
    if shape.len() != 2 || shape[1] != columns {
        return Err(PyValueError::new_err(format!(
            "{name}: expected shape (N, {columns}), got {shape:?}"
        )));
    }
    Ok(())
}

/// `[J, 4, 4]` row-major matrices (`v' = M @ v`) as glam's column-major `Mat4`s.
fn matrices(name: &str, data: &[f32], shape: &[usize]) -> PyResult<Vec<Mat4>> {
    if shape.len() < 2 || shape[shape.len() - 1] != 4 || shape[shape.len() - 2] != 4 {
        return Err(PyValueError::new_err(format!(
            "{name}: expected shape (J, 4, 4), got {shape:?}"
        )));
    }
    Ok(data
        .chunks_exact(16)
        .map(|m| Mat4::from_cols_slice(m).transpose())
        .collect())
}

fn triangles(name: &str, array: &PyReadonlyArray2<'_, u32>) -> PyResult<Vec<[u32; 3]>> {
    check_columns(name, array.shape(), 3)?;
    Ok(slice(name, array)?
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .collect())
}

fn diagnostics_dict<'py>(py: Python<'py>, d: &Diagnostics) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("singular_normal_matrices", d.singular_normal_matrices)?;
    dict.set_item("non_rigid_joints", d.non_rigid_joints)?;
    dict.set_item("sign_flips", d.sign_flips)?;
    dict.set_item("unweighted_vertices", d.unweighted_vertices)?;
    Ok(dict)
}

fn stats_dict<'py>(py: Python<'py>, s: Option<RatioStats>) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(s) = s else { return Ok(None) };
    let dict = PyDict::new(py);
    dict.set_item("min", s.min)?;
    dict.set_item("mean", s.mean)?;
    dict.set_item("max", s.max)?;
    dict.set_item("count", s.count)?;
    Ok(Some(dict))
}

/// `[N, C]` float32 numpy array from flat data.
fn array2<'py>(py: Python<'py>, data: Vec<f32>, columns: usize) -> PyResult<Bound<'py, PyAny>> {
    let rows = data.len() / columns;
    Ok(data.into_pyarray(py).reshape([rows, columns])?.into_any())
}

fn vec3_array<'py>(py: Python<'py>, v: &[Vec3]) -> PyResult<Bound<'py, PyAny>> {
    array2(py, bytemuck::cast_slice::<Vec3, f32>(v).to_vec(), 3)
}

fn vec4_array<'py>(py: Python<'py>, v: &[Vec4]) -> PyResult<Bound<'py, PyAny>> {
    array2(py, bytemuck::cast_slice::<Vec4, f32>(v).to_vec(), 4)
}

/// Rayon pools by thread count, built once each (building one per call would cost more than
/// skinning a small mesh).
fn pool(threads: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    static POOLS: Mutex<Option<HashMap<usize, Arc<rayon::ThreadPool>>>> = Mutex::new(None);
    let mut pools = POOLS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let pools = pools.get_or_insert_with(HashMap::new);
    if let Some(pool) = pools.get(&threads) {
        return Ok(Arc::clone(pool));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PyValueError::new_err(format!("threads: {e}")))?;
    let pool = Arc::new(pool);
    pools.insert(threads, Arc::clone(&pool));
    Ok(pool)
}

/// Runs `f` on `threads` threads (`None`: the global rayon pool, every core).
fn on_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    match threads {
        None => Ok(f()),
        Some(0) => Err(PyValueError::new_err("threads: expected at least 1, got 0")),
        Some(n) => Ok(pool(n)?.install(f)),
    }
}

/// Per skinned node of a baked animation: node, mesh, skin, and per primitive the positions of
/// every frame, flat.
type BakedNodes = Vec<(usize, usize, usize, Vec<Vec<f32>>)>;

/// A mesh's inputs, validated once, and its palette prepared for each frame into the same
/// buffers: the engine of `skinblend.skin`, `skinblend.skin_frames` and `skinblend.Skinner`.
#[pyclass(module = "skinblend._native")]
struct NativeSkinner {
    positions: Vec<Vec3>,
    normals: Option<Vec<Vec3>>,
    tangents: Option<Vec<Vec4>>,
    influences: Influences,
    centers: Option<Vec<Vec3>>,
    bind_origins: Option<Vec<Vec3>>,
    options: SkinOptions,
    threads: Option<usize>,
    prepared: Option<PreparedPalette>,
}

impl NativeSkinner {
    fn input(&self) -> Result<SkinInput<'_>, SkinError> {
        let input = SkinInput::new(
            &self.positions,
            self.normals.as_deref(),
            self.tangents.as_deref(),
            &self.influences,
        )?;
        match &self.centers {
            Some(centers) => input.with_rotation_centers(centers),
            None => Ok(input),
        }
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
        let method = parse_method(method)?;
        let k = joints.shape()[1];
        let influences = Influences::new(
            k,
            slice("joints", &joints)?.to_vec(),
            slice("weights", &weights)?.to_vec(),
            joint_count,
        )
        .map_err(skin_error)?;
        let skinner = Self {
            positions: vec3s("positions", &positions)?,
            normals: normals.map(|n| vec3s("normals", &n)).transpose()?,
            tangents: tangents.map(|t| vec4s("tangents", &t)).transpose()?,
            influences,
            centers: centers.map(|c| vec3s("centers", &c)).transpose()?,
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
        };
        skinner.input().map_err(skin_error)?;
        Ok(skinner)
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
                let input = SkinInput::new(
                    &this.positions,
                    this.normals.as_deref(),
                    this.tangents.as_deref(),
                    &this.influences,
                )?;
                let input = match &this.centers {
                    Some(centers) => input.with_rotation_centers(centers)?,
                    None => input,
                };
                skin_into(
                    &input,
                    prepared,
                    SkinOutputs {
                        positions,
                        normals,
                        tangents,
                    },
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
        let n = self.positions.len();
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
                expected: self.influences.joint_count(),
                found: 0,
            }));
        }
        let this = self;
        let result = py.detach(|| {
            on_threads(this.threads, || -> Result<Diagnostics, SkinError> {
                let input = this.input()?;
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
                        skin_into(&input, &prepared, SkinOutputs::positions(frame_out))
                    })
                    .try_fold(Diagnostics::default, |mut sum, d| {
                        let d = d?;
                        sum.singular_normal_matrices += d.singular_normal_matrices;
                        sum.non_rigid_joints += d.non_rigid_joints;
                        sum.sign_flips += d.sign_flips;
                        sum.unweighted_vertices += d.unweighted_vertices;
                        Ok(sum)
                    })
                    .try_reduce(Diagnostics::default, |mut a, b| {
                        a.singular_normal_matrices += b.singular_normal_matrices;
                        a.non_rigid_joints += b.non_rigid_joints;
                        a.sign_flips += b.sign_flips;
                        a.unweighted_vertices += b.unweighted_vertices;
                        Ok(a)
                    })
            })
        })?;
        diagnostics_dict(py, &result.map_err(skin_error)?)
    }

    /// Number of vertices.
    #[getter]
    fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Whether the input has normals.
    #[getter]
    fn has_normals(&self) -> bool {
        self.normals.is_some()
    }

    /// Whether the input has tangents.
    #[getter]
    fn has_tangents(&self) -> bool {
        self.tangents.is_some()
    }

    /// The method's name.
    #[getter]
    fn method(&self) -> &'static str {
        self.options.method.name()
    }
}

/// A pose of a model: each node's transforms and morph weights at one time.
#[pyclass(module = "skinblend._native", frozen)]
struct NativePose {
    pose: Pose,
}

#[pymethods]
impl NativePose {
    /// `[nodes, 4, 4]` world_from_node matrices, row-major (`v' = M @ v`).
    fn world_from_node<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let data: Vec<f32> = self
            .pose
            .world_from_node
            .iter()
            .flat_map(|m| m.transpose().to_cols_array())
            .collect();
        let nodes = self.pose.world_from_node.len();
        Ok(data.into_pyarray(py).reshape([nodes, 4, 4])?.into_any())
    }
}

/// A glTF model, loaded and validated once.
#[pyclass(module = "skinblend._native")]
struct NativeModel {
    model: Model,
    path: PathBuf,
}

impl NativeModel {
    fn err(&self, error: GltfError) -> PyErr {
        gltf_error(&self.path, error)
    }

    fn scene_options(&self, method: &str) -> PyResult<SceneOptions> {
        Ok(SceneOptions::with_method(parse_method(method)?))
    }
}

#[pymethods]
impl NativeModel {
    /// Opens and validates a `.gltf` or `.glb` file.
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let model = py
            .detach(|| Model::open(&path))
            .map_err(|e| gltf_error(&path, e))?;
        Ok(Self { model, path })
    }

    /// The file's path.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// `skinblend info --json`'s summary, as a JSON string.
    fn info_json(&self) -> PyResult<String> {
        let summary = skinblend_gltf::info::summary(&self.model).map_err(|e| self.err(e))?;
        Ok(summary.to_string())
    }

    /// `[(name or None, start_s, end_s)]`, in file order.
    fn animations(&self) -> Vec<(Option<String>, f32, f32)> {
        self.model
            .animations()
            .iter()
            .map(|a| (a.name.clone(), a.start_s, a.end_s))
            .collect()
    }

    /// Index of the animation named (or numbered) `name_or_index`.
    fn find_animation(&self, name_or_index: &str) -> PyResult<usize> {
        self.model
            .find_animation(name_or_index)
            .map_err(|e| self.err(e))
    }

    /// The pose at `time_s` of animation `animation` (`None`: the rest pose).
    #[pyo3(signature = (animation, time_s))]
    fn pose(&self, animation: Option<usize>, time_s: f32) -> PyResult<NativePose> {
        let pose = self
            .model
            .pose(animation, time_s)
            .map_err(|e| self.err(e))?;
        Ok(NativePose { pose })
    }

    /// The rest pose (the nodes' own transforms, default morph weights).
    fn rest_pose(&self) -> NativePose {
        NativePose {
            pose: self.model.rest_pose(),
        }
    }

    /// Skins every skinned node at `pose` with `method` through the scene skinner (as
    /// `skinblend pose` does): `[(node, mesh, skin, [(positions, normals, tangents,
    /// diagnostics)])]`.
    fn skin<'py>(
        &self,
        py: Python<'py>,
        pose: &NativePose,
        method: &str,
    ) -> PyResult<Bound<'py, PyList>> {
        let options = self.scene_options(method)?;
        let model = &self.model;
        let posed = py
            .detach(|| -> skinblend_gltf::Result<_> {
                Ok(SceneSkinner::cpu(model, options)?
                    .skin(&pose.pose)?
                    .to_vec())
            })
            .map_err(|e| self.err(e))?;
        let nodes = PyList::empty(py);
        for node in &posed {
            let primitives = PyList::empty(py);
            for p in &node.primitives {
                primitives.append((
                    vec3_array(py, &p.positions)?,
                    p.normals
                        .as_deref()
                        .map(|n| vec3_array(py, n))
                        .transpose()?,
                    p.tangents
                        .as_deref()
                        .map(|t| vec4_array(py, t))
                        .transpose()?,
                    diagnostics_dict(py, &p.diagnostics)?,
                ))?;
            }
            nodes.append((node.node, node.mesh, node.skin, primitives))?;
        }
        Ok(nodes)
    }

    /// Skins the positions of every skinned node at each of `times_s` of `animation` with one
    /// scene skinner (centers of rotation computed at most once): `[(node, mesh, skin,
    /// [positions [F, N, 3] per primitive])]`.
    fn skin_frames<'py>(
        &self,
        py: Python<'py>,
        animation: Option<usize>,
        times_s: Vec<f32>,
        method: &str,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let options = SceneOptions {
            normals: false,
            tangents: false,
            ..self.scene_options(method)?
        };
        let model = &self.model;
        let frames = times_s.len();
        let baked = py
            .detach(|| {
                on_threads(threads, || -> skinblend_gltf::Result<BakedNodes> {
                    let mut skinner = SceneSkinner::cpu(model, options)?;
                    let mut baked: BakedNodes = Vec::new();
                    for (frame, &time_s) in times_s.iter().enumerate() {
                        let pose = model.pose(animation, time_s)?;
                        let posed = skinner.skin(&pose)?;
                        if frame == 0 {
                            baked = posed
                                .iter()
                                .map(|n| {
                                    let prims = n
                                        .primitives
                                        .iter()
                                        .map(|p| Vec::with_capacity(frames * p.positions.len() * 3))
                                        .collect();
                                    (n.node, n.mesh, n.skin, prims)
                                })
                                .collect();
                        }
                        for (node, out) in posed.iter().zip(&mut baked) {
                            for (p, data) in node.primitives.iter().zip(&mut out.3) {
                                data.extend_from_slice(bytemuck::cast_slice::<Vec3, f32>(
                                    &p.positions,
                                ));
                            }
                        }
                    }
                    Ok(baked)
                })
            })?
            .map_err(|e| self.err(e))?;
        let nodes = PyList::empty(py);
        for (node, mesh, skin, prims) in baked {
            let arrays = PyList::empty(py);
            for data in prims {
                let n = data.len() / 3 / frames.max(1);
                arrays.append(data.into_pyarray(py).reshape([frames, n, 3])?)?;
            }
            nodes.append((node, mesh, skin, arrays))?;
        }
        Ok(nodes)
    }

    /// Skins at `pose` with `method` and writes the posed scene to `path` (`.glb`, `.gltf` or
    /// `.obj`), atomically, as `skinblend pose` does.
    fn export(
        &self,
        py: Python<'_>,
        path: PathBuf,
        pose: &NativePose,
        method: &str,
    ) -> PyResult<()> {
        export::Format::from_path(&path).map_err(|e| gltf_error(&path, e))?;
        let options = SkinOptions {
            method: parse_method(method)?,
            ..SkinOptions::default()
        };
        let model = &self.model;
        py.detach(|| model.skin_scene(&pose.pose, &options))
            .map_err(|e| self.err(e))
            .and_then(|posed| {
                py.detach(|| export::write(model, &pose.pose, &posed, &path))
                    .map_err(|e| gltf_error(&path, e))
            })
    }

    /// Computes the centers of rotation of every skinned primitive and keeps them in the model
    /// (CoR skinning and `write_rotation_centers` use them); returns `[(mesh, primitive,
    /// vertices, vertices_without_center)]`.
    fn compute_rotation_centers(
        &mut self,
        py: Python<'_>,
        sigma: f32,
        epsilon: f32,
    ) -> PyResult<Vec<(usize, usize, usize, usize)>> {
        let options = CorOptions {
            sigma,
            subdivision_epsilon: epsilon,
            ..CorOptions::default()
        };
        let model = &mut self.model;
        let summary = py
            .detach(|| model.compute_rotation_centers(&options, &mut |_, _, _| {}))
            .map_err(|e| gltf_error(&self.path, e))?;
        Ok(summary
            .iter()
            .map(|c| (c.mesh, c.primitive, c.vertices, c.vertices_without_center))
            .collect())
    }

    /// Writes a copy of the file carrying the centers of rotation (`skinblend centers`).
    fn write_rotation_centers(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let model = &self.model;
        py.detach(|| export::write_rotation_centers(model, &path))
            .map_err(|e| gltf_error(&path, e))
    }

    /// Every node as `(name, mesh, skin)`, in file order.
    fn nodes(&self) -> Vec<(Option<String>, Option<usize>, Option<usize>)> {
        self.model
            .nodes()
            .iter()
            .map(|n| (n.name.clone(), n.mesh, n.skin))
            .collect()
    }

    /// Indices of the nodes with a mesh and a skin.
    fn skinned_nodes(&self) -> Vec<usize> {
        self.model.skinned_nodes()
    }

    /// Number of primitives of mesh `mesh`.
    fn primitive_count(&self, mesh: usize) -> PyResult<usize> {
        self.model
            .meshes()
            .get(mesh)
            .map(|m| m.primitives.len())
            .ok_or_else(|| PyValueError::new_err(format!("mesh: no mesh {mesh}")))
    }

    /// A primitive's bind-pose arrays as a dict (positions, normals, tangents, triangles,
    /// joints, weights, rotation_centers; `None` where absent).
    fn primitive<'py>(
        &self,
        py: Python<'py>,
        mesh: usize,
        primitive: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let p = self
            .model
            .meshes()
            .get(mesh)
            .and_then(|m| m.primitives.get(primitive))
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "meshes[{mesh}].primitives[{primitive}]: no such primitive"
                ))
            })?;
        let dict = PyDict::new(py);
        dict.set_item("positions", vec3_array(py, &p.positions)?)?;
        dict.set_item(
            "normals",
            p.normals
                .as_deref()
                .map(|n| vec3_array(py, n))
                .transpose()?,
        )?;
        dict.set_item(
            "tangents",
            p.tangents
                .as_deref()
                .map(|t| vec4_array(py, t))
                .transpose()?,
        )?;
        let tris: Vec<u32> = p.triangles().into_iter().flatten().collect();
        let count = tris.len() / 3;
        dict.set_item("triangles", tris.into_pyarray(py).reshape([count, 3])?)?;
        match &p.influences {
            Some(inf) => {
                let k = inf.influences_per_vertex();
                let n = inf.vertex_count();
                dict.set_item(
                    "joints",
                    inf.joints().to_vec().into_pyarray(py).reshape([n, k])?,
                )?;
                dict.set_item(
                    "weights",
                    inf.weights().to_vec().into_pyarray(py).reshape([n, k])?,
                )?;
            }
            None => {
                dict.set_item("joints", py.None())?;
                dict.set_item("weights", py.None())?;
            }
        }
        dict.set_item(
            "rotation_centers",
            p.rotation_centers
                .as_deref()
                .map(|c| vec3_array(py, c))
                .transpose()?,
        )?;
        Ok(dict)
    }
}

/// Centers of rotation of a mesh (Le & Hodgins 2016): `(centers [N, 3], vertices_without_center)`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn rotation_centers<'py>(
    py: Python<'py>,
    positions: PyReadonlyArray2<'py, f32>,
    triangles_: PyReadonlyArray2<'py, u32>,
    joints: PyReadonlyArray2<'py, u16>,
    weights: PyReadonlyArray2<'py, f32>,
    joint_count: usize,
    sigma: f32,
    epsilon: f32,
) -> PyResult<(Bound<'py, PyAny>, usize)> {
    let positions = vec3s("positions", &positions)?;
    let tris = triangles("triangles", &triangles_)?;
    let influences = Influences::new(
        joints.shape()[1],
        slice("joints", &joints)?.to_vec(),
        slice("weights", &weights)?.to_vec(),
        joint_count,
    )
    .map_err(skin_error)?;
    let options = CorOptions {
        sigma,
        subdivision_epsilon: epsilon,
        ..CorOptions::default()
    };
    let centers = py
        .detach(|| skinblend::cor::rotation_centers(&positions, &tris, &influences, &options))
        .map_err(skin_error)?;
    Ok((
        vec3_array(py, &centers.centers)?,
        centers.vertices_without_center,
    ))
}

/// The candy-wrapper radius (metres) of the vertices within `half_width` of `along` on the axis.
#[pyfunction]
fn candy_wrapper_radius(
    positions: PyReadonlyArray2<'_, f32>,
    axis_point: [f32; 3],
    axis_direction: [f32; 3],
    along: f32,
    half_width: f32,
) -> PyResult<Option<f64>> {
    let positions = vec3s("positions", &positions)?;
    Ok(skinblend::metrics::candy_wrapper_radius(
        &positions,
        Vec3::from(axis_point),
        Vec3::from(axis_direction),
        along,
        half_width,
    ))
}

/// Posed ÷ rest length of every triangle edge (`unique`: each undirected edge once).
#[pyfunction]
fn edge_ratios<'py>(
    py: Python<'py>,
    rest: PyReadonlyArray2<'py, f32>,
    posed: PyReadonlyArray2<'py, f32>,
    triangles_: PyReadonlyArray2<'py, u32>,
    unique: bool,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let (rest, posed) = (vec3s("rest", &rest)?, vec3s("posed", &posed)?);
    let tris = triangles("triangles", &triangles_)?;
    let stats = if unique {
        skinblend::metrics::unique_edge_ratios(&rest, &posed, &tris)
    } else {
        skinblend::metrics::triangle_edge_ratios(&rest, &posed, &tris)
    }
    .map_err(skin_error)?;
    stats_dict(py, stats)
}

/// Posed ÷ rest signed volume of a closed mesh.
#[pyfunction]
fn volume_ratio(
    rest: PyReadonlyArray2<'_, f32>,
    posed: PyReadonlyArray2<'_, f32>,
    triangles_: PyReadonlyArray2<'_, u32>,
) -> PyResult<Option<f64>> {
    let (rest, posed) = (vec3s("rest", &rest)?, vec3s("posed", &posed)?);
    let tris = triangles("triangles", &triangles_)?;
    skinblend::metrics::volume_ratio(&rest, &posed, &tris).map_err(skin_error)
}

/// `(max_relative, rms_relative)` distance between two results, or `None`.
#[pyfunction]
fn displacement(
    reference: PyReadonlyArray2<'_, f32>,
    other: PyReadonlyArray2<'_, f32>,
) -> PyResult<Option<(f64, f64)>> {
    let (a, b) = (vec3s("reference", &reference)?, vec3s("other", &other)?);
    Ok(skinblend::metrics::displacement(&a, &b)
        .map_err(skin_error)?
        .map(|d| (d.max_relative, d.rms_relative)))
}

/// The built-in rigs as dicts of arrays.
#[pyfunction]
fn fixtures(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for f in skinblend::fixtures::all() {
        let dict = PyDict::new(py);
        dict.set_item("name", f.name)?;
        dict.set_item("positions", vec3_array(py, &f.positions)?)?;
        dict.set_item("normals", vec3_array(py, &f.normals)?)?;
        dict.set_item("tangents", vec4_array(py, &f.tangents)?)?;
        let tris: Vec<u32> = f.triangles.iter().flatten().copied().collect();
        let count = tris.len() / 3;
        dict.set_item("triangles", tris.into_pyarray(py).reshape([count, 3])?)?;
        let (n, k) = (
            f.influences.vertex_count(),
            f.influences.influences_per_vertex(),
        );
        dict.set_item(
            "joints",
            f.influences
                .joints()
                .to_vec()
                .into_pyarray(py)
                .reshape([n, k])?,
        )?;
        dict.set_item(
            "weights",
            f.influences
                .weights()
                .to_vec()
                .into_pyarray(py)
                .reshape([n, k])?,
        )?;
        dict.set_item("joint_count", f.influences.joint_count())?;
        dict.set_item("bind_origins", vec3_array(py, &f.joint_centers)?)?;
        dict.set_item("joint_ring", PyArray1::from_slice(py, &f.joint_ring))?;
        dict.set_item("ring_joint", f.ring_joint)?;
        dict.set_item("closed", f.closed)?;
        dict.set_item("angles_deg", skinblend::evidence::angles_deg(&f).to_vec())?;
        list.append(dict)?;
    }
    Ok(list)
}

/// The skin palette `[J, 4, 4]` (row-major) of built-in rig `name` at `angle_deg`.
#[pyfunction]
fn fixture_palette<'py>(
    py: Python<'py>,
    name: &str,
    angle_deg: f32,
) -> PyResult<Bound<'py, PyAny>> {
    let fixture = skinblend::fixtures::all()
        .into_iter()
        .find(|f| f.name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = skinblend::fixtures::all().iter().map(|f| f.name).collect();
            PyValueError::new_err(format!(
                "name: no built-in rig {name:?}; there are {}",
                names.join(", ")
            ))
        })?;
    let palette = fixture.palette(angle_deg);
    let data: Vec<f32> = palette
        .iter()
        .flat_map(|m| m.transpose().to_cols_array())
        .collect();
    Ok(data
        .into_pyarray(py)
        .reshape([palette.len(), 4, 4])?
        .into_any())
}

/// The evidence table (`skinblend evidence --json`'s rows) as a list of dicts.
#[pyfunction]
fn evidence_rows(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let rows = py.detach(skinblend::evidence::rows).map_err(skin_error)?;
    let list = PyList::empty(py);
    for r in &rows {
        let dict = PyDict::new(py);
        dict.set_item("fixture", r.fixture)?;
        dict.set_item("angle_deg", r.angle_deg)?;
        dict.set_item("method", r.method.name())?;
        dict.set_item("candy_wrapper_ratio", r.candy_wrapper_ratio)?;
        dict.set_item("edge_ratio", stats_dict(py, Some(r.edge_ratio))?)?;
        dict.set_item("volume_ratio", r.volume_ratio)?;
        dict.set_item(
            "ring_distance_ratio",
            stats_dict(py, Some(r.ring_distance_ratio))?,
        )?;
        dict.set_item(
            "bone_distance_ratio",
            stats_dict(py, Some(r.bone_distance_ratio))?,
        )?;
        dict.set_item("diagnostics", diagnostics_dict(py, &r.diagnostics)?)?;
        list.append(dict)?;
    }
    Ok(list)
}

/// Writes `data` to `path` through the workspace's one atomic writer (temporary name, flush,
/// rename).
#[pyfunction]
fn write_atomically(py: Python<'_>, path: PathBuf, data: Bound<'_, PyBytes>) -> PyResult<()> {
    let bytes = data.as_bytes().to_vec();
    py.detach(|| export::write_atomically(&path, &bytes))
        .map_err(|e| gltf_error(&path, e))
}

/// `skinblend bench`'s synthetic rig (`skinblend::fixtures::benchmark_mesh`) as a dict of
/// arrays: positions, normals, tangents, joints, weights, palette.
#[pyfunction]
fn benchmark_mesh(
    py: Python<'_>,
    vertex_count: usize,
    influences_per_vertex: usize,
    joint_count: usize,
    seed: u64,
) -> PyResult<Bound<'_, PyDict>> {
    let mesh = py.detach(|| {
        skinblend::fixtures::benchmark_mesh(vertex_count, influences_per_vertex, joint_count, seed)
    });
    let dict = PyDict::new(py);
    dict.set_item("positions", vec3_array(py, &mesh.positions)?)?;
    dict.set_item("normals", vec3_array(py, &mesh.normals)?)?;
    dict.set_item("tangents", vec4_array(py, &mesh.tangents)?)?;
    let (n, k) = (
        mesh.influences.vertex_count(),
        mesh.influences.influences_per_vertex(),
    );
    dict.set_item(
        "joints",
        mesh.influences
            .joints()
            .to_vec()
            .into_pyarray(py)
            .reshape([n, k])?,
    )?;
    dict.set_item(
        "weights",
        mesh.influences
            .weights()
            .to_vec()
            .into_pyarray(py)
            .reshape([n, k])?,
    )?;
    let data: Vec<f32> = mesh
        .palette
        .iter()
        .flat_map(|m| m.transpose().to_cols_array())
        .collect();
    dict.set_item(
        "palette",
        data.into_pyarray(py).reshape([mesh.palette.len(), 4, 4])?,
    )?;
    Ok(dict)
}

/// The method names, in order (LBS, DQS, CoR).
#[pyfunction]
fn method_names() -> Vec<&'static str> {
    Method::names().to_vec()
}

/// The SIMD kernel set this CPU runs.
#[pyfunction]
fn simd_backend() -> Option<&'static str> {
    skinblend::simd_backend()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeSkinner>()?;
    m.add_class::<NativeModel>()?;
    m.add_class::<NativePose>()?;
    m.add("GltfError", m.py().get_type::<PyGltfError>())?;
    m.add_function(wrap_pyfunction!(rotation_centers, m)?)?;
    m.add_function(wrap_pyfunction!(candy_wrapper_radius, m)?)?;
    m.add_function(wrap_pyfunction!(edge_ratios, m)?)?;
    m.add_function(wrap_pyfunction!(volume_ratio, m)?)?;
    m.add_function(wrap_pyfunction!(displacement, m)?)?;
    m.add_function(wrap_pyfunction!(fixtures, m)?)?;
    m.add_function(wrap_pyfunction!(fixture_palette, m)?)?;
    m.add_function(wrap_pyfunction!(evidence_rows, m)?)?;
    m.add_function(wrap_pyfunction!(write_atomically, m)?)?;
    m.add_function(wrap_pyfunction!(method_names, m)?)?;
    m.add_function(wrap_pyfunction!(benchmark_mesh, m)?)?;
    m.add_function(wrap_pyfunction!(simd_backend, m)?)?;
    Ok(())
}
