//! The scene graph: nodes (parent-first order, depth bound) and skins (inverse bind matrices).

use glam::{Mat4, Quat, Vec3};
use gltf::json::accessor::Type;
use gltf::json::Root;

use super::types::{Node, Skin, Trs, MAX_NODE_DEPTH};
use super::validate::{affine_from_cols, finite_or, read_unstrided, FLOAT};
use crate::error::{GltfError, Result};

pub(super) fn nodes_rotation_repairs(root: &Root) -> usize {
    root.nodes
        .iter()
        .filter(|n| {
            n.rotation
                .as_ref()
                .is_some_and(|q| (Quat::from_array(q.0).length() - 1.0).abs() > 1e-3)
        })
        .count()
}

pub(super) fn load_nodes(root: &Root) -> Result<(Vec<Node>, Vec<usize>)> {
    let count = root.nodes.len();
    let mut parents: Vec<Option<usize>> = vec![None; count];
    let mut nodes = Vec::with_capacity(count);
    for (i, node) in root.nodes.iter().enumerate() {
        let path = format!("nodes[{i}]");
        let children: Vec<usize> = node
            .children
            .as_ref()
            .map(|c| c.iter().map(|c| c.value()).collect())
            .unwrap_or_default();
        for (k, &child) in children.iter().enumerate() {
            let child_path = format!("{path}.children[{k}]");
            if child >= count {
                return Err(GltfError::invalid(
                    child_path,
                    format!("node {child} does not exist"),
                ));
            }
            if child == i {
                return Err(GltfError::invalid(
                    child_path,
                    "a node cannot be its own child (cycle)",
                ));
            }
            if let Some(other) = parents[child] {
                return Err(GltfError::invalid(
                    child_path,
                    format!("node {child} already has parent nodes[{other}]: a node has at most one parent"),
                ));
            }
            parents[child] = Some(i);
        }
        let (matrix, trs) = match node.matrix {
            Some(m) => {
                let values: Vec<f64> = m.iter().map(|&v| f64::from(v)).collect();
                let matrix = affine_from_cols(&format!("{path}.matrix"), &values)?;
                let (scale, rotation, translation) = matrix.to_scale_rotation_translation();
                (
                    Some(matrix),
                    Trs {
                        translation,
                        rotation,
                        scale,
                    },
                )
            }
            None => {
                let translation = node.translation.unwrap_or([0.0; 3]);
                let rotation = node.rotation.as_ref().map_or([0.0, 0.0, 0.0, 1.0], |q| q.0);
                let scale = node.scale.unwrap_or([1.0; 3]);
                finite_or(&format!("{path}.translation"), &translation)?;
                finite_or(&format!("{path}.rotation"), &rotation)?;
                finite_or(&format!("{path}.scale"), &scale)?;
                let q = Quat::from_array(rotation);
                if q.length() <= f32::EPSILON {
                    return Err(GltfError::invalid(
                        format!("{path}.rotation"),
                        "zero quaternion is not a rotation",
                    ));
                }
                (
                    None,
                    Trs {
                        translation: Vec3::from_array(translation),
                        rotation: q.normalize(),
                        scale: Vec3::from_array(scale),
                    },
                )
            }
        };
        if let Some(weights) = &node.weights {
            finite_or(&format!("{path}.weights"), weights)?;
        }
        nodes.push(Node {
            name: node.name.clone(),
            parent: None,
            children,
            matrix,
            trs,
            mesh: node.mesh.map(|m| m.value()),
            skin: node.skin.map(|s| s.value()),
            weights: node.weights.clone(),
        });
    }
    for (node, parent) in nodes.iter_mut().zip(&parents) {
        node.parent = *parent;
    }
    // Parent-first order by a queue from the roots: no recursion, and anything never reached
    // lies on a cycle (every node of a cycle has a parent, so none of it is a root).
    let mut order: Vec<usize> = (0..count).filter(|&i| parents[i].is_none()).collect();
    let mut depth = vec![0usize; count];
    let mut head = 0;
    while head < order.len() {
        let node = order[head];
        head += 1;
        for &child in &nodes[node].children {
            depth[child] = depth[node] + 1;
            if depth[child] > MAX_NODE_DEPTH {
                return Err(GltfError::invalid(
                    format!("nodes[{child}]"),
                    format!("lies deeper than {MAX_NODE_DEPTH} levels below its root"),
                ));
            }
            order.push(child);
        }
    }
    if order.len() < count {
        let mut reached = vec![false; count];
        for &n in &order {
            reached[n] = true;
        }
        let first = reached.iter().position(|r| !r).unwrap_or(0);
        return Err(GltfError::invalid(
            format!("nodes[{first}]"),
            "lies on a cycle of children (no root above it)",
        ));
    }
    Ok((nodes, order))
}

pub(super) fn load_skins(root: &Root, buffers: &[Vec<u8>]) -> Result<Vec<Skin>> {
    let mut skins = Vec::with_capacity(root.skins.len());
    for (s, skin) in root.skins.iter().enumerate() {
        let path = format!("skins[{s}]");
        let joints: Vec<usize> = skin.joints.iter().map(|j| j.value()).collect();
        if joints.is_empty() {
            return Err(GltfError::invalid(format!("{path}.joints"), "is empty"));
        }
        for (k, &joint) in joints.iter().enumerate() {
            if joint >= root.nodes.len() {
                return Err(GltfError::invalid(
                    format!("{path}.joints[{k}]"),
                    format!("node {joint} does not exist"),
                ));
            }
        }
        let joint_from_bind = match skin.inverse_bind_matrices {
            None => vec![Mat4::IDENTITY; joints.len()],
            Some(index) => {
                let context = format!("{path}.inverseBindMatrices");
                let data =
                    read_unstrided(root, buffers, index.value(), &context, Type::Mat4, &[FLOAT])?;
                if data.count() != joints.len() {
                    return Err(GltfError::invalid(
                        context,
                        format!(
                            "{} matrices for {} joints (one per joint is required)",
                            data.count(),
                            joints.len()
                        ),
                    ));
                }
                let mut matrices = Vec::with_capacity(joints.len());
                for j in 0..joints.len() {
                    let element = data.element(j).unwrap_or(&[]);
                    matrices.push(affine_from_cols(
                        &format!("{context} -> accessors[{}] element {j}", index.value()),
                        element,
                    )?);
                }
                matrices
            }
        };
        let mut joint_centers = Vec::with_capacity(joints.len());
        for (j, m) in joint_from_bind.iter().enumerate() {
            let determinant = m.determinant();
            let center = m.inverse().w_axis.truncate();
            if determinant == 0.0 || !determinant.is_finite() || !center.is_finite() {
                return Err(GltfError::invalid(
                    format!("{path}.inverseBindMatrices element {j}"),
                    format!("is not invertible (determinant {determinant})"),
                ));
            }
            joint_centers.push(center);
        }
        skins.push(Skin {
            name: skin.name.clone(),
            joints,
            joint_from_bind,
            joint_centers,
        });
    }
    Ok(skins)
}
