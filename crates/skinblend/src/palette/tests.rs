//! Tests of palette preparation: what each method builds, the rotation parts' range, the pivot
//! sign table and its lines, and the cache-line alignment of the 3x4s.

use glam::{Mat4, Quat, Vec3, Vec4};

use super::*;
use crate::rigid_split::SPLITS;

/// Splits that `prepare` and one `update` build for `method` on `palette`.
fn splits_built(method: Method, palette: &[Mat4]) -> (PreparedPalette, usize) {
    let before = SPLITS.with(std::cell::Cell::get);
    let mut prepared = prepare(palette, None, method).unwrap();
    prepared.update(palette).unwrap();
    (prepared, SPLITS.with(std::cell::Cell::get) - before)
}

/// The rotation parts' length range the SIMD kernels decide from follows every
/// preparation: about 1 for the unit dual quaternions of a DQS or CoR palette (prepared or
/// given as dual quaternions), none for LBS, and none after a failed `update`; a part that
/// is not finite gives NaN. (A range left from an earlier palette would let the kernels skip
/// a test the new palette needs.)
#[test]
fn real_length_range_follows_each_preparation() {
    let near_one = |(low, high): (f32, f32)| (low - 1.0).abs() < 1e-6 && (high - 1.0).abs() < 1e-6;
    let palette: Vec<Mat4> = (0..5)
        .map(|j| Mat4::from_rotation_y(0.4 * j as f32) * Mat4::from_translation(Vec3::X))
        .collect();
    let mut dqs = prepare(&palette, None, Method::DualQuaternion).unwrap();
    assert!(
        near_one(dqs.real_length_range),
        "{:?}",
        dqs.real_length_range
    );
    let lbs = prepare(&palette, None, Method::Linear).unwrap();
    assert_eq!(lbs.real_length_range, (f32::INFINITY, 0.0));
    let mut broken = palette.clone();
    broken[2].x_axis.x = f32::NAN;
    assert!(dqs.update(&broken).is_err());
    assert_eq!(dqs.real_length_range, (f32::INFINITY, 0.0));
    let given = [DualQuat::from_rotation_translation(Quat::IDENTITY, Vec3::Y); 3];
    let given = PreparedPalette::from_dual_quats(&given, Method::CenterOfRotation).unwrap();
    assert!(
        near_one(given.real_length_range),
        "{:?}",
        given.real_length_range
    );
    let nan = DualQuat {
        real: Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0),
        dual: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
    };
    assert!(real_length_range(&[given.dual_quats[0], nan]).0.is_nan());
}

/// `real_length_range` folds squares eight joints side by side and takes two square roots:
/// the same bits as the shortest and longest `Quat::length` one joint at a time, for every
/// count from 0 to 19 (whole blocks of eight and remainders), with the extremes in any lane, on
/// lengths spread over many binades and ties; and NaN for an infinite or NaN part anywhere,
/// including a square that overflows to infinity.
#[test]
fn real_length_range_is_each_length_folded() {
    let one_at_a_time = |dqs: &[DualQuat]| {
        let mut range = (f32::INFINITY, 0.0f32);
        for dq in dqs {
            let length = dq.real.length();
            if !length.is_finite() {
                return (f32::NAN, f32::NAN);
            }
            range = (range.0.min(length), range.1.max(length));
        }
        range
    };
    let real = |x: f32, y: f32, z: f32, w: f32| DualQuat {
        real: Quat::from_xyzw(x, y, z, w),
        dual: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
    };
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let bits = |(a, b): (f32, f32)| (a.to_bits(), b.to_bits());
    for count in 0..20 {
        for scale in [1.0f32, 1e-20, 1e18, 3.0] {
            let dqs: Vec<DualQuat> = (0..count)
                .map(|_| real(next() * scale, next() * scale, next(), next() * scale))
                .collect();
            assert_eq!(
                bits(real_length_range(&dqs)),
                bits(one_at_a_time(&dqs)),
                "{count} {scale}"
            );
            for bad in [f32::NAN, f32::INFINITY, 1e30] {
                for at in 0..count {
                    let mut broken = dqs.clone();
                    broken[at] = real(0.5, bad, 0.0, 0.5);
                    let range = real_length_range(&broken);
                    assert!(range.0.is_nan() && range.1.is_nan(), "{count} {at} {bad}");
                    assert!(one_at_a_time(&broken).0.is_nan());
                }
            }
        }
    }
}

/// Every entry of the pivot sign table is the scalar kernel's test, `real_dot < 0`, with
/// the row's joint as the pivot: on rotations about many axes and on pairs whose dot is
/// within a few ulps of zero (where a different summation order changes the sign); and
/// no table above `PIVOT_SIGN_TABLE_MAX_JOINTS` joints. (Seen failing with the dot summed
/// left to right, `((x·x' + y·y') + z·z') + w·w'`.)
#[test]
fn pivot_sign_table_matches_real_dot() {
    let mut dual_quats: Vec<DualQuat> = (0..40)
        .map(|j| {
            let axis = Vec3::new(1.0, 0.3 * j as f32, -0.7 + 0.11 * j as f32).normalize();
            let rotation = Quat::from_axis_angle(axis, 0.37 * j as f32);
            let dq = DualQuat::from_rotation_translation(rotation, Vec3::X * j as f32);
            if j % 3 == 0 {
                dq.negated()
            } else {
                dq
            }
        })
        .collect();
    // Orthogonal pairs whose dot is 0 in one grouping and about ±1e-8 in the other
    // (found by a search over random f32 quaternions): a different order flips them.
    for [a, b] in [
        [
            [0.05118375, 0.6755597, -0.5033515, 0.5363176],
            [-0.12600248, 0.28035495, 0.8399571, 0.44720975],
        ],
        [
            [0.45018375, -0.41795734, -0.7886218, -0.026868649],
            [-0.2579075, 0.74248934, -0.529884, -0.31845912],
        ],
        [
            [0.28209904, 0.8220028, -0.38024837, -0.31645322],
            [0.5572617, 0.0058134506, -0.23641984, 0.7959468],
        ],
    ] {
        for real in [a, b] {
            dual_quats.push(DualQuat {
                real: Quat::from_array(real),
                dual: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            });
        }
    }
    let mut turned = dual_quats.clone();
    for dq in turned.iter_mut().step_by(2) {
        *dq = dq.negated();
    }
    let mut real = [[0.0f32; PIVOT_SIGN_TABLE_MAX_JOINTS]; 4];
    for (j, dq) in dual_quats.iter().enumerate() {
        for (c, value) in dq.real.to_array().into_iter().enumerate() {
            real[c][j] = value;
        }
    }
    for layout in [SignedLayout::DUAL_QUAT, SignedLayout::ROTATION_LANES] {
        // Straight from the quaternions (a prepared palette would normalize them first): the
        // table as built (AVX2 where the CPU has it), then written over in place for the same
        // joints with other signs (the tails must stay 0), and the scalar definition on its
        // own.
        let mut offsets = Vec::new();
        signed_offsets_into(&dual_quats, layout, &mut offsets);
        assert_table(&dual_quats, layout, &offsets);
        signed_offsets_into(&turned, layout, &mut offsets);
        assert_table(&turned, layout, &offsets);
        // Joint counts that end inside a step of the AVX2 rows (sixteen entries): the tails.
        for joints in [8, 10, 27] {
            let mut fresh = Vec::new();
            signed_offsets_into(&dual_quats[..joints], layout, &mut fresh);
            assert_table(&dual_quats[..joints], layout, &fresh);
        }
        let mut scalar = vec![0u16; dual_quats.len() * PIVOT_SIGN_TABLE_MAX_JOINTS];
        pivot_sign_rows_scalar(&real, dual_quats.len(), layout, &mut scalar);
        assert_table(&dual_quats, layout, &scalar);
    }
    let many = vec![Mat4::IDENTITY; PIVOT_SIGN_TABLE_MAX_JOINTS + 1];
    let mut large = prepare(&many, None, Method::CenterOfRotation).unwrap();
    assert!(large.signed_offsets.is_empty());
    large.update(&many[..PIVOT_SIGN_TABLE_MAX_JOINTS]).unwrap();
    assert_eq!(
        large.signed_offsets.len(),
        PIVOT_SIGN_TABLE_MAX_JOINTS * PIVOT_SIGN_TABLE_MAX_JOINTS
    );
}

/// `offsets` is the pivot sign table of `dual_quats`: each entry is the scalar kernel's test,
/// the joint's entry in `layout` plus the flip where `real_dot < 0`, and every entry past the
/// joint count is 0; and the palette flips somewhere.
fn assert_table(dual_quats: &[DualQuat], layout: SignedLayout, offsets: &[u16]) {
    let joints = dual_quats.len();
    assert_eq!(offsets.len(), joints * PIVOT_SIGN_TABLE_MAX_JOINTS);
    let mut flips = 0;
    for (pivot, pivot_dq) in dual_quats.iter().enumerate() {
        for (joint, dq) in dual_quats.iter().enumerate() {
            let flip = dq.real_dot(pivot_dq) < 0.0;
            flips += usize::from(flip);
            let expected = usize::from(layout.stride_bytes) * joint
                + if flip {
                    usize::from(layout.flip_bytes)
                } else {
                    0
                };
            assert_eq!(
                usize::from(offsets[pivot * PIVOT_SIGN_TABLE_MAX_JOINTS + joint]),
                expected,
                "pivot {pivot}, joint {joint}"
            );
        }
        // Past the joint count: 0, a valid offset.
        let row = &offsets[pivot * PIVOT_SIGN_TABLE_MAX_JOINTS..][..PIVOT_SIGN_TABLE_MAX_JOINTS];
        assert!(row[joints..].iter().all(|&offset| offset == 0));
    }
    assert!(flips > joints, "the palette flips: {flips}");
}

/// The signed entries the pivot sign table points into, on cache lines, through
/// `update`: a CoR palette holds each joint's 3x4 with its rotation's quaternion in the
/// padding lanes (x, y, z in the columns', w in the translation's), then the same with the
/// quaternion negated; a DQS palette a line per joint, its dual quaternion then its
/// negation; LBS palettes and palettes without a table hold none.
#[test]
fn signed_entries_are_each_joint_as_prepared_then_negated() {
    let frame = |t: f32| -> Vec<Mat4> {
        (0..9)
            .map(|j| {
                let axis = Vec3::new(0.2 * j as f32, 1.0, -0.5).normalize();
                Mat4::from_rotation_translation(
                    Quat::from_axis_angle(axis, t + 0.8 * j as f32),
                    Vec3::new(j as f32, -t, 0.5),
                )
            })
            .collect()
    };
    let mut cor = prepare(&frame(0.3), None, Method::CenterOfRotation).unwrap();
    let mut dq = prepare(&frame(0.3), None, Method::DualQuaternion).unwrap();
    for t in [0.3, 2.9] {
        cor.update(&frame(t)).unwrap();
        dq.update(&frame(t)).unwrap();
        assert_eq!(cor.signed_entries.len(), 18);
        assert_eq!(dq.signed_entries.len(), 9);
        for (joint, (matrix, rigid)) in cor
            .linear_matrices()
            .iter()
            .zip(&cor.dual_quats)
            .enumerate()
        {
            let columns = [
                matrix.matrix3.x_axis,
                matrix.matrix3.y_axis,
                matrix.matrix3.z_axis,
                matrix.translation,
            ];
            for (sign, entry) in [1.0, -1.0].iter().zip(&cor.signed_entries[2 * joint..]) {
                assert_eq!(std::ptr::from_ref(entry) as usize % 64, 0);
                for (c, column) in columns.iter().enumerate() {
                    assert_eq!(entry.0[4 * c..4 * c + 3], column.to_array());
                }
                let quaternion = SignedEntry::QUATERNION_LANES.map(|lane| entry.0[lane]);
                assert_eq!(quaternion, (rigid.real * *sign).to_array());
            }
        }
        for (rigid, entry) in dq.dual_quats.iter().zip(&dq.signed_entries) {
            assert_eq!(std::ptr::from_ref(entry) as usize % 64, 0);
            for (dual_quat, half) in [*rigid, rigid.negated()].iter().zip(entry.0.chunks(8)) {
                assert_eq!(half[..4], dual_quat.real.to_array());
                assert_eq!(half[4..], dual_quat.dual.to_array());
            }
        }
    }
    let linear = prepare(&frame(0.3), None, Method::Linear).unwrap();
    assert!(linear.signed_entries.is_empty() && linear.signed_offsets.is_empty());
    let many = vec![Mat4::IDENTITY; PIVOT_SIGN_TABLE_MAX_JOINTS + 1];
    for method in [Method::CenterOfRotation, Method::DualQuaternion] {
        let large = prepare(&many, None, method).unwrap();
        assert!(large.signed_entries.is_empty(), "{method:?}");
    }
}

#[test]
fn linear_matrices_start_on_cache_lines() {
    let palette: Vec<Mat4> = (0..7)
        .map(|j| Mat4::from_rotation_translation(Quat::from_rotation_y(j as f32), Vec3::X))
        .collect();
    let on_line = |p: &PreparedPalette| {
        let matrices = p.linear_matrices();
        assert_eq!(matrices.len(), palette.len());
        matrices
            .iter()
            .all(|m| (std::ptr::from_ref(m) as usize).is_multiple_of(64))
    };
    // Several live at once: a 16-byte-aligned allocator would put some of them off a line
    // (one in four starts on one by chance).
    let several: Vec<PreparedPalette> = (0..8)
        .map(|_| prepare(&palette, None, Method::Linear).unwrap())
        .collect();
    assert!(several.iter().all(on_line), "prepare");
    let mut prepared = prepare(&palette, None, Method::CenterOfRotation).unwrap();
    assert!(on_line(&prepared), "prepare");
    prepared.update(&palette).unwrap();
    assert!(on_line(&prepared), "update");
    let dual_quats: Vec<DualQuat> = palette
        .iter()
        .map(|m| DualQuat::from_rotation_translation(Quat::from_mat4(m), m.w_axis.truncate()))
        .collect();
    let from_dq = PreparedPalette::from_dual_quats(&dual_quats, Method::Linear).unwrap();
    assert!(on_line(&from_dq), "from_dual_quats");
    for (a, b) in prepared.linear_matrices().iter().zip(&palette) {
        assert_eq!(*a, Affine3A::from_mat4(*b), "the matrices themselves");
    }
}

#[test]
fn lbs_palettes_build_no_split_but_count_the_same_non_rigid_joints() {
    let sheared = Mat4::from_cols(
        Vec4::new(1.0, 0.0, 0.0, 0.0),
        Vec4::new(0.4, 1.0, 0.0, 0.0),
        Vec4::Z,
        Vec4::W,
    );
    let mut degenerate = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
    degenerate.y_axis = Vec4::ZERO;
    let mirrored = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
    let rigid = Mat4::from_rotation_translation(Quat::from_rotation_z(2.5), Vec3::X);
    let palette = [rigid, sheared, degenerate, mirrored, Mat4::IDENTITY];

    let (lbs, lbs_splits) = splits_built(Method::Linear, &palette);
    assert_eq!(
        lbs_splits, 0,
        "an LBS palette must not build the rigid split"
    );
    assert!(lbs.dual_quats().is_empty() && lbs.residuals().is_empty());
    assert!(lbs.rigid_flags().is_empty());
    assert_eq!(lbs.linear_matrices().len(), palette.len());
    assert_eq!(lbs.joint_count(), palette.len());

    for method in [Method::DualQuaternion, Method::CenterOfRotation] {
        let (split, splits) = splits_built(method, &palette);
        assert_eq!(
            splits,
            2 * palette.len(),
            "{method}: prepare and update split each joint"
        );
        assert_eq!(split.non_rigid_joints(), 3, "{method}");
        assert_eq!(lbs.non_rigid_joints(), split.non_rigid_joints(), "{method}");
    }
    let dq_only = prepare(&palette, None, Method::DualQuaternion).unwrap();
    assert!(dq_only.linear_matrices().is_empty());
}
