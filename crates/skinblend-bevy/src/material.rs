//! The material the plugin puts on a skinned entity: the entity's own `StandardMaterial`
//! extended with skinblend's vertex shader (main pass, prepass and shadows), the three palettes
//! (one storage buffer per layout, every entity's joints one after the other; CoR and blended
//! share one) and the blend constant of `Blended`.

use bevy::asset::{uuid_handle, Handle};
use bevy::mesh::{MeshVertexAttribute, MeshVertexBufferLayoutRef};
use bevy::pbr::{
    ExtendedMaterial, MaterialExtension, MaterialExtensionKey, MaterialExtensionPipeline,
    StandardMaterial,
};
use bevy::prelude::*;
use bevy::render::render_resource::{
    AsBindGroup, RenderPipelineDescriptor, SpecializedMeshPipelineError,
};
use bevy::render::storage::ShaderBuffer;
use bevy::shader::{Shader, ShaderRef};
use skinblend::VertexInput;
use skinblend_gpu::wgsl::{BLENDED_WGSL, COR_WGSL, DUAL_QUAT_WGSL, LINEAR_WGSL, SKINNING_WGSL};

use crate::mesh_data::{
    ATTRIBUTE_SKINBLEND_DQ_BLEND, ATTRIBUTE_SKINBLEND_JOINTS_0, ATTRIBUTE_SKINBLEND_JOINTS_1,
    ATTRIBUTE_SKINBLEND_ROTATION_CENTER, ATTRIBUTE_SKINBLEND_WEIGHTS_0,
    ATTRIBUTE_SKINBLEND_WEIGHTS_1,
};
use crate::SkinningMethod;

/// A `StandardMaterial` skinned by skinblend.
pub type SkinblendMaterial = ExtendedMaterial<StandardMaterial, SkinblendExtension>;

/// The vertex shader of every pass (skinblend's WGSL library, then `shaders/vertex.wgsl`): the
/// main pass, and under Bevy's `PREPASS_PIPELINE` shader def the prepass and shadow maps.
pub const VERTEX_SHADER: Handle<Shader> = uuid_handle!("5b1eb1e0-7a3c-4d52-9f1e-1a2b3c4d5e01");

/// The bindings of the three palettes in the material's bind group (Bevy's
/// `MATERIAL_BIND_GROUP`); `StandardMaterial` uses bindings below 100.
pub const LINEAR_PALETTE_BINDING: u32 = 100;
/// See [`LINEAR_PALETTE_BINDING`].
pub const DUAL_QUAT_PALETTE_BINDING: u32 = 101;
/// See [`LINEAR_PALETTE_BINDING`].
pub const COR_PALETTE_BINDING: u32 = 102;
/// The CoR palette buffer again, under the name skinblend's blended WGSL reads
/// (`skin_blended_palette`): blended's entries have CoR's layout and live in its buffer.
pub const BLENDED_PALETTE_BINDING: u32 = 103;
/// The blend constant of `Blended` (a uniform `vec4<f32>`, x the value), for meshes without the
/// file's `_SKINBLEND_DQ_BLEND`.
pub const DQ_BLEND_BINDING: u32 = 104;

/// The skinning half of [`SkinblendMaterial`]: the three palettes (shared by every entity; an
/// entity's joints start at its `MeshTag` in its method's palette), the blend constant and the
/// method its pipelines are specialized for. Every palette buffer holds at least one joint (a
/// binding cannot be empty).
#[derive(Asset, AsBindGroup, Reflect, Debug, Clone)]
#[bind_group_data(SkinblendMaterialKey)]
pub struct SkinblendExtension {
    /// LBS joints, `skinblend_gpu::GpuLinearJoint` (48 bytes each).
    #[storage(100, read_only, visibility(vertex))]
    pub linear_palette: Handle<ShaderBuffer>,
    /// DQS joints, `skinblend_gpu::GpuDualQuatJoint` (96 bytes each).
    #[storage(101, read_only, visibility(vertex))]
    pub dual_quat_palette: Handle<ShaderBuffer>,
    /// CoR joints, `skinblend_gpu::GpuCorJoint` (144 bytes each).
    #[storage(102, read_only, visibility(vertex))]
    pub cor_palette: Handle<ShaderBuffer>,
    /// The CoR palette buffer (`cor_palette`) again: blended's joints, `GpuCorJoint` too.
    #[storage(103, read_only, visibility(vertex))]
    pub blended_palette: Handle<ShaderBuffer>,
    /// `Blended`'s value for every vertex (x; 0 = LBS, 1 = DQS) where the mesh has no
    /// `_SKINBLEND_DQ_BLEND` attribute; unused otherwise.
    #[uniform(104)]
    pub dq_blend: Vec4,
    /// The method the shaders run.
    #[reflect(ignore)]
    pub method: SkinningMethod,
}

/// The pipeline key of [`SkinblendExtension`]: the method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SkinblendMaterialKey {
    method: SkinningMethod,
}

impl From<&SkinblendExtension> for SkinblendMaterialKey {
    fn from(extension: &SkinblendExtension) -> Self {
        Self {
            method: extension.method,
        }
    }
}

/// The method's shader defs (see `shaders/skin_vertex.wgsl`): the method, the blends it
/// evaluates (`SKINBLEND_LINEAR_BLEND`, `SKINBLEND_DUAL_QUAT_BLEND`) and whether its entries are
/// in the CoR palette (`SKINBLEND_COR_PALETTE`).
fn method_defs(method: SkinningMethod) -> &'static [&'static str] {
    match method {
        SkinningMethod::Linear => &["SKINBLEND_LINEAR", "SKINBLEND_LINEAR_BLEND"],
        SkinningMethod::DualQuaternion => {
            &["SKINBLEND_DUAL_QUATERNION", "SKINBLEND_DUAL_QUAT_BLEND"]
        }
        SkinningMethod::CenterOfRotation => {
            &["SKINBLEND_CENTER_OF_ROTATION", "SKINBLEND_COR_PALETTE"]
        }
        // Blended's entries are in the CoR palette, which the library's four-influence LBS and
        // DQS functions do not read: it blends slot by slot, as eight influences do.
        SkinningMethod::Blended => &[
            "SKINBLEND_BLENDED",
            "SKINBLEND_LINEAR_BLEND",
            "SKINBLEND_DUAL_QUAT_BLEND",
            "SKINBLEND_COR_PALETTE",
            SLOT_LOOP,
        ],
    }
}

/// The shader def of the loop over a vertex's slots one at a time (eight influences, and
/// blended's entries).
const SLOT_LOOP: &str = "SKINBLEND_SLOT_LOOP";

/// A method's per-vertex input ([`skinblend::Method::vertex_input`]) as the mesh carries it: its
/// vertex attribute, shader location and shader def.
fn input_attribute(input: VertexInput) -> (MeshVertexAttribute, u32, &'static str) {
    match input {
        VertexInput::RotationCenters => (
            ATTRIBUTE_SKINBLEND_ROTATION_CENTER,
            14,
            "SKINBLEND_ROTATION_CENTERS",
        ),
        VertexInput::BlendValues => (
            ATTRIBUTE_SKINBLEND_DQ_BLEND,
            15,
            "SKINBLEND_DQ_BLEND_VALUES",
        ),
    }
}

impl MaterialExtension for SkinblendExtension {
    fn vertex_shader() -> ShaderRef {
        VERTEX_SHADER.into()
    }

    fn prepass_vertex_shader() -> ShaderRef {
        VERTEX_SHADER.into()
    }

    fn deferred_vertex_shader() -> ShaderRef {
        VERTEX_SHADER.into()
    }

    /// Adds skinblend's attributes (locations 10 to 15) to the vertex buffer Bevy's main or
    /// prepass pipeline laid out, and the method's and the mesh's shader defs.
    fn specialize(
        _pipeline: &MaterialExtensionPipeline,
        descriptor: &mut RenderPipelineDescriptor,
        layout: &MeshVertexBufferLayoutRef,
        key: MaterialExtensionKey<Self>,
    ) -> Result<(), SpecializedMeshPipelineError> {
        let mut attributes = vec![
            ATTRIBUTE_SKINBLEND_JOINTS_0.at_shader_location(10),
            ATTRIBUTE_SKINBLEND_WEIGHTS_0.at_shader_location(11),
        ];
        let method = key.bind_group_data.method;
        let defs = &mut descriptor.vertex.shader_defs;
        defs.extend(method_defs(method).iter().map(|&def| def.into()));
        let eight = layout.0.contains(ATTRIBUTE_SKINBLEND_JOINTS_1)
            && layout.0.contains(ATTRIBUTE_SKINBLEND_WEIGHTS_1);
        if eight {
            attributes.push(ATTRIBUTE_SKINBLEND_JOINTS_1.at_shader_location(12));
            attributes.push(ATTRIBUTE_SKINBLEND_WEIGHTS_1.at_shader_location(13));
            defs.push("SKINBLEND_EIGHT_INFLUENCES".into());
        }
        if eight && !method_defs(method).contains(&SLOT_LOOP) {
            defs.push(SLOT_LOOP.into());
        }
        // The method's per-vertex input, where the mesh has it (else the shader's fallback).
        if let Some((attribute, location, def)) = method.core().vertex_input().map(input_attribute)
        {
            if layout.0.contains(attribute) {
                attributes.push(attribute.at_shader_location(location));
                defs.push(def.into());
            }
        }
        let added = layout.0.get_layout(&attributes)?;
        // Bevy's mesh pipelines lay out one interleaved vertex buffer.
        if let Some(buffer) = descriptor.vertex.buffers.first_mut() {
            buffer.attributes.extend(added.attributes);
        }
        Ok(())
    }
}

/// skinblend's WGSL library as Bevy's material shaders include it: the palettes and the blend
/// constant declared in the material's bind group, then the library's files (the same text
/// `skinblend shaders` exports and the compute kernels run), then the plugin's per-vertex code.
#[must_use]
pub fn library_wgsl() -> String {
    format!(
        "@group(#{{MATERIAL_BIND_GROUP}}) @binding({LINEAR_PALETTE_BINDING}) var<storage, read> skin_linear_palette: array<SkinAffine>;\n\
         @group(#{{MATERIAL_BIND_GROUP}}) @binding({DUAL_QUAT_PALETTE_BINDING}) var<storage, read> skin_dual_quat_palette: array<SkinDualQuatJoint>;\n\
         @group(#{{MATERIAL_BIND_GROUP}}) @binding({COR_PALETTE_BINDING}) var<storage, read> skin_cor_palette: array<SkinCorJoint>;\n\
         @group(#{{MATERIAL_BIND_GROUP}}) @binding({BLENDED_PALETTE_BINDING}) var<storage, read> skin_blended_palette: array<SkinCorJoint>;\n\
         @group(#{{MATERIAL_BIND_GROUP}}) @binding({DQ_BLEND_BINDING}) var<uniform> skin_dq_blend_constant: vec4<f32>;\n\
         {SKINNING_WGSL}\n{LINEAR_WGSL}\n{DUAL_QUAT_WGSL}\n{COR_WGSL}\n{BLENDED_WGSL}\n{}\n",
        include_str!("shaders/skin_vertex.wgsl")
    )
}

/// Adds the vertex shader to `shaders` under its fixed handle.
pub(crate) fn insert_shaders(shaders: &mut Assets<Shader>) {
    let source = format!(
        "{}\n{}",
        library_wgsl(),
        include_str!("shaders/vertex.wgsl")
    );
    // Inserting under a fixed id cannot fail for a uuid handle; a failure would only mean the
    // shader is missing, which Bevy reports when it compiles the pipeline.
    let _ = shaders.insert(
        VERTEX_SHADER.id(),
        Shader::from_wgsl(source, "skinblend_bevy/vertex.wgsl"),
    );
}
