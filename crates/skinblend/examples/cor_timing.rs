//! Times the center-of-rotation precomputation on the fixtures and on 100k-vertex procedural
//! cylinders.
//!
//! `cargo run --release -p skinblend --example cor_timing [vertices]`
//!
//! Two meshes of the same size: `rings`, whose weights depend on the height only (many vertices
//! share a weight vector, as on a procedural limb), and `painted`, whose weight boundaries wander
//! around the cylinder so that every vertex has its own weight vector over up to three joints, as
//! on a hand-painted character. Each is timed on one thread and on all of the current rayon pool,
//! and the two results are checked bit for bit.

use std::f32::consts::TAU;
use std::time::Instant;

use glam::Vec3;
use skinblend::cor::{rotation_centers_with_progress, CorOptions, CorStage, RotationCenters};
use skinblend::Influences;

/// Joints along the cylinder, evenly spaced over its length.
const JOINTS: usize = 5;
/// Cylinder radius and length, metres.
const RADIUS: f32 = 0.25;
const LENGTH: f32 = 4.0;

struct Mesh {
    positions: Vec<Vec3>,
    triangles: Vec<[u32; 3]>,
    influences: Influences,
}

/// A cylinder of `rings` × `segments` vertices along +Y; `painted` shifts each weight boundary by
/// up to a fifth of a bone around the circumference.
fn cylinder(rings: usize, segments: usize, painted: bool) -> Mesh {
    let bone = LENGTH / (JOINTS - 1) as f32;
    let mut positions = Vec::with_capacity(rings * segments);
    let mut lists = Vec::with_capacity(rings * segments);
    for ring in 0..rings {
        let y = LENGTH * ring as f32 / (rings - 1) as f32;
        for k in 0..segments {
            let theta = TAU * k as f32 / segments as f32;
            positions.push(Vec3::new(RADIUS * theta.cos(), y, RADIUS * theta.sin()));
            // Hat functions around each joint, 1.5 bones wide, so three joints can overlap.
            let shift = if painted {
                0.2 * bone * (3.0 * theta + y).sin()
            } else {
                0.0
            };
            let list: Vec<(u16, f32)> = (0..JOINTS)
                .map(|j| {
                    let d = (y + shift - j as f32 * bone).abs() / (0.75 * bone);
                    (j as u16, (1.0 - d).max(0.0))
                })
                .filter(|&(_, w)| w > 0.0)
                .collect();
            lists.push(if list.is_empty() {
                vec![(0, 1.0)]
            } else {
                list
            });
        }
    }
    let mut triangles = Vec::with_capacity(2 * rings * segments);
    let at = |ring: usize, k: usize| (ring * segments + k % segments) as u32;
    for ring in 0..rings - 1 {
        for k in 0..segments {
            let (a, b, c, d) = (
                at(ring, k),
                at(ring, k + 1),
                at(ring + 1, k),
                at(ring + 1, k + 1),
            );
            triangles.push([a, c, d]);
            triangles.push([a, d, b]);
        }
    }
    let (influences, _) = Influences::from_lists(lists, 4, JOINTS).expect("valid weights");
    Mesh {
        positions,
        triangles,
        influences,
    }
}

fn time(mesh: &Mesh, threads: usize, options: &CorOptions) -> (RotationCenters, f64) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    let start = Instant::now();
    let mut last_percent = [0usize; 2];
    let result = pool
        .install(|| {
            rotation_centers_with_progress(
                &mesh.positions,
                &mesh.triangles,
                &mesh.influences,
                options,
                &mut |p| {
                    let stage = usize::from(p.stage == CorStage::Centers);
                    let percent = (100 * p.done).checked_div(p.total).unwrap_or(100);
                    if percent >= last_percent[stage] + 25 || percent == 100 {
                        last_percent[stage] = percent;
                        eprint!("\r  {:?} {percent:>3}%   ", p.stage);
                    }
                },
            )
        })
        .expect("valid mesh");
    let seconds = start.elapsed().as_secs_f64();
    eprintln!();
    (result, seconds)
}

fn main() {
    let vertices: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let segments = 250;
    let rings = vertices.div_ceil(segments).max(2);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("cores available: {threads}");
    for fixture in skinblend::fixtures::all() {
        let start = Instant::now();
        let result = skinblend::cor::rotation_centers(
            &fixture.positions,
            &fixture.triangles,
            &fixture.influences,
            &CorOptions::default(),
        )
        .expect("valid fixture");
        println!(
            "{:<13} {} vertices, {} triangles: {:.2} ms ({} without a center)",
            fixture.name,
            fixture.positions.len(),
            fixture.triangles.len(),
            start.elapsed().as_secs_f64() * 1e3,
            result.vertices_without_center,
        );
    }
    for painted in [false, true] {
        let mesh = cylinder(rings, segments, painted);
        let name = if painted { "painted" } else { "rings" };
        let options = CorOptions::default();
        let (serial, serial_s) = time(&mesh, 1, &options);
        let (parallel, parallel_s) = time(&mesh, threads, &options);
        let identical = serial
            .centers
            .iter()
            .zip(&parallel.centers)
            .all(|(a, b)| a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits));
        println!(
            "{name:<8} {} vertices, {} triangles -> {} sub-triangles in {} clusters, {} distinct \
             weights, {} without a center: 1 thread {serial_s:.2} s, {threads} threads \
             {parallel_s:.2} s, bit-identical: {identical}",
            mesh.positions.len(),
            mesh.triangles.len(),
            parallel.subdivided_triangles,
            parallel.triangle_clusters,
            parallel.distinct_weights,
            parallel.vertices_without_center,
        );
        // The same with exact clusters (no weight rounding), and how far the centers move.
        let exact_options = CorOptions {
            weight_quantum: 0.0,
            ..options
        };
        let (exact, exact_s) = time(&mesh, threads, &exact_options);
        let moved = exact
            .centers
            .iter()
            .zip(&parallel.centers)
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .map(|(a, b)| a.distance(*b))
            .fold(0.0f32, f32::max);
        println!(
            "{name:<8} exact clusters: {} clusters, {threads} threads {exact_s:.2} s; default \
             rounding moves centers by at most {:.2e} of the mesh length",
            exact.triangle_clusters,
            moved / LENGTH,
        );
    }
}
