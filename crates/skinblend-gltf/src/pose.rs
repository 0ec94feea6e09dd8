//! Poses: animation sampling, world matrices, palettes and skinning of every skinned node.

use glam::{Mat4, Quat, Vec3, Vec4};
use skinblend::cor::{CorOptions, CorProgress, RotationCenters};
use skinblend::{Diagnostics, SkinOptions};

use crate::error::{GltfError, Result};
use crate::model::{ChannelPath, Interp, Model, Primitive, Sampler, Trs};

/// Every node's local transform and morph weights at one instant, with world matrices.
#[derive(Debug, Clone)]
pub struct Pose {
    /// `parent_from_node` per node (its local transform): the file's `matrix` when it is not
    /// animated, else `T · R · S`.
    pub parent_from_node: Vec<Mat4>,
    /// Local TRS per node (sampled where animated).
    pub trs: Vec<Trs>,
    /// Morph weights per node: the animation's, else the node's, else the mesh's defaults
    /// (empty for nodes without morph targets).
    pub weights: Vec<Vec<f32>>,
    /// `world_from_node` per node, one forward pass in parent-first order.
    pub world_from_node: Vec<Mat4>,
}

/// One skinned primitive at a pose, in the space of the scene.
#[derive(Debug, Clone)]
pub struct PosedPrimitive {
    /// Skinned positions.
    pub positions: Vec<Vec3>,
    /// Skinned unit normals, when the primitive has normals.
    pub normals: Option<Vec<Vec3>>,
    /// Skinned tangents with handedness, when the primitive has tangents.
    pub tangents: Option<Vec<Vec4>>,
    /// The core's exact counts for this primitive.
    pub diagnostics: Diagnostics,
}

/// One skinned node at a pose.
#[derive(Debug, Clone)]
pub struct PosedNode {
    /// The node index.
    pub node: usize,
    /// The mesh index.
    pub mesh: usize,
    /// The skin index.
    pub skin: usize,
    /// One result per primitive, in the mesh's order.
    pub primitives: Vec<PosedPrimitive>,
}

/// Evaluates one sampler at `time_s` (clamped to its keys). Writes `sampler.width` floats.
///
/// STEP holds the previous key; LINEAR interpolates (quaternions by shortest-path slerp);
/// CUBICSPLINE is the Hermite spline of the glTF spec with tangents scaled by the key interval
/// (quaternions renormalized after). `rotation` selects the quaternion rules.
pub fn sample(sampler: &Sampler, time_s: f32, rotation: bool, out: &mut [f32]) {
    let w = sampler.width;
    let times = &sampler.times_s;
    let cubic = sampler.interpolation == Interp::CubicSpline;
    // Value of key k (CUBICSPLINE stores in-tangent, value, out-tangent per key).
    let value = |k: usize| -> &[f32] {
        let start = if cubic { (3 * k + 1) * w } else { k * w };
        &sampler.values[start..start + w]
    };
    let last = times.len() - 1;
    if time_s <= times[0] || last == 0 {
        out[..w].copy_from_slice(value(0));
    } else if time_s >= times[last] {
        out[..w].copy_from_slice(value(last));
    } else {
        // times[k] <= time_s < times[k + 1]
        let k = times.partition_point(|&t| t <= time_s) - 1;
        let dt = times[k + 1] - times[k];
        let s = (time_s - times[k]) / dt;
        match sampler.interpolation {
            Interp::Step => out[..w].copy_from_slice(value(k)),
            Interp::Linear => {
                if rotation {
                    let a = Quat::from_slice(value(k)).normalize();
                    let b = Quat::from_slice(value(k + 1)).normalize();
                    out[..4].copy_from_slice(&a.slerp(b, s).normalize().to_array());
                } else {
                    for (i, o) in out[..w].iter_mut().enumerate() {
                        *o = value(k)[i] * (1.0 - s) + value(k + 1)[i] * s;
                    }
                }
            }
            Interp::CubicSpline => {
                let out_tangent = &sampler.values[(3 * k + 2) * w..(3 * k + 3) * w];
                let in_tangent = &sampler.values[(3 * (k + 1)) * w..(3 * (k + 1) + 1) * w];
                let (s2, s3) = (s * s, s * s * s);
                let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
                let h10 = s3 - 2.0 * s2 + s;
                let h01 = -2.0 * s3 + 3.0 * s2;
                let h11 = s3 - s2;
                for (i, o) in out[..w].iter_mut().enumerate() {
                    *o = h00 * value(k)[i]
                        + h10 * dt * out_tangent[i]
                        + h01 * value(k + 1)[i]
                        + h11 * dt * in_tangent[i];
                }
                if rotation {
                    let q = Quat::from_slice(&out[..4]);
                    let q = if q.length() > f32::EPSILON {
                        q.normalize()
                    } else {
                        Quat::IDENTITY
                    };
                    out[..4].copy_from_slice(&q.to_array());
                }
            }
        }
    }
    if rotation && sampler.interpolation != Interp::CubicSpline {
        let q = Quat::from_slice(&out[..4]).normalize();
        out[..4].copy_from_slice(&q.to_array());
    }
}

impl Model {
    /// The no-animation state: every node's own transform and morph weights.
    #[must_use]
    pub fn rest_pose(&self) -> Pose {
        let parent_from_node: Vec<Mat4> = self
            .nodes
            .iter()
            .map(|n| n.matrix.unwrap_or_else(|| n.trs.matrix()))
            .collect();
        let trs = self.nodes.iter().map(|n| n.trs).collect();
        let weights = self
            .nodes
            .iter()
            .map(|n| match n.mesh.and_then(|m| self.meshes.get(m)) {
                Some(mesh) if !mesh.weights.is_empty() => n
                    .weights
                    .clone()
                    .filter(|w| w.len() == mesh.weights.len())
                    .unwrap_or_else(|| mesh.weights.clone()),
                _ => Vec::new(),
            })
            .collect();
        let mut pose = Pose {
            world_from_node: vec![Mat4::IDENTITY; parent_from_node.len()],
            parent_from_node,
            trs,
            weights,
        };
        self.update_world(&mut pose);
        pose
    }

    /// The pose of `animation` at `time_s` (clamped to the animation's range); nodes it does
    /// not animate keep their own transform. `None`: the rest pose.
    ///
    /// # Errors
    /// [`GltfError::Request`] for a non-finite time; [`GltfError::NoSuchAnimation`] for an
    /// index out of range.
    pub fn pose(&self, animation: Option<usize>, time_s: f32) -> Result<Pose> {
        if !time_s.is_finite() {
            return Err(GltfError::Request {
                what: format!("time {time_s} s is not finite"),
            });
        }
        let mut pose = self.rest_pose();
        let Some(a) = animation else {
            return Ok(pose);
        };
        let animation = self
            .animations
            .get(a)
            .ok_or_else(|| GltfError::NoSuchAnimation {
                requested: a.to_string(),
                available: format!("{} animations", self.animations.len()),
            })?;
        let time_s = time_s.clamp(animation.start_s, animation.end_s);
        let mut animated = vec![false; self.nodes.len()];
        let mut buffer = Vec::new();
        for channel in &animation.channels {
            let sampler = &animation.samplers[channel.sampler];
            buffer.resize(sampler.width, 0.0);
            let rotation = channel.path == ChannelPath::Rotation;
            sample(sampler, time_s, rotation, &mut buffer);
            let trs = &mut pose.trs[channel.node];
            match channel.path {
                ChannelPath::Translation => trs.translation = Vec3::from_slice(&buffer),
                ChannelPath::Rotation => trs.rotation = Quat::from_slice(&buffer),
                ChannelPath::Scale => trs.scale = Vec3::from_slice(&buffer),
                ChannelPath::Weights => pose.weights[channel.node] = buffer.clone(),
            }
            if channel.path != ChannelPath::Weights {
                animated[channel.node] = true;
            }
        }
        for (node, &is_animated) in animated.iter().enumerate() {
            if is_animated {
                pose.parent_from_node[node] = pose.trs[node].matrix();
            }
        }
        self.update_world(&mut pose);
        Ok(pose)
    }

    /// Recomputes `pose.world_from_node` from `pose.parent_from_node` (one pass, parents first).
    pub fn update_world(&self, pose: &mut Pose) {
        for &node in &self.order {
            pose.world_from_node[node] = match self.nodes[node].parent {
                Some(parent) => pose.world_from_node[parent] * pose.parent_from_node[node],
                None => pose.parent_from_node[node],
            };
        }
    }

    /// Skin matrices `world_from_joint · joint_from_bind` of `skin` at `pose`.
    ///
    /// # Errors
    /// [`GltfError::Invalid`] if the skin does not exist.
    pub fn palette(&self, pose: &Pose, skin: usize) -> Result<Vec<Mat4>> {
        let skin_data = self
            .skins
            .get(skin)
            .ok_or_else(|| GltfError::invalid(format!("skins[{skin}]"), "does not exist"))?;
        Ok(skin_data
            .joints
            .iter()
            .zip(&skin_data.joint_from_bind)
            .map(|(&joint, joint_from_bind)| pose.world_from_node[joint] * *joint_from_bind)
            .collect())
    }

    /// Palettes that put every joint at its bind placement: `joint_from_bind⁻¹ · joint_from_bind`,
    /// the identity up to round-off. Skinning with it must reproduce POSITION.
    #[must_use]
    pub fn bind_palette(&self, skin: usize) -> Vec<Mat4> {
        self.skins.get(skin).map_or_else(Vec::new, |s| {
            s.joint_from_bind
                .iter()
                .map(|m| {
                    // An affine inverse keeps the last row exactly [0, 0, 0, 1].
                    let bind_from_joint = Mat4::from(glam::Affine3A::from_mat4(*m).inverse());
                    bind_from_joint * *m
                })
                .collect()
        })
    }

    /// Skins every primitive of every skinned node at `pose` with `options`, once: a
    /// [`crate::SceneSkinner`] on the CPU, made and dropped. To skin many frames (and compute
    /// CoR centers once), keep a [`crate::SceneSkinner`] instead.
    ///
    /// Morph targets are applied first (weights from `pose`), then the skin's palette with the
    /// joints' bind origins as DQS residual centers. The skinned node's own transform is
    /// ignored, as the glTF spec says: results are in the space of the scene.
    ///
    /// # Errors
    /// [`GltfError::Skin`] naming the node and primitive if the core rejects the data (a
    /// degenerate pose, for example).
    pub fn skin_scene(&self, pose: &Pose, options: &SkinOptions) -> Result<Vec<PosedNode>> {
        let options = crate::SceneOptions {
            skin: *options,
            ..crate::SceneOptions::default()
        };
        Ok(crate::SceneSkinner::cpu(self, options)?
            .skin(pose)?
            .to_vec())
    }
}

/// The centers of rotation of a primitive's bind pose (before morph targets), for
/// [`skinblend::Method::CenterOfRotation`], with the paper's options. Points and lines have no
/// triangles, so all their vertices fall back to DQS.
///
/// # Errors
/// Those of [`skinblend::cor::rotation_centers_with_progress`].
pub fn primitive_rotation_centers(
    primitive: &Primitive,
    influences: &skinblend::Influences,
    options: &CorOptions,
    progress: &mut dyn FnMut(CorProgress),
) -> std::result::Result<RotationCenters, skinblend::SkinError> {
    let triangles = primitive.triangles();
    skinblend::cor::rotation_centers_with_progress(
        &primitive.positions,
        &triangles,
        influences,
        options,
        progress,
    )
}

/// What [`Model::compute_rotation_centers`] computed for one primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimitiveCenters {
    /// The mesh.
    pub mesh: usize,
    /// The primitive within the mesh.
    pub primitive: usize,
    /// Its vertices.
    pub vertices: usize,
    /// Vertices without a center (skinned by DQS).
    pub vertices_without_center: usize,
}

impl Model {
    /// Computes the centers of rotation of every primitive with influences of every mesh a
    /// skinned node shows, and keeps them in [`Primitive::rotation_centers`] (replacing any
    /// the file carried), so that CoR skinning and [`crate::export::write_rotation_centers`]
    /// use them. `progress(done, total, stage)` counts primitives and reports each one's
    /// stages.
    ///
    /// # Errors
    /// [`GltfError::Skin`] naming the primitive, for the errors of
    /// [`skinblend::cor::rotation_centers_with_progress`].
    pub fn compute_rotation_centers(
        &mut self,
        options: &CorOptions,
        progress: &mut dyn FnMut(usize, usize, CorProgress),
    ) -> Result<Vec<PrimitiveCenters>> {
        let mut meshes: Vec<usize> = self
            .skinned_nodes()
            .into_iter()
            .filter_map(|n| self.nodes[n].mesh)
            .collect();
        meshes.sort_unstable();
        meshes.dedup();
        let work: Vec<(usize, usize)> = meshes
            .iter()
            .flat_map(|&m| {
                let primitives = &self.meshes[m].primitives;
                (0..primitives.len())
                    .filter(move |&p| primitives[p].influences.is_some())
                    .map(move |p| (m, p))
            })
            .collect();
        let mut summary = Vec::with_capacity(work.len());
        for (done, &(m, p)) in work.iter().enumerate() {
            let primitive = &self.meshes[m].primitives[p];
            let Some(influences) = primitive.influences.as_ref() else {
                continue;
            };
            let centers =
                primitive_rotation_centers(primitive, influences, options, &mut |stage| {
                    progress(done, work.len(), stage);
                })
                .map_err(|source| GltfError::Skin {
                    path: format!("meshes[{m}].primitives[{p}]"),
                    source,
                })?;
            summary.push(PrimitiveCenters {
                mesh: m,
                primitive: p,
                vertices: centers.centers.len(),
                vertices_without_center: centers.vertices_without_center,
            });
            self.meshes[m].primitives[p].rotation_centers = Some(centers.centers);
        }
        Ok(summary)
    }
}

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
