//! What the plugin refuses, as a user meets it: a skinned mesh beyond a limit stays with Bevy's
//! own skinning, with one logged warning that names the entity and the limit, and nothing
//! panics. No GPU needed (Bevy's renderer is off); the warnings are read from Bevy's log
//! through a tracing layer.

mod support;

use std::sync::Mutex;

use bevy::asset::RenderAssetUsages;
use bevy::log::tracing::field::{Field, Visit};
use bevy::log::tracing::{Event, Level, Subscriber};
use bevy::log::tracing_subscriber::layer::{Context, Layer};
use bevy::log::{BoxedLayer, LogPlugin};
use bevy::mesh::morph::MorphAttributes;
use bevy::mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;
use skinblend_bevy::{
    prepare_mesh, DqBlend, SkinblendMaterial, SkinblendPrimitiveExtras, SkinblendSkinned,
    SkinningMethod, ATTRIBUTE_SKINBLEND_DQ_BLEND,
};

/// Every warning logged in this process, as its message.
static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records the message of each WARN event into [`WARNINGS`].
struct WarningRecorder;

impl<S: Subscriber> Layer<S> for WarningRecorder {
    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        if *event.metadata().level() != Level::WARN {
            return;
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        if let Ok(mut warnings) = WARNINGS.lock() {
            warnings.push(message.0);
        }
    }
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

fn recorder(_app: &mut App) -> Option<BoxedLayer> {
    Some(Box::new(WarningRecorder))
}

/// A skinned triangle: three vertices on joint `joint` (weight 1).
fn triangle(joint: u16) -> Mesh {
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(
        Mesh::ATTRIBUTE_POSITION,
        vec![[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
    )
    .with_inserted_attribute(
        Mesh::ATTRIBUTE_JOINT_INDEX,
        bevy::mesh::VertexAttributeValues::Uint16x4(vec![[joint, 0, 0, 0]; 3]),
    )
    .with_inserted_attribute(
        Mesh::ATTRIBUTE_JOINT_WEIGHT,
        vec![[1.0f32, 0.0, 0.0, 0.0]; 3],
    )
    .with_inserted_indices(Indices::U16(vec![0, 1, 2]))
}

/// Spawns a skinned entity under `SkinningMethod::DualQuaternion`: `mesh` on `joints` new
/// joint entities, with `inverse_bind_matrices` of them, and a `StandardMaterial` or none.
fn spawn_skinned(
    app: &mut App,
    mesh: Mesh,
    joints: usize,
    inverse_bind_matrices: usize,
    standard_material: bool,
) -> Entity {
    let world = app.world_mut();
    let mesh = world.resource_mut::<Assets<Mesh>>().add(mesh);
    let inverse_bindposes = world
        .resource_mut::<Assets<SkinnedMeshInverseBindposes>>()
        .add(SkinnedMeshInverseBindposes::from(vec![
            Mat4::IDENTITY;
            inverse_bind_matrices
        ]));
    let joints: Vec<Entity> = world
        .spawn_batch(std::iter::repeat_n(Transform::default(), joints))
        .collect();
    let mut entity = world.spawn((
        Mesh3d(mesh),
        SkinnedMesh {
            inverse_bindposes,
            joints,
        },
        SkinningMethod::DualQuaternion,
        Transform::default(),
    ));
    if standard_material {
        let material = StandardMaterial::default();
        let handle = entity.world_scope(|world| {
            world
                .resource_mut::<Assets<StandardMaterial>>()
                .add(material)
        });
        entity.insert(MeshMaterial3d(handle));
    }
    entity.id()
}

/// `triangle(1)` under `SkinningMethod::Blended`, with `dq_blend` when given.
fn spawn_blended(app: &mut App, dq_blend: Option<f32>) -> Entity {
    let entity = spawn_skinned(app, triangle(1), 2, 2, true);
    let mut entity_mut = app.world_mut().entity_mut(entity);
    entity_mut.insert(SkinningMethod::Blended);
    if let Some(value) = dq_blend {
        entity_mut.insert(DqBlend(value));
    }
    entity
}

/// The entity's warnings so far.
fn warnings_about(entity: Entity) -> Vec<String> {
    let named = format!("entity {entity} ");
    let warnings = WARNINGS.lock().expect("warnings");
    warnings
        .iter()
        .filter(|w| w.contains(&named))
        .cloned()
        .collect()
}

/// The refusals a user can meet, each left to Bevy with one warning naming the entity and the
/// limit (however many frames pass), while a good mesh beside them is skinned; blended without
/// blend values is given its values later and skinned, and a skinned entity switched to
/// blended without values goes back to Bevy with one warning.
fn refused_meshes_warn_once_and_stay_with_bevy() {
    let folder = std::env::temp_dir();
    let mut app = support::app_with(support::test_plugins(&folder, false).set(LogPlugin {
        custom_layer: recorder,
        ..default()
    }));
    let mut morphed = triangle(0);
    morphed.set_morph_targets(vec![MorphAttributes::default(); 3]);
    // (entity, what the warning must say besides the entity)
    let cases = [
        (
            spawn_skinned(&mut app, triangle(0), 65_536, 65_536, true),
            "its skin has 65536 joints, the limit is 65535",
        ),
        (
            spawn_skinned(&mut app, triangle(0), 2, 2, false),
            "its material is not a StandardMaterial",
        ),
        (
            spawn_skinned(&mut app, triangle(0), 2, 1, true),
            "1 inverse bind matrices for 2 joints",
        ),
        (
            spawn_skinned(&mut app, triangle(5), 2, 2, true),
            "joint index 5 is out of range (joint count 2)",
        ),
        (
            spawn_skinned(&mut app, morphed, 2, 2, true),
            "morph targets",
        ),
        (
            spawn_blended(&mut app, None),
            "no _SKINBLEND_DQ_BLEND attribute and no DqBlend",
        ),
        (
            spawn_blended(&mut app, Some(f32::NAN)),
            "its DqBlend is NaN",
        ),
        (
            spawn_blended(&mut app, Some(1.5)),
            "its DqBlend is 1.5; a blend value must be in [0, 1]",
        ),
    ];
    let accepted = spawn_skinned(&mut app, triangle(1), 2, 2, true);
    let accepted_blended = spawn_blended(&mut app, Some(0.25));
    for _ in 0..10 {
        app.update();
    }
    let warnings = WARNINGS.lock().expect("warnings").clone();
    for (entity, limit) in cases {
        let named = format!("entity {entity} ");
        let about: Vec<&String> = warnings.iter().filter(|w| w.contains(&named)).collect();
        assert_eq!(
            about.len(),
            1,
            "entity {entity}: one warning expected, got {about:?}"
        );
        assert!(
            about[0].contains(limit),
            "entity {entity}: the warning {:?} does not say {limit:?}",
            about[0]
        );
        let world = app.world();
        assert!(
            world.get::<SkinnedMesh>(entity).is_some()
                && world.get::<SkinblendSkinned>(entity).is_none(),
            "entity {entity} was not left to Bevy's skinning"
        );
    }
    for good in [accepted, accepted_blended] {
        assert!(
            app.world().get::<SkinblendSkinned>(good).is_some(),
            "the good mesh {good} beside them was not skinned"
        );
        assert!(
            warnings_about(good).is_empty(),
            "a warning about the good mesh: {warnings:?}"
        );
    }

    // Blended without values, given a DqBlend: skinned, with no further warning.
    let (no_values, _) = cases[cases.len() - 3];
    app.world_mut().entity_mut(no_values).insert(DqBlend(0.5));
    for _ in 0..5 {
        app.update();
    }
    assert!(
        app.world().get::<SkinblendSkinned>(no_values).is_some(),
        "blended with a DqBlend added later was not skinned"
    );
    assert_eq!(warnings_about(no_values).len(), 1, "one warning in all");

    // A DqBlend changed every frame (a slider): each value needs its own material, and the
    // plugin keeps at most 64 of them (`BLEND_CONSTANT_MATERIALS_KEPT`), so the materials stay
    // far below the 200 values; keeping every one would leave over 200.
    for step in 0..200u16 {
        app.world_mut()
            .entity_mut(no_values)
            .insert(DqBlend(f32::from(step) / 200.0));
        app.update();
    }
    assert!(
        app.world().get::<SkinblendSkinned>(no_values).is_some(),
        "blended with a changing DqBlend was not skinned"
    );
    let materials = app.world().resource::<Assets<SkinblendMaterial>>().len();
    assert!(
        materials <= 100,
        "{materials} SkinblendMaterials after 200 DqBlend values: the plugin keeps them all"
    );

    // A skinned entity switched to blended without values: given back, one warning.
    app.world_mut()
        .entity_mut(accepted)
        .insert(SkinningMethod::Blended);
    for _ in 0..10 {
        app.update();
    }
    let world = app.world();
    assert!(
        world.get::<SkinnedMesh>(accepted).is_some()
            && world.get::<SkinblendSkinned>(accepted).is_none(),
        "entity {accepted}, switched to blended without values, was not given back to Bevy"
    );
    let about = warnings_about(accepted);
    assert!(
        about.len() == 1 && about[0].contains("add a DqBlend"),
        "entity {accepted}: one warning saying what to do expected, got {about:?}"
    );
}

/// A file's `_SKINBLEND_DQ_BLEND` as the plugin's glTF handler hands it over: valid values are
/// carried by both meshes; a value outside `[0, 1]` (or NaN, or another count than the
/// vertices) is named, and the mesh is still accepted (only blended refuses it, when an entity
/// asks for blended: `dq_blend::blend_source`) without the values.
fn file_blend_values_are_checked_and_carried() {
    let with_values = |dq_blend: Vec<f32>| {
        let extras = SkinblendPrimitiveExtras {
            dq_blend: Some(dq_blend),
            ..Default::default()
        };
        prepare_mesh(&triangle(0), 1, Some(&extras)).expect("the mesh is accepted")
    };
    let good = with_values(vec![0.0, 0.5, 1.0]);
    assert_eq!(good.blend_values_from_file, Ok(true));
    assert_eq!(
        good.cpu.blend_values(),
        Some(skinblend::BlendValues::PerVertex(&[0.0, 0.5, 1.0]))
    );
    assert!(good
        .render_mesh
        .attribute(ATTRIBUTE_SKINBLEND_DQ_BLEND)
        .is_some());
    for (values, fault) in [
        (vec![0.5, 1.5, 0.5], "vertex 1"),
        (vec![0.5, f32::NAN, 0.5], "vertex 1"),
        (vec![0.5, 0.5], "expected 3"),
    ] {
        let bad = with_values(values.clone());
        let error = bad
            .blend_values_from_file
            .expect_err("an invalid value is named");
        assert!(
            error.to_string().contains(fault),
            "{values:?}: {error} does not name {fault:?}"
        );
        assert!(bad.cpu.blend_values().is_none(), "{values:?}: not carried");
        assert!(bad
            .render_mesh
            .attribute(ATTRIBUTE_SKINBLEND_DQ_BLEND)
            .is_none());
    }
}

skinblend_testkit::test_main!(
    refused_meshes_warn_once_and_stay_with_bevy,
    file_blend_values_are_checked_and_carried
);
