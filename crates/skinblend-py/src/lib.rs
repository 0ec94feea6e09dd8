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

mod convert;
mod functions;
mod gradients;
mod model;
mod skinner;

use pyo3::prelude::*;
use skinblend::Method;

use convert::PyGltfError;
use functions::{
    benchmark_mesh, blend_values_from_joints, candy_wrapper_radius, dense_to_sparse, displacement,
    edge_ratios, evidence_rows, fixture_palette, fixtures, rotation_centers, volume_ratio,
};
use gradients::{batched_skin, batched_skin_backward};
use model::{NativeModel, NativePose};
use skinner::{skin_once, NativeSkinner};

/// The method names, in order (LBS, DQS, CoR, blended).
#[pyfunction]
fn method_names() -> Vec<&'static str> {
    Method::names().to_vec()
}

/// Full checks of a mesh's attributes made on the calling thread so far (the core's
/// `skinblend::full_validations`): a mesh is checked once when it is made, never per frame.
#[pyfunction]
fn full_validations() -> u64 {
    skinblend::full_validations()
}

/// The SIMD kernel set this CPU runs.
#[pyfunction]
fn simd_backend() -> Option<&'static str> {
    skinblend::simd_backend()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeSkinner>()?;
    m.add_function(wrap_pyfunction!(skin_once, m)?)?;
    m.add_function(wrap_pyfunction!(dense_to_sparse, m)?)?;
    m.add_class::<NativeModel>()?;
    m.add_class::<NativePose>()?;
    m.add("GltfError", m.py().get_type::<PyGltfError>())?;
    m.add("MAX_THREADS", convert::MAX_THREADS)?;
    m.add_function(wrap_pyfunction!(full_validations, m)?)?;
    m.add_function(wrap_pyfunction!(rotation_centers, m)?)?;
    m.add_function(wrap_pyfunction!(blend_values_from_joints, m)?)?;
    m.add_function(wrap_pyfunction!(candy_wrapper_radius, m)?)?;
    m.add_function(wrap_pyfunction!(edge_ratios, m)?)?;
    m.add_function(wrap_pyfunction!(volume_ratio, m)?)?;
    m.add_function(wrap_pyfunction!(displacement, m)?)?;
    m.add_function(wrap_pyfunction!(fixtures, m)?)?;
    m.add_function(wrap_pyfunction!(fixture_palette, m)?)?;
    m.add_function(wrap_pyfunction!(evidence_rows, m)?)?;
    m.add_function(wrap_pyfunction!(method_names, m)?)?;
    m.add_function(wrap_pyfunction!(benchmark_mesh, m)?)?;
    m.add_function(wrap_pyfunction!(simd_backend, m)?)?;
    m.add_function(wrap_pyfunction!(batched_skin, m)?)?;
    m.add_function(wrap_pyfunction!(batched_skin_backward, m)?)?;
    Ok(())
}
