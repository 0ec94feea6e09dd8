//! The batched forward and backward passes behind `skinblend.torch` (the core's
//! `skinblend::gradient`), in `float32` or `float64`, with the GIL released.
//!
//! The Python side hands C-contiguous arrays (numpy views of the tensors' memory through
//! DLPack): `palettes (P, J, 4, 4)`, `vertices (V, N, 3)`, `joints (N, K) uint16`,
//! `weights (W, N, K)`, `P`, `V`, `W` each 1 or the batch size. With `normals=True` the
//! `vertices` array holds normals `(V, N, 3)` and the passes skin them as the library does
//! (`skinblend::gradient::forward_normals`); the vertices' gradient is then the normals'.

use numpy::{
    IntoPyArray, PyArrayMethods, PyReadonlyArray2, PyReadonlyArrayDyn, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use skinblend::gradient::{self, GradientError, Gradients, Real, Rig};
use skinblend::DEFAULT_RIGID_TOLERANCE;

use crate::convert::{on_threads, parse_method, slice};

fn gradient_error(error: GradientError) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// A float array of `T` with `dims` dimensions, or `None` where its dtype is another one.
fn floats<'py, T: numpy::Element>(
    name: &str,
    value: &Bound<'py, PyAny>,
    dims: usize,
) -> PyResult<Option<PyReadonlyArrayDyn<'py, T>>> {
    let Ok(array) = value.extract::<PyReadonlyArrayDyn<'py, T>>() else {
        return Ok(None);
    };
    if array.ndim() != dims {
        return Err(PyValueError::new_err(format!(
            "{name}: expected {dims} dimensions, got shape {:?}",
            array.shape()
        )));
    }
    Ok(Some(array))
}

/// The arrays of one call, borrowed from Python.
struct Arrays<'py, T: numpy::Element> {
    palettes: PyReadonlyArrayDyn<'py, T>,
    vertices: PyReadonlyArrayDyn<'py, T>,
    weights: PyReadonlyArrayDyn<'py, T>,
    bind_origins: Option<PyReadonlyArrayDyn<'py, T>>,
    centers: Option<PyReadonlyArrayDyn<'py, T>>,
    blend_values: Option<PyReadonlyArrayDyn<'py, T>>,
    grad_out: Option<PyReadonlyArrayDyn<'py, T>>,
}

#[allow(clippy::too_many_arguments)]
fn arrays<'py, T: numpy::Element>(
    palettes: &Bound<'py, PyAny>,
    vertices: &Bound<'py, PyAny>,
    weights: &Bound<'py, PyAny>,
    bind_origins: Option<&Bound<'py, PyAny>>,
    (centers, blend_values): (Option<&Bound<'py, PyAny>>, Option<&Bound<'py, PyAny>>),
    grad_out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<Arrays<'py, T>>> {
    let Some(palettes) = floats::<T>("palette", palettes, 4)? else {
        return Ok(None);
    };
    let same = |name: &str, value: &Bound<'py, PyAny>, dims: usize| {
        floats::<T>(name, value, dims)?
            .ok_or_else(|| PyTypeError::new_err(format!("{name}: expected the palette's dtype")))
    };
    let optional = |name: &str, value: Option<&Bound<'py, PyAny>>, dims: usize| {
        value.map(|v| same(name, v, dims)).transpose()
    };
    Ok(Some(Arrays {
        vertices: same("vertices", vertices, 3)?,
        weights: same("weights", weights, 3)?,
        bind_origins: optional("bind_origins", bind_origins, 2)?,
        centers: optional("centers", centers, 2)?,
        blend_values: optional("blend_values", blend_values, 1)?,
        grad_out: optional("grad_output", grad_out, 3)?,
        palettes,
    }))
}

impl<T: numpy::Element + Real> Arrays<'_, T> {
    fn rig<'a>(
        &'a self,
        method: &str,
        joints: &'a [u16],
        joints_shape: &[usize],
    ) -> PyResult<Rig<'a, T>> {
        let p = self.palettes.shape();
        let v = self.vertices.shape();
        let w = self.weights.shape();
        if p[2..] != [4, 4] {
            return Err(PyValueError::new_err(format!(
                "palette: expected shape (..., J, 4, 4), got {p:?}"
            )));
        }
        Ok(Rig {
            method: parse_method(method)?,
            palettes: slice("palette", &self.palettes)?,
            palette_batch: p[0],
            joint_count: p[1],
            vertices: slice("vertices", &self.vertices)?,
            vertex_batch: v[0],
            vertex_count: v[1],
            joints,
            influences: joints_shape[1],
            weights: slice("weights", &self.weights)?,
            weight_batch: w[0],
            bind_origins: self
                .bind_origins
                .as_ref()
                .map(|a| slice("bind_origins", a))
                .transpose()?,
            centers: self
                .centers
                .as_ref()
                .map(|a| slice("centers", a))
                .transpose()?,
            blend_values: self
                .blend_values
                .as_ref()
                .map(|a| slice("blend_values", a))
                .transpose()?,
            rigid_tolerance: DEFAULT_RIGID_TOLERANCE,
        })
    }
}

fn forward_typed<'py, T: numpy::Element + Real>(
    py: Python<'py>,
    method: &str,
    a: Arrays<'py, T>,
    joints: &PyReadonlyArray2<'py, u16>,
    (threads, normals): (Option<usize>, bool),
) -> PyResult<Bound<'py, PyAny>> {
    let joint_slice = slice("joints", joints)?;
    let rig = a.rig(method, joint_slice, joints.shape())?;
    let batch = rig.check().map_err(gradient_error)?;
    let n = rig.vertex_count;
    let mut out = vec![T::ZERO; batch * n * 3];
    let pass = if normals {
        gradient::forward_normals::<T>
    } else {
        gradient::forward::<T>
    };
    py.detach(|| on_threads(threads, || pass(&rig, &mut out)))?
        .map_err(gradient_error)?;
    Ok(out.into_pyarray(py).reshape([batch, n, 3])?.into_any())
}

type Grads<'py> = (
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
);

fn backward_typed<'py, T: numpy::Element + Real>(
    py: Python<'py>,
    method: &str,
    a: Arrays<'py, T>,
    joints: &PyReadonlyArray2<'py, u16>,
    wants: (bool, bool, bool),
    (threads, normals): (Option<usize>, bool),
) -> PyResult<Grads<'py>> {
    let joint_slice = slice("joints", joints)?;
    let rig = a.rig(method, joint_slice, joints.shape())?;
    let grad_out = match &a.grad_out {
        Some(g) => slice("grad_output", g)?,
        None => return Err(PyValueError::new_err("grad_output: missing")),
    };
    let zeros = |want: bool, len: usize| want.then(|| vec![T::ZERO; len]);
    let mut gp = zeros(wants.0, rig.palettes.len());
    let mut gv = zeros(wants.1, rig.vertices.len());
    let mut gw = zeros(wants.2, rig.weights.len());
    let pass = if normals {
        gradient::backward_normals::<T>
    } else {
        gradient::backward::<T>
    };
    py.detach(|| {
        on_threads(threads, || {
            pass(
                &rig,
                grad_out,
                Gradients {
                    palettes: gp.as_deref_mut(),
                    vertices: gv.as_deref_mut(),
                    weights: gw.as_deref_mut(),
                },
            )
        })
    })?
    .map_err(gradient_error)?;
    let shaped = |data: Option<Vec<T>>, shape: &[usize]| -> PyResult<Option<Bound<'py, PyAny>>> {
        data.map(|d| Ok(d.into_pyarray(py).reshape(shape)?.into_any()))
            .transpose()
    };
    Ok((
        shaped(gp, a.palettes.shape())?,
        shaped(gv, a.vertices.shape())?,
        shaped(gw, a.weights.shape())?,
    ))
}

fn wrong_dtype(palettes: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "palette: expected a float32 or float64 array, got {}",
        palettes
            .getattr("dtype")
            .map_or_else(|_| "another type".to_owned(), |d| d.to_string())
    ))
}

/// Positions `(B, N, 3)` of the batched rig (see the module docs), in the palette's dtype;
/// unit normals where `normals` (then `vertices` holds the normals).
#[pyfunction]
#[pyo3(signature = (method, palettes, vertices, joints, weights, bind_origins, centers, blend_values, threads, normals=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn batched_skin<'py>(
    py: Python<'py>,
    method: &str,
    palettes: &Bound<'py, PyAny>,
    vertices: &Bound<'py, PyAny>,
    joints: PyReadonlyArray2<'py, u16>,
    weights: &Bound<'py, PyAny>,
    bind_origins: Option<&Bound<'py, PyAny>>,
    centers: Option<&Bound<'py, PyAny>>,
    blend_values: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
    normals: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let per_vertex = (centers, blend_values);
    if let Some(a) = arrays::<f32>(palettes, vertices, weights, bind_origins, per_vertex, None)? {
        return forward_typed(py, method, a, &joints, (threads, normals));
    }
    if let Some(a) = arrays::<f64>(palettes, vertices, weights, bind_origins, per_vertex, None)? {
        return forward_typed(py, method, a, &joints, (threads, normals));
    }
    Err(wrong_dtype(palettes))
}

/// The gradients `(palette, vertices, weights)` of `Σ grad_output · batched_skin(..)`, each
/// `None` unless wanted, shaped as its input (of the normals' pass where `normals`).
#[pyfunction]
#[pyo3(signature = (method, palettes, vertices, joints, weights, bind_origins, centers, blend_values, grad_output, wants, threads, normals=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn batched_skin_backward<'py>(
    py: Python<'py>,
    method: &str,
    palettes: &Bound<'py, PyAny>,
    vertices: &Bound<'py, PyAny>,
    joints: PyReadonlyArray2<'py, u16>,
    weights: &Bound<'py, PyAny>,
    bind_origins: Option<&Bound<'py, PyAny>>,
    centers: Option<&Bound<'py, PyAny>>,
    blend_values: Option<&Bound<'py, PyAny>>,
    grad_output: &Bound<'py, PyAny>,
    wants: (bool, bool, bool),
    threads: Option<usize>,
    normals: bool,
) -> PyResult<Grads<'py>> {
    let g = Some(grad_output);
    let per_vertex = (centers, blend_values);
    if let Some(a) = arrays::<f32>(palettes, vertices, weights, bind_origins, per_vertex, g)? {
        return backward_typed(py, method, a, &joints, wants, (threads, normals));
    }
    if let Some(a) = arrays::<f64>(palettes, vertices, weights, bind_origins, per_vertex, g)? {
        return backward_typed(py, method, a, &joints, wants, (threads, normals));
    }
    Err(wrong_dtype(palettes))
}
