//! What `skin_frames` (Python's `Skinner.skin_frames`: a mesh checked once, F frames of
//! positions per call) costs against the kernel alone, in Rust, one thread, on the benchmark's
//! mesh (four influences, 64 random rigid joints, positions only):
//! `cargo run --release -p skinblend --example frames -- [linear|dq] [VERTICES] [ROUNDS]`.
//!
//! Prints per round, in µs per frame (each the fastest of 200 samples of 16 frames): the kernel
//! alone writing one frame's output again and again (the reference of `bench_numpy.py`), the
//! same 16 frames each into its own slice of one `(16, N)` output (what `skin_frames` writes),
//! and those with the palette re-prepared before every frame (`PreparedPalette::update`, as
//! `skin_frames` does), and the kernel's time over each. The outputs' share is the second
//! ratio, the palette's the third's difference from it.

use std::hint::black_box;
use std::time::Instant;

use glam::Vec3;
use skinblend::fixtures::benchmark_mesh;
use skinblend::{prepare, Method, RunOptions, SkinMesh, SkinOutputs};

const FRAMES: usize = 16;
const SAMPLES: usize = 200;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let method: Method = args
        .first()
        .map_or(Ok(Method::DualQuaternion), |name| name.parse())?;
    let vertices: usize = args.get(1).map_or(Ok(10_000), |n| n.parse())?;
    let rounds: usize = args.get(2).map_or(Ok(3), |r| r.parse())?;
    let mesh = benchmark_mesh(vertices, 4, 64, 0x5EED);
    let handle = SkinMesh::new(&mesh.positions[..], &mesh.influences)?;
    let mut palette = prepare(&mesh.palette, None, method)?;
    let mut frames = vec![Vec3::ZERO; vertices * FRAMES];
    let run = RunOptions {
        parallel: false,
        ..RunOptions::default()
    };
    println!("{method}, {vertices} vertices, {FRAMES} frames, one thread, µs per frame:");
    for round in 0..rounds {
        // 0: one output again and again; 1: each frame its own slice; 2: 1 and an update.
        let mut fastest = [f64::INFINITY; 3];
        for _ in 0..SAMPLES {
            for (case, fastest) in fastest.iter_mut().enumerate() {
                let start = Instant::now();
                for frame in 0..FRAMES {
                    if case == 2 {
                        palette.update(black_box(&mesh.palette))?;
                    }
                    let slice = if case == 0 { 0 } else { frame };
                    let out = &mut frames[slice * vertices..][..vertices];
                    handle.skin_into(&palette, SkinOutputs::positions(out), run)?;
                }
                let frame_us = start.elapsed().as_secs_f64() / FRAMES as f64 * 1e6;
                *fastest = fastest.min(frame_us);
            }
        }
        let [kernel, slices, updated] = fastest;
        println!(
            "round {round}: kernel alone {kernel:.2}, own slices {slices:.2} ({:.3}x), \
             own slices and updates {updated:.2} ({:.3}x)",
            kernel / slices,
            kernel / updated
        );
    }
    Ok(())
}
