//! Morph targets: a primitive's bind-space attributes after its targets at some weights (before
//! skinning, as glTF orders them).

use glam::{Vec3, Vec4};

use crate::model::Primitive;

/// Bind-space attributes after morph targets with `weights`.
pub fn morphed(
    primitive: &Primitive,
    weights: &[f32],
) -> (Vec<Vec3>, Option<Vec<Vec3>>, Option<Vec<Vec4>>) {
    let mut positions = primitive.positions.clone();
    let mut normals = primitive.normals.clone();
    let mut tangents = primitive.tangents.clone();
    for (target, &w) in primitive.targets.iter().zip(weights) {
        if w == 0.0 {
            continue;
        }
        if let Some(d) = &target.positions {
            positions.iter_mut().zip(d).for_each(|(p, d)| *p += w * *d);
        }
        if let (Some(n), Some(d)) = (normals.as_mut(), &target.normals) {
            n.iter_mut().zip(d).for_each(|(n, d)| *n += w * *d);
        }
        if let (Some(t), Some(d)) = (tangents.as_mut(), &target.tangents) {
            t.iter_mut()
                .zip(d)
                .for_each(|(t, d)| *t += (w * *d).extend(0.0));
        }
    }
    if !primitive.targets.is_empty() {
        if let Some(n) = normals.as_mut() {
            n.iter_mut().for_each(|n| *n = n.normalize_or_zero());
        }
        if let Some(t) = tangents.as_mut() {
            t.iter_mut()
                .for_each(|t| *t = t.truncate().normalize_or_zero().extend(t.w));
        }
    }
    (positions, normals, tangents)
}
