//! `NativeModel` and `NativePose`: a loaded glTF model, its poses, and the scene skinned or
//! baked through the scene skinner.

use std::path::{Path, PathBuf};

use glam::Vec3;
use numpy::{IntoPyArray, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use skinblend::cor::CorOptions;
use skinblend::SkinOptions;
use skinblend_gltf::{export, GltfError, Model, Pose, SceneOptions, SceneSkinner};

use crate::convert::{
    diagnostics_dict, gltf_error, on_threads, parse_method, vec3_array, vec4_array,
};

/// Per skinned node of a baked animation: node, mesh, skin, and per primitive the positions of
/// every frame, flat.
type BakedNodes = Vec<(usize, usize, usize, Vec<Vec<f32>>)>;

/// A pose of a model: each node's transforms and morph weights at one time.
#[pyclass(module = "skinblend._native", frozen)]
pub(crate) struct NativePose {
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
pub(crate) struct NativeModel {
    model: Model,
    path: PathBuf,
}

impl NativeModel {
    fn err(&self, error: GltfError) -> PyErr {
        gltf_error(&self.path, error)
    }

    /// `ValueError` when `path` is one of the model's input files (see `refuse_output`).
    fn refuse(&self, path: &Path) -> PyResult<()> {
        export::refuse_input(self.model.input_files(), path).map_err(|e| gltf_error(path, e))
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
    /// `.obj`), atomically, as `skinblend pose` does; `ValueError` (before any work) when `path`
    /// is one of the model's input files.
    fn export(
        &self,
        py: Python<'_>,
        path: PathBuf,
        pose: &NativePose,
        method: &str,
    ) -> PyResult<()> {
        self.refuse(&path)?;
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

    /// `ValueError` when writing `path` would replace one of the model's input files (the
    /// `.gltf`/`.glb` and the external files it read): the rule every writer applies
    /// (`skinblend_gltf::export::refuse_input`).
    fn refuse_output(&self, path: PathBuf) -> PyResult<()> {
        self.refuse(&path)
    }

    /// `[path]` of every input file of the model: the `.gltf`/`.glb`, then its external buffers
    /// and images.
    fn input_files(&self) -> Vec<PathBuf> {
        self.model.input_files().to_vec()
    }

    /// Writes `data` (made from this model, e.g. baked frames) to `path` atomically, refusing a
    /// `path` that is one of the model's input files (`ValueError`, nothing written).
    fn write_derived(
        &self,
        py: Python<'_>,
        path: PathBuf,
        data: Bound<'_, PyBytes>,
    ) -> PyResult<()> {
        let bytes = data.as_bytes().to_vec();
        let model = &self.model;
        py.detach(|| export::write_derived(model, &path, &bytes))
            .map_err(|e| gltf_error(&path, e))
    }

    /// Writes a copy of the file carrying the centers of rotation (`skinblend centers`);
    /// `ValueError` when `path` is one of the model's input files.
    fn write_rotation_centers(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let model = &self.model;
        py.detach(|| export::write_skinning_attributes(model, &path))
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
