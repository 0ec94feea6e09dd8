//! `Influences::new` and `Influences::from_lists` on arbitrary joints and weights.
//!
//! Property: neither panics; each succeeds exactly when its documented preconditions hold; and
//! what it returns keeps the documented invariants (joints below the joint count, weights finite
//! and non-negative; `new` changes nothing; `from_lists` merges, sorts, truncates and
//! renormalizes as documented, and its report counts what it did).
//!
//! Input (see `skinblend_fuzz::Reader`): `k = byte % 10`; a joint-count tag; then the flat
//! arrays for `new` (entry count byte, a mismatch flag, joints and compact-float weights); then
//! per-vertex lists for `from_lists` (vertex count byte % 48, per vertex a length byte % 12 and
//! the entries).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skinblend::Influences;
use skinblend_fuzz::Reader;

/// `u16::MAX + 1`: the most joints a `u16` index addresses.
const MAX_JOINTS: usize = 65_536;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let k = usize::from(r.u8() % 10);
    let joint_count = match r.u8() {
        t @ 0..=249 => usize::from(t),
        250 => 65_535,
        251 => MAX_JOINTS,
        252 => MAX_JOINTS + 1,
        253 => usize::from(r.u16()),
        254 => r.u32() as usize,
        255 => usize::MAX,
    };
    let joint = |r: &mut Reader| match r.u8() {
        0xFF => r.u16(),
        b => u16::from(b),
    };

    // Flat arrays for `new`.
    let entries = usize::from(r.u8());
    let mismatch = r.u8().is_multiple_of(8);
    let mut joints = Vec::with_capacity(entries);
    let mut weights = Vec::with_capacity(entries + 1);
    for _ in 0..entries {
        joints.push(joint(&mut r));
        weights.push(r.float());
    }
    if mismatch {
        weights.push(r.float());
    }
    check_new(k, joints, weights, joint_count);

    // Per-vertex lists for `from_lists`.
    let vertices = usize::from(r.u8() % 48);
    let mut lists = Vec::with_capacity(vertices);
    for _ in 0..vertices {
        let len = usize::from(r.u8() % 12);
        let list: Vec<(u16, f32)> = (0..len).map(|_| (joint(&mut r), r.float())).collect();
        lists.push(list);
    }
    check_from_lists(&lists, k, joint_count);
});

fn valid_weight(w: f32) -> bool {
    w.is_finite() && w >= 0.0
}

fn check_new(k: usize, joints: Vec<u16>, weights: Vec<f32>, joint_count: usize) {
    let valid = k > 0
        && joints.len() == weights.len()
        && joints.len().is_multiple_of(k)
        && joint_count <= MAX_JOINTS
        && joints.iter().all(|&j| usize::from(j) < joint_count)
        && weights.iter().copied().all(valid_weight);
    let result = Influences::new(k, joints.clone(), weights.clone(), joint_count);
    let influences = match result {
        Ok(influences) => influences,
        Err(e) => {
            assert!(!valid, "new rejected valid input: {e}");
            return;
        }
    };
    assert!(valid, "new accepted invalid input");
    assert_eq!(influences.influences_per_vertex(), k);
    assert_eq!(influences.joint_count(), joint_count);
    assert_eq!(influences.joints(), &joints[..]);
    let same_weights = influences
        .weights()
        .iter()
        .zip(&weights)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    assert!(same_weights && influences.weights().len() == weights.len());
    let count = joints.len() / k;
    assert_eq!(influences.vertex_count(), count);
    for v in 0..count {
        let (j, w) = influences.vertex(v).expect("a vertex in range");
        assert_eq!(j, &joints[v * k..(v + 1) * k]);
        assert_eq!(w.len(), k);
    }
    assert!(influences.vertex(count).is_none());
    assert!(influences.vertex(usize::MAX).is_none());
    assert!(influences.vertex(usize::MAX / k).is_none());
}

fn check_from_lists(lists: &[Vec<(u16, f32)>], k: usize, joint_count: usize) {
    // Even an unused slot needs a joint index in range, so no joints means no vertices.
    let valid = k > 0
        && joint_count <= MAX_JOINTS
        && (joint_count > 0 || lists.is_empty())
        && lists
            .iter()
            .flatten()
            .all(|&(j, w)| usize::from(j) < joint_count && valid_weight(w));
    let (influences, report) = match Influences::from_lists(lists, k, joint_count) {
        Ok(result) => result,
        Err(e) => {
            assert!(!valid, "from_lists rejected valid input: {e}");
            return;
        }
    };
    assert!(valid, "from_lists accepted invalid input");
    assert_eq!(influences.vertex_count(), lists.len());
    assert_eq!(influences.influences_per_vertex(), k);
    assert_eq!(influences.joint_count(), joint_count);

    let (mut unweighted, mut truncated, mut dropped, mut repeated) = (0, 0, 0, 0);
    for (v, list) in lists.iter().enumerate() {
        let (joints, weights) = influences.vertex(v).expect("a vertex in range");
        for (s, (&j, &w)) in joints.iter().zip(weights).enumerate() {
            assert!(
                usize::from(j) < joint_count,
                "vertex {v} slot {s}: joint {j}"
            );
            assert!(valid_weight(w), "vertex {v} slot {s}: weight {w}");
        }
        // Non-zero slots first, heaviest first, distinct joints; then zero weights: the
        // `(0, 0.0)` fill, or a kept influence so light next to the others (a subnormal) that
        // renormalizing rounded it to zero, which keeps its joint.
        let used = weights.iter().take_while(|&&w| w > 0.0).count();
        for s in used..k {
            assert!(
                weights[s].to_bits() == 0,
                "vertex {v} slot {s}: fill is ({}, {})",
                joints[s],
                weights[s]
            );
        }
        for s in 1..used {
            assert!(
                weights[s] <= weights[s - 1],
                "vertex {v}: not heaviest first"
            );
        }
        for a in 0..used {
            for b in a + 1..used {
                assert_ne!(joints[a], joints[b], "vertex {v}: joint repeated");
            }
        }
        let sum: f32 = weights[..used].iter().sum();
        if used == 0 {
            unweighted += 1;
        } else {
            assert!(
                (sum - 1.0).abs() <= 1e-5,
                "vertex {v}: weights sum to {sum}"
            );
        }
        // What the report should say about this vertex, from the input list alone.
        let mut distinct: Vec<u16> = list.iter().map(|&(j, _)| j).collect();
        distinct.sort_unstable();
        distinct.dedup();
        repeated += usize::from(distinct.len() < list.len());
        let mut nonzero: Vec<u16> = list
            .iter()
            .filter(|&&(_, w)| w > 0.0)
            .map(|&(j, _)| j)
            .collect();
        nonzero.sort_unstable();
        nonzero.dedup();
        if nonzero.len() > k {
            truncated += 1;
            dropped += nonzero.len() - k;
        }
        assert!(used <= nonzero.len(), "vertex {v}: more slots than joints");
        // A joint kept must carry weight in the input.
        for &j in &joints[..used] {
            assert!(
                nonzero.contains(&j),
                "vertex {v}: joint {j} kept without weight"
            );
        }
    }
    assert_eq!(report.vertices_unweighted, unweighted, "{report:?}");
    assert_eq!(report.vertices_truncated, truncated, "{report:?}");
    assert_eq!(report.influences_dropped, dropped, "{report:?}");
    assert_eq!(report.vertices_with_repeated_joints, repeated, "{report:?}");
    assert!(valid_weight(report.max_weight_dropped), "{report:?}");
    assert!(report.vertices_renormalized <= lists.len(), "{report:?}");
}
