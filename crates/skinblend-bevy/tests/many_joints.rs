//! Beyond Bevy's limits: a generated glTF file with 300 joints in one skin (Bevy: 256) and 8
//! influences per vertex (`JOINTS_1`/`WEIGHTS_1`; Bevy: 4), loaded by Bevy's loader, posed on
//! the GPU by the plugin with each method and read back as an image, against the vertices the
//! plugin posed on the CPU drawn without skinning.

mod support;

use bevy::prelude::*;
use serde_json::json;
use skinblend_bevy::{DqBlend, SkinblendSkinned, SkinningMethod};
use support::{capture, step};

/// Joints in the skin (Bevy's `MAX_JOINTS` is 256).
const JOINTS: usize = 300;
/// Vertices around each ring of the tube.
const RING_VERTICES: usize = 8;
/// Height of one joint segment, metres.
const SEGMENT_M: f32 = 0.01;
/// The tube's radius, metres.
const RADIUS_M: f32 = 0.15;
/// Image size, pixels, and the orthographic view's height, metres (the 3 m tube fits).
const SIZE_PX: u32 = 256;
const VIEW_M: f32 = 3.4;
/// GPU against the CPU-posed mesh: the positions agree to f32 rounding, so only edge pixels
/// whose coverage flips on it may differ (as in `render.rs`).
const DIFFERENCE_LEVELS: u8 = 12;
const MAX_DIFFERING_PIXELS: u32 = SIZE_PX * SIZE_PX / 500;
/// Blended's value for every vertex (the file has no `_SKINBLEND_DQ_BLEND`): strictly between 0
/// and 1, so the shader runs both blends and interpolates.
const DQ_BLEND: f32 = 0.5;

/// The joints of vertex ring `r`: the 8 nearest joints (clamped to the chain), and their
/// weights, a hat falling off with the distance, normalized.
fn influences(r: usize) -> ([u16; 8], [f32; 8]) {
    let first = r.saturating_sub(3).min(JOINTS - 8);
    let mut joints = [0u16; 8];
    let mut weights = [0f32; 8];
    for s in 0..8 {
        let j = first + s;
        joints[s] = j as u16;
        weights[s] = 5.0 - (j as f32 - r as f32).abs();
    }
    let sum: f32 = weights.iter().map(|w| w.max(0.0)).sum();
    for w in &mut weights {
        *w = w.max(0.0) / sum;
    }
    (joints, weights)
}

/// A GLB: a tube along +Y with one ring of vertices per joint, 300 joints in one skin, each
/// vertex on 8 joints (two sets of four).
fn many_joints_glb() -> Vec<u8> {
    let rings = JOINTS;
    let mut bin: Vec<u8> = Vec::new();
    let push_f32 = |bin: &mut Vec<u8>, v: f32| bin.extend_from_slice(&v.to_le_bytes());
    let (mut min, mut max) = ([f32::MAX; 3], [f32::MIN; 3]);
    // POSITION, NORMAL
    let positions_offset = bin.len();
    for r in 0..rings {
        for k in 0..RING_VERTICES {
            let a = k as f32 / RING_VERTICES as f32 * std::f32::consts::TAU;
            let p = [RADIUS_M * a.cos(), r as f32 * SEGMENT_M, RADIUS_M * a.sin()];
            for i in 0..3 {
                min[i] = min[i].min(p[i]);
                max[i] = max[i].max(p[i]);
                push_f32(&mut bin, p[i]);
            }
        }
    }
    let normals_offset = bin.len();
    for _ in 0..rings {
        for k in 0..RING_VERTICES {
            let a = k as f32 / RING_VERTICES as f32 * std::f32::consts::TAU;
            for v in [a.cos(), 0.0, a.sin()] {
                push_f32(&mut bin, v);
            }
        }
    }
    let mut set_offsets = [[0usize; 2]; 2];
    for (set, offsets) in set_offsets.iter_mut().enumerate() {
        offsets[0] = bin.len();
        for r in 0..rings {
            let (joints, _) = influences(r);
            for _ in 0..RING_VERTICES {
                for s in 0..4 {
                    bin.extend_from_slice(&joints[set * 4 + s].to_le_bytes());
                }
            }
        }
        offsets[1] = bin.len();
        for r in 0..rings {
            let (_, weights) = influences(r);
            for _ in 0..RING_VERTICES {
                for s in 0..4 {
                    push_f32(&mut bin, weights[set * 4 + s]);
                }
            }
        }
    }
    let indices_offset = bin.len();
    let mut index_count = 0;
    for r in 0..rings - 1 {
        for k in 0..RING_VERTICES {
            let a = (r * RING_VERTICES + k) as u32;
            let b = (r * RING_VERTICES + (k + 1) % RING_VERTICES) as u32;
            let (c, d) = (a + RING_VERTICES as u32, b + RING_VERTICES as u32);
            for i in [a, c, b, b, c, d] {
                bin.extend_from_slice(&i.to_le_bytes());
                index_count += 1;
            }
        }
    }
    let ibm_offset = bin.len();
    for j in 0..JOINTS {
        let y = j as f32 * SEGMENT_M;
        for v in [
            1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, -y, 0.0, 1.0,
        ] {
            push_f32(&mut bin, v);
        }
    }
    let end = bin.len();
    let vertex_count = rings * RING_VERTICES;
    let view = |offset: usize, length: usize| json!({"buffer": 0, "byteOffset": offset, "byteLength": length});
    let joint_nodes: Vec<usize> = (1..=JOINTS).collect();
    let mut nodes = vec![json!({"name": "rig", "children": joint_nodes})];
    for j in 0..JOINTS {
        nodes.push(
            json!({"name": format!("joint{j}"), "translation": [0.0, j as f32 * SEGMENT_M, 0.0]}),
        );
    }
    nodes.push(json!({"name": "tube", "mesh": 0, "skin": 0}));
    let document = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, JOINTS + 1]}],
        "nodes": nodes,
        "skins": [{"joints": joint_nodes, "inverseBindMatrices": 7}],
        "meshes": [{"primitives": [{
            "attributes": {"POSITION": 0, "NORMAL": 1, "JOINTS_0": 2, "WEIGHTS_0": 3, "JOINTS_1": 4, "WEIGHTS_1": 5},
            "indices": 6
        }]}],
        "buffers": [{"byteLength": end}],
        "bufferViews": [
            view(positions_offset, normals_offset - positions_offset),
            view(normals_offset, set_offsets[0][0] - normals_offset),
            view(set_offsets[0][0], set_offsets[0][1] - set_offsets[0][0]),
            view(set_offsets[0][1], set_offsets[1][0] - set_offsets[0][1]),
            view(set_offsets[1][0], set_offsets[1][1] - set_offsets[1][0]),
            view(set_offsets[1][1], indices_offset - set_offsets[1][1]),
            view(indices_offset, ibm_offset - indices_offset),
            view(ibm_offset, end - ibm_offset),
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": vertex_count, "type": "VEC3", "min": min, "max": max},
            {"bufferView": 1, "componentType": 5126, "count": vertex_count, "type": "VEC3"},
            {"bufferView": 2, "componentType": 5123, "count": vertex_count, "type": "VEC4"},
            {"bufferView": 3, "componentType": 5126, "count": vertex_count, "type": "VEC4"},
            {"bufferView": 4, "componentType": 5123, "count": vertex_count, "type": "VEC4"},
            {"bufferView": 5, "componentType": 5126, "count": vertex_count, "type": "VEC4"},
            {"bufferView": 6, "componentType": 5125, "count": index_count, "type": "SCALAR"},
            {"bufferView": 7, "componentType": 5126, "count": JOINTS, "type": "MAT4"},
        ],
    });
    skinblend_testkit::glb_bytes(document.to_string().as_bytes(), &bin)
}

/// Bends the chain: every joint turns a little about +Z and twists about +Y, growing along the
/// chain, so every one of the 300 joints (and all 8 influences) moves the mesh.
fn bend_joints(mut transforms: Query<&mut Transform>, skinned: Query<&SkinblendSkinned>) {
    for state in &skinned {
        for (j, joint) in state.joints().iter().enumerate() {
            if let Ok(mut transform) = transforms.get_mut(*joint) {
                let t = j as f32 / JOINTS as f32;
                let y = j as f32 * SEGMENT_M;
                transform.translation = Vec3::new(0.4 * t * t * 3.0, y, 0.0);
                transform.rotation =
                    Quat::from_rotation_z(-0.6 * t) * Quat::from_rotation_y(3.0 * t);
            }
        }
    }
}

fn eight_influences_300_joints_gpu_equals_cpu() {
    if !support::has_gpu() {
        return;
    }
    let dir = skinblend_testkit::ScratchDir::new("skinblend-bevy-many-joints");
    std::fs::write(dir.path().join("tube.glb"), many_joints_glb()).expect("write tube.glb");
    let mut app = support::app(dir.path());
    app.add_systems(Update, bend_joints);
    let target = support::render_target(&mut app, SIZE_PX);
    support::spawn_camera(
        &mut app,
        &target,
        Vec3::new(0.5, 1.5, 6.0),
        Vec3::new(0.5, 1.5, 0.0),
        VIEW_M,
    );
    app.world_mut().spawn((
        DirectionalLight::default(),
        Transform::from_xyz(1.0, 2.0, 4.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    let root = support::spawn_posed_scene(&mut app, "tube.glb");
    app.world_mut().entity_mut(root).insert(DqBlend(DQ_BLEND));
    {
        let world = app.world_mut();
        let state = world
            .query::<&SkinblendSkinned>()
            .iter(world)
            .next()
            .expect("the plugin took the 300-joint mesh");
        assert_eq!(state.joints().len(), JOINTS);
        assert_eq!(
            state.cpu_mesh().influences().influences_per_vertex(),
            8,
            "JOINTS_1/WEIGHTS_1 reached the plugin"
        );
    }
    for method in SkinningMethod::ALL {
        app.world_mut().entity_mut(root).insert(method);
        if method == SkinningMethod::CenterOfRotation {
            for _ in 0..300 {
                step(&mut app);
            }
        }
        step(&mut app);
        step(&mut app);
        let gpu = capture(&mut app, &target, 60).expect("a screenshot");
        assert!(gpu.coverage(8) > 1000, "{method:?}: the tube was not drawn");
        let cpu = support::cpu_posed_frame(&mut app, &target, method);
        let differing = gpu.differing_pixels(&cpu, DIFFERENCE_LEVELS);
        eprintln!("{method:?}: {differing} pixels differ between GPU and CPU-posed images");
        assert!(
            differing <= MAX_DIFFERING_PIXELS,
            "{method:?}: {differing} pixels differ (at most {MAX_DIFFERING_PIXELS})"
        );
        // Back to the skinned entity for the next method.
        let world = app.world_mut();
        let plain: Vec<Entity> = world
            .query_filtered::<Entity, (With<Mesh3d>, Without<SkinblendSkinned>)>()
            .iter(world)
            .collect();
        for entity in plain {
            world.despawn(entity);
        }
        let skinned: Vec<Entity> = world
            .query_filtered::<Entity, With<SkinblendSkinned>>()
            .iter(world)
            .collect();
        for entity in skinned {
            world.entity_mut(entity).insert(Visibility::Inherited);
        }
    }
}

skinblend_testkit::test_main!(eight_influences_300_joints_gpu_equals_cpu);
