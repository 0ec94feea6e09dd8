//! Module-level functions: centers of rotation, metrics, the built-in rigs and evidence rows,
//! the benchmark mesh, and what this build runs.

use glam::Vec3;
use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use skinblend::cor::CorOptions;
use skinblend::Influences;

use crate::convert::{
    diagnostics_dict, skin_error, slice, stats_dict, triangles, vec3_array, vec3s, vec4_array,
};

/// Centers of rotation of a mesh (Le & Hodgins 2016): `(centers [N, 3], vertices_without_center)`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn rotation_centers<'py>(
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

/// Blended's blend values by the joint rule: each vertex's (normalized) weight on the joints
/// `dq_joints` (indices) flags ([`skinblend::blend_values_from_joints`]).
#[pyfunction]
pub(crate) fn blend_values_from_joints<'py>(
    py: Python<'py>,
    joints: PyReadonlyArray2<'py, u16>,
    weights: PyReadonlyArray2<'py, f32>,
    joint_count: usize,
    dq_joints: Vec<usize>,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let influences = Influences::new(
        joints.shape()[1],
        slice("joints", &joints)?.to_vec(),
        slice("weights", &weights)?.to_vec(),
        joint_count,
    )
    .map_err(skin_error)?;
    let mut flags = vec![false; joint_count];
    for joint in dq_joints {
        let Some(flag) = flags.get_mut(joint) else {
            return Err(PyValueError::new_err(format!(
                "dq_joints: joint {joint} is out of range ({joint_count} joints)"
            )));
        };
        *flag = true;
    }
    Ok(skinblend::blend_values_from_joints(&influences, &flags).into_pyarray(py))
}

/// The candy-wrapper radius (metres) of the vertices within `half_width` of `along` on the axis.
#[pyfunction]
pub(crate) fn candy_wrapper_radius(
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
pub(crate) fn edge_ratios<'py>(
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
pub(crate) fn volume_ratio(
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
pub(crate) fn displacement(
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
pub(crate) fn fixtures(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
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
        set_influences(&dict, &f.influences)?;
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
pub(crate) fn fixture_palette<'py>(
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
pub(crate) fn evidence_rows(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
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

/// `skinblend bench`'s synthetic rig (`skinblend::fixtures::benchmark_mesh`) as a dict of
/// arrays: positions, normals, tangents, joints, weights, palette.
#[pyfunction]
pub(crate) fn benchmark_mesh(
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
    set_influences(&dict, &mesh.influences)?;
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

/// Puts `influences` into `dict` as `joints` and `weights` arrays `[N, K]`.
fn set_influences(dict: &Bound<'_, PyDict>, influences: &Influences) -> PyResult<()> {
    let py = dict.py();
    let shape = [
        influences.vertex_count(),
        influences.influences_per_vertex(),
    ];
    let joints = influences.joints().to_vec().into_pyarray(py);
    dict.set_item("joints", joints.reshape(shape)?)?;
    let weights = influences.weights().to_vec().into_pyarray(py);
    dict.set_item("weights", weights.reshape(shape)?)?;
    Ok(())
}

/// Dense `(N, J)` weights as sparse `(joints [N, K] u16, weights [N, K] f32)`, converted by the
/// core (`Influences::from_dense_weights`: each vertex's non-zero joints first in ascending
/// order, K the most of any vertex, at least 1), in one pass with the GIL released.
#[pyfunction]
pub(crate) fn dense_to_sparse<'py>(
    py: Python<'py>,
    weights: PyReadonlyArray2<'py, f32>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let joint_count = weights.shape()[1];
    let dense = slice("weights", &weights)?;
    let influences = py
        .detach(|| Influences::from_dense_weights(dense, joint_count))
        .map_err(skin_error)?;
    let shape = [
        influences.vertex_count(),
        influences.influences_per_vertex(),
    ];
    let (joints, sparse) = influences.into_arrays();
    Ok((
        joints.into_pyarray(py).reshape(shape)?.into_any(),
        sparse.into_pyarray(py).reshape(shape)?.into_any(),
    ))
}
