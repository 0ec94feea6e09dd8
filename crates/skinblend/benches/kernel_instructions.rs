//! A fixed amount of work for instruction counting: `skin_into` on `skinblend bench`'s rig
//! (64 random rigid joints, seed 0x5EED), one thread, the SIMD kernels where the CPU has them,
//! called a fixed number of times, so that a profiler's count divided by calls × vertices is
//! the kernel's instructions per vertex, free of the timing noise of a shared machine:
//!
//! ```text
//! cargo bench -p skinblend --bench kernel_instructions --no-run
//! valgrind --tool=callgrind --toggle-collect='skinblend::skin::skin_into*' \
//!     target/release/deps/kernel_instructions-* dq pn 4 100000 5
//! ```
//!
//! Arguments: method (`linear`, `dq`, `cor`, `blended` with every value 0.5), attributes (`p`, `pn`, `pnt`; with a `b`, as
//! `pnb`, the input is a `SkinMesh`, whose private vertex blocks the kernels read, as `skinblend bench`'s is), influences per
//! vertex, vertices, calls, and optionally joints (64 unless given: `skinblend bench`'s rig) and
//! threads (1 unless given: more split each call over a rayon pool of that many threads, the
//! calls made from inside the pool as `skinblend bench`'s parallel rows make them) and an output
//! offset (0 unless given: the outputs are the elements from that one on of allocations that
//! many elements longer, which moves them within their pages against the inputs; large
//! allocations all start at the same offset in a page).
//! Prints the arguments, the checksum of the last output and the time of the fastest call
//! (`fastest_call_ns`, which `tools/ozz-compare/ab.py` also reports).

use glam::{Vec3, Vec4};
use skinblend::fixtures::benchmark_mesh;
use skinblend::{
    prepare, skin_into, BlendValues, Method, SkinInput, SkinMesh, SkinOptions, SkinOutputs,
};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let method = match arg(0, "linear").as_str() {
        "linear" => Method::Linear,
        "dq" => Method::DualQuaternion,
        "cor" => Method::CenterOfRotation,
        "blended" => Method::Blended,
        other => {
            eprintln!("error: method {other:?} is not linear, dq, cor or blended");
            std::process::exit(2);
        }
    };
    let attributes = arg(1, "pn");
    let number = |i: usize, default: &str| -> usize {
        arg(i, default).parse().unwrap_or_else(|_| {
            eprintln!(
                "error: argument {} ({:?}) is not a count",
                i + 1,
                arg(i, default)
            );
            std::process::exit(2);
        })
    };
    let (k, vertices, calls) = (number(2, "4"), number(3, "100000"), number(4, "5"));
    let joints = number(5, "64");
    let threads = number(6, "1").max(1);
    let offset = number(7, "0");
    let normals = attributes.contains('n');
    let tangents = attributes.contains('t');
    let with_blocks = attributes.contains('b');
    let mesh = benchmark_mesh(vertices, k, joints, 0x5EED);
    let input = SkinInput::new(
        &mesh.positions,
        normals.then_some(&mesh.normals[..]),
        tangents.then_some(&mesh.tangents[..]),
        &mesh.influences,
    )
    .and_then(|input| input.with_rotation_centers(&mesh.positions))
    // Every vertex halfway, as `skinblend bench`'s blended rows: both blends run everywhere.
    .and_then(|input| input.with_blend_values(BlendValues::Uniform(0.5)))
    .expect("the benchmark mesh is valid");
    let handle = with_blocks.then(|| SkinMesh::from_input(&input));
    let input = match &handle {
        // The handle builds its blocks on the second request for its input (a mesh skinned
        // once never builds them); the first is this one, which comes back without.
        Some(handle) => {
            let _ = handle.input();
            handle.input()
        }
        None => input,
    };
    let options = SkinOptions {
        method,
        parallel: threads > 1,
        ..SkinOptions::default()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    let prepared = prepare(&mesh.palette, None, &options).expect("the benchmark palette is valid");
    let mut positions = vec![Vec3::ZERO; vertices + offset];
    let mut out_normals = vec![Vec3::ZERO; vertices + offset];
    let mut out_tangents = vec![Vec4::ZERO; vertices + offset];
    let outputs = offset..offset + vertices;
    // The fastest call: on a shared host, the one least disturbed by other tenants.
    let mut fastest_call = std::time::Duration::MAX;
    // On a thread of the pool, so that the calling thread takes pieces itself.
    pool.install(|| {
        for _ in 0..calls {
            let start = std::time::Instant::now();
            let outputs = SkinOutputs {
                positions: &mut positions[outputs.clone()],
                normals: normals.then_some(&mut out_normals[outputs.clone()]),
                tangents: tangents.then_some(&mut out_tangents[outputs.clone()]),
            };
            std::hint::black_box(
                skin_into(&input, &prepared, outputs, options.run_options()).expect("valid inputs"),
            );
            fastest_call = fastest_call.min(start.elapsed());
        }
    });
    let checksum: f32 = positions[outputs].iter().map(|p| p.x + p.y + p.z).sum();
    println!(
        "{} {attributes} k={k} vertices={vertices} joints={joints} threads={threads} offset={offset} calls={calls} checksum={checksum} \
         fastest_call_ns={}",
        method.name(),
        fastest_call.as_nanos()
    );
}
