//! CPU posing as the plugin does it, on the sample models loaded by Bevy's own glTF loader
//! (no GPU needed: Bevy's renderer is off):
//! - the plugin's mesh data (from Bevy's mesh) posed under the palette `skinblend pose` uses
//!   equals `skinblend pose`'s vertices to the bit, every method, several times of the
//!   first animation (blended: a constant blend value, and Fox with `_SKINBLEND_DQ_BLEND`
//!   written by skinblend-gltf, read by the plugin's glTF handler);
//! - the plugin's own per-frame bounds (joints' `GlobalTransform`s from Bevy's animation)
//!   contain every posed vertex, frame after frame, with each method, from the joints alone or
//!   from a CPU pose asked for with `CpuPose` (the palettes themselves: `palettes.rs`).

mod support;

use std::path::{Path, PathBuf};

use bevy::asset::LoadState;
use bevy::camera::primitives::Aabb;
use bevy::prelude::*;
use skinblend::{prepare, Method};
use skinblend_bevy::{
    pose_into, prepare_mesh, CpuPose, DqBlend, PosedMesh, SkinblendGltfExtras, SkinblendSkinned,
    SkinningMethod,
};
use skinblend_gltf::{Model, SceneOptions, SceneSkinner};

/// Plugin against `skinblend pose` where Bevy's loader un-indexed a primitive (one without
/// normals, SimpleSkin): the same vertex skinned at another place in the kernels' blocks of
/// eight, or in the scalar tail, with another summation order: a few f32 ulps of the mesh's
/// size. Everywhere else the comparison is bit for bit.
const REORDERED_REL: f32 = 1e-6;

/// Blended's value for every vertex of a file without `_SKINBLEND_DQ_BLEND` (the plugin's
/// `DqBlend`, `skinblend pose --dq-blend`): strictly between 0 and 1, so both blends run.
const CONSTANT_DQ_BLEND: f32 = 0.5;

/// The joints the Fox written with blend values takes DQS on (by skinblend-gltf's joint rule,
/// as `skinblend dq-blend --dq-joints` does): its neck and head.
const FOX_DQ_JOINTS: [&str; 2] = ["b_Neck_04", "b_Head_05"];

/// Times (seconds) at which to compare: start, three inner points and the end of animation 0;
/// the rest pose when the model has no animation.
fn times(model: &Model) -> Vec<Option<(usize, f32)>> {
    match model.animations().first() {
        None => vec![None],
        Some(animation) => {
            let (start, end) = (animation.start_s, animation.end_s);
            (0..5)
                .map(|i| Some((0, start + (end - start) * i as f32 / 4.0)))
                .collect()
        }
    }
}

fn sample_paths() -> Option<(PathBuf, Vec<&'static str>)> {
    let dir = skinblend_testkit::models_dir()?;
    Some((dir, skinblend_testkit::SAMPLES.to_vec()))
}

/// The plugin's CPU pose (its mesh data from Bevy's loaded mesh, skinned by `pose_into`) under
/// `skinblend pose`'s palette equals `skinblend pose` (the scene skinner) bit for bit.
fn cpu_pose_equals_skinblend_pose_on_samples() {
    let Some((dir, samples)) = sample_paths() else {
        return;
    };
    let mut app = support::app_without_renderer(&dir);
    for sample in samples {
        pose_equals_skinblend_pose(&mut app, &dir, sample);
    }
}

/// Fox written with `_SKINBLEND_DQ_BLEND` (skinblend-gltf's joint rule on its neck and head):
/// the plugin's glTF handler reads the values skinblend-gltf reads, to the bit, the plugin's
/// mesh carries them (CPU mesh and render mesh), and the blended CPU pose equals `skinblend
/// pose`'s to the bit.
fn blend_values_from_the_file_pose_as_skinblend_pose() {
    let Some(models) = skinblend_testkit::models_dir() else {
        return;
    };
    let scratch = skinblend_testkit::ScratchDir::new("skinblend-bevy-dq-blend");
    let mut model = Model::open(models.join("Fox/Fox.glb")).expect("Fox loads");
    model
        .set_dq_blend_from_joints(&FOX_DQ_JOINTS)
        .expect("Fox has a neck and a head");
    let file = scratch.path().join("fox-blend.glb");
    skinblend_gltf::export::write_skinning_attributes(&model, &file).expect("write the file");
    let written = Model::open(&file).expect("the written file loads");
    let expected = written.meshes()[0].primitives[0]
        .dq_blend
        .clone()
        .expect("skinblend-gltf reads the values back");
    assert!(
        expected.iter().any(|&b| b > 0.0 && b < 1.0) && expected.contains(&0.0),
        "the rule gives LBS, DQS and blends between: the test sees each"
    );
    let mut app = support::app_without_renderer(scratch.path());
    let server = app.world().resource::<AssetServer>().clone();
    let handle: Handle<Mesh> = server.load("fox-blend.glb#Mesh0/Primitive0");
    assert!(
        support::step_until(&mut app, |app| app
            .world()
            .resource::<Assets<Mesh>>()
            .contains(&handle)),
        "Bevy did not load the written Fox"
    );
    let world = app.world();
    let extras = world
        .resource::<SkinblendGltfExtras>()
        .of_mesh(&handle)
        .expect("the plugin's handler kept the file's extras");
    let read = extras
        .dq_blend
        .as_ref()
        .expect("the handler read the values");
    assert!(
        read.iter()
            .map(|b| b.to_bits())
            .eq(expected.iter().map(|b| b.to_bits())),
        "the handler's values are skinblend-gltf's"
    );
    let mesh = world.resource::<Assets<Mesh>>().get(&handle).expect("mesh");
    let prepared = prepare_mesh(mesh, written.skins()[0].joints.len(), Some(&extras))
        .expect("plugin accepts the mesh");
    assert_eq!(prepared.blend_values_from_file, Ok(true));
    assert_eq!(
        prepared.cpu.blend_values(),
        Some(skinblend::BlendValues::PerVertex(&expected))
    );
    assert!(prepared
        .render_mesh
        .attribute(skinblend_bevy::ATTRIBUTE_SKINBLEND_DQ_BLEND)
        .is_some());
    pose_equals_skinblend_pose(&mut app, scratch.path(), "fox-blend.glb");
}

/// The plugin's CPU pose of `sample` (in `dir`, the app's asset folder) against `skinblend
/// pose`'s, every method the plugin offers, bit for bit (see the module docs); blended takes
/// the file's values, else [`CONSTANT_DQ_BLEND`] on both sides.
fn pose_equals_skinblend_pose(app: &mut App, dir: &Path, sample: &str) {
    let model = Model::open(dir.join(sample)).expect("sample loads in skinblend-gltf");
    // Bevy's meshes (and the plugin's extras) of every skinned primitive.
    let server = app.world().resource::<AssetServer>().clone();
    let mut handles = Vec::new();
    for node in model.skinned_nodes() {
        let mesh = model.nodes()[node].mesh.expect("skinned node has a mesh");
        for p in 0..model.meshes()[mesh].primitives.len() {
            let handle: Handle<Mesh> = server.load(format!("{sample}#Mesh{mesh}/Primitive{p}"));
            handles.push((node, mesh, p, handle));
        }
    }
    let loaded = support::step_until(app, |app| {
        let server = app.world().resource::<AssetServer>();
        handles.iter().all(|(.., h)| {
            matches!(
                server.load_state(h),
                LoadState::Loaded | LoadState::Failed(_)
            )
        })
    });
    assert!(loaded, "{sample}: Bevy did not load its meshes");
    // The methods the plugin offers.
    for method in SkinningMethod::ALL.map(SkinningMethod::core) {
        let options = SceneOptions {
            dq_blend: Some(CONSTANT_DQ_BLEND),
            ..SceneOptions::with_method(method)
        };
        let mut skinner = SceneSkinner::cpu(&model, options).expect("scene skinner");
        for time in times(&model) {
            let pose = match time {
                None => model.rest_pose(),
                Some((animation, t)) => model.pose(Some(animation), t).expect("pose"),
            };
            let posed = skinner.skin(&pose).expect("skinblend pose").to_vec();
            for (node, mesh, p, handle) in &handles {
                let world = app.world();
                let bevy_mesh = world
                    .resource::<Assets<Mesh>>()
                    .get(handle)
                    .expect("Bevy's mesh");
                let extras = world.resource::<SkinblendGltfExtras>().of_mesh(handle);
                let skin = model.nodes()[*node].skin.expect("skinned node has a skin");
                let joints = model.skins()[skin].joints.len();
                let prepared_mesh = prepare_mesh(bevy_mesh, joints, extras.as_deref())
                    .expect("plugin accepts the mesh");
                let mut cpu = (*prepared_mesh.cpu).clone();
                if method == Method::Blended && cpu.blend_values().is_none() {
                    // What the plugin does for a DqBlend (`dq_blend::cpu_mesh_for`).
                    cpu = cpu
                        .with_uniform_blend_value(CONSTANT_DQ_BLEND)
                        .expect("a value in [0, 1]");
                }
                let reference = posed
                    .iter()
                    .find(|n| n.node == *node)
                    .map(|n| &n.primitives[*p])
                    .expect("skinblend pose skinned the node");
                if method == Method::CenterOfRotation && cpu.rotation_centers().is_none() {
                    // The same centers the scene skinner computed (the plugin computes
                    // them the same way, in the background).
                    let primitive = &model.meshes()[*mesh].primitives[*p];
                    let influences = primitive.influences.as_ref().expect("skinned primitive");
                    let centers = skinblend_gltf::primitive_rotation_centers(
                        primitive,
                        influences,
                        &SceneOptions::default().centers,
                        &mut |_| {},
                    )
                    .expect("centers")
                    .centers;
                    // Bevy un-indexed a primitive without normals: each of its vertices
                    // takes its file vertex's center (the plugin, computing centers on
                    // Bevy's un-indexed mesh in the app, finds others: no triangle there
                    // shares a vertex).
                    let centers = if centers.len() == cpu.vertex_count() {
                        centers
                    } else {
                        let accessor = model.json()["meshes"][*mesh]["primitives"][*p]["indices"]
                            .as_u64()
                            .expect("an un-indexed copy of an indexed primitive");
                        let indices = model.read_accessor(accessor as usize).expect("indices");
                        indices
                            .values
                            .iter()
                            .map(|&i| centers[i as usize])
                            .collect()
                    };
                    cpu = cpu.with_rotation_centers(centers).expect("centers fit");
                }
                let palette = model.palette(&pose, skin).expect("palette");
                let prepared = prepare(&palette, Some(&model.skins()[skin].joint_centers), method)
                    .expect("prepare");
                let mut plugin = PosedMesh::default();
                // Normals where the file has them (a loader's own flat normals are its own;
                // and the kernels' positions-only variant rounds as skinblend pose's does
                // for a primitive without normals).
                let file_has_normals = model.meshes()[*mesh].primitives[*p].normals.is_some();
                pose_into(&cpu, &prepared, &mut plugin, file_has_normals).expect("plugin pose");
                let label = format!("{sample} node {node} primitive {p} {method:?} at {time:?}");
                // One of the two loaders may un-index a primitive that has no normals (to
                // give it flat ones; Bevy's does): the un-indexed copy's vertex i is then
                // the file's vertex indices[i], from the file's own index list.
                let plugin_count = plugin.positions().len();
                let reference_count = reference.positions.len();
                let file_indices = || -> Vec<usize> {
                    let accessor = model.json()["meshes"][*mesh]["primitives"][*p]["indices"]
                        .as_u64()
                        .expect("an un-indexed copy of an indexed primitive");
                    let data = model.read_accessor(accessor as usize).expect("indices");
                    data.values.iter().map(|&i| i as usize).collect()
                };
                // (plugin vertex, skinblend pose vertex) pairs of the same file vertex.
                let pairs: Vec<(usize, usize)> = if plugin_count == reference_count {
                    (0..plugin_count).map(|v| (v, v)).collect()
                } else {
                    let indices = file_indices();
                    if indices.len() == plugin_count {
                        indices.iter().enumerate().map(|(v, &w)| (v, w)).collect()
                    } else {
                        assert_eq!(indices.len(), reference_count, "{label}: vertex count");
                        indices.iter().enumerate().map(|(w, &v)| (v, w)).collect()
                    }
                };
                // Same layout: bit for bit. Un-indexed: a vertex sits at another place in
                // the kernels' blocks of eight (or in the scalar tail), which rounds
                // differently: within REORDERED_REL of the mesh's size.
                let size = reference
                    .positions
                    .iter()
                    .fold(0f32, |m, p| m.max(p.abs().max_element()))
                    .max(f32::MIN_POSITIVE);
                let same_layout = plugin_count == reference_count;
                for &(v, w) in &pairs {
                    let (a, b) = (plugin.positions()[v], reference.positions[w]);
                    let ok = if same_layout {
                        a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits)
                    } else {
                        (Vec3::from_array(a.to_array()) - Vec3::from_array(b.to_array()))
                            .abs()
                            .max_element()
                            <= REORDERED_REL * size
                    };
                    assert!(
                        ok,
                        "{label}: vertex {v}: plugin {a:?}, skinblend pose {b:?}"
                    );
                }
                if let (Some(ours), Some(theirs), true) =
                    (plugin.normals(), reference.normals.as_ref(), same_layout)
                {
                    for &(v, w) in &pairs {
                        let (a, b) = (ours[v], theirs[w]);
                        assert!(
                            a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits),
                            "{label}: normal {v}: plugin {a:?}, skinblend pose {b:?}"
                        );
                    }
                }
            }
        }
    }
}

/// How much larger than the posed vertices' box the bounds from joints may be (ratio of the
/// diagonals), over Fox's run: each joint's box holds every vertex the joint influences, and
/// DQS and CoR add the reach their blends may have beyond LBS (see `joint_bounds.rs`); far
/// larger would make frustum culling keep what is off screen.
const JOINT_BOUNDS_LOOSENESS_MAX: f32 = 3.0;

/// Spawns a Fox playing its run clip with `method`, with or without a CPU pose.
fn spawn_fox(app: &mut App, method: SkinningMethod, cpu_pose: bool, x_m: f32) -> Entity {
    let server = app.world().resource::<AssetServer>().clone();
    let mut fox = app.world_mut().spawn((
        WorldAssetRoot(server.load(GltfAssetLabel::Scene(0).from_asset("Fox/Fox.glb"))),
        Transform::from_xyz(x_m, 0.0, 0.0),
        method,
        // Blended's values (Fox has none); the other methods do not read them.
        DqBlend(CONSTANT_DQ_BLEND),
    ));
    if cpu_pose {
        fox.insert(CpuPose);
    }
    fox.id()
}

/// Every skinned mesh entity below `root`.
fn skinned_below(world: &mut World, root: Entity) -> Vec<Entity> {
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(entity) = stack.pop() {
        if world.get::<SkinblendSkinned>(entity).is_some() {
            found.push(entity);
        }
        if let Some(children) = world.get::<Children>(entity) {
            stack.extend(children.iter());
        }
    }
    found
}

/// Under Bevy's animation (Fox's run), with each method: without a CPU pose the `Aabb` (from
/// the joints) contains every vertex the kernels pose under the entity's own palette this frame
/// and is at most [`JOINT_BOUNDS_LOOSENESS_MAX`] times their box; with a [`CpuPose`] the
/// `Aabb` is the posed vertices' bounds. The pose moves (the animation reaches the plugin), and
/// only the entity that asked has a [`PosedMesh`].
fn bounds_contain_posed_vertices_over_animation() {
    let Some((dir, _)) = sample_paths() else {
        return;
    };
    let mut app = support::app_without_renderer(&dir);
    let run = support::fox_run_graph(&mut app);
    app.world_mut().insert_resource(run);
    app.add_systems(Update, support::play_when_ready);
    for (m, method) in SkinningMethod::ALL.into_iter().enumerate() {
        let from_joints = spawn_fox(&mut app, method, false, 3.0 * m as f32);
        let posed_fox = spawn_fox(&mut app, method, true, 3.0 * m as f32 + 1.5);
        let ready = support::step_until(&mut app, |app| {
            let world = app.world_mut();
            let (a, b) = (
                skinned_below(world, from_joints),
                skinned_below(world, posed_fox),
            );
            let centers_ready = |e: &Entity| {
                method != SkinningMethod::CenterOfRotation
                    || world
                        .get::<SkinblendSkinned>(*e)
                        .and_then(|s| s.cpu_mesh().rotation_centers())
                        .is_some_and(|c| c.iter().any(|c| c.is_finite()))
            };
            !a.is_empty()
                && !b.is_empty()
                && a.iter().chain(&b).all(centers_ready)
                && b.iter().all(|e| {
                    world
                        .get::<PosedMesh>(*e)
                        .is_some_and(|p| p.frames_posed() > 0)
                })
        });
        assert!(ready, "{method:?}: the plugin never posed the foxes");
        let mut first: Option<Vec<Vec3>> = None;
        let mut moved = false;
        let mut looseness = 0f32;
        for frame in 0..60 {
            app.update();
            std::thread::sleep(std::time::Duration::from_millis(5));
            let world = app.world_mut();
            for entity in skinned_below(world, from_joints) {
                assert!(
                    world.get::<PosedMesh>(entity).is_none(),
                    "{method:?}: posed on the CPU without asking"
                );
                let state = world.get::<SkinblendSkinned>(entity).expect("skinned");
                let prepared = state.prepared_palette().expect("a palette this frame");
                let mut posed = PosedMesh::default();
                pose_into(state.cpu_mesh(), prepared, &mut posed, false).expect("pose");
                let aabb = world.get::<Aabb>(entity).expect("an Aabb");
                let (min, max) = (aabb.min(), aabb.max());
                for (v, p) in posed.positions().iter().enumerate() {
                    let p = bevy::math::Vec3A::from(*p);
                    assert!(
                        p.cmpge(min).all() && p.cmple(max).all(),
                        "{method:?}, frame {frame}: vertex {v} at {p:?} outside the bounds from joints {min:?}..{max:?}"
                    );
                }
                let tight = posed.bounds().expect("vertices");
                let ratio = (max - min).length() / (tight.max() - tight.min()).length();
                looseness = looseness.max(ratio);
                match &first {
                    None => first = Some(posed.positions().to_vec()),
                    Some(first) => moved |= first.as_slice() != posed.positions(),
                }
            }
            for entity in skinned_below(world, posed_fox) {
                let posed = world
                    .get::<PosedMesh>(entity)
                    .expect("asked for a CPU pose");
                assert_eq!(posed.method(), Some(method));
                let aabb = world.get::<Aabb>(entity).expect("an Aabb");
                assert_eq!(
                    Some(*aabb),
                    posed.bounds(),
                    "{method:?}, frame {frame}: the Aabb is not the posed vertices' bounds"
                );
            }
        }
        eprintln!(
            "{method:?}: bounds from joints at most {looseness:.2} times the posed box's diagonal"
        );
        assert!(
            looseness <= JOINT_BOUNDS_LOOSENESS_MAX,
            "{method:?}: bounds from joints {looseness:.2} times the posed box (at most {JOINT_BOUNDS_LOOSENESS_MAX})"
        );
        assert!(
            moved,
            "{method:?}: the pose never changed: the animation did not reach the plugin"
        );
        app.world_mut().despawn(from_joints);
        app.world_mut().despawn(posed_fox);
    }
}

skinblend_testkit::test_main!(
    cpu_pose_equals_skinblend_pose_on_samples,
    blend_values_from_the_file_pose_as_skinblend_pose,
    bounds_contain_posed_vertices_over_animation
);
