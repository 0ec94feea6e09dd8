//! skinblend in Bevy: dual quaternion (DQS), centers-of-rotation (CoR) and blended (LBS and DQS
//! mixed per vertex, [`SkinningMethod::Blended`] with the file's `_SKINBLEND_DQ_BLEND` or a
//! [`DqBlend`]) skinning for the skinned meshes Bevy's own glTF loader loads, CPU-posed
//! vertices on demand and bounds that follow the animation (so frustum culling sees the mesh
//! where it is drawn), and up to 8 influences and more than 256 joints per skin.
//!
//! # Use
//! ```no_run
//! use bevy::prelude::*;
//! use skinblend_bevy::{SkinblendPlugin, SkinningMethod};
//!
//! fn setup(mut commands: Commands, assets: Res<AssetServer>) {
//!     commands.spawn((
//!         WorldAssetRoot(assets.load(GltfAssetLabel::Scene(0).from_asset("Fox.glb"))),
//!         SkinningMethod::DualQuaternion, // every skinned mesh below: DQS, shadows included
//!     ));
//! }
//!
//! App::new()
//!     .add_plugins((DefaultPlugins, SkinblendPlugin))
//!     .add_systems(Startup, setup)
//!     .run();
//! ```
//!
//! # What the plugin does to an entity
//! A skinned mesh entity (Bevy's `SkinnedMesh`) at or below an entity with a
//! [`SkinningMethod`] is taken over, once its mesh, material and inverse bind matrices are
//! loaded:
//! - its `Mesh3d` becomes a copy of the mesh (made once per mesh asset, shared by every entity
//!   that draws it) with `JOINTS_0`/`WEIGHTS_0` moved to skinblend's attributes
//!   ([`ATTRIBUTE_SKINBLEND_JOINTS_0`], ...), with `JOINTS_1`/`WEIGHTS_1`, `_SKINBLEND_COR` and
//!   `_SKINBLEND_DQ_BLEND` from the file when it has them (Bevy's loader drops them; the
//!   plugin's glTF extension handler reads them during the same load). The asset Bevy loaded
//!   is not changed.
//! - its `MeshMaterial3d<StandardMaterial>` becomes a [`SkinblendMaterial`] (the same
//!   `StandardMaterial`, extended with skinblend's vertex shaders for the main pass, the
//!   prepass and the shadow maps: every pass draws the same skinned mesh);
//! - its `SkinnedMesh` moves into [`SkinblendSkinned`] (Bevy's own skinning, and its 256-joint
//!   limit, no longer see it) and it gets a `MeshTag` (its joints' offset in the palette
//!   buffer: the plugin owns the tag of the entities it skins) and an `Aabb` the plugin keeps
//!   around the posed mesh (`NoAutoAabb`): from the joints (no vertex posed), or, under a
//!   [`CpuPose`], the posed vertices' own bounds; under a [`CpuPose`] (or
//!   [`CpuPoseNormals`]), a [`PosedMesh`]; under a [`PosedPicking`], a [`PosedMesh`] and a
//!   `SimplifiedMesh` with the posed positions, so Bevy's mesh picking hits the mesh where it
//!   is drawn.
//!
//! Remove the [`SkinningMethod`] and all of that is given back. A mesh the plugin refuses
//! (morph targets, a material that is not a `StandardMaterial`, more than 65,535 joints, data
//! the core rejects, blended without valid blend values) is left to Bevy with a warning naming
//! the entity and the limit; nothing panics.
//!
//! # Each frame (`PostUpdate`, after transform propagation, before visibility)
//! Skin matrices `mesh_from_bind = mesh_from_world · world_from_joint · joint_from_bind` (the
//! mesh entity's local space, so the vertex shader then applies the entity's own transform as
//! for any mesh), prepared by [`skinblend::prepare`] for the method (the core's rigid/residual
//! split with each joint's bind origin as the residual's center, as `skinblend pose` does),
//! bounded (from the joints, or posed on the CPU by the core's kernels where asked; in
//! parallel over entities), converted to skinblend-gpu's joint layouts and uploaded in one
//! buffer per method.
//!
//! # Conventions
//! As skinblend: column vectors, `v' = M v`; quaternions `(x, y, z, w)`; metres; glTF's
//! right-handed +Y up (Bevy's too).
#![warn(missing_docs)]

mod cache;
mod dq_blend;
mod frame;
mod gltf_extras;
mod joint_bounds;
mod material;
mod mesh_data;
mod method;
mod picking;
mod pose;
mod rotation_centers;
mod skinned;
mod takeover;
mod upload;

use bevy::camera::visibility::VisibilitySystems;
use bevy::gltf::extensions::GltfExtensionHandlers;
use bevy::pbr::MaterialPlugin;
use bevy::prelude::*;
use bevy::transform::TransformSystems;

pub use gltf_extras::{SkinblendGltfExtras, SkinblendPrimitiveExtras};
pub use material::{
    library_wgsl, SkinblendExtension, SkinblendMaterial, SkinblendMaterialKey,
    BLENDED_PALETTE_BINDING, COR_PALETTE_BINDING, DQ_BLEND_BINDING, DUAL_QUAT_PALETTE_BINDING,
    LINEAR_PALETTE_BINDING, VERTEX_SHADER,
};
pub use mesh_data::{
    prepare_mesh, MeshRefusal, PreparedMesh, ATTRIBUTE_SKINBLEND_DQ_BLEND,
    ATTRIBUTE_SKINBLEND_JOINTS_0, ATTRIBUTE_SKINBLEND_JOINTS_1,
    ATTRIBUTE_SKINBLEND_ROTATION_CENTER, ATTRIBUTE_SKINBLEND_WEIGHTS_0,
    ATTRIBUTE_SKINBLEND_WEIGHTS_1, MAX_INFLUENCES,
};
pub use method::{CpuPose, CpuPoseNormals, DqBlend, PosedPicking, SkinningMethod};
pub use pose::{pose_into, PosedMesh, BOUNDS_PADDING_RELATIVE};
pub use skinned::SkinblendSkinned;

/// The plugin: add it after Bevy's `DefaultPlugins` (or after `PbrPlugin` and `GltfPlugin`).
#[derive(Debug, Default, Clone, Copy)]
pub struct SkinblendPlugin;

/// The plugin's system sets, in `PostUpdate`, in this order.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkinblendSystems {
    /// Taking over skinned entities and giving them back; method changes; centers of rotation.
    Attach,
    /// Palettes, bounds, CPU poses where asked, the upload and posed picking meshes; after
    /// `TransformSystems::Propagate`, before `VisibilitySystems::CheckVisibility`.
    Pose,
}

impl Plugin for SkinblendPlugin {
    fn build(&self, app: &mut App) {
        let extras = SkinblendGltfExtras::default();
        app.init_resource::<GltfExtensionHandlers>();
        app.world_mut()
            .resource_mut::<GltfExtensionHandlers>()
            .0
            .write_blocking()
            .push(Box::new(gltf_extras::SkinblendGltfHandler {
                extras: extras.clone(),
            }));
        app.insert_resource(extras)
            .register_type::<SkinningMethod>()
            .register_type::<DqBlend>()
            .register_type::<CpuPose>()
            .register_type::<CpuPoseNormals>()
            .register_type::<PosedPicking>()
            .add_plugins(MaterialPlugin::<SkinblendMaterial>::default());
        let mut shaders = app.world_mut().resource_mut::<Assets<Shader>>();
        material::insert_shaders(&mut shaders);
        app.configure_sets(
            PostUpdate,
            (SkinblendSystems::Attach, SkinblendSystems::Pose)
                .chain()
                .after(TransformSystems::Propagate)
                .before(VisibilitySystems::CheckVisibility),
        )
        .add_systems(
            PostUpdate,
            (
                (takeover::take_over, takeover::follow_methods)
                    .chain()
                    .in_set(SkinblendSystems::Attach),
                (
                    frame::update_poses,
                    upload::upload_palettes,
                    picking::update_picking_meshes,
                )
                    .chain()
                    .in_set(SkinblendSystems::Pose),
            ),
        );
    }

    fn finish(&self, app: &mut App) {
        app.init_resource::<cache::SkinblendCache>();
    }
}
