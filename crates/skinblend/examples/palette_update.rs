//! What preparing a palette costs per frame: `PreparedPalette::update` (the call every front
//! door makes once per frame and skin) for LBS, DQS and CoR at 24, 64 and 128 joints (128 is
//! the most for which DQS and CoR build the pivot sign table), the benchmark's random rigid
//! joints, one thread; the fastest of `ROUNDS` rounds of 200 updates, in µs per update:
//! `cargo run --release -p skinblend --example palette_update -- [ROUNDS]`.

use std::hint::black_box;
use std::time::Instant;

use skinblend::fixtures::benchmark_mesh;
use skinblend::{prepare, Method};

const UPDATES_PER_ROUND: usize = 200;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args().nth(1).map_or(Ok(30), |r| r.parse())?;
    println!("{:>6} {:>8} {:>12}", "joints", "method", "µs/update");
    for joints in [24, 64, 128] {
        let mesh = benchmark_mesh(1, 1, joints, 7);
        let centers = vec![glam::Vec3::ZERO; joints];
        for method in [
            Method::Linear,
            Method::DualQuaternion,
            Method::CenterOfRotation,
        ] {
            let given_centers = (method == Method::CenterOfRotation).then_some(&centers[..]);
            let mut prepared = prepare(&mesh.palette, given_centers, method)?;
            let mut fastest = f64::INFINITY;
            for _ in 0..rounds {
                let start = Instant::now();
                for _ in 0..UPDATES_PER_ROUND {
                    prepared.update(black_box(&mesh.palette))?;
                }
                fastest = fastest.min(start.elapsed().as_secs_f64() / UPDATES_PER_ROUND as f64);
            }
            println!("{joints:>6} {:>8} {:>12.2}", method.name(), fastest * 1e6);
        }
    }
    Ok(())
}
