//! The centers-of-rotation precomputation's memory bound (issue 43): on weights that change
//! from vertex to vertex (four random joints of 64 each, so that no two sub-triangles share a
//! cluster), the bytes it holds at once stay under [`cor::memory_bound_bytes`], measured by a
//! counting global allocator; the coarsening that keeps them there is deterministic; and the
//! smooth fixtures keep the full quadrature.
//!
//! The allocator also refuses any allocation that would take the live bytes past
//! [`HARD_LIMIT_BYTES`], so an unbounded precomputation ends this test binary with "memory
//! allocation of N bytes failed" instead of exhausting the machine (before issue 43 the 100k
//! mesh grew to over 20 GB).
//!
//! The time and memory per vertex quoted in the `cor` module docs come from
//! `cargo test --release -p skinblend --test cor_memory -- --nocapture`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use glam::Vec3;
use skinblend::cor::{self, rotation_centers, CorOptions, RotationCenters};
use skinblend::{fixtures, Influences};

/// The most live bytes the allocator grants: above every bound this file asserts (1.23 GB for
/// the 100k mesh), well below the memory of a CI runner.
const HARD_LIMIT_BYTES: usize = 3 << 30;

/// Joints of the random rig, and joints per vertex (the figures).
const JOINTS: usize = 64;
const INFLUENCES: usize = 4;

/// A loose guard against a pathological slowdown (before issue 43, 10k random vertices took
/// 28 s in release); the dev profile takes about 6 s for the 100k mesh on two cores, the
/// measured times are printed.
const SECONDS_GUARD: f64 = 60.0;

/// The mean distance, relative to the mesh's diagonal, that lumping every triangle moves the
/// centers of a small random-weight grid by against the full quadrature: measured 0.078 on
/// 20 × 20 vertices (the module docs quote 0.06 to 0.08), checked with some room.
const LUMPED_MEAN_SHIFT_LIMIT: f32 = 0.1;

/// Grid sides: 317² = 100 489 vertices (the size) and 142² = 20 164.
const LARGE_SIDE: usize = 317;
const SMALL_SIDE: usize = 142;

struct CountingAllocator;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Serializes the tests of this file (every one takes it), so that one test's allocations do
/// not count in another's peak.
static MEASURING: Mutex<()> = Mutex::new(());

fn grant(size: usize) -> bool {
    let before = LIVE.fetch_add(size, Ordering::SeqCst);
    if before + size > HARD_LIMIT_BYTES {
        LIVE.fetch_sub(size, Ordering::SeqCst);
        return false;
    }
    PEAK.fetch_max(before + size, Ordering::SeqCst);
    true
}

// SAFETY: defers every operation to the system allocator; only counts bytes, and refuses (null)
// past the hard limit, which the `GlobalAlloc` contract allows.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !grant(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as ours.
        let ptr = unsafe { System.alloc(layout) };
        if ptr.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        }
        ptr
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !grant(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as ours.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if ptr.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        }
        ptr
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !grant(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as ours.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if new.is_null() {
            if new_size > old {
                LIVE.fetch_sub(new_size - old, Ordering::SeqCst);
            }
        } else if new_size < old {
            LIVE.fetch_sub(old - new_size, Ordering::SeqCst);
        }
        new
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// A flat `side` × `side` grid (1 cm spacing, two triangles per cell), each vertex with
/// [`INFLUENCES`] distinct random joints of [`JOINTS`] and random weights summing to one.
/// Deterministic in `seed`.
fn random_grid(side: usize, seed: u64) -> (Vec<Vec3>, Vec<[u32; 3]>, Influences) {
    // xorshift64*: small, fast, deterministic; quality is irrelevant here.
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut positions = Vec::with_capacity(side * side);
    let mut joints = Vec::with_capacity(side * side * INFLUENCES);
    let mut weights = Vec::with_capacity(side * side * INFLUENCES);
    for y in 0..side {
        for x in 0..side {
            positions.push(Vec3::new(x as f32 * 0.01, y as f32 * 0.01, 0.0));
            let mut chosen: Vec<u16> = Vec::with_capacity(INFLUENCES);
            while chosen.len() < INFLUENCES {
                let joint = (next() % JOINTS as u64) as u16;
                if !chosen.contains(&joint) {
                    chosen.push(joint);
                }
            }
            let raw: Vec<f32> = (0..INFLUENCES)
                .map(|_| (next() >> 40) as f32 / (1u64 << 24) as f32 + 0.01)
                .collect();
            let sum: f32 = raw.iter().sum();
            joints.extend(chosen);
            weights.extend(raw.iter().map(|w| w / sum));
        }
    }
    let mut triangles = Vec::with_capacity(2 * (side - 1) * (side - 1));
    for y in 0..side - 1 {
        for x in 0..side - 1 {
            let a = (y * side + x) as u32;
            let (b, c) = (a + 1, a + side as u32);
            triangles.push([a, b, c + 1]);
            triangles.push([a, c + 1, c]);
        }
    }
    let influences = Influences::new(INFLUENCES, joints, weights, JOINTS).unwrap();
    (positions, triangles, influences)
}

/// Runs the precomputation on a pool of `threads` threads and returns its result, the most
/// bytes it held at once beyond what was live before it started, and its seconds.
fn measured(
    positions: &[Vec3],
    triangles: &[[u32; 3]],
    influences: &Influences,
    options: &CorOptions,
    threads: usize,
) -> (RotationCenters, usize, f64) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    // Start the pool's threads before the baseline (their bookkeeping is not the
    // precomputation's).
    pool.broadcast(|_| ());
    let baseline = LIVE.load(Ordering::SeqCst);
    PEAK.store(baseline, Ordering::SeqCst);
    let start = Instant::now();
    let result = pool
        .install(|| rotation_centers(positions, triangles, influences, options))
        .unwrap();
    let seconds = start.elapsed().as_secs_f64();
    let peak = PEAK.load(Ordering::SeqCst) - baseline;
    (result, peak, seconds)
}

fn bits(centers: &[Vec3]) -> Vec<[u32; 3]> {
    centers
        .iter()
        .map(|c| c.to_array().map(f32::to_bits))
        .collect()
}

/// The case: random weights, peak bytes under the stated bound, at 100k vertices (the
/// dev profile takes about 6 s for it on two cores) and at 20k.
#[test]
fn random_weights_stay_under_the_memory_bound() {
    let _one_at_a_time = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    for side in [SMALL_SIDE, LARGE_SIDE] {
        let (positions, triangles, influences) = random_grid(side, 43);
        let options = CorOptions::default();
        let (result, peak, seconds) = measured(&positions, &triangles, &influences, &options, 2);
        let (v, t) = (positions.len(), triangles.len());
        let bound = cor::memory_bound_bytes(v, t, INFLUENCES, JOINTS, &options);
        eprintln!(
            "random weights, {v} vertices, {t} triangles, 2 threads: {seconds:.2} s \
             ({:.1} µs per vertex), peak {:.1} MB ({:.0} bytes per vertex) of a bound of \
             {:.1} MB ({:.0} per vertex); {} of {t} triangles lumped to their corners, \
             {} clusters, {} pair entries",
            seconds * 1e6 / v as f64,
            peak as f64 / 1e6,
            peak as f64 / v as f64,
            bound as f64 / 1e6,
            bound as f64 / v as f64,
            result.lumped_triangles,
            result.triangle_clusters,
            result.pair_entries,
        );
        assert!(
            peak <= bound,
            "{v} vertices: peak {peak} bytes > bound {bound}"
        );
        assert!(seconds < SECONDS_GUARD, "{v} vertices: {seconds} s");
        assert_eq!(result.centers.len(), v);
        assert_eq!(result.vertices_without_center, 0);
        assert!(result.centers.iter().all(|c| c.is_finite()));
        // The full quadrature did not fit: the bound was kept by lumping.
        assert!(result.lumped_triangles > 0);
    }
}

/// The coarsening is decided chunk by chunk in a fixed order, so the result does not depend on
/// the thread count.
#[test]
fn coarsened_centers_are_bit_identical_on_any_thread_count() {
    let _one_at_a_time = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let (positions, triangles, influences) = random_grid(20, 7);
    // A budget that the full quadrature of this mesh exceeds but lumping its costliest
    // triangles meets, so that the partial coarsening is what is compared.
    let options = CorOptions {
        memory_budget_bytes: Some(64 << 20),
        ..CorOptions::default()
    };
    let (one, ..) = measured(&positions, &triangles, &influences, &options, 1);
    assert!(one.lumped_triangles > 0 && one.lumped_triangles < triangles.len());
    for (threads, parallel) in [(2, true), (3, true), (2, false)] {
        let options = CorOptions {
            parallel,
            ..options
        };
        let (other, ..) = measured(&positions, &triangles, &influences, &options, threads);
        assert_eq!(
            bits(&other.centers),
            bits(&one.centers),
            "{threads} threads"
        );
        assert_eq!(other.lumped_triangles, one.lumped_triangles);
    }
}

/// What lumping costs in accuracy on random weights: the full quadrature (a budget large enough
/// for it) against every triangle lumped (a budget of 0, raised to what the corner quadrature
/// needs).
#[test]
fn lumping_moves_random_weight_centers_by_a_stated_amount() {
    let _one_at_a_time = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let (positions, triangles, influences) = random_grid(20, 3);
    let with_budget = |bytes| {
        rotation_centers(
            &positions,
            &triangles,
            &influences,
            &CorOptions {
                memory_budget_bytes: Some(bytes),
                ..CorOptions::default()
            },
        )
        .unwrap()
    };
    let full = with_budget(usize::MAX);
    let lumped = with_budget(0);
    assert_eq!(full.lumped_triangles, 0);
    assert_eq!(lumped.lumped_triangles, triangles.len());
    let diagonal = positions[0].distance(positions[positions.len() - 1]);
    let shifts: Vec<f32> = full
        .centers
        .iter()
        .zip(&lumped.centers)
        .map(|(a, b)| a.distance(*b) / diagonal)
        .collect();
    assert!(shifts.iter().all(|d| d.is_finite()));
    let mean = shifts.iter().sum::<f32>() / shifts.len() as f32;
    eprintln!("lumping moves random-weight centers by a mean {mean:.3} of the diagonal");
    assert!(mean < LUMPED_MEAN_SHIFT_LIMIT, "{mean}");
}

/// Smooth weights fit the default budget with room to spare: no triangle is lumped, so their
/// centers are the full quadrature's (`tests/cor_precompute.rs` checks those values).
#[test]
fn smooth_fixtures_keep_the_full_quadrature() {
    let _one_at_a_time = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    for fixture in fixtures::all() {
        let result = rotation_centers(
            &fixture.positions,
            &fixture.triangles,
            &fixture.influences,
            &CorOptions::default(),
        )
        .unwrap();
        assert_eq!(result.lumped_triangles, 0, "{}", fixture.name);
    }
}
