//! Runs one kernel in a loop, for profilers (perf, valgrind's callgrind):
//! `cargo run --release -p skinblend --example kernel_loop -- dq pn 4 100000 200 [scalar]`
//! Arguments: method `linear` or `dq` (a `Method` name; `cor` needs centers of rotation, which
//! this mesh has not), attributes p|pn|pnt, influences, vertices, frames.

use glam::{Vec3, Vec4};
use skinblend::fixtures::benchmark_mesh;
use skinblend::{prepare, skin_into, Method, SkinInput, SkinOptions, SkinOutputs};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let method: Method = arg(0, Method::DualQuaternion.name()).parse()?;
    let attributes = arg(1, "pn");
    let k: usize = arg(2, "4").parse()?;
    let vertices: usize = arg(3, "100000").parse()?;
    let frames: usize = arg(4, "200").parse()?;
    let simd = arg(5, "simd") != "scalar";
    let mesh = benchmark_mesh(vertices, k, 64, 0x5EED);
    let normals = attributes.contains('n');
    let tangents = attributes.contains('t');
    let input = SkinInput::new(
        &mesh.positions,
        normals.then_some(&mesh.normals[..]),
        tangents.then_some(&mesh.tangents[..]),
        &mesh.influences,
    )?;
    let options = SkinOptions {
        method,
        simd,
        parallel: false,
        ..SkinOptions::default()
    };
    let prepared = prepare(&mesh.palette, None, &options)?;
    let (mut p, mut n, mut t) = (
        vec![Vec3::ZERO; vertices],
        vec![Vec3::ZERO; vertices],
        vec![Vec4::ZERO; vertices],
    );
    let start = std::time::Instant::now();
    for _ in 0..frames {
        let outputs = SkinOutputs {
            positions: &mut p,
            normals: normals.then_some(&mut n[..]),
            tangents: tangents.then_some(&mut t[..]),
        };
        std::hint::black_box(skin_into(
            &input,
            &prepared,
            outputs,
            options.run_options(),
        )?);
    }
    let seconds = start.elapsed().as_secs_f64();
    println!("{:.1} Mverts/s", (vertices * frames) as f64 / seconds / 1e6);
    Ok(())
}
