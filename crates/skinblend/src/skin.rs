//! The driver, the one entry point for every method: checks a call, chooses its kernel once
//! (SIMD where the CPU has it and the call allows, else the scalar reference) and splits large
//! meshes over the rayon pool.

use glam::{Mat4, Vec3, Vec4};

use crate::error::SkinError;
use crate::input::{check_length, SkinInput};
use crate::palette::{prepare, PreparedPalette};
#[cfg(feature = "rayon")]
use crate::simd::layout::BLOCK_VERTICES;
use crate::simd::{select, Kernel};
use crate::types::{Diagnostics, RangeCounts, RunOptions, SkinOptions, SkinOutputs, Skinned};

/// Skins `input` under `palette` with `options.method`, allocating the result.
///
/// Prepares the palette for [`SkinOptions::palette_spec`] and skins with
/// [`SkinOptions::run_options`].
///
/// `palette[j]` is joint `j`'s skin matrix `world_from_joint · joint_from_bind`;
/// `joint_centers` are the joints' bind-pose origins for the DQS residual (`None`: the origin).
/// Normals and tangents are skinned when the input has them. Convenience over [`prepare`] and
/// [`skin_into`], which reuse their buffers.
///
/// # Errors
/// Those of [`prepare`] and [`skin_into`].
pub fn skin(
    input: &SkinInput<'_>,
    palette: &[Mat4],
    joint_centers: Option<&[Vec3]>,
    options: &SkinOptions,
) -> Result<Skinned, SkinError> {
    let prepared = prepare(palette, joint_centers, options)?;
    let n = input.vertex_count();
    let mut positions = vec![Vec3::ZERO; n];
    let mut normals = input.normals().map(|_| vec![Vec3::ZERO; n]);
    let mut tangents = input.tangents().map(|_| vec![Vec4::ZERO; n]);
    let outputs = SkinOutputs {
        positions: &mut positions,
        normals: normals.as_deref_mut(),
        tangents: tangents.as_deref_mut(),
    };
    let diagnostics = skin_into(input, &prepared, outputs, options.run_options())?;
    Ok(Skinned {
        positions,
        normals,
        tangents,
        diagnostics,
    })
}

/// Below this many vertices a call runs on the calling thread only: a split costs a `rayon::join`
/// per piece (a microsecond or two when the pool's threads are awake), which a piece of 512
/// vertices (4,096 over two threads, four pieces each) still repays several times: two threads
/// over one at 10,000 vertices ran 1.45–1.78× as fast on a two-core host (`skinblend bench
/// --quick --json`, the rows with 1 and 2 threads). A piece nobody steals runs on the calling
/// thread, so a busy pool costs little more than the serial call.
const PARALLEL_MIN_VERTICES: usize = 4_096;

/// Parallel pieces per pool thread. More than one lets the calling thread go on with the next
/// piece while a sleeping worker is still waking up, and a thread that finishes early take work
/// from one that was descheduled: two threads over one at 10k vertices ran 1.82× as fast (DQS)
/// with four pieces against 1.42× with two (`skinblend bench --quick`, the rows with 1 and 2
/// threads, against a build with two pieces).
const PARALLEL_PIECES_PER_THREAD: usize = 4;

/// Most vertices in one parallel piece (about 14 µs of LBS on one core): larger meshes are cut
/// finer than [`PARALLEL_PIECES_PER_THREAD`] alone would. On a shared host, a core can be taken
/// away in the middle of a call, and the other thread can take over only the pieces not yet
/// started: with four pieces per thread a stalled core held back an eighth of the call. Two
/// threads over one, LBS at 100k: median rate 1.82× against 1.16× with four pieces per thread
/// (`tools/ozz-compare/ab.py 11 "linear pn 4 100000 500" B,64,1 B,64,2`, B this build and a
/// build without the cap). An uncontended split costs a deque push and pop per piece: 256 at
/// 1M (halved eight times).
const PARALLEL_PIECE_MAX_VERTICES: usize = 4_096;

/// Skins `input` under a prepared palette into caller-owned buffers, as `run` says. Allocates
/// nothing once its influences have been skinned twice: the first SIMD calls build the tables
/// their kernels read (the first what every call reads, the second what only a reused mesh
/// pays for; see [`crate::Influences`]).
///
/// Checks lengths in O(1): every output must have one element per vertex, and the palette must
/// cover the influences' joints. With the default `rayon` feature, meshes of 4,096 vertices and
/// more are split over the current rayon pool (unless `run.parallel` is `false`), four pieces per thread
/// and at most 4,096 vertices a piece (run inside
/// `ThreadPool::install` to choose the thread count, one included); the result is bit-identical
/// to the serial one because every vertex is computed the same way whichever thread runs it.
///
/// # Errors
/// [`SkinError::AttributeLength`] for an output of the wrong length,
/// [`SkinError::MissingInputAttribute`] for an output the input cannot fill, and
/// [`SkinError::PaletteLength`] for a palette with fewer joints than the influences address,
/// [`SkinError::MissingRotationCenters`] for [`crate::Method::CenterOfRotation`] on an input
/// without centers, and [`SkinError::MissingBlendValues`] for [`crate::Method::Blended`] on an input
/// without blend values.
pub fn skin_into(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    outputs: SkinOutputs<'_>,
    run: RunOptions,
) -> Result<Diagnostics, SkinError> {
    check_call(input, palette, &outputs)?;
    Ok(skin_checked(
        input,
        palette,
        outputs,
        run,
        input.vertex_count(),
    ))
}

/// The O(1) checks of a call of [`skin_into`].
pub(crate) fn check_call(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    outputs: &SkinOutputs<'_>,
) -> Result<(), SkinError> {
    let n = input.vertex_count();
    check_length("output positions", n, outputs.positions.len())?;
    if let Some(normals) = outputs.normals.as_deref() {
        if input.normals().is_none() {
            return Err(SkinError::MissingInputAttribute {
                attribute: "normals",
            });
        }
        check_length("output normals", n, normals.len())?;
    }
    if let Some(tangents) = outputs.tangents.as_deref() {
        if input.tangents().is_none() {
            return Err(SkinError::MissingInputAttribute {
                attribute: "tangents",
            });
        }
        check_length("output tangents", n, tangents.len())?;
    }
    if let Some(needed) = palette.method().vertex_input() {
        if !input.has_vertex_input(needed) {
            return Err(SkinError::missing_vertex_input(needed, n));
        }
    }
    let joint_count = input.influences().joint_count();
    if palette.joint_count() < joint_count {
        return Err(SkinError::PaletteLength {
            expected: joint_count,
            found: palette.joint_count(),
        });
    }
    Ok(())
}

/// [`skin_into`] after [`check_call`]; `swept_vertices`: the vertices skinned around this call
/// in the same frame (its own, or its batch's), which decide whether its inputs stream from
/// memory (`simd::select`).
pub(crate) fn skin_checked(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    outputs: SkinOutputs<'_>,
    run: RunOptions,
    swept_vertices: usize,
) -> Diagnostics {
    // The kernel is chosen once per call: every piece of a parallel split runs the same one.
    let kernel = if run.simd {
        select(input, palette, &outputs, run.renormalize, swept_vertices)
    } else {
        Kernel::Scalar
    };
    let counts = skin_parallel(input, palette, kernel, outputs, run);
    // The pieces' counts, summed, with the flips the kernel left to the call's tally.
    let mut diagnostics = counts.into_diagnostics(kernel.tallied_sign_flips(input, palette));
    diagnostics.non_rigid_joints = palette.non_rigid_joints();
    diagnostics
}

/// Skins the whole range with `kernel`, split over the rayon pool where `run` allows it and the
/// mesh is large enough.
fn skin_parallel(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    kernel: Kernel,
    outputs: SkinOutputs<'_>,
    run: RunOptions,
) -> RangeCounts {
    let renormalize = run.renormalize;
    #[cfg(feature = "rayon")]
    {
        let count = outputs.positions.len();
        // The pool is asked for its size only where the call could split.
        let threads = || rayon::current_num_threads();
        if run.parallel && count >= PARALLEL_MIN_VERTICES && threads() > 1 {
            let pieces = threads() * PARALLEL_PIECES_PER_THREAD;
            let piece_vertices = count.div_ceil(pieces).min(PARALLEL_PIECE_MAX_VERTICES);
            return skin_split(
                input,
                palette,
                renormalize,
                kernel,
                0,
                outputs,
                piece_vertices,
            );
        }
    }
    #[cfg(not(feature = "rayon"))]
    let _ = (
        PARALLEL_MIN_VERTICES,
        PARALLEL_PIECES_PER_THREAD,
        PARALLEL_PIECE_MAX_VERTICES,
    );
    kernel.run(input, palette, renormalize, 0, outputs)
}

/// Halves the range at a multiple of the SIMD block size until its pieces have at most
/// `piece_vertices` vertices, skinning the halves with `rayon::join`. Every vertex lands in the
/// same eight-vertex block as in the serial call (blocks start at multiples of eight), so the
/// result is bit-identical to the serial one whatever the thread count.
#[cfg(feature = "rayon")]
fn skin_split(
    input: &SkinInput<'_>,
    palette: &PreparedPalette,
    renormalize: bool,
    kernel: Kernel,
    first_vertex: usize,
    outputs: SkinOutputs<'_>,
    piece_vertices: usize,
) -> RangeCounts {
    let count = outputs.positions.len();
    let mid = (count / 2).div_ceil(BLOCK_VERTICES) * BLOCK_VERTICES;
    if count <= piece_vertices || mid == 0 || mid >= count {
        return kernel.run(input, palette, renormalize, first_vertex, outputs);
    }
    let (low, high) = outputs.split_at(mid);
    let (mut a, b) = rayon::join(
        || {
            skin_split(
                input,
                palette,
                renormalize,
                kernel,
                first_vertex,
                low,
                piece_vertices,
            )
        },
        || {
            skin_split(
                input,
                palette,
                renormalize,
                kernel,
                first_vertex + mid,
                high,
                piece_vertices,
            )
        },
    );
    a.add(&b);
    a
}
