//! Conversions between numpy arrays and the crates' types, errors as Python exceptions, and
//! the thread pools that `threads=` selects.

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, Mutex};

use glam::{Mat4, Vec3, Vec4};
use numpy::{IntoPyArray, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use skinblend::metrics::RatioStats;
use skinblend::{Diagnostics, Method, SkinError};
use skinblend_gltf::GltfError;

create_exception!(
    _native,
    PyGltfError,
    PyValueError,
    "A glTF file is malformed, breaks the specification, or asks for something unsupported; \
     the message names the JSON path (a subclass of ValueError)."
);

/// A core error as `ValueError`, with the core's one-line message.
pub(crate) fn skin_error(error: SkinError) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// A glTF error about `file` as the CLI prints it (`FILE: message`, the file named once):
/// `FileNotFoundError` when the file does not exist, `ValueError` for an output that is an
/// input file (bad usage, as the CLI's exit 2), `GltfError` otherwise.
pub(crate) fn gltf_error(file: &Path, error: GltfError) -> PyErr {
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
        GltfError::OutputIsInput { .. } => PyValueError::new_err(line),
        _ => PyGltfError::new_err(line),
    }
}

pub(crate) fn parse_method(method: &str) -> PyResult<Method> {
    method.parse::<Method>().map_err(skin_error)
}

/// A C-contiguous array's data, or a `ValueError` naming the argument.
pub(crate) fn slice<'a, T: numpy::Element, D: numpy::ndarray::Dimension>(
    name: &str,
    array: &'a numpy::PyReadonlyArray<'_, T, D>,
) -> PyResult<&'a [T]> {
    // `as_slice` takes Fortran order too, whose rows are not where the callers read them.
    let data = array.as_slice().ok().filter(|_| array.is_c_contiguous());
    data.ok_or_else(|| PyValueError::new_err(format!("{name}: expected a C-contiguous array")))
}

/// A `(N, 3)` float32 array's rows as `Vec3`s: borrowed without a copy (numpy's float32 data
/// are 4-byte aligned, as `Vec3` needs), copied where an odd view is not.
pub(crate) fn vec3s<'a>(
    name: &str,
    array: &'a PyReadonlyArray2<'_, f32>,
) -> PyResult<Cow<'a, [Vec3]>> {
    check_columns(name, array.shape(), 3)?;
    let data = slice(name, array)?;
    Ok(match bytemuck::try_cast_slice(data) {
        Ok(rows) => Cow::Borrowed(rows),
        Err(_) => Cow::Owned(data.chunks_exact(3).map(Vec3::from_slice).collect()),
    })
}

/// A `(N, 4)` float32 array's rows as `Vec4`s: borrowed where the data are 16-byte aligned (as
/// glam's `Vec4` needs; `numpy.empty` gives that), else copied.
pub(crate) fn vec4s<'a>(
    name: &str,
    array: &'a PyReadonlyArray2<'_, f32>,
) -> PyResult<Cow<'a, [Vec4]>> {
    check_columns(name, array.shape(), 4)?;
    let data = slice(name, array)?;
    Ok(match bytemuck::try_cast_slice(data) {
        Ok(rows) => Cow::Borrowed(rows),
        Err(_) => Cow::Owned(data.chunks_exact(4).map(Vec4::from_slice).collect()),
    })
}

/// A writable output array's data as `T`s (`Vec3`, `Vec4`), or a `ValueError` naming it when it
/// is not C-contiguous or not aligned for `T` (glam's `Vec4` needs 16 bytes).
pub(crate) fn out_slice<'a, T: bytemuck::Pod, D: numpy::ndarray::Dimension>(
    name: &str,
    array: &'a mut numpy::PyReadwriteArray<'_, f32, D>,
) -> PyResult<&'a mut [T]> {
    let c_order = array.is_c_contiguous();
    let data = array
        .as_slice_mut()
        .ok()
        .filter(|_| c_order)
        .ok_or_else(|| PyValueError::new_err(format!("{name}: expected a C-contiguous array")))?;
    bytemuck::try_cast_slice_mut(data).map_err(|_| {
        PyValueError::new_err(format!(
            "{name}: expected an array aligned to {} bytes (numpy.empty gives one)",
            std::mem::align_of::<T>()
        ))
    })
}

pub(crate) fn check_columns(name: &str, shape: &[usize], columns: usize) -> PyResult<()> {
    if shape.len() != 2 || shape[1] != columns {
        return Err(PyValueError::new_err(format!(
            "{name}: expected shape (N, {columns}), got {shape:?}"
        )));
    }
    Ok(())
}

/// `[J, 4, 4]` row-major matrices (`v' = M @ v`) as glam's column-major `Mat4`s.
pub(crate) fn matrices(name: &str, data: &[f32], shape: &[usize]) -> PyResult<Vec<Mat4>> {
    let mut matrices = Vec::new();
    matrices_into(name, data, shape, &mut matrices)?;
    Ok(matrices)
}

/// [`matrices`] into `out` (cleared first; it allocates only to grow).
pub(crate) fn matrices_into(
    name: &str,
    data: &[f32],
    shape: &[usize],
    out: &mut Vec<Mat4>,
) -> PyResult<()> {
    if shape.len() < 2 || shape[shape.len() - 1] != 4 || shape[shape.len() - 2] != 4 {
        return Err(PyValueError::new_err(format!(
            "{name}: expected shape (J, 4, 4), got {shape:?}"
        )));
    }
    out.clear();
    out.extend(
        data.chunks_exact(16)
            .map(|m| Mat4::from_cols_slice(m).transpose()),
    );
    Ok(())
}

pub(crate) fn triangles(name: &str, array: &PyReadonlyArray2<'_, u32>) -> PyResult<Vec<[u32; 3]>> {
    check_columns(name, array.shape(), 3)?;
    Ok(slice(name, array)?
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .collect())
}

pub(crate) fn diagnostics_dict<'py>(
    py: Python<'py>,
    d: &Diagnostics,
) -> PyResult<Bound<'py, PyDict>> {
    // Interned keys: made once per process, not four new strings per frame.
    let dict = PyDict::new(py);
    dict.set_item(
        pyo3::intern!(py, "singular_normal_matrices"),
        d.singular_normal_matrices,
    )?;
    dict.set_item(pyo3::intern!(py, "non_rigid_joints"), d.non_rigid_joints)?;
    dict.set_item(pyo3::intern!(py, "sign_flips"), d.sign_flips)?;
    dict.set_item(
        pyo3::intern!(py, "unweighted_vertices"),
        d.unweighted_vertices,
    )?;
    Ok(dict)
}

pub(crate) fn stats_dict<'py>(
    py: Python<'py>,
    s: Option<RatioStats>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(s) = s else { return Ok(None) };
    let dict = PyDict::new(py);
    dict.set_item("min", s.min)?;
    dict.set_item("mean", s.mean)?;
    dict.set_item("max", s.max)?;
    dict.set_item("count", s.count)?;
    Ok(Some(dict))
}

/// `[N, C]` float32 numpy array from flat data.
pub(crate) fn array2<'py>(
    py: Python<'py>,
    data: Vec<f32>,
    columns: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let rows = data.len() / columns;
    Ok(data.into_pyarray(py).reshape([rows, columns])?.into_any())
}

pub(crate) fn vec3_array<'py>(py: Python<'py>, v: &[Vec3]) -> PyResult<Bound<'py, PyAny>> {
    array2(py, bytemuck::cast_slice::<Vec3, f32>(v).to_vec(), 3)
}

pub(crate) fn vec4_array<'py>(py: Python<'py>, v: &[Vec4]) -> PyResult<Bound<'py, PyAny>> {
    array2(py, bytemuck::cast_slice::<Vec4, f32>(v).to_vec(), 4)
}

/// The most threads `threads=` may ask for. More threads than cores only add switching and
/// memory (each one a stack), and creating thousands fails ("Resource temporarily
/// unavailable"); 256 is above the hardware threads of most machines (two 64-core sockets with
/// SMT), and `threads=None` (the global pool) uses every core of any machine.
pub(crate) const MAX_THREADS: usize = 256;

/// Pools kept for reuse, the most recently used first: enough for a caller that alternates two
/// `threads=` values; at most `MAX_POOLS × MAX_THREADS` idle threads. Building a pool per call
/// would cost more than skinning a small mesh; keeping one per value ever asked for leaks.
const MAX_POOLS: usize = 2;

/// The rayon pool of `threads` threads: reused while it is among the [`MAX_POOLS`] most recently
/// used, else built, dropping the least recently used one (its threads exit once the calls
/// running on it return).
pub(crate) fn pool(threads: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(i) = pools.iter().position(|(n, _)| *n == threads) {
        let entry = pools.remove(i);
        let pool = Arc::clone(&entry.1);
        pools.insert(0, entry);
        return Ok(pool);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| PyValueError::new_err(format!("threads={threads}: {e}")))?;
    let pool = Arc::new(pool);
    pools.insert(0, (threads, Arc::clone(&pool)));
    // Dropping a pool tells its threads to exit (rayon joins no thread in `drop`).
    pools.truncate(MAX_POOLS);
    Ok(pool)
}

/// Checks a `threads=` value: `None` or 1 to [`MAX_THREADS`].
pub(crate) fn check_threads(threads: Option<usize>) -> PyResult<()> {
    match threads {
        Some(0) => Err(PyValueError::new_err("threads: expected at least 1, got 0")),
        Some(n) if n > MAX_THREADS => Err(PyValueError::new_err(format!(
            "threads: expected at most {MAX_THREADS} (the limit; None uses every core), got {n}"
        ))),
        _ => Ok(()),
    }
}

/// Runs one frame's skinning `f` on `threads` threads: as [`on_threads`], except that one
/// thread is the calling thread itself, with no hand-over to a pool and back (two context
/// switches, about 0.1 ms: more than the kernel takes on 10k vertices). `f` must then use no
/// rayon itself, which a skinning with `SkinOptions::parallel` false never does.
pub(crate) fn skin_on_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    match threads {
        Some(1) => Ok(f()),
        _ => on_threads(threads, f),
    }
}

/// Runs `f` on `threads` threads (`None`: the global rayon pool, every core).
pub(crate) fn on_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    check_threads(threads)?;
    match threads {
        None => Ok(f()),
        Some(n) => Ok(pool(n)?.install(f)),
    }
}
