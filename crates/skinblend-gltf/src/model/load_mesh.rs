//! Meshes and their primitives: vertex attributes, indices, influences, morph targets and
//! stored centers of rotation, each read, type-checked and counted against POSITION.

use glam::{Vec3, Vec4};
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::mesh::Semantic;
use gltf::json::validation::Checked;
use gltf::json::Root;
use skinblend::{InfluenceBuildReport, Influences};

use super::types::{
    Mesh, MorphTarget, Primitive, Repairs, DQ_BLEND_ATTRIBUTE, ROTATION_CENTER_ATTRIBUTE,
};
use super::validate::{
    check_unit, check_vertex_attributes, checked_count, finite_or, read_unstrided, FLOAT,
    INDEX_TYPES, JOINT_TYPES, QUANTIZED_ANY, SIGNED_NORMALIZED, WEIGHT_TYPES,
};
use crate::accessor::{self, AccessorData};
use crate::error::{GltfError, Result};

pub(super) fn vec3s(data: &AccessorData) -> Vec<Vec3> {
    data.values
        .chunks_exact(3)
        .map(|c| Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32))
        .collect()
}

pub(super) fn attribute(
    primitive: &gltf::json::mesh::Primitive,
    semantic: Semantic,
) -> Option<usize> {
    primitive
        .attributes
        .get(&Checked::Valid(semantic))
        .map(|i| i.value())
}

pub(super) fn load_meshes(
    root: &Root,
    buffers: &[Vec<u8>],
    repairs: &mut Repairs,
) -> Result<Vec<Mesh>> {
    let mut meshes = Vec::with_capacity(root.meshes.len());
    for (m, mesh) in root.meshes.iter().enumerate() {
        let mut primitives = Vec::with_capacity(mesh.primitives.len());
        let mut target_count = None;
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let path = format!("meshes[{m}].primitives[{p}]");
            let loaded = load_primitive(root, buffers, primitive, &path)?;
            repairs.vertices_renormalized += loaded.influence_report.vertices_renormalized;
            repairs.vertices_with_repeated_joints +=
                loaded.influence_report.vertices_with_repeated_joints;
            repairs.vertices_unweighted += loaded.influence_report.vertices_unweighted;
            match target_count {
                None => target_count = Some(loaded.targets.len()),
                Some(n) if n != loaded.targets.len() => {
                    return Err(GltfError::invalid(
                        format!("{path}.targets"),
                        format!(
                            "{} morph targets, but primitive 0 has {n} (all primitives of a mesh must have the same number)",
                            loaded.targets.len()
                        ),
                    ))
                }
                Some(_) => {}
            }
            primitives.push(loaded);
        }
        let target_count = target_count.unwrap_or(0);
        let weights = match &mesh.weights {
            Some(w) => {
                finite_or(&format!("meshes[{m}].weights"), w)?;
                if w.len() != target_count {
                    return Err(GltfError::invalid(
                        format!("meshes[{m}].weights"),
                        format!("{} weights for {target_count} morph targets", w.len()),
                    ));
                }
                w.clone()
            }
            None => vec![0.0; target_count],
        };
        meshes.push(Mesh {
            name: mesh.name.clone(),
            primitives,
            weights,
        });
    }
    Ok(meshes)
}

pub(super) fn load_primitive(
    root: &Root,
    buffers: &[Vec<u8>],
    primitive: &gltf::json::mesh::Primitive,
    path: &str,
) -> Result<Primitive> {
    let attr_path = |name: &str| format!("{path}.attributes[\"{name}\"]");
    let mode = match primitive.mode {
        Checked::Valid(mode) => mode,
        Checked::Invalid => return Err(GltfError::invalid(format!("{path}.mode"), "invalid mode")),
    };
    let position_index = attribute(primitive, Semantic::Positions)
        .ok_or_else(|| GltfError::invalid(attr_path("POSITION"), "missing"))?;
    // Quantized attributes need KHR_mesh_quantization declared.
    let quantized = root
        .extensions_used
        .iter()
        .any(|e| e == "KHR_mesh_quantization");
    let position_types = if quantized {
        QUANTIZED_ANY
    } else {
        &[FLOAT][..]
    };
    let signed_normalized = if quantized {
        SIGNED_NORMALIZED
    } else {
        &[FLOAT][..]
    };
    if root
        .accessors
        .get(position_index)
        .is_some_and(|a| a.min.is_none() || a.max.is_none())
    {
        return Err(GltfError::invalid(
            format!("{} -> accessors[{position_index}]", attr_path("POSITION")),
            "has no min and max (POSITION accessors must declare them)",
        ));
    }
    let positions_data = accessor::read_typed(
        root,
        buffers,
        position_index,
        &attr_path("POSITION"),
        Type::Vec3,
        position_types,
    )?;
    let vertex_count = positions_data.count();
    check_vertex_attributes(root, primitive, path, vertex_count, quantized)?;
    let reader = VertexReader {
        root,
        buffers,
        vertex_count,
    };
    let positions = vec3s(&positions_data);

    let normals = match attribute(primitive, Semantic::Normals) {
        None => None,
        Some(index) => {
            let data = reader.read(
                index,
                &attr_path("NORMAL"),
                "NORMAL",
                Type::Vec3,
                signed_normalized,
            )?;
            check_unit(&attr_path("NORMAL"), index, &data, 3)?;
            Some(vec3s(&data))
        }
    };
    let tangents = match attribute(primitive, Semantic::Tangents) {
        None => None,
        Some(index) => {
            let data = reader.read(
                index,
                &attr_path("TANGENT"),
                "TANGENT",
                Type::Vec4,
                signed_normalized,
            )?;
            check_unit(&attr_path("TANGENT"), index, &data, 4)?;
            Some(
                data.values
                    .chunks_exact(4)
                    .map(|c| Vec4::new(c[0] as f32, c[1] as f32, c[2] as f32, c[3] as f32))
                    .collect(),
            )
        }
    };
    let texcoords = match attribute(primitive, Semantic::TexCoords(0)) {
        None => None,
        Some(index) => {
            let data = accessor::read(root, buffers, index, &attr_path("TEXCOORD_0"))?;
            if data.components != 2 {
                return Err(GltfError::invalid(attr_path("TEXCOORD_0"), "is not VEC2"));
            }
            checked_count(&attr_path("TEXCOORD_0"), "TEXCOORD_0", &data, vertex_count)?;
            Some(
                data.values
                    .chunks_exact(2)
                    .map(|c| [c[0] as f32, c[1] as f32])
                    .collect(),
            )
        }
    };
    let indices = match primitive.indices {
        None => None,
        Some(index) => {
            let context = format!("{path}.indices");
            let data = read_unstrided(
                root,
                buffers,
                index.value(),
                &context,
                Type::Scalar,
                INDEX_TYPES,
            )?;
            let indices: Vec<u32> = data.values.iter().map(|&v| v as u32).collect();
            // The largest value of the type means "restart the strip" in some APIs: the
            // specification forbids it.
            let restart = match data.component_type {
                ComponentType::U8 => u32::from(u8::MAX),
                ComponentType::U16 => u32::from(u16::MAX),
                _ => u32::MAX,
            };
            if let Some(i) = indices.iter().position(|&v| v == restart) {
                return Err(GltfError::invalid(
                    format!("{context} -> accessors[{}] element {i}", index.value()),
                    format!("index {restart} is the primitive restart value, which glTF forbids"),
                ));
            }
            if let Some(i) = indices.iter().position(|&v| v as usize >= vertex_count) {
                return Err(GltfError::invalid(
                    format!("{context} -> accessors[{}] element {i}", index.value()),
                    format!(
                        "vertex {} is out of range ({vertex_count} vertices)",
                        indices[i]
                    ),
                ));
            }
            Some(indices)
        }
    };

    let rotation_centers = match attribute(
        primitive,
        Semantic::Extras(ROTATION_CENTER_ATTRIBUTE[1..].to_owned()),
    ) {
        None => None,
        Some(index) => {
            let name = ROTATION_CENTER_ATTRIBUTE;
            let data = reader.read(index, &attr_path(name), name, Type::Vec4, &[FLOAT])?;
            let mut centers = Vec::with_capacity(vertex_count);
            for (vertex, c) in data.values.chunks_exact(4).enumerate() {
                centers.push(match c[3] {
                    1.0 => Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32),
                    0.0 => skinblend::cor::NO_ROTATION_CENTER,
                    w => {
                        return Err(GltfError::invalid(
                            attr_path(name),
                            format!(
                                "vertex {vertex}: w is {w}; it must be 1 (a center) or 0 (none)"
                            ),
                        ))
                    }
                });
            }
            Some(centers)
        }
    };

    let dq_blend = match attribute(
        primitive,
        Semantic::Extras(DQ_BLEND_ATTRIBUTE[1..].to_owned()),
    ) {
        None => None,
        Some(index) => {
            let name = DQ_BLEND_ATTRIBUTE;
            // Normalized integers decode to [0, 1] as WEIGHTS_n do.
            let data = reader.read(index, &attr_path(name), name, Type::Scalar, WEIGHT_TYPES)?;
            let mut values = Vec::with_capacity(vertex_count);
            for (vertex, &value) in data.values.iter().enumerate() {
                let value = value as f32;
                if !(0.0..=1.0).contains(&value) {
                    return Err(GltfError::invalid(
                        format!("{} element {vertex}", attr_path(name)),
                        format!("blend value {value} of vertex {vertex} is not in [0, 1] (0 = LBS, 1 = DQS)"),
                    ));
                }
                values.push(value);
            }
            Some(values)
        }
    };

    // Influences: every JOINTS_n with its WEIGHTS_n.
    let mut sets = 0usize;
    let mut lists: Vec<Vec<(u16, f32)>> = Vec::new();
    // Every joint index must address the skin, even under a zero weight (as the spec says).
    let mut max_joint = 0usize;
    let mut max_joint_index: Option<(usize, usize, usize)> = None;
    loop {
        let set = sets as u32;
        let joints_index = attribute(primitive, Semantic::Joints(set));
        let weights_index = attribute(primitive, Semantic::Weights(set));
        let (joints_index, weights_index) = match (joints_index, weights_index) {
            (None, None) => break,
            (Some(j), Some(w)) => (j, w),
            (Some(_), None) => {
                return Err(GltfError::invalid(
                    attr_path(&format!("WEIGHTS_{set}")),
                    format!("missing (JOINTS_{set} has no weights)"),
                ))
            }
            (None, Some(_)) => {
                return Err(GltfError::invalid(
                    attr_path(&format!("JOINTS_{set}")),
                    format!("missing (WEIGHTS_{set} has no joints)"),
                ))
            }
        };
        let joints_path = attr_path(&format!("JOINTS_{set}"));
        let weights_path = attr_path(&format!("WEIGHTS_{set}"));
        let joints = reader.read(
            joints_index,
            &joints_path,
            &format!("JOINTS_{set}"),
            Type::Vec4,
            JOINT_TYPES,
        )?;
        let weights = reader.read(
            weights_index,
            &weights_path,
            &format!("WEIGHTS_{set}"),
            Type::Vec4,
            WEIGHT_TYPES,
        )?;
        if sets == 0 {
            lists = vec![Vec::with_capacity(4); vertex_count];
        }
        for (v, list) in lists.iter_mut().enumerate() {
            for slot in 0..4 {
                let joint = joints.values[v * 4 + slot];
                let weight = weights.values[v * 4 + slot];
                if weight < 0.0 {
                    return Err(GltfError::invalid(
                        format!("{weights_path} -> accessors[{weights_index}] element {v}"),
                        format!("weight {slot} is {weight} (negative)"),
                    ));
                }
                // Zero weights carry no influence; files pad unused slots with joint 0, which
                // is not a repeated joint worth reporting.
                if max_joint_index.is_none() || joint as usize > max_joint {
                    max_joint = joint as usize;
                    max_joint_index = Some((max_joint, v, sets));
                }
                if weight > 0.0 {
                    list.push((joint as u16, weight as f32));
                }
            }
        }
        sets += 1;
    }
    let (influences, influence_report) = if sets == 0 {
        (None, InfluenceBuildReport::default())
    } else {
        let (influences, report) = Influences::from_lists(&lists, 4 * sets, max_joint + 1)
            .map_err(|source| GltfError::Skin {
                path: attr_path("JOINTS_0"),
                source,
            })?;
        (Some(influences), report)
    };

    let mut targets = Vec::new();
    for (t, target) in primitive.targets.iter().flatten().enumerate() {
        let target_path = |name: &str| format!("{path}.targets[{t}][\"{name}\"]");
        let read_delta = |index: Option<gltf::json::Index<gltf::json::Accessor>>,
                          name: &str|
         -> Result<Option<Vec<Vec3>>> {
            match index {
                None => Ok(None),
                Some(index) => {
                    let data = reader.read(
                        index.value(),
                        &target_path(name),
                        name,
                        Type::Vec3,
                        QUANTIZED_ANY,
                    )?;
                    Ok(Some(vec3s(&data)))
                }
            }
        };
        targets.push(MorphTarget {
            positions: read_delta(target.positions, "POSITION")?,
            normals: read_delta(target.normals, "NORMAL")?,
            tangents: read_delta(target.tangents, "TANGENT")?,
        });
    }

    Ok(Primitive {
        mode,
        positions,
        normals,
        tangents,
        indices,
        texcoords,
        influences,
        influence_report,
        influence_sets: sets,
        max_joint_index,
        targets,
        rotation_centers,
        dq_blend,
    })
}

/// Reads a primitive's per-vertex accessors: each one type-checked and counted against
/// POSITION's `vertex_count`, errors naming its place in the JSON.
struct VertexReader<'a> {
    root: &'a Root,
    buffers: &'a [Vec<u8>],
    vertex_count: usize,
}

impl VertexReader<'_> {
    /// Accessor `index` as `ty` with a component type in `allowed`, with exactly
    /// `vertex_count` elements; `place` is its JSON path and `name` the attribute in messages.
    fn read(
        &self,
        index: usize,
        place: &str,
        name: &str,
        ty: Type,
        allowed: &[(ComponentType, bool)],
    ) -> Result<AccessorData> {
        let data = accessor::read_typed(self.root, self.buffers, index, place, ty, allowed)?;
        checked_count(place, name, &data, self.vertex_count)?;
        Ok(data)
    }
}
