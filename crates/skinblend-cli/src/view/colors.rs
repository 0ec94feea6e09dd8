//! The colour maps of `/api/colors`, those of `compare`'s pictures: every shown method skinned
//! on the CPU by a scene skinner at the asked pose, coloured per vertex.

use std::sync::{Mutex, PoisonError};

use anyhow::{bail, Context, Result};
use glam::Vec3;
use skinblend::{CpuBackend, Method};
use skinblend_gltf::{Model, SceneOptions, SceneSkinner};
use skinblend_report::color::{self, ColorMap};
use skinblend_report::compare;
use skinblend_report::evidence::area_change_map;

use super::primitives::ViewPrimitive;

/// The colour maps of `/api/colors`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMapKind {
    /// Surface area change against the bind pose ([`color::area_change`], ±40%).
    AreaChange,
    /// Each vertex's distance from the first method's result, as a share of its bounding-box
    /// diagonal ([`color::displacement`]).
    DistanceFromFirst,
    /// Each vertex's blend value under the blended method (0 = LBS, 1 = DQS), the same in every
    /// view.
    BlendValues,
}

/// What `/api/colors` answers: the colours, and the top of the distance map's range.
pub struct Colors {
    /// Per method, per primitive, per vertex: sRGB bytes (r, g, b, 255).
    pub rgba: Vec<u8>,
    /// The map's largest value (a share of the diagonal for the distance, 0.4 for area).
    pub high: f32,
}

/// One CPU scene skinner per method for the colour maps, made on first use; the server's
/// workers take turns with them.
#[derive(Default)]
pub struct ColorSkinners(Mutex<Option<Vec<SceneSkinner<'static, CpuBackend>>>>);

impl ColorSkinners {
    /// The colour map `kind` of every method of `methods` at `time_s` of `animation` (`None`:
    /// the rest pose; `dq_blend`: blended's value where the file has none) over the `primitives` of `model` (the model with its centers of
    /// rotation): per method, per primitive, per vertex.
    ///
    /// # Errors
    /// An animation `model` does not have; those of posing and skinning it.
    pub fn colors(
        &self,
        model: &'static Model,
        (methods, dq_blend): (&[Method], Option<f32>),
        primitives: &[ViewPrimitive],
        animation: Option<usize>,
        time_s: f32,
        kind: ColorMapKind,
    ) -> Result<Colors> {
        let pose = match animation {
            Some(a) if a >= model.animations().len() => {
                bail!("animation {a}: the file has {}", model.animations().len())
            }
            Some(a) => model.pose(Some(a), time_s)?,
            None => model.rest_pose(),
        };
        let mut guard = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if guard.is_none() {
            let mut skinners = Vec::with_capacity(methods.len());
            for &method in methods {
                let options = SceneOptions {
                    normals: false,
                    tangents: false,
                    dq_blend,
                    ..SceneOptions::with_method(method)
                };
                skinners.push(SceneSkinner::cpu(model, options)?);
            }
            *guard = Some(skinners);
        }
        let skinners = guard.as_mut().map_or(&mut [][..], Vec::as_mut_slice);
        // Per method, per primitive: the skinned positions.
        let mut posed: Vec<Vec<Vec<Vec3>>> = Vec::with_capacity(skinners.len());
        for skinner in skinners.iter_mut() {
            let nodes = skinner.skin(&pose)?;
            let mut method = Vec::with_capacity(primitives.len());
            for p in primitives {
                let positions = nodes
                    .iter()
                    .find(|posed| posed.node == p.node)
                    .and_then(|posed| posed.primitives.get(p.primitive))
                    .map(|posed| posed.positions.clone())
                    .with_context(|| format!("{}: not in the skinned scene", p.path))?;
                method.push(positions);
            }
            posed.push(method);
        }
        let (values, map) = match kind {
            ColorMapKind::AreaChange => {
                (area_changes(model, primitives, &posed), area_change_map())
            }
            ColorMapKind::DistanceFromFirst => {
                let values = distances_from_first(&posed);
                // As compare's pictures: from 0 to the largest distance, at least the share
                // under which it calls results equal.
                let high = values
                    .iter()
                    .flatten()
                    .flatten()
                    .fold(compare::AGREEMENT_SHARE as f32, |a, &b| a.max(b));
                let label = format!(
                    "distance from the {} result, % of the bounding-box diagonal",
                    methods[0].label()
                );
                (values, ColorMap::sequential(high, &label, 100.0))
            }
            ColorMapKind::BlendValues => {
                let mut per_primitive = Vec::with_capacity(primitives.len());
                for p in primitives {
                    let primitive = &model.meshes()[p.mesh].primitives[p.primitive];
                    let values = super::layout::blend_values(primitive, dq_blend)
                        .with_context(|| format!("{}: no blend values to show", p.path))?;
                    per_primitive.push(values);
                }
                let label = "blend value (0 = LBS, 1 = DQS)";
                (
                    vec![per_primitive; posed.len()],
                    ColorMap::sequential(1.0, label, 1.0),
                )
            }
        };
        let mut rgba = Vec::new();
        for &v in values.iter().flatten().flatten() {
            let [r, g, b] = map.color(v);
            rgba.extend_from_slice(&[r, g, b, 255]);
        }
        Ok(Colors {
            rgba,
            high: map.high,
        })
    }
}

/// Per method, per primitive, per vertex: the change of surface area around it against the
/// bind pose ([`color::area_change`]).
fn area_changes(
    model: &Model,
    primitives: &[ViewPrimitive],
    posed: &[Vec<Vec<Vec3>>],
) -> Vec<Vec<Vec<f32>>> {
    posed
        .iter()
        .map(|method| {
            primitives
                .iter()
                .zip(method)
                .map(|(p, positions)| {
                    let rest = &model.meshes()[p.mesh].primitives[p.primitive].positions;
                    color::area_change(rest, positions, &p.triangles)
                })
                .collect()
        })
        .collect()
}

/// Per method, per primitive, per vertex: the distance from the first method's result, as a
/// share of that result's bounding-box diagonal ([`color::displacement`]).
fn distances_from_first(posed: &[Vec<Vec<Vec3>>]) -> Vec<Vec<Vec<f32>>> {
    let (mut min, mut max) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for &q in posed.first().into_iter().flatten().flatten() {
        min = min.min(q);
        max = max.max(q);
    }
    let diagonal = (max - min).length();
    posed
        .iter()
        .map(|method| {
            method
                .iter()
                .zip(&posed[0])
                .map(|(positions, first)| color::displacement(first, positions, diagonal))
                .collect()
        })
        .collect()
}
