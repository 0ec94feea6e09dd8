//! Checks on the document that the loaders run before and while decoding it.

use glam::{Mat4, Vec3};
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::mesh::Semantic;
use gltf::json::validation::Checked;
use gltf::json::Root;
use serde_json::Value;

use super::types::{Mesh, Node, Skin};
use crate::accessor::{self, AccessorData};
use crate::error::{GltfError, Result};
use crate::spec_rules::UNIT_VECTOR_TOLERANCE;

/// Tolerance on the last row `[0, 0, 0, 1]` of inverse bind and node matrices: f32 writers
/// sometimes leave round-off of order 1e-7 there; anything larger is a projective matrix.
const AFFINE_ROW_TOLERANCE: f32 = 1e-6;

pub(super) fn validation_message(error: gltf::json::validation::Error) -> &'static str {
    use gltf::json::validation::Error as E;
    match error {
        E::IndexOutOfBounds => "index out of range",
        E::Invalid => "invalid value",
        E::Missing => "required value missing",
        E::Oversize => "size exceeds system limits",
        E::Unsupported => "required extension not supported",
    }
}

/// Checks what `gltf` 1.4.1 would index without checking (a primitive attribute or morph target
/// naming a nonexistent accessor panics in its validation), so it only ever sees safe input.
pub(super) fn prevalidate(json: &Value) -> Result<()> {
    let accessor_count = json
        .get("accessors")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let Some(meshes) = json.get("meshes").and_then(Value::as_array) else {
        return Ok(());
    };
    let check = |path: String, value: &Value| -> Result<()> {
        match value.as_u64() {
            Some(index) if (index as usize) < accessor_count && index <= u32::MAX as u64 => Ok(()),
            _ => Err(GltfError::invalid(
                path,
                format!(
                    "{value} is not an accessor index (the file has {accessor_count} accessors)"
                ),
            )),
        }
    };
    for (m, mesh) in meshes.iter().enumerate() {
        let Some(primitives) = mesh.get("primitives").and_then(Value::as_array) else {
            continue;
        };
        for (p, primitive) in primitives.iter().enumerate() {
            let base = format!("meshes[{m}].primitives[{p}]");
            if let Some(attributes) = primitive.get("attributes").and_then(Value::as_object) {
                for (name, value) in attributes {
                    check(format!("{base}.attributes[\"{name}\"]"), value)?;
                }
            }
            if let Some(targets) = primitive.get("targets").and_then(Value::as_array) {
                for (t, target) in targets.iter().enumerate() {
                    if let Some(target) = target.as_object() {
                        for (name, value) in target {
                            check(format!("{base}.targets[{t}][\"{name}\"]"), value)?;
                        }
                    }
                }
            }
            if let Some(value) = primitive.get("indices") {
                check(format!("{base}.indices"), value)?;
            }
        }
    }
    Ok(())
}

pub(super) fn finite_or(path: &str, values: &[f32]) -> Result<()> {
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(GltfError::invalid(
            path,
            format!("component {i} is {} (not finite)", values[i]),
        ));
    }
    Ok(())
}

/// A 4x4 from 16 column-major values with the last row checked and made exact.
pub(super) fn affine_from_cols(path: &str, values: &[f64]) -> Result<Mat4> {
    let mut cols = [0f32; 16];
    for (dst, src) in cols.iter_mut().zip(values) {
        *dst = *src as f32;
    }
    finite_or(path, &cols)?;
    let row = [cols[3], cols[7], cols[11], cols[15]];
    let expected = [0.0, 0.0, 0.0, 1.0];
    if row
        .iter()
        .zip(expected)
        .any(|(a, b)| (a - b).abs() > AFFINE_ROW_TOLERANCE)
    {
        return Err(GltfError::invalid(
            path,
            format!("last row is {row:?}, expected [0, 0, 0, 1] (not an affine matrix)"),
        ));
    }
    cols[3] = 0.0;
    cols[7] = 0.0;
    cols[11] = 0.0;
    cols[15] = 1.0;
    Ok(Mat4::from_cols_array(&cols))
}

pub(super) const FLOAT: (ComponentType, bool) = (ComponentType::F32, false);
/// Every component type KHR_mesh_quantization allows for POSITION and morph deltas, plus float.
pub(super) const QUANTIZED_ANY: &[(ComponentType, bool)] = &[
    FLOAT,
    (ComponentType::I8, false),
    (ComponentType::I8, true),
    (ComponentType::U8, false),
    (ComponentType::U8, true),
    (ComponentType::I16, false),
    (ComponentType::I16, true),
    (ComponentType::U16, false),
    (ComponentType::U16, true),
];
/// Float or signed normalized (NORMAL, TANGENT under KHR_mesh_quantization).
pub(super) const SIGNED_NORMALIZED: &[(ComponentType, bool)] =
    &[FLOAT, (ComponentType::I8, true), (ComponentType::I16, true)];
pub(super) const WEIGHT_TYPES: &[(ComponentType, bool)] =
    &[FLOAT, (ComponentType::U8, true), (ComponentType::U16, true)];
pub(super) const JOINT_TYPES: &[(ComponentType, bool)] =
    &[(ComponentType::U8, false), (ComponentType::U16, false)];
pub(super) const INDEX_TYPES: &[(ComponentType, bool)] = &[
    (ComponentType::U8, false),
    (ComponentType::U16, false),
    (ComponentType::U32, false),
];
pub(super) const ROTATION_TYPES: &[(ComponentType, bool)] = &[
    FLOAT,
    (ComponentType::I8, true),
    (ComponentType::U8, true),
    (ComponentType::I16, true),
    (ComponentType::U16, true),
];

/// Every buffer view lies inside its buffer's declared bytes, used by an accessor or not (an
/// image's view, for one).
pub(super) fn check_views_inside_buffers(root: &Root, buffers: &[Vec<u8>]) -> Result<()> {
    for (v, view) in root.buffer_views.iter().enumerate() {
        let length = buffers.get(view.buffer.value()).map_or(0, Vec::len) as u64;
        let offset = view.byte_offset.map_or(0, |o| o.0);
        if offset
            .checked_add(view.byte_length.0)
            .is_none_or(|end| end > length)
        {
            return Err(GltfError::invalid(
                format!("bufferViews[{v}].byteLength"),
                format!(
                    "bytes {offset}..{offset}+{} run past the end of buffers[{}] ({length} bytes)",
                    view.byte_length.0,
                    view.buffer.value()
                ),
            ));
        }
    }
    Ok(())
}

/// A buffer view that holds more than one vertex attribute accessor (interleaved or one after
/// the other) must give its byteStride.
pub(super) fn check_shared_vertex_views(root: &Root) -> Result<()> {
    // Per view: the first vertex accessor seen on it.
    let mut first: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let targets = primitive
                .targets
                .iter()
                .flatten()
                .enumerate()
                .flat_map(|(t, target)| {
                    [
                        ("POSITION", target.positions),
                        ("NORMAL", target.normals),
                        ("TANGENT", target.tangents),
                    ]
                    .into_iter()
                    .filter_map(move |(name, index)| {
                        Some((format!("targets[{t}][\"{name}\"]"), index?.value()))
                    })
                });
            let uses = primitive
                .attributes
                .iter()
                .map(|(semantic, index)| {
                    let name = match semantic {
                        Checked::Valid(s) => s.to_string(),
                        Checked::Invalid => "?".to_owned(),
                    };
                    (format!("attributes[\"{name}\"]"), index.value())
                })
                .chain(targets);
            for (place, accessor) in uses {
                let Some(view) = root.accessors.get(accessor).and_then(|a| a.buffer_view) else {
                    continue;
                };
                let view = view.value();
                let other = *first.entry(view).or_insert(accessor);
                let has_stride = root
                    .buffer_views
                    .get(view)
                    .is_some_and(|v| v.byte_stride.is_some());
                if other != accessor && !has_stride {
                    return Err(GltfError::invalid(
                        format!("meshes[{m}].primitives[{p}].{place} -> accessors[{accessor}]"),
                        format!(
                            "shares bufferViews[{view}] with accessors[{other}], but the view has no byteStride (required when vertex accessors share a view)"
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Every node a scene lists must be a root (no parent).
pub(super) fn check_scene_roots(root: &Root, nodes: &[Node]) -> Result<()> {
    for (s, scene) in root.scenes.iter().enumerate() {
        for (k, node) in scene.nodes.iter().enumerate() {
            if let Some(parent) = nodes.get(node.value()).and_then(|n| n.parent) {
                return Err(GltfError::invalid(
                    format!("scenes[{s}].nodes[{k}]"),
                    format!(
                        "node {} is not a root (its parent is nodes[{parent}])",
                        node.value()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Whether `ancestor` is `node` or lies above it.
pub(super) fn is_ancestor_or_self(nodes: &[Node], ancestor: usize, node: usize) -> bool {
    let mut at = Some(node);
    while let Some(n) = at {
        if n == ancestor {
            return true;
        }
        at = nodes[n].parent;
    }
    false
}

/// A skin's `skeleton`, if given, lies above (or is) every joint.
pub(super) fn check_skin_hierarchy(root: &Root, nodes: &[Node]) -> Result<()> {
    for (s, skin) in root.skins.iter().enumerate() {
        let Some(skeleton) = skin.skeleton.map(|n| n.value()) else {
            continue;
        };
        for (k, joint) in skin.joints.iter().enumerate() {
            if skeleton < nodes.len() && !is_ancestor_or_self(nodes, skeleton, joint.value()) {
                return Err(GltfError::invalid(
                    format!("skins[{s}].skeleton"),
                    format!(
                        "node {skeleton} is not an ancestor of joint {k} (nodes[{}])",
                        joint.value()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Accessors used by animations, skins and indices must be tightly packed (their buffer
/// views carry no `byteStride`).
pub(super) fn check_no_stride(root: &Root, accessor: usize, context: &str) -> Result<()> {
    let view = root
        .accessors
        .get(accessor)
        .and_then(|a| a.buffer_view)
        .and_then(|v| {
            root.buffer_views
                .get(v.value())
                .map(|view| (v.value(), view))
        });
    if let Some((v, view)) = view {
        if view.byte_stride.is_some() {
            return Err(GltfError::invalid(
                format!("{context} -> accessors[{accessor}]"),
                format!("its bufferViews[{v}] has a byteStride, which this use does not allow"),
            ));
        }
    }
    Ok(())
}

/// Accessor `index` as `ty` with a component type in `allowed`, refused when its buffer view
/// has a byteStride (`context` names the use, e.g. `skins[0].inverseBindMatrices`).
pub(super) fn read_unstrided(
    root: &Root,
    buffers: &[Vec<u8>],
    index: usize,
    context: &str,
    ty: Type,
    allowed: &[(ComponentType, bool)],
) -> Result<AccessorData> {
    check_no_stride(root, index, context)?;
    accessor::read_typed(root, buffers, index, context, ty, allowed)
}

pub(super) fn checked_count(
    path: &str,
    what: &str,
    data: &AccessorData,
    expected: usize,
) -> Result<()> {
    if data.count() != expected {
        return Err(GltfError::invalid(
            path,
            format!(
                "{what} has {} elements, POSITION has {expected}",
                data.count()
            ),
        ));
    }
    Ok(())
}

/// Each unit vector (NORMAL; TANGENT's xyz, whose w must be 1 or −1) within the validator's
/// tolerance of length 1.
pub(super) fn check_unit(
    path: &str,
    index: usize,
    data: &AccessorData,
    width: usize,
) -> Result<()> {
    for (v, c) in data.values.chunks_exact(width).enumerate() {
        let length = Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32).length();
        let place = || format!("{path} -> accessors[{index}] element {v}");
        if (length - 1.0).abs() > UNIT_VECTOR_TOLERANCE {
            return Err(GltfError::invalid(
                place(),
                format!("has length {length}, not a unit vector"),
            ));
        }
        if width == 4 && c[3].abs() != 1.0 {
            return Err(GltfError::invalid(
                place(),
                format!("w is {}, not 1 or -1", c[3]),
            ));
        }
    }
    Ok(())
}

/// Every attribute of a primitive: as many elements as POSITION, vertex-buffer alignment
/// (accessor byteOffset and view byteStride multiples of 4), and TEXCOORD_n and COLOR_n of the types the specification
/// allows.
pub(super) fn check_vertex_attributes(
    root: &Root,
    primitive: &gltf::json::mesh::Primitive,
    path: &str,
    vertex_count: usize,
    quantized: bool,
) -> Result<()> {
    for (semantic, index) in &primitive.attributes {
        let Checked::Valid(semantic) = semantic else {
            continue;
        };
        let index = index.value();
        let name = semantic.to_string();
        let place = format!("{path}.attributes[\"{name}\"] -> accessors[{index}]");
        let Some(accessor) = root.accessors.get(index) else {
            continue;
        };
        if accessor.count.0 != vertex_count as u64 {
            return Err(GltfError::invalid(
                place,
                format!(
                    "has {} elements, POSITION has {vertex_count}",
                    accessor.count.0
                ),
            ));
        }
        // "Aligned to 4-byte boundaries inside a bufferView": the accessor's offset and the
        // view's stride (the view's own offset only needs the component size, checked on read).
        let start = accessor.byte_offset.map_or(0, |o| o.0);
        let stride = accessor
            .buffer_view
            .and_then(|v| root.buffer_views.get(v.value()))
            .and_then(|v| v.byte_stride)
            .map_or(0, |s| s.0);
        if !start.is_multiple_of(4) || !stride.is_multiple_of(4) {
            return Err(GltfError::invalid(
                place,
                format!(
                    "byteOffset {start} with stride {stride}: vertex attributes must be aligned to 4 bytes in their buffer view"
                ),
            ));
        }
        let allowed: &[(ComponentType, bool)] = match semantic {
            Semantic::TexCoords(_) if quantized => QUANTIZED_ANY,
            Semantic::TexCoords(_) | Semantic::Colors(_) => WEIGHT_TYPES,
            _ => continue,
        };
        let types: &[Type] = match semantic {
            Semantic::TexCoords(_) => &[Type::Vec2],
            _ => &[Type::Vec3, Type::Vec4],
        };
        let (Checked::Valid(ty), Checked::Valid(ct)) = (accessor.type_, accessor.component_type)
        else {
            continue;
        };
        if !types.contains(&ty) || !allowed.contains(&(ct.0, accessor.normalized)) {
            return Err(GltfError::invalid(
                place,
                format!(
                    "{ty:?} of {}{} is not allowed for {name}",
                    accessor::component_name(ct.0),
                    if accessor.normalized {
                        " normalized"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    Ok(())
}

pub(super) fn check_skinned_nodes(nodes: &[Node], skins: &[Skin], meshes: &[Mesh]) -> Result<()> {
    for (n, node) in nodes.iter().enumerate() {
        let (Some(m), Some(s)) = (node.mesh, node.skin) else {
            continue;
        };
        let (Some(mesh), Some(skin)) = (meshes.get(m), skins.get(s)) else {
            return Err(GltfError::invalid(
                format!("nodes[{n}]"),
                "mesh or skin out of range",
            ));
        };
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let Some(influences) = &primitive.influences else {
                return Err(GltfError::invalid(
                    format!("meshes[{m}].primitives[{p}].attributes[\"JOINTS_0\"]"),
                    format!("missing, but nodes[{n}] skins this mesh with skins[{s}]"),
                ));
            };
            if let Some((joint, vertex, set)) = primitive.max_joint_index {
                if joint >= skin.joints.len() || influences.joint_count() > skin.joints.len() {
                    return Err(GltfError::invalid(
                        format!("meshes[{m}].primitives[{p}].attributes[\"JOINTS_{set}\"]"),
                        format!(
                            "vertex {vertex} names joint {joint}, but skins[{s}] (used by nodes[{n}]) has {} joints",
                            skin.joints.len()
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}
