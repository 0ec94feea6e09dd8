//! What the `cor_*` tests share: options for a method, a fixture's centers, centers as bits,
//! random centers.

use glam::Vec3;
use skinblend::cor::{rotation_centers, CorOptions, RotationCenters, NO_ROTATION_CENTER};
use skinblend::fixtures::Fixture;
use skinblend::{Method, SkinOptions};

use super::Rng;

pub fn options(method: Method) -> SkinOptions {
    SkinOptions {
        method,
        ..SkinOptions::default()
    }
}

pub fn centers_of(fixture: &Fixture, cor_options: &CorOptions) -> RotationCenters {
    rotation_centers(
        &fixture.positions,
        &fixture.triangles,
        &fixture.influences,
        cor_options,
    )
    .unwrap()
}

pub fn bits(centers: &[Vec3]) -> Vec<[u32; 3]> {
    centers
        .iter()
        .map(|c| c.to_array().map(f32::to_bits))
        .collect()
}

/// Random centers for a rig, a tenth of them missing (NaN).
pub fn random_centers(rng: &mut Rng, count: usize) -> Vec<Vec3> {
    (0..count)
        .map(|_| {
            if rng.unit() < 0.1 {
                NO_ROTATION_CENTER
            } else {
                rng.vec3(2.0)
            }
        })
        .collect()
}
