//! `skin_into` with a prepared palette allocates nothing per frame once a mesh has been skinned
//! twice (the first two calls build the tables the kernels read), and neither does
//! `PreparedPalette::update` for the same joint count: a counting global allocator proves it.
//! Only allocations made on the rayon pool it skins with are counted, and only once every
//! thread of that pool has started (a starting thread allocates its own bookkeeping), so
//! neither the test harness's threads nor thread start-up can disturb the count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{Vec3, Vec4};
use skinblend::{
    fixtures, prepare, skin_into, Method, SkinInput, SkinMesh, SkinOptions, SkinOutputs,
};

struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTED.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: defers every operation to the system allocator; only counts calls.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The tests count into one global: they take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn skinning_a_frame_allocates_nothing() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mesh = fixtures::benchmark_mesh(20_000, 4, 64, 1);
    let n = mesh.positions.len();
    let (mut positions, mut normals, mut tangents) = (
        vec![Vec3::ZERO; n],
        vec![Vec3::ZERO; n],
        vec![Vec4::ZERO; n],
    );
    let with_tangents = SkinInput::new(
        &mesh.positions,
        Some(&mesh.normals),
        Some(&mesh.tangents),
        &mesh.influences,
    )
    .unwrap();
    // Positions and normals read from the vertex blocks (LBS's hand-written loop).
    let without_tangents =
        SkinInput::new(&mesh.positions, Some(&mesh.normals), None, &mesh.influences).unwrap();
    let handle = SkinMesh::from_input(&without_tangents);
    let _ = handle.input(); // the blocks are built on the second request
    let from_blocks = handle.input();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    // `broadcast` returns only after every worker ran it, so all of them have started.
    pool.broadcast(|_| COUNTED.with(|c| c.set(true)));
    for (attributes, input) in [("pnt", with_tangents), ("pn from blocks", from_blocks)] {
        let t = input.tangents().is_some();
        for method in [Method::Linear, Method::DualQuaternion] {
            for (simd, parallel) in [(true, false), (false, false), (true, true), (false, true)] {
                let options = SkinOptions {
                    method,
                    simd,
                    parallel,
                    ..SkinOptions::default()
                };
                let mut prepared = prepare(&mesh.palette, None, &options).unwrap();
                let allocations = pool.install(|| {
                    // Two warm-up frames (the second builds what only a reused mesh reads),
                    // then count five.
                    for _ in 0..2 {
                        let outputs = SkinOutputs {
                            positions: &mut positions,
                            normals: Some(&mut normals),
                            tangents: t.then_some(&mut tangents[..]),
                        };
                        skin_into(&input, &prepared, outputs, options.run_options()).unwrap();
                    }
                    let before = ALLOCATIONS.load(Ordering::SeqCst);
                    for _ in 0..5 {
                        prepared.update(&mesh.palette).unwrap();
                        let outputs = SkinOutputs {
                            positions: &mut positions,
                            normals: Some(&mut normals),
                            tangents: t.then_some(&mut tangents[..]),
                        };
                        skin_into(&input, &prepared, outputs, options.run_options()).unwrap();
                    }
                    ALLOCATIONS.load(Ordering::SeqCst) - before
                });
                let method = method.name();
                assert_eq!(
                    allocations, 0,
                    "{attributes} {method} simd={simd} parallel={parallel}: allocations in 5 frames"
                );
            }
        }
    }
}

#[test]
fn skinning_a_crowd_in_one_batch_allocates_nothing() {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let meshes: Vec<_> = (0..12)
        .map(|i| fixtures::benchmark_mesh(if i == 5 { 9_000 } else { 2_000 }, 4, 32, i))
        .collect();
    let handles: Vec<SkinMesh<'_>> = meshes
        .iter()
        .map(|m| {
            SkinMesh::new(&m.positions[..], &m.influences)
                .and_then(|h| h.with_normals(&m.normals[..]))
                .unwrap()
        })
        .collect();
    let mut outputs: Vec<(Vec<Vec3>, Vec<Vec3>)> = meshes
        .iter()
        .map(|m| {
            let n = m.positions.len();
            (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n])
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.broadcast(|_| COUNTED.with(|c| c.set(true)));
    for method in [Method::Linear, Method::DualQuaternion] {
        let mut palettes: Vec<_> = meshes
            .iter()
            .map(|m| prepare(&m.palette, None, method).unwrap())
            .collect();
        // The job list is the engine's, made once; each frame refreshes palettes and skins.
        let allocations = pool.install(|| {
            let mut frame = |palettes: &mut Vec<skinblend::PreparedPalette>| {
                for (p, m) in palettes.iter_mut().zip(&meshes) {
                    p.update(&m.palette).unwrap();
                }
                let mut jobs: [Option<skinblend::SkinJob<'_>>; 12] = Default::default();
                for (slot, ((h, p), (positions, normals))) in jobs
                    .iter_mut()
                    .zip(handles.iter().zip(palettes.iter()).zip(outputs.iter_mut()))
                {
                    *slot = Some(skinblend::SkinJob::new(
                        h,
                        p,
                        SkinOutputs {
                            positions,
                            normals: Some(normals),
                            tangents: None,
                        },
                    ));
                }
                let mut jobs = jobs.map(Option::unwrap);
                skinblend::skin_batch(&mut jobs, skinblend::RunOptions::default()).unwrap();
            };
            // Two warm-up frames, as for one mesh.
            frame(&mut palettes);
            frame(&mut palettes);
            let before = ALLOCATIONS.load(Ordering::SeqCst);
            for _ in 0..5 {
                frame(&mut palettes);
            }
            ALLOCATIONS.load(Ordering::SeqCst) - before
        });
        assert_eq!(allocations, 0, "{method}: allocations in 5 batch frames");
    }
}
