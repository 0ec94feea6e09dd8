//! The first table's rows of `skinblend bench`: one kernel configuration's call times through
//! the mesh handle, and the memory floor beside it (a plain copy of the same bytes on the same
//! threads).

use std::hint::black_box;

use anyhow::Result;
use glam::{Vec3, Vec4};
use rayon::prelude::*;
use skinblend::fixtures::BenchmarkMesh;
use skinblend::{prepare, Method, SkinMesh, SkinOptions, SkinOutputs};

use super::plan::{call_times, Attributes, Backend, CallTimes, Plan};

/// Output buffers reused by every measurement of one vertex count.
pub(super) struct Outputs {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
}

impl Outputs {
    pub(super) fn new(vertices: usize) -> Self {
        Self {
            positions: vec![Vec3::ZERO; vertices],
            normals: vec![Vec3::ZERO; vertices],
            tangents: vec![Vec4::ZERO; vertices],
        }
    }
}

/// The blend value of every vertex when the benchmarks run the blended method.
pub(super) const BENCH_BLEND_VALUE: f32 = 0.5;

/// The call times of one kernel configuration.
pub(super) fn kernel_call_times(
    mesh: &BenchmarkMesh,
    attributes: Attributes,
    method: Method,
    backend: Backend,
    out: &mut Outputs,
    plan: &Plan,
) -> Result<CallTimes> {
    let normals = attributes != Attributes::P;
    let tangents = attributes == Attributes::Pnt;
    // The mesh handle an application that skins a mesh every frame keeps: checked once, with
    // the layout the kernels read best (LBS with normals and four influences reads its blocks).
    let mut handle = SkinMesh::new(&mesh.positions[..], &mesh.influences)?
        // CoR's speed does not depend on where the centers are: the bind positions serve.
        .with_rotation_centers(&mesh.positions[..])?
        // Blended: every vertex between LBS and DQS, so every block blends both (its slowest
        // case; a block all 0 or all 1 runs LBS's or DQS's kernel).
        .with_uniform_blend_value(BENCH_BLEND_VALUE)?;
    if normals {
        handle = handle.with_normals(&mesh.normals[..])?;
    }
    if tangents {
        handle = handle.with_tangents(&mesh.tangents[..])?;
    }
    let options = SkinOptions {
        method,
        parallel: backend == Backend::Parallel,
        simd: backend != Backend::Scalar,
        ..SkinOptions::default()
    };
    let prepared = prepare(&mesh.palette, None, &options)?;
    let mut time = || {
        call_times(plan, || {
            let outputs = SkinOutputs {
                positions: &mut out.positions,
                normals: normals.then_some(&mut out.normals[..]),
                tangents: tangents.then_some(&mut out.tangents[..]),
            };
            handle
                .skin_into(&prepared, outputs, options.run_options())
                .map(|d| {
                    black_box(d);
                })
        })
    };
    // Parallel: the calls run on a thread of the pool, as an application that skins inside
    // `ThreadPool::install` (or from a rayon task) does, so that the calling thread takes a
    // piece itself; called from outside the pool, each call would also hand the whole job to
    // the pool and wait for it to come back.
    Ok(if backend == Backend::Parallel {
        rayon::scope(|_| time())
    } else {
        time()
    }?)
}

/// The memory floor: the same input bytes read and the same output bytes written by a plain
/// loop, on `threads` threads, in million vertices per second.
pub(super) fn floor_mverts_per_s(
    mesh: &BenchmarkMesh,
    attributes: Attributes,
    threads: usize,
    out: &mut Outputs,
    plan: &Plan,
) -> f64 {
    let k = mesh.influences.influences_per_vertex();
    let joints = mesh.influences.joints();
    let weights = mesh.influences.weights();
    let normals = attributes != Attributes::P;
    let tangents = attributes == Attributes::Pnt;
    let chunk = 4096;
    // memcpy of each attribute, and every influence byte folded into a checksum the optimizer
    // cannot drop: the cheapest way to move the same bytes.
    let copy_range = |start: usize, p: &mut [Vec3], n: &mut [Vec3], t: &mut [Vec4]| {
        let end = start + p.len();
        p.copy_from_slice(&mesh.positions[start..end]);
        if normals {
            n.copy_from_slice(&mesh.normals[start..end]);
        }
        if tangents {
            t.copy_from_slice(&mesh.tangents[start..end]);
        }
        let joint_bits = joints[start * k..end * k]
            .iter()
            .fold(0u16, |acc, &j| acc ^ j);
        let weight_bits = weights[start * k..end * k]
            .iter()
            .fold(0u32, |acc, &w| acc ^ w.to_bits());
        black_box((joint_bits, weight_bits));
    };
    let seconds = call_times(plan, || {
        if threads > 1 {
            out.positions
                .par_chunks_mut(chunk)
                .zip(out.normals.par_chunks_mut(chunk))
                .zip(out.tangents.par_chunks_mut(chunk))
                .enumerate()
                .for_each(|(c, ((p, n), t))| copy_range(c * chunk, p, n, t));
        } else {
            for (c, ((p, n), t)) in out
                .positions
                .chunks_mut(chunk)
                .zip(out.normals.chunks_mut(chunk))
                .zip(out.tangents.chunks_mut(chunk))
                .enumerate()
            {
                copy_range(c * chunk, p, n, t);
            }
        }
        black_box(&out.positions);
        Ok::<(), anyhow::Error>(())
    })
    .map_or(f64::INFINITY, |times| times.median_seconds);
    mesh.positions.len() as f64 / seconds / 1e6
}
