//! Development benchmarks (criterion): LBS and DQS, positions + normals, 4 influences, on the
//! scalar and SIMD kernels, one thread, with element throughput in vertices. For user-facing
//! figures against the memory floor, run `skinblend bench`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::Vec3;
use skinblend::fixtures::benchmark_mesh;
use skinblend::{prepare, skin_into, Method, SkinInput, SkinOptions, SkinOutputs};

fn skinning(c: &mut Criterion) {
    let mut group = c.benchmark_group("skin_into_pn_k4");
    for vertices in [10_000usize, 100_000] {
        let mesh = benchmark_mesh(vertices, 4, 64, 0x5EED);
        let input = SkinInput::new(&mesh.positions, Some(&mesh.normals), None, &mesh.influences)
            .expect("benchmark mesh is valid");
        let mut positions = vec![Vec3::ZERO; vertices];
        let mut normals = vec![Vec3::ZERO; vertices];
        group.throughput(Throughput::Elements(vertices as u64));
        for method in [Method::Linear, Method::DualQuaternion] {
            for simd in [false, true] {
                let options = SkinOptions {
                    method,
                    simd,
                    parallel: false,
                    ..SkinOptions::default()
                };
                let prepared = prepare(&mesh.palette, None, &options).expect("valid palette");
                let name = format!("{}/{}", method.name(), if simd { "simd" } else { "scalar" });
                group.bench_with_input(BenchmarkId::new(name, vertices), &vertices, |b, _| {
                    b.iter(|| {
                        let outputs = SkinOutputs {
                            positions: &mut positions,
                            normals: Some(&mut normals),
                            tangents: None,
                        };
                        skin_into(&input, &prepared, outputs, options.run_options())
                            .expect("valid inputs")
                    });
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, skinning);
criterion_main!(benches);
