//! The posed scene as Wavefront OBJ text.

use std::fmt::Write as _;

use glam::{Mat3, Vec3};

use crate::model::Model;
use crate::morph::morphed;
use crate::pose::Pose;
use crate::scene::PosedNode;

/// The posed scene as Wavefront OBJ text: every mesh node in scene space (skinned nodes posed,
/// others moved by their world matrix after their morph weights), triangles only (strips and
/// fans are converted; points and lines are skipped), with TEXCOORD_0 and normals.
#[must_use]
pub fn to_obj(model: &Model, pose: &Pose, posed: &[PosedNode]) -> String {
    let mut text = String::from("# posed by skinblend\n");
    let mut next_vertex = 1usize;
    for &n in &model.order {
        let node = &model.nodes[n];
        let Some(m) = node.mesh else { continue };
        let Some(mesh) = model.meshes.get(m) else {
            continue;
        };
        let name = node.name.clone().unwrap_or_else(|| format!("node{n}"));
        let _ = writeln!(text, "o {}", name.replace(char::is_whitespace, "_"));
        let skinned = posed.iter().find(|p| p.node == n);
        for (p, primitive) in mesh.primitives.iter().enumerate() {
            let (positions, normals): (Vec<Vec3>, Option<Vec<Vec3>>) = match skinned {
                Some(item) => {
                    let r = &item.primitives[p];
                    (r.positions.clone(), r.normals.clone())
                }
                None => {
                    let world = pose.world_from_node[n];
                    let normal_matrix = Mat3::from_mat4(world).inverse().transpose();
                    let (positions, normals, _) = morphed(primitive, &pose.weights[n]);
                    (
                        positions
                            .iter()
                            .map(|&v| world.transform_point3(v))
                            .collect(),
                        normals.map(|ns| {
                            ns.iter()
                                .map(|&v| (normal_matrix * v).normalize_or_zero())
                                .collect()
                        }),
                    )
                }
            };
            for v in &positions {
                let _ = writeln!(text, "v {} {} {}", v.x, v.y, v.z);
            }
            if let Some(uv) = &primitive.texcoords {
                for t in uv {
                    // OBJ's v axis points up; glTF's points down.
                    let _ = writeln!(text, "vt {} {}", t[0], 1.0 - t[1]);
                }
            }
            if let Some(normals) = &normals {
                for v in normals {
                    let _ = writeln!(text, "vn {} {} {}", v.x, v.y, v.z);
                }
            }
            let triangles = primitive.triangles();
            let has_uv = primitive.texcoords.is_some();
            let has_normal = normals.is_some();
            for tri in triangles {
                text.push('f');
                for i in tri {
                    let k = next_vertex + i as usize;
                    match (has_uv, has_normal) {
                        (true, true) => {
                            let _ = write!(text, " {k}/{k}/{k}");
                        }
                        (true, false) => {
                            let _ = write!(text, " {k}/{k}");
                        }
                        (false, true) => {
                            let _ = write!(text, " {k}//{k}");
                        }
                        (false, false) => {
                            let _ = write!(text, " {k}");
                        }
                    }
                }
                text.push('\n');
            }
            next_vertex += positions.len();
        }
    }
    text
}
