//! Animations: samplers (key times and values) and the channels that drive node properties.

use glam::Quat;
use gltf::json::accessor::Type;
use gltf::json::animation::{Interpolation, Property};
use gltf::json::validation::Checked;
use gltf::json::Root;

use super::types::{Animation, Channel, ChannelPath, Interp, Mesh, Node, Repairs, Sampler};
use super::validate::{check_no_stride, FLOAT, QUANTIZED_ANY, ROTATION_TYPES};
use crate::accessor;
use crate::error::{GltfError, Result};
use crate::spec_rules::UNIT_QUATERNION_TOLERANCE;

pub(super) fn load_animations(
    root: &Root,
    buffers: &[Vec<u8>],
    nodes: &[Node],
    meshes: &[Mesh],
    channel_numbers: &[Vec<usize>],
    repairs: &mut Repairs,
) -> Result<Vec<Animation>> {
    let mut animations = Vec::with_capacity(root.animations.len());
    for (a, animation) in root.animations.iter().enumerate() {
        let mut samplers = Vec::with_capacity(animation.samplers.len());
        // Each sampler's width depends on the channel that uses it; read per channel, cache.
        let mut widths: Vec<Option<(usize, ChannelPath)>> = vec![None; animation.samplers.len()];
        let mut channels = Vec::with_capacity(animation.channels.len());
        for (c, channel) in animation.channels.iter().enumerate() {
            // The channel's index in the file (channels without a target node were left out).
            let number = channel_numbers
                .get(a)
                .and_then(|n| n.get(c))
                .copied()
                .unwrap_or(c);
            let path = format!("animations[{a}].channels[{number}]");
            let node = channel.target.node.value();
            if node >= nodes.len() {
                return Err(GltfError::invalid(
                    format!("{path}.target.node"),
                    format!("node {node} does not exist"),
                ));
            }
            let property = match channel.target.path {
                Checked::Valid(Property::Translation) => ChannelPath::Translation,
                Checked::Valid(Property::Rotation) => ChannelPath::Rotation,
                Checked::Valid(Property::Scale) => ChannelPath::Scale,
                Checked::Valid(Property::MorphTargetWeights) => ChannelPath::Weights,
                Checked::Invalid => {
                    return Err(GltfError::invalid(format!("{path}.target.path"), "invalid"))
                }
            };
            let width = match property {
                ChannelPath::Translation | ChannelPath::Scale => 3,
                ChannelPath::Rotation => 4,
                ChannelPath::Weights => {
                    let targets = nodes[node]
                        .mesh
                        .and_then(|m| meshes.get(m))
                        .map_or(0, |m| m.weights.len());
                    if targets == 0 {
                        return Err(GltfError::invalid(
                            format!("{path}.target.node"),
                            format!("animates weights of nodes[{node}], which has no mesh with morph targets"),
                        ));
                    }
                    targets
                }
            };
            let sampler = channel.sampler.value();
            if sampler >= animation.samplers.len() {
                return Err(GltfError::invalid(
                    format!("{path}.sampler"),
                    format!("sampler {sampler} does not exist"),
                ));
            }
            match widths[sampler] {
                Some((w, _)) if w != width => {
                    return Err(GltfError::invalid(
                        format!("{path}.sampler"),
                        "sampler shared by channels of different widths",
                    ))
                }
                _ => widths[sampler] = Some((width, property)),
            }
            channels.push(Channel {
                node,
                path: property,
                sampler,
            });
        }
        for (s, sampler) in animation.samplers.iter().enumerate() {
            let path = format!("animations[{a}].samplers[{s}]");
            let interpolation = match sampler.interpolation {
                Checked::Valid(Interpolation::Step) => Interp::Step,
                Checked::Valid(Interpolation::Linear) => Interp::Linear,
                Checked::Valid(Interpolation::CubicSpline) => Interp::CubicSpline,
                Checked::Invalid => {
                    return Err(GltfError::invalid(
                        format!("{path}.interpolation"),
                        "invalid",
                    ))
                }
            };
            let input_path = format!("{path}.input");
            check_no_stride(root, sampler.input.value(), &input_path)?;
            check_no_stride(root, sampler.output.value(), &format!("{path}.output"))?;
            if root
                .accessors
                .get(sampler.input.value())
                .is_some_and(|a| a.min.is_none() || a.max.is_none())
            {
                return Err(GltfError::invalid(
                    format!("{input_path} -> accessors[{}]", sampler.input.value()),
                    "has no min and max (key time accessors must declare them)",
                ));
            }
            let input = accessor::read_typed(
                root,
                buffers,
                sampler.input.value(),
                &input_path,
                Type::Scalar,
                &[FLOAT],
            )?;
            let times_s: Vec<f32> = input.values.iter().map(|&v| v as f32).collect();
            if times_s.is_empty() {
                return Err(GltfError::invalid(input_path, "has no keys"));
            }
            if times_s[0] < 0.0 {
                return Err(GltfError::invalid(
                    format!(
                        "{input_path} -> accessors[{}] element 0",
                        sampler.input.value()
                    ),
                    format!("key time {} s is negative", times_s[0]),
                ));
            }
            for k in 1..times_s.len() {
                if times_s[k] <= times_s[k - 1] {
                    return Err(GltfError::invalid(
                        format!("{input_path} -> accessors[{}] element {k}", sampler.input.value()),
                        format!(
                            "key time {} s is not after the previous key's {} s (times must increase strictly)",
                            times_s[k],
                            times_s[k - 1]
                        ),
                    ));
                }
            }
            let (width, property) = widths[s].unwrap_or((1, ChannelPath::Weights));
            let output_path = format!("{path}.output");
            let (ty, allowed) = match property {
                ChannelPath::Translation | ChannelPath::Scale => (Type::Vec3, &[FLOAT][..]),
                ChannelPath::Rotation => (Type::Vec4, ROTATION_TYPES),
                ChannelPath::Weights => (Type::Scalar, QUANTIZED_ANY),
            };
            let output = if widths[s].is_some() {
                accessor::read_typed(
                    root,
                    buffers,
                    sampler.output.value(),
                    &output_path,
                    ty,
                    allowed,
                )?
            } else {
                // Unused sampler: still must be readable.
                accessor::read(root, buffers, sampler.output.value(), &output_path)?
            };
            let per_key = if interpolation == Interp::CubicSpline {
                3
            } else {
                1
            };
            let mut values: Vec<f32> = output.values.iter().map(|&v| v as f32).collect();
            if widths[s].is_some() && values.len() != times_s.len() * per_key * width {
                return Err(GltfError::invalid(
                    output_path,
                    format!(
                        "{} values, expected {} keys × {per_key} × {width}",
                        values.len(),
                        times_s.len()
                    ),
                ));
            }
            if property == ChannelPath::Rotation && widths[s].is_some() {
                for (k, q) in values.chunks_exact_mut(4).enumerate() {
                    // CUBICSPLINE tangents are not unit quaternions; only values are checked.
                    if per_key == 3 && k % 3 != 1 {
                        continue;
                    }
                    let quat = Quat::from_array([q[0], q[1], q[2], q[3]]);
                    let length = quat.length();
                    if length <= f32::EPSILON {
                        return Err(GltfError::invalid(
                            format!(
                                "{output_path} -> accessors[{}] element {k}",
                                sampler.output.value()
                            ),
                            "zero quaternion is not a rotation",
                        ));
                    }
                    if (length - 1.0).abs() > UNIT_QUATERNION_TOLERANCE {
                        return Err(GltfError::invalid(
                            format!(
                                "{output_path} -> accessors[{}] element {k}",
                                sampler.output.value()
                            ),
                            format!("rotation has length {length}, not a unit quaternion"),
                        ));
                    }
                    if (length - 1.0).abs() > 1e-3 {
                        repairs.rotations_normalized += 1;
                    }
                }
            }
            samplers.push(Sampler {
                interpolation,
                times_s,
                values,
                width,
            });
        }
        let start_s = samplers
            .iter()
            .filter_map(|s| s.times_s.first().copied())
            .fold(f32::INFINITY, f32::min);
        let end_s = samplers
            .iter()
            .filter_map(|s| s.times_s.last().copied())
            .fold(f32::NEG_INFINITY, f32::max);
        let (start_s, end_s) = if start_s.is_finite() {
            (start_s, end_s)
        } else {
            (0.0, 0.0)
        };
        animations.push(Animation {
            name: animation.name.clone(),
            channels,
            samplers,
            start_s,
            end_s,
        });
    }
    Ok(animations)
}
