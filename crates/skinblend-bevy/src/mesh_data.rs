//! A skinned Bevy mesh made ready once for the plugin: the mesh the renderer draws (Bevy's mesh
//! with the joints and weights moved to skinblend's own attributes, so Bevy's linear skinning
//! stays off) and the core's [`SkinMesh`] the CPU poses.

use std::sync::Arc;

use bevy::mesh::{Indices, Mesh, MeshVertexAttribute, PrimitiveTopology, VertexAttributeValues};
use bevy::render::render_resource::VertexFormat;
use skinblend::glam::Vec3 as CoreVec3;
use skinblend::{Influences, SkinMesh};

use crate::gltf_extras::SkinblendPrimitiveExtras;

/// Joints 1 to 4 of each vertex (glTF `JOINTS_0`), indices into the skin's joints; location 10
/// of skinblend's vertex shaders.
pub const ATTRIBUTE_SKINBLEND_JOINTS_0: MeshVertexAttribute = MeshVertexAttribute::new(
    "Skinblend_Joints_0",
    0x5b1e_b1e0_0000_0010,
    VertexFormat::Uint16x4,
);
/// Weights 1 to 4 (glTF `WEIGHTS_0`); location 11.
pub const ATTRIBUTE_SKINBLEND_WEIGHTS_0: MeshVertexAttribute = MeshVertexAttribute::new(
    "Skinblend_Weights_0",
    0x5b1e_b1e0_0000_0011,
    VertexFormat::Float32x4,
);
/// Joints 5 to 8 (glTF `JOINTS_1`); location 12.
pub const ATTRIBUTE_SKINBLEND_JOINTS_1: MeshVertexAttribute = MeshVertexAttribute::new(
    "Skinblend_Joints_1",
    0x5b1e_b1e0_0000_0012,
    VertexFormat::Uint16x4,
);
/// Weights 5 to 8 (glTF `WEIGHTS_1`); location 13.
pub const ATTRIBUTE_SKINBLEND_WEIGHTS_1: MeshVertexAttribute = MeshVertexAttribute::new(
    "Skinblend_Weights_1",
    0x5b1e_b1e0_0000_0013,
    VertexFormat::Float32x4,
);
/// The center of rotation (xyz, bind space, metres; w = 1 for a center, 0 for none: that vertex
/// is skinned by DQS), glTF `_SKINBLEND_COR`; location 14.
pub const ATTRIBUTE_SKINBLEND_ROTATION_CENTER: MeshVertexAttribute = MeshVertexAttribute::new(
    "Skinblend_Rotation_Center",
    0x5b1e_b1e0_0000_0014,
    VertexFormat::Float32x4,
);

/// The blend value of [`crate::SkinningMethod::Blended`] (0 = LBS, 1 = DQS, in `[0, 1]`), glTF
/// `_SKINBLEND_DQ_BLEND`; location 15. Only on meshes whose file has valid values.
pub const ATTRIBUTE_SKINBLEND_DQ_BLEND: MeshVertexAttribute = MeshVertexAttribute::new(
    "Skinblend_Dq_Blend",
    0x5b1e_b1e0_0000_0015,
    VertexFormat::Float32,
);

/// The largest number of influences per vertex the plugin skins (two glTF sets of four).
pub const MAX_INFLUENCES: usize = 8;

/// Why a skinned mesh is left to Bevy: each names the limit or the attribute, for the warning
/// that names the entity.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeshRefusal {
    /// The mesh is not a triangle list with positions, joints and weights.
    #[error("the mesh has no {0} (skinblend needs POSITION, JOINTS_0 and WEIGHTS_0 as Bevy's glTF loader gives them)")]
    MissingAttribute(&'static str),
    /// An attribute has another format than Bevy's glTF loader gives.
    #[error("attribute {0} has an unexpected format")]
    UnexpectedFormat(&'static str),
    /// `JOINTS_1` without `WEIGHTS_1` or the other way round, or a set with another vertex count.
    #[error("each JOINTS_n needs its WEIGHTS_n, both with one entry per vertex ({vertices} vertices; {what})")]
    SecondSet {
        /// Vertices of the mesh.
        vertices: usize,
        /// What was wrong.
        what: String,
    },
    /// Morph targets are not skinned by the plugin (they stay with Bevy's own skinning).
    #[error("the mesh has morph targets, which skinblend-bevy does not apply yet")]
    MorphTargets,
    /// The core rejected the data (a joint index beyond the skin, a negative or NaN weight, ...).
    #[error("{0}")]
    Core(#[from] skinblend::SkinError),
}

/// One source mesh made ready: built once per mesh asset and shared by every entity drawing it.
#[derive(Debug)]
pub struct PreparedMesh {
    /// The mesh the renderer draws: the source with JOINTS/WEIGHTS as skinblend's attributes.
    pub render_mesh: Mesh,
    /// The bind pose and influences the CPU kernels skin (centers of rotation when known).
    pub cpu: Arc<SkinMesh<'static>>,
    /// Influences per vertex: 4, or 8 with a second set.
    pub influences_per_vertex: usize,
    /// Whether the centers of rotation came with the file (`_SKINBLEND_COR`).
    pub centers_from_file: bool,
    /// The file's blend values (`_SKINBLEND_DQ_BLEND`): `Ok(true)` when the file has them and
    /// they are valid (then `cpu` and `render_mesh` carry them), `Ok(false)` when it has none,
    /// `Err` naming the fault (a value outside `[0, 1]` or NaN, or another count than the
    /// vertices): only [`crate::SkinningMethod::Blended`] refuses such a mesh.
    pub blend_values_from_file: Result<bool, skinblend::SkinError>,
    /// The triangles (for computing centers of rotation), `[a, b, c]` vertex indices.
    pub triangles: Arc<Vec<[u32; 3]>>,
}

fn float3(
    mesh: &Mesh,
    attribute: MeshVertexAttribute,
    name: &'static str,
) -> Result<Option<Vec<CoreVec3>>, MeshRefusal> {
    match mesh.attribute(attribute) {
        None => Ok(None),
        Some(VertexAttributeValues::Float32x3(values)) => Ok(Some(
            values.iter().map(|&v| CoreVec3::from_array(v)).collect(),
        )),
        Some(_) => Err(MeshRefusal::UnexpectedFormat(name)),
    }
}

/// Builds the render mesh and the CPU mesh of `source` (a skinned mesh from Bevy's glTF loader)
/// for a skin of `joint_count` joints, with `extras` (the second influence set and the centers
/// of rotation and the blend values of the file) when there are any. O(vertices); allocates
/// both meshes.
///
/// # Errors
/// A [`MeshRefusal`] naming the attribute or the limit.
pub fn prepare_mesh(
    source: &Mesh,
    joint_count: usize,
    extras: Option<&SkinblendPrimitiveExtras>,
) -> Result<PreparedMesh, MeshRefusal> {
    if source.primitive_topology() != PrimitiveTopology::TriangleList {
        return Err(MeshRefusal::MissingAttribute("triangle-list topology"));
    }
    if source.morph_targets().is_some() {
        return Err(MeshRefusal::MorphTargets);
    }
    let positions = float3(source, Mesh::ATTRIBUTE_POSITION, "POSITION")?
        .ok_or(MeshRefusal::MissingAttribute("POSITION"))?;
    let normals = float3(source, Mesh::ATTRIBUTE_NORMAL, "NORMAL")?;
    let joints_0 = match source.attribute(Mesh::ATTRIBUTE_JOINT_INDEX) {
        None => return Err(MeshRefusal::MissingAttribute("JOINTS_0")),
        Some(VertexAttributeValues::Uint16x4(values)) => values,
        Some(_) => return Err(MeshRefusal::UnexpectedFormat("JOINTS_0")),
    };
    let weights_0 = match source.attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT) {
        None => return Err(MeshRefusal::MissingAttribute("WEIGHTS_0")),
        Some(VertexAttributeValues::Float32x4(values)) => values,
        Some(_) => return Err(MeshRefusal::UnexpectedFormat("WEIGHTS_0")),
    };
    let vertices = positions.len();
    if joints_0.len() != vertices || weights_0.len() != vertices {
        return Err(MeshRefusal::SecondSet {
            vertices,
            what: format!(
                "JOINTS_0 has {} entries, WEIGHTS_0 {}",
                joints_0.len(),
                weights_0.len()
            ),
        });
    }
    let second = match extras.map(|e| (&e.joints_1, &e.weights_1)) {
        None | Some((None, None)) => None,
        Some((Some(j), Some(w))) if j.len() == vertices && w.len() == vertices => Some((j, w)),
        Some((j, w)) => {
            return Err(MeshRefusal::SecondSet {
                vertices,
                what: format!(
                    "JOINTS_1 has {:?} entries, WEIGHTS_1 {:?}",
                    j.as_ref().map(Vec::len),
                    w.as_ref().map(Vec::len)
                ),
            })
        }
    };
    let k = if second.is_some() { MAX_INFLUENCES } else { 4 };
    // As skinblend-gltf reads a file (so the CPU pose equals `skinblend pose`'s): per vertex
    // the (joint, weight) pairs of weight > 0, repeated joints merged, the heaviest first,
    // renormalized to sum to 1; the render mesh then carries those same slots, so the GPU
    // blends exactly what the CPU blends.
    let mut lists: Vec<Vec<(u16, f32)>> = Vec::with_capacity(vertices);
    for v in 0..vertices {
        let mut list = Vec::with_capacity(k);
        let sets = std::iter::once((&joints_0[v], &weights_0[v]))
            .chain(second.map(|(j, w)| (&j[v], &w[v])));
        for (joints, weights) in sets {
            for slot in 0..4 {
                if weights[slot] > 0.0 {
                    list.push((joints[slot], weights[slot]));
                }
            }
        }
        lists.push(list);
    }
    let (influences, _report) = Influences::from_lists(&lists, k, joint_count)?;
    let slots = |set: usize| -> (Vec<[u16; 4]>, Vec<[f32; 4]>) {
        let joints = influences.joints();
        let weights = influences.weights();
        (0..vertices)
            .map(|v| {
                let base = v * k + set * 4;
                let mut j = [0u16; 4];
                let mut w = [0f32; 4];
                j.copy_from_slice(&joints[base..base + 4]);
                w.copy_from_slice(&weights[base..base + 4]);
                (j, w)
            })
            .unzip()
    };
    let (joints_0, weights_0) = slots(0);
    let second_slots = second.map(|_| slots(1));
    let mut cpu = SkinMesh::new(positions, influences)?;
    if let Some(normals) = normals {
        cpu = cpu.with_normals(normals)?;
    }
    let centers = extras
        .and_then(|e| e.rotation_centers.as_ref())
        .filter(|c| c.len() == vertices);
    if let Some(centers) = centers {
        let core: Vec<CoreVec3> = centers
            .iter()
            .map(|c| {
                if c[3] == 1.0 {
                    CoreVec3::new(c[0], c[1], c[2])
                } else {
                    skinblend::cor::NO_ROTATION_CENTER
                }
            })
            .collect();
        cpu = cpu.with_rotation_centers(core)?;
    }
    let file_blend = extras.and_then(|e| e.dq_blend.as_ref());
    // A fault in the file's values is Blended's refusal only: the other methods skin the mesh.
    let blend_values_from_file = file_blend.map_or(Ok(false), |values| {
        check_blend_values(values, vertices).map(|()| true)
    });
    if let (Ok(true), Some(values)) = (&blend_values_from_file, file_blend) {
        cpu = cpu.with_blend_values(values.clone())?;
    }

    let mut render_mesh = source.clone();
    render_mesh.remove_attribute(Mesh::ATTRIBUTE_JOINT_INDEX);
    render_mesh.remove_attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT);
    render_mesh.insert_attribute(
        ATTRIBUTE_SKINBLEND_JOINTS_0,
        VertexAttributeValues::Uint16x4(joints_0),
    );
    render_mesh.insert_attribute(ATTRIBUTE_SKINBLEND_WEIGHTS_0, weights_0);
    if let Some((j, w)) = second_slots {
        render_mesh.insert_attribute(
            ATTRIBUTE_SKINBLEND_JOINTS_1,
            VertexAttributeValues::Uint16x4(j),
        );
        render_mesh.insert_attribute(ATTRIBUTE_SKINBLEND_WEIGHTS_1, w);
    }
    if let Some(centers) = centers {
        render_mesh.insert_attribute(ATTRIBUTE_SKINBLEND_ROTATION_CENTER, gpu_centers(centers));
    }
    if let (Ok(true), Some(values)) = (&blend_values_from_file, file_blend) {
        render_mesh.insert_attribute(ATTRIBUTE_SKINBLEND_DQ_BLEND, values.clone());
    }
    Ok(PreparedMesh {
        render_mesh,
        cpu: Arc::new(cpu),
        influences_per_vertex: k,
        centers_from_file: centers.is_some(),
        blend_values_from_file,
        triangles: Arc::new(triangles(source, vertices)),
    })
}

/// The core's errors for blend values that [`SkinMesh::with_blend_values`] would refuse: another
/// count than `vertices`, or a value that is NaN or outside `[0, 1]` (the first one).
fn check_blend_values(values: &[f32], vertices: usize) -> Result<(), skinblend::SkinError> {
    if values.len() != vertices {
        return Err(skinblend::SkinError::AttributeLength {
            attribute: "_SKINBLEND_DQ_BLEND",
            expected: vertices,
            found: values.len(),
        });
    }
    match values.iter().position(|v| !(0.0..=1.0).contains(v)) {
        None => Ok(()),
        Some(vertex) => Err(skinblend::SkinError::InvalidBlendValue {
            vertex,
            value: values[vertex],
        }),
    }
}

/// The file's centers as the GPU reads them: w exactly 1 or 0 (any other w: no center), never NaN.
fn gpu_centers(centers: &[[f32; 4]]) -> Vec<[f32; 4]> {
    centers
        .iter()
        .map(|c| {
            if c[3] == 1.0 && c[..3].iter().all(|x| x.is_finite()) {
                *c
            } else {
                [0.0; 4]
            }
        })
        .collect()
}

/// The triangle list of a triangle-list mesh (indexed or not); triangles naming a vertex beyond
/// the mesh are dropped (the core's center computation would refuse them).
fn triangles(mesh: &Mesh, vertices: usize) -> Vec<[u32; 3]> {
    let indices: Vec<u32> = match mesh.indices() {
        Some(Indices::U16(i)) => i.iter().map(|&x| u32::from(x)).collect(),
        Some(Indices::U32(i)) => i.clone(),
        None => (0..u32::try_from(vertices).unwrap_or(u32::MAX)).collect(),
    };
    indices
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .filter(|t| t.iter().all(|&i| (i as usize) < vertices))
        .collect()
}
