//! What Bevy's glTF loader leaves out of a skinned primitive and the plugin needs: the second set
//! of influences (`JOINTS_1` / `WEIGHTS_1`), skinblend's centers of rotation
//! (`_SKINBLEND_COR`, written by `skinblend centers`) and blend values (`_SKINBLEND_DQ_BLEND`,
//! written by `skinblend dq-blend`), read during Bevy's own load by a glTF extension handler
//! and kept in [`SkinblendGltfExtras`] under the primitive's mesh path.

use std::sync::{Arc, Mutex};

use bevy::asset::{AssetPath, Handle, LoadContext};
use bevy::ecs::resource::Resource;
use bevy::gltf::extensions::{ErasedGltfExtensionHandler, GltfExtensionHandler};
use bevy::mesh::{Mesh, MeshVertexAttribute};
use bevy::platform::collections::HashMap;

/// The glTF attribute name of the centers of rotation (as `skinblend_gltf` writes it), without
/// the leading underscore as the `gltf` crate reports custom attributes.
const ROTATION_CENTER_SEMANTIC: &str = "SKINBLEND_COR";

/// The glTF attribute name of the blend values (`_SKINBLEND_DQ_BLEND`), as the `gltf` crate
/// reports it.
const DQ_BLEND_SEMANTIC: &str = "SKINBLEND_DQ_BLEND";

/// A skinned primitive's attributes that Bevy's glTF loader does not keep, one entry per vertex
/// of the primitive's mesh (Bevy's loader keeps the vertex order of the file).
///
/// `joints_1` / `weights_1`: the file's `JOINTS_1` / `WEIGHTS_1` (influences 5 to 8).
/// `rotation_centers`: `_SKINBLEND_COR` as stored, `[x, y, z, w]` with w = 1 for a center and
/// 0 for a vertex without one (skinned by DQS), in the mesh's bind space (metres).
/// `dq_blend`: `_SKINBLEND_DQ_BLEND` decoded to `f32` (FLOAT as stored; normalized UNSIGNED_BYTE
/// and UNSIGNED_SHORT divided by 255 and 65535), not yet checked against `[0, 1]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkinblendPrimitiveExtras {
    /// `JOINTS_1`, when the primitive has it.
    pub joints_1: Option<Vec<[u16; 4]>>,
    /// `WEIGHTS_1`, when the primitive has it.
    pub weights_1: Option<Vec<[f32; 4]>>,
    /// `_SKINBLEND_COR`, when the primitive has it.
    pub rotation_centers: Option<Vec<[f32; 4]>>,
    /// `_SKINBLEND_DQ_BLEND`, when the primitive has it (as a SCALAR of a type glTF allows).
    pub dq_blend: Option<Vec<f32>>,
}

impl SkinblendPrimitiveExtras {
    fn is_empty(&self) -> bool {
        self.joints_1.is_none()
            && self.weights_1.is_none()
            && self.rotation_centers.is_none()
            && self.dq_blend.is_none()
    }
}

/// Every glTF primitive's [`SkinblendPrimitiveExtras`] read so far, by the asset path of the
/// primitive's mesh (`file.glb#Mesh{m}/Primitive{p}`, Bevy's label). Filled by the plugin's glTF
/// extension handler while Bevy loads a file; a primitive without `JOINTS_1`, `WEIGHTS_1`,
/// `_SKINBLEND_COR` or `_SKINBLEND_DQ_BLEND` has no entry.
#[derive(Resource, Clone, Default)]
pub struct SkinblendGltfExtras(
    Arc<Mutex<HashMap<AssetPath<'static>, Arc<SkinblendPrimitiveExtras>>>>,
);

impl SkinblendGltfExtras {
    /// The extras of the primitive whose mesh asset path is `path`.
    #[must_use]
    pub fn get(&self, path: &AssetPath<'_>) -> Option<Arc<SkinblendPrimitiveExtras>> {
        let table = self.0.lock().ok()?;
        table.get(&path.clone_owned()).cloned()
    }

    /// The extras of the primitive `mesh` was loaded from, if any.
    #[must_use]
    pub fn of_mesh(&self, mesh: &Handle<Mesh>) -> Option<Arc<SkinblendPrimitiveExtras>> {
        self.get(mesh.path()?)
    }

    fn insert(&self, path: AssetPath<'static>, extras: SkinblendPrimitiveExtras) {
        if let Ok(mut table) = self.0.lock() {
            table.insert(path, Arc::new(extras));
        }
    }
}

/// The handler the plugin registers with Bevy's glTF loader: for each primitive with
/// `JOINTS_1`, `WEIGHTS_1`, `_SKINBLEND_COR` or `_SKINBLEND_DQ_BLEND`, records a
/// [`SkinblendPrimitiveExtras`] in the shared [`SkinblendGltfExtras`]. Changes nothing Bevy
/// loads.
#[derive(Clone, Default)]
pub(crate) struct SkinblendGltfHandler {
    pub(crate) extras: SkinblendGltfExtras,
}

impl GltfExtensionHandler for SkinblendGltfHandler {
    fn dyn_clone(&self) -> Box<dyn ErasedGltfExtensionHandler> {
        Box::new(self.clone())
    }

    async fn on_gltf_primitive(
        &mut self,
        load_context: &mut LoadContext<'_>,
        _gltf_document: &gltf::Gltf,
        gltf_mesh: &gltf::Mesh<'_>,
        gltf_primitive: &gltf::Primitive<'_>,
        buffer_data: &[Vec<u8>],
        _custom_vertex_attributes: &HashMap<Box<str>, MeshVertexAttribute>,
        _gltf_mesh_on_skinned_nodes: bool,
        _gltf_mesh_on_non_skinned_nodes: bool,
        _user_mesh: &mut Option<Mesh>,
    ) {
        let extras = read_extras(gltf_primitive, buffer_data);
        if extras.is_empty() {
            return;
        }
        let label = format!(
            "Mesh{}/Primitive{}",
            gltf_mesh.index(),
            gltf_primitive.index()
        );
        let path = load_context.path().clone_owned().with_label(label);
        self.extras.insert(path, extras);
    }
}

/// Reads the second influence set, the centers of rotation and the blend values of one
/// primitive.
fn read_extras(
    primitive: &gltf::Primitive<'_>,
    buffer_data: &[Vec<u8>],
) -> SkinblendPrimitiveExtras {
    let get_buffer = |buffer: gltf::Buffer<'_>| buffer_data.get(buffer.index()).map(Vec::as_slice);
    let reader = primitive.reader(get_buffer);
    let joints_1 = reader.read_joints(1).map(|j| j.into_u16().collect());
    let weights_1 = reader.read_weights(1).map(|w| w.into_f32().collect());
    let rotation_centers = primitive
        .get(&gltf::Semantic::Extras(ROTATION_CENTER_SEMANTIC.to_owned()))
        .filter(|accessor| {
            accessor.data_type() == gltf::accessor::DataType::F32
                && accessor.dimensions() == gltf::accessor::Dimensions::Vec4
        })
        .and_then(|accessor| gltf::accessor::Iter::<[f32; 4]>::new(accessor, get_buffer))
        .map(Iterator::collect);
    let dq_blend = primitive
        .get(&gltf::Semantic::Extras(DQ_BLEND_SEMANTIC.to_owned()))
        .and_then(|accessor| read_blend_values(&accessor, get_buffer));
    SkinblendPrimitiveExtras {
        joints_1,
        weights_1,
        rotation_centers,
        dq_blend,
    }
}

/// A SCALAR blend-value accessor as `f32`: FLOAT as stored, normalized UNSIGNED_BYTE or
/// UNSIGNED_SHORT decoded as glTF decodes weights (÷ 255, ÷ 65535, in f64 then rounded to f32,
/// as skinblend-gltf decodes them); `None` for any other type.
fn read_blend_values<'a>(
    accessor: &gltf::Accessor<'a>,
    get_buffer: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'a [u8]>,
) -> Option<Vec<f32>> {
    use gltf::accessor::{DataType, Dimensions, Iter};
    if accessor.dimensions() != Dimensions::Scalar {
        return None;
    }
    let normalized = accessor.normalized();
    match accessor.data_type() {
        DataType::F32 => Iter::<f32>::new(accessor.clone(), get_buffer).map(Iterator::collect),
        DataType::U8 if normalized => Iter::<u8>::new(accessor.clone(), get_buffer)
            .map(|values| values.map(|v| (f64::from(v) / 255.0) as f32).collect()),
        DataType::U16 if normalized => Iter::<u16>::new(accessor.clone(), get_buffer)
            .map(|values| values.map(|v| (f64::from(v) / 65535.0) as f32).collect()),
        _ => None,
    }
}
