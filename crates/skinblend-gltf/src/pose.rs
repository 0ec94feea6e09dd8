//! Poses: animation sampling, every node's transform at an instant, world matrices and the
//! skins' palettes. Skinning a pose is the scene skinner's (`scene.rs`).

use glam::{Mat4, Quat, Vec3};

use crate::error::{GltfError, Result};
use crate::model::{ChannelPath, Interp, Model, Sampler, Trs};

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
}
