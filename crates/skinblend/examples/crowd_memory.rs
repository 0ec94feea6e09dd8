//! Where a crowd's time goes: the same `SkinMesh::skin_into` calls on 2,000-vertex meshes (the
//! crowd of `skinblend bench`: 1,000 meshes, each its own rig of 24 to 64 joints), one thread,
//! with the data cache-hot or streamed from memory:
//! `cargo run --release -p skinblend --example crowd_memory -- [linear|dq] [ROUNDS]`.
//!
//! Prints per round: one mesh skinned again and again (everything cached), eight meshes in
//! turn, the whole crowd in turn (every mesh's inputs read from memory each frame), one mesh's
//! inputs written to the crowd's 1,000 outputs (inputs cached, outputs not), the crowd as one
//! `skin_batch` call per frame (which counts the crowd's vertices together), the crowd in turn
//! under one palette (the largest, cached: what the palettes' misses cost), and the crowd's
//! copy floor: every mesh's positions, normals, joints and weights read and its positions and
//! normals written, with no arithmetic (what the memory allows). When the crowd is far below the
//! cached rates and near the floor, it is bound by the bytes it moves, not by per-call work.

use std::time::Instant;

use glam::Vec3;
use skinblend::fixtures::benchmark_mesh;
use skinblend::{prepare, skin_batch, Method, RunOptions, SkinJob, SkinMesh, SkinOutputs};

const VERTICES: usize = 2_000;
const MESHES: usize = 1_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let method: Method = args
        .first()
        .map_or(Ok(Method::Linear), |name| name.parse())?;
    let rounds: usize = args.get(1).map_or(Ok(3), |r| r.parse())?;
    let crowd: Vec<_> = (0..MESHES)
        .map(|i| benchmark_mesh(VERTICES, 4, 24 + i % 41, 0xC0_0000 + i as u64))
        .collect();
    let handles = crowd
        .iter()
        .map(|m| SkinMesh::new(&m.positions[..], &m.influences)?.with_normals(&m.normals[..]))
        .collect::<Result<Vec<_>, _>>()?;
    let palettes = crowd
        .iter()
        .map(|m| prepare(&m.palette, None, method))
        .collect::<Result<Vec<_>, _>>()?;
    let mut outs: Vec<(Vec<Vec3>, Vec<Vec3>)> = (0..MESHES)
        .map(|_| (vec![Vec3::ZERO; VERTICES], vec![Vec3::ZERO; VERTICES]))
        .collect();
    let run = RunOptions {
        parallel: false,
        ..RunOptions::default()
    };
    // Mesh `mesh` into output `out`, under its own palette or the palette `under`; the rate of
    // `calls` such calls.
    type Outputs = Vec<(Vec<Vec3>, Vec<Vec3>)>;
    let rate_under = |outs: &mut Outputs,
                      calls: usize,
                      pick: &dyn Fn(usize) -> (usize, usize),
                      under: Option<usize>| {
        let start = Instant::now();
        for call in 0..calls {
            let (mesh, out) = pick(call);
            let (positions, normals) = &mut outs[out];
            let outputs = SkinOutputs {
                positions,
                normals: Some(normals),
                tangents: None,
            };
            handles[mesh].skin_into(&palettes[under.unwrap_or(mesh)], outputs, run)?;
        }
        let seconds = start.elapsed().as_secs_f64();
        Ok::<f64, skinblend::SkinError>((calls * VERTICES) as f64 / seconds / 1e6)
    };
    let rate = |outs: &mut Outputs, calls: usize, pick: &dyn Fn(usize) -> (usize, usize)| {
        rate_under(outs, calls, pick, None)
    };
    // The palette with the most joints (64): every mesh's joints are inside it.
    let largest = (0..MESHES)
        .max_by_key(|&i| palettes[i].joint_count())
        .unwrap_or(0);
    let calls = 20 * MESHES;
    println!("{method}, {MESHES} meshes of {VERTICES} vertices, one thread, Mverts/s:");
    for round in 0..rounds {
        let one = rate(&mut outs, calls, &|_| (0, 0))?;
        let eight = rate(&mut outs, calls, &|c| (c % 8, c % 8))?;
        let all = rate(&mut outs, calls, &|c| (c % MESHES, c % MESHES))?;
        let one_into_all = rate(&mut outs, calls, &|c| (0, c % MESHES))?;
        let one_palette = rate_under(
            &mut outs,
            calls,
            &|c| (c % MESHES, c % MESHES),
            Some(largest),
        )?;
        let batch = batch_rate(&handles, &palettes, &mut outs, calls / MESHES, run)?;
        let floor = copy_floor(&crowd, &mut outs, calls);
        println!(
            "round {round}: one mesh {one:.1}, eight meshes {eight:.1}, the crowd {all:.1}, \
             the crowd as one skin_batch {batch:.1}, one mesh into the crowd's outputs \
             {one_into_all:.1}, the crowd under one palette {one_palette:.1}, the crowd's copy \
             floor {floor:.1}"
        );
    }
    Ok(())
}

/// The rate (Mverts/s) of `frames` calls of `skin_batch` over the whole crowd (what
/// `skinblend bench`'s crowd rows time).
fn batch_rate(
    handles: &[SkinMesh<'_>],
    palettes: &[skinblend::PreparedPalette],
    outs: &mut [(Vec<Vec3>, Vec<Vec3>)],
    frames: usize,
    run: RunOptions,
) -> Result<f64, skinblend::SkinError> {
    let mut jobs: Vec<SkinJob<'_>> = handles
        .iter()
        .zip(palettes)
        .zip(outs.iter_mut())
        .map(|((mesh, palette), (positions, normals))| {
            let outputs = SkinOutputs {
                positions,
                normals: Some(normals),
                tangents: None,
            };
            SkinJob::new(mesh, palette, outputs)
        })
        .collect();
    let start = Instant::now();
    for _ in 0..frames {
        skin_batch(&mut jobs, run)?;
    }
    Ok((frames * MESHES * VERTICES) as f64 / start.elapsed().as_secs_f64() / 1e6)
}

/// The rate (Mverts/s) of `calls` copies over the crowd in turn: each vertex's position, normal,
/// joints and weights read (the arrays the DQS kernel reads; LBS reads its blocks, as many
/// bytes) and a position and a normal written, the weights' sum added so that no read is
/// dropped.
fn copy_floor(
    crowd: &[skinblend::fixtures::BenchmarkMesh],
    outs: &mut [(Vec<Vec3>, Vec<Vec3>)],
    calls: usize,
) -> f64 {
    let start = Instant::now();
    for call in 0..calls {
        let mesh = &crowd[call % MESHES];
        let (positions, normals) = &mut outs[call % MESHES];
        let influences = &mesh.influences;
        let slots = influences
            .joints()
            .chunks_exact(4)
            .zip(influences.weights().chunks_exact(4));
        for ((((p, n), (joints, weights)), out_p), out_n) in mesh
            .positions
            .iter()
            .zip(&mesh.normals)
            .zip(slots)
            .zip(positions.iter_mut())
            .zip(normals.iter_mut())
        {
            let read = weights.iter().sum::<f32>() + f32::from(joints[0] | joints[3]);
            *out_p = *p + read;
            *out_n = *n;
        }
    }
    std::hint::black_box(&outs);
    (calls * VERTICES) as f64 / start.elapsed().as_secs_f64() / 1e6
}
