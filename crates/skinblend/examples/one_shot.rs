//! Where a one-shot call's time goes (a mesh checked, skinned once, dropped; what Python's
//! `skinblend.skin()` does per call): the influences copied into reused buffers and checked as
//! they are copied (`Influences::from_slices`), the mesh's attributes checked, the first skinning (which builds what every call reads), against
//! a third skinning of the same mesh (the kernel alone, once the second has built what only a
//! reused mesh reads), at 100k
//! vertices, four influences, 64 joints, positions and normals, one thread:
//! `cargo run --release -p skinblend --example one_shot -- [linear|dq] [CALLS]`.

use std::time::Instant;

use glam::Vec3;
use skinblend::fixtures::benchmark_mesh;
use skinblend::{prepare, Influences, Method, RunOptions, SkinMesh, SkinOutputs};

const VERTICES: usize = 100_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let method: Method = args.first().map_or(Ok(Method::Linear), |m| m.parse())?;
    if method == Method::CenterOfRotation {
        return Err("cor needs centers of rotation: run linear or dq".into());
    }
    let calls: usize = args.get(1).map_or(Ok(200), |c| c.parse())?;
    let mesh = benchmark_mesh(VERTICES, 4, 64, 7);
    let (joints, weights) = (mesh.influences.joints(), mesh.influences.weights());
    let (mut positions, mut normals) = (vec![Vec3::ZERO; VERTICES], vec![Vec3::ZERO; VERTICES]);
    let run = RunOptions {
        parallel: false,
        ..RunOptions::default()
    };
    let palette = prepare(&mesh.palette, None, method)?;
    let mut spare = (Vec::new(), Vec::new());
    // Seconds in: the influences' copy and checks, the mesh's checks, the first skinning, the
    // second (which builds what only a reused mesh reads), the third (the kernel alone).
    let mut seconds = [0.0f64; 5];
    for _ in 0..calls {
        let mut marks = [Instant::now(); 6];
        let influences =
            Influences::from_slices(4, joints, weights, 64, std::mem::take(&mut spare))?;
        marks[1] = Instant::now();
        let handle =
            SkinMesh::new(&mesh.positions[..], &influences)?.with_normals(&mesh.normals[..])?;
        marks[2] = Instant::now();
        for mark in &mut marks[3..] {
            let outputs = SkinOutputs {
                positions: &mut positions,
                normals: Some(&mut normals),
                tangents: None,
            };
            handle.skin_into(&palette, outputs, run)?;
            *mark = Instant::now();
        }
        drop(handle);
        spare = influences.into_arrays();
        for (second, pair) in seconds.iter_mut().zip(marks.windows(2)) {
            *second += (pair[1] - pair[0]).as_secs_f64();
        }
    }
    let ms = seconds.map(|s| s / calls as f64 * 1e3);
    println!(
        "{method}, {VERTICES} vertices, one thread, ms per call: the influences copied and \
         checked {:.3}, mesh's checks {:.3}, first skinning {:.3}, second {:.3}, third {:.3}; \
         the one-shot (copy to first skinning) at {:.2}x the third",
        ms[0],
        ms[1],
        ms[2],
        ms[3],
        ms[4],
        ms[4] / (ms[0] + ms[1] + ms[2]),
    );
    Ok(())
}
