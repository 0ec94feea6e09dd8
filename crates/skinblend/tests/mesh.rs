//! The mesh handle (`SkinMesh`) and the batch call (`skin_batch`): a mesh is checked once and
//! then skinned every frame with the same bits as `skin_into` on the same data; a batch gives
//! each mesh the bits and diagnostics it gets alone, on any number of threads.

mod common;

use common::mixed_blend_values;
use glam::{Mat4, Vec3, Vec4};
use skinblend::fixtures::{self, BenchmarkMesh};
use skinblend::{
    full_validations, prepare, skin_batch, skin_into, Diagnostics, Method, PreparedPalette,
    RunOptions, SkinError, SkinInput, SkinJob, SkinMesh, SkinOptions, SkinOutputs,
};

/// One mesh's outputs and diagnostics.
#[derive(Debug, Clone, PartialEq)]
struct Out {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    tangents: Vec<Vec4>,
    diagnostics: Diagnostics,
}

impl Out {
    fn zeroed(n: usize) -> Self {
        Self {
            positions: vec![Vec3::ZERO; n],
            normals: vec![Vec3::ZERO; n],
            tangents: vec![Vec4::ZERO; n],
            diagnostics: Diagnostics::default(),
        }
    }

    fn outputs(&mut self) -> SkinOutputs<'_> {
        self.outputs_with(true, true)
    }

    fn outputs_with(&mut self, normals: bool, tangents: bool) -> SkinOutputs<'_> {
        SkinOutputs {
            positions: &mut self.positions,
            normals: normals.then_some(&mut self.normals[..]),
            tangents: tangents.then_some(&mut self.tangents[..]),
        }
    }

    /// Every output value's bits (NaN-safe equality).
    fn bits(&self) -> Vec<u32> {
        self.positions
            .iter()
            .chain(&self.normals)
            .flat_map(|v| v.to_array())
            .chain(self.tangents.iter().flat_map(|t| t.to_array()))
            .map(f32::to_bits)
            .collect()
    }
}

fn handle(mesh: &BenchmarkMesh) -> SkinMesh<'_> {
    SkinMesh::new(&mesh.positions[..], &mesh.influences)
        .and_then(|m| m.with_normals(&mesh.normals[..]))
        .and_then(|m| m.with_tangents(&mesh.tangents[..]))
        // Any finite point per vertex serves as a center for the bits.
        .and_then(|m| m.with_rotation_centers(&mesh.positions[..]))
        .and_then(|m| m.with_blend_values(mixed_blend_values(mesh.positions.len())))
        .unwrap()
}

fn input<'a>(mesh: &'a BenchmarkMesh, blend_values: &'a [f32]) -> SkinInput<'a> {
    SkinInput::new(
        &mesh.positions,
        Some(&mesh.normals),
        Some(&mesh.tangents),
        &mesh.influences,
    )
    .and_then(|i| i.with_rotation_centers(&mesh.positions))
    .and_then(|i| i.with_blend_values(skinblend::BlendValues::PerVertex(blend_values)))
    .unwrap()
}

fn prepared(mesh: &BenchmarkMesh, method: Method) -> PreparedPalette {
    prepare(&mesh.palette, None, method).unwrap()
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn the_handle_gives_skin_into_s_bits_for_every_method_and_kernel() {
    for (k, vertices) in [(1, 37), (2, 100), (4, 5_003), (4, 20_000), (8, 999)] {
        let mesh = fixtures::benchmark_mesh(vertices, k, 24, 7 + k as u64);
        let handle = handle(&mesh);
        let blend_values = mixed_blend_values(vertices);
        let input = input(&mesh, &blend_values);
        for method in Method::ALL {
            for (simd, parallel) in [(true, false), (false, false), (true, true)] {
                let options = SkinOptions {
                    method,
                    simd,
                    parallel,
                    ..SkinOptions::default()
                };
                let palette = prepare(&mesh.palette, None, &options).unwrap();
                let run = options.run_options();
                // Positions and normals only is where LBS reads the mesh's private blocks.
                for (normals, tangents) in [(false, false), (true, false), (true, true)] {
                    let (mut a, mut b) = (Out::zeroed(vertices), Out::zeroed(vertices));
                    a.diagnostics = handle
                        .skin_into(&palette, a.outputs_with(normals, tangents), run)
                        .unwrap();
                    b.diagnostics =
                        skin_into(&input, &palette, b.outputs_with(normals, tangents), run)
                            .unwrap();
                    let what =
                        format!("{method} k={k} n={vertices} simd={simd} n={normals} t={tangents}");
                    assert_eq!(a.bits(), b.bits(), "{what}");
                    assert_eq!(a.diagnostics, b.diagnostics, "{what}");
                }
            }
        }
    }
}

#[test]
fn a_mesh_is_checked_once_however_many_frames() {
    let mesh = fixtures::benchmark_mesh(2_000, 4, 16, 3);
    let before = full_validations();
    let handle = handle(&mesh);
    assert_eq!(
        full_validations() - before,
        1,
        "SkinMesh::new checks in full once"
    );
    let mut palette = prepared(&mesh, Method::DualQuaternion);
    let mut out = Out::zeroed(2_000);
    for frame in 0..10 {
        let turn = Mat4::from_rotation_y(frame as f32 * 0.1);
        let frame_palette: Vec<Mat4> = mesh.palette.iter().map(|m| turn * *m).collect();
        palette.update(&frame_palette).unwrap();
        handle
            .skin_into(&palette, out.outputs(), RunOptions::default())
            .unwrap();
    }
    assert_eq!(full_validations() - before, 1, "frames check no attribute");
}

#[test]
fn bad_attributes_are_refused_where_they_are() {
    let mesh = fixtures::benchmark_mesh(40, 2, 4, 1);
    let mut positions = mesh.positions.clone();
    positions[17].y = f32::NAN;
    assert_eq!(
        SkinMesh::new(positions, &mesh.influences).unwrap_err(),
        SkinError::NonFiniteAttribute {
            attribute: "positions",
            vertex: 17
        }
    );
    let short = vec![Vec3::Y; 39];
    assert_eq!(
        handle(&mesh).with_normals(short).unwrap_err(),
        SkinError::AttributeLength {
            attribute: "normals",
            expected: 40,
            found: 39
        }
    );
    // A failed replacement leaves the mesh as it was.
    let mut handle = handle(&mesh);
    let mut normals = mesh.normals.clone();
    normals[3].x = f32::INFINITY;
    let error = handle
        .set_attributes(mesh.positions.clone(), Some(normals.into()), None)
        .unwrap_err();
    assert_eq!(
        error,
        SkinError::NonFiniteAttribute {
            attribute: "normals",
            vertex: 3
        }
    );
    assert_eq!(handle.normals(), Some(&mesh.normals[..]));
    assert_eq!(handle.tangents(), Some(&mesh.tangents[..]));
}

#[test]
fn replaced_attributes_skin_as_a_new_mesh_would() {
    let mesh = fixtures::benchmark_mesh(1_000, 4, 12, 5);
    let other = fixtures::benchmark_mesh(1_000, 4, 12, 6);
    let mut handle = handle(&mesh);
    handle
        .set_attributes(
            other.positions.clone(),
            Some(other.normals.clone().into()),
            None,
        )
        .unwrap();
    let fresh = SkinMesh::new(&other.positions[..], &mesh.influences)
        .and_then(|m| m.with_normals(&other.normals[..]))
        .and_then(|m| m.with_rotation_centers(&mesh.positions[..]))
        .unwrap();
    let palette = prepared(&mesh, Method::Linear);
    let (mut a, mut b) = (Out::zeroed(1_000), Out::zeroed(1_000));
    a.diagnostics = handle
        .skin_into(&palette, a.outputs_with(true, false), RunOptions::default())
        .unwrap();
    b.diagnostics = fresh
        .skin_into(&palette, b.outputs_with(true, false), RunOptions::default())
        .unwrap();
    assert_eq!(a.bits(), b.bits());
    assert_eq!(a.diagnostics, b.diagnostics);
}

/// A crowd of meshes of several sizes (small ones below the parallel threshold, one large
/// enough to be split by its vertices too), each with its own palette and method.
fn crowd() -> Vec<(BenchmarkMesh, Method)> {
    let sizes = [2_000, 37, 9_000, 2_000, 8, 513, 2_000, 2_000, 1_000, 16_384];
    sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let k = [4, 4, 2, 8, 1][i % 5];
            (
                fixtures::benchmark_mesh(n, k, 24 + i, 100 + i as u64),
                Method::ALL[i % 3],
            )
        })
        .collect()
}

#[test]
fn a_batch_gives_each_mesh_its_bits_on_1_2_and_8_threads() {
    let crowd = crowd();
    let handles: Vec<SkinMesh<'_>> = crowd.iter().map(|(m, _)| handle(m)).collect();
    let palettes: Vec<PreparedPalette> = crowd
        .iter()
        .map(|(m, method)| prepared(m, *method))
        .collect();
    // Each mesh alone, serial.
    let serial = RunOptions {
        parallel: false,
        ..RunOptions::default()
    };
    let alone: Vec<Out> = handles
        .iter()
        .zip(&palettes)
        .map(|(h, p)| {
            let mut out = Out::zeroed(h.vertex_count());
            out.diagnostics = h.skin_into(p, out.outputs(), serial).unwrap();
            out
        })
        .collect();
    for threads in [1, 2, 8] {
        for parallel in [false, true] {
            let mut outs: Vec<Out> = handles
                .iter()
                .map(|h| Out::zeroed(h.vertex_count()))
                .collect();
            let run = RunOptions {
                parallel,
                ..RunOptions::default()
            };
            in_pool(threads, || {
                let mut jobs: Vec<SkinJob<'_>> = handles
                    .iter()
                    .zip(&palettes)
                    .zip(&mut outs)
                    .map(|((h, p), o)| SkinJob::new(h, p, o.outputs()))
                    .collect();
                skin_batch(&mut jobs, run).unwrap();
                let diagnostics: Vec<Diagnostics> = jobs.iter().map(|j| j.diagnostics).collect();
                drop(jobs);
                for (o, d) in outs.iter_mut().zip(diagnostics) {
                    o.diagnostics = d;
                }
            });
            for (i, (a, b)) in alone.iter().zip(&outs).enumerate() {
                let what = format!("mesh {i} threads={threads} parallel={parallel}");
                assert_eq!(a.bits(), b.bits(), "{what}: other bits than alone");
                assert_eq!(a.diagnostics, b.diagnostics, "{what}: other diagnostics");
            }
        }
    }
}

#[test]
fn a_wrong_job_is_named_and_nothing_is_skinned() {
    let crowd = crowd();
    let handles: Vec<SkinMesh<'_>> = crowd.iter().map(|(m, _)| handle(m)).collect();
    let palettes: Vec<PreparedPalette> = crowd
        .iter()
        .map(|(m, method)| prepared(m, *method))
        .collect();
    let mut outs: Vec<Out> = handles
        .iter()
        .map(|h| Out::zeroed(h.vertex_count()))
        .collect();
    let mut jobs: Vec<SkinJob<'_>> = handles
        .iter()
        .zip(&palettes)
        .zip(&mut outs)
        .map(|((h, p), o)| SkinJob::new(h, p, o.outputs()))
        .collect();
    // Job 6's positions output one short.
    let short = jobs[6].outputs.positions.len() - 1;
    let positions = std::mem::take(&mut jobs[6].outputs.positions);
    jobs[6].outputs.positions = &mut positions[..short];
    let error = skin_batch(&mut jobs, RunOptions::default()).unwrap_err();
    assert_eq!(
        error,
        SkinError::BatchJob {
            job: 6,
            source: Box::new(SkinError::AttributeLength {
                attribute: "output positions",
                expected: 2_000,
                found: 1_999
            })
        }
    );
    assert!(error.to_string().starts_with("batch job 6: "), "{error}");
    drop(jobs);
    assert!(
        outs.iter()
            .all(|o| o.positions.iter().all(|p| *p == Vec3::ZERO)),
        "nothing skinned"
    );
}

#[test]
fn dense_weights_converted_once_skin_as_the_sparse_ones() {
    // Three joints; vertex 1 uses joints 2 and 0, vertex 2 only joint 1, vertex 3 none.
    let dense = [
        0.25, 0.75, 0.0, //
        0.5, 0.0, 0.5, //
        0.0, 1.0, 0.0, //
        0.0, 0.0, 0.0,
    ];
    let influences = skinblend::Influences::from_dense_weights(&dense, 3).unwrap();
    assert_eq!(influences.influences_per_vertex(), 2);
    assert_eq!(influences.joints(), &[0, 1, 0, 2, 1, 0, 0, 0]);
    assert_eq!(
        influences.weights(),
        &[0.25, 0.75, 0.5, 0.5, 1.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(influences.joint_count(), 3);
    assert!(matches!(
        skinblend::Influences::from_dense_weights(&dense[..11], 3),
        Err(SkinError::InfluenceArrayNotWhole { len: 11, .. })
    ));
    let mut negative = dense;
    negative[4] = -0.5;
    assert!(matches!(
        skinblend::Influences::from_dense_weights(&negative, 3),
        Err(SkinError::InvalidWeight { vertex: 1, .. })
    ));
}

#[test]
fn dense_weights_over_many_joints_keep_every_non_zero_in_joint_order() {
    // 70 joints: two whole 32-joint masks and a partial one; non-zeros in each of them, a
    // row with none, and the widest row deciding k.
    let joint_count = 70;
    let rows: [&[usize]; 4] = [&[0, 31, 32, 63, 64, 69], &[5], &[], &[33, 40]];
    let mut dense = vec![0.0f32; rows.len() * joint_count];
    for (v, joints) in rows.iter().enumerate() {
        for (i, &joint) in joints.iter().enumerate() {
            dense[v * joint_count + joint] = 0.1 + i as f32;
        }
    }
    let influences = skinblend::Influences::from_dense_weights(&dense, joint_count).unwrap();
    let k = 6;
    assert_eq!(influences.influences_per_vertex(), k);
    for (v, joints) in rows.iter().enumerate() {
        let (slot_joints, slot_weights) = influences.vertex(v).unwrap();
        let expected_joints: Vec<u16> = (0..k)
            .map(|s| joints.get(s).map_or(0, |&j| j as u16))
            .collect();
        let expected_weights: Vec<f32> = (0..k)
            .map(|s| {
                if s < joints.len() {
                    0.1 + s as f32
                } else {
                    0.0
                }
            })
            .collect();
        assert_eq!(slot_joints, &expected_joints[..], "vertex {v}");
        assert_eq!(slot_weights, &expected_weights[..], "vertex {v}");
    }
}

#[test]
fn palettes_updated_in_one_call_equal_those_updated_alone() {
    let crowd = crowd();
    let frame: Vec<Vec<Mat4>> = crowd
        .iter()
        .enumerate()
        .map(|(i, (m, _))| {
            let turn = Mat4::from_rotation_z(0.01 * i as f32);
            m.palette.iter().map(|p| turn * *p).collect()
        })
        .collect();
    let matrices: Vec<&[Mat4]> = frame.iter().map(Vec::as_slice).collect();
    let mut alone: Vec<PreparedPalette> = crowd
        .iter()
        .map(|(m, method)| prepared(m, *method))
        .collect();
    for (p, m) in alone.iter_mut().zip(&matrices) {
        p.update(m).unwrap();
    }
    for threads in [1, 2, 8] {
        let mut together: Vec<PreparedPalette> = crowd
            .iter()
            .map(|(m, method)| prepared(m, *method))
            .collect();
        in_pool(threads, || {
            skinblend::update_palettes(&mut together, &matrices)
        })
        .unwrap();
        // Debug prints every f32 so that it reads back to the same value.
        assert_eq!(
            format!("{together:?}"),
            format!("{alone:?}"),
            "{threads} threads"
        );
    }
    // The first bad palette in order is named.
    let mut bad = frame.clone();
    bad[7][0].x_axis.x = f32::NAN;
    bad[3][1].w_axis.y = f32::INFINITY;
    let bad_matrices: Vec<&[Mat4]> = bad.iter().map(Vec::as_slice).collect();
    let mut palettes: Vec<PreparedPalette> = crowd
        .iter()
        .map(|(m, method)| prepared(m, *method))
        .collect();
    let error = in_pool(2, || {
        skinblend::update_palettes(&mut palettes, &bad_matrices)
    })
    .unwrap_err();
    assert!(
        matches!(error, SkinError::BatchJob { job: 3, .. }),
        "{error}"
    );
    let error = skinblend::update_palettes(&mut palettes, &bad_matrices[..4]).unwrap_err();
    assert!(
        matches!(&error, SkinError::BatchJob { job: 4, source } if matches!(**source, SkinError::PaletteLength { expected: 10, found: 4 })),
        "{error}"
    );
}
