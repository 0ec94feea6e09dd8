//! The CoR kernel: against LBS and DQS where they must agree, the bind pose, an f64 reference,
//! the sign of stored rotations, serial against parallel, and the paper's claims measured on the
//! fixtures.

mod common;

use common::cor::*;
use common::*;
use glam::{DMat3, DQuat, DVec3, Mat4, Vec3, Vec4};
use skinblend::cor::{has_rotation_center, CorOptions};
use skinblend::evidence::{self, EvidenceRow};
use skinblend::fixtures::{self, Fixture};
use skinblend::{
    prepare, skin, skin_into, DualQuat, Method, PreparedPalette, RunOptions, SkinInput,
    SkinOptions, SkinOutputs,
};

// ---------------------------------------------------------------------------------------------
// The kernel.

fn skin_cor(
    input: &SkinInput<'_>,
    palette: &[Mat4],
    joint_centers: Option<&[Vec3]>,
) -> skinblend::Skinned {
    skin(
        input,
        palette,
        joint_centers,
        &options(Method::CenterOfRotation),
    )
    .unwrap()
}

#[test]
fn one_rigid_influence_gives_cor_equal_to_lbs_and_dqs() {
    // With one joint, R is that joint's rotation and t = M p* − R p* is its translation,
    // whatever the center: the same matrix in another operation order (REL_F32, not bits).
    let mut rng = Rng::new(61);
    let rig = random_rig(&mut rng, 500, 1, 8, false);
    let centers = random_centers(&mut rng, 500);
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &rig.influences,
    )
    .unwrap()
    .with_rotation_centers(&centers)
    .unwrap();
    let cor = skin_cor(&input, &rig.palette, Some(&rig.centers));
    for method in [Method::Linear, Method::DualQuaternion] {
        let other = skin(&input, &rig.palette, Some(&rig.centers), &options(method)).unwrap();
        assert_points_close(method.name(), &other.positions, &cor.positions, REL_F32);
        assert_points_close(
            method.name(),
            other.normals.as_ref().unwrap(),
            cor.normals.as_ref().unwrap(),
            REL_F32,
        );
    }
}

#[test]
fn one_non_rigid_influence_gives_cor_equal_to_lbs() {
    // Scale, shear and mirror go through the residual before the turn about the center, and
    // the center goes where the full matrix sends it, so one joint is that matrix exactly.
    let mut rng = Rng::new(62);
    let rig = random_rig(&mut rng, 500, 1, 8, true);
    let centers = random_centers(&mut rng, 500);
    let input = SkinInput::new(&rig.positions, None, None, &rig.influences)
        .unwrap()
        .with_rotation_centers(&centers)
        .unwrap();
    let cor = skin_cor(&input, &rig.palette, Some(&rig.centers));
    let lbs = skin(
        &input,
        &rig.palette,
        Some(&rig.centers),
        &options(Method::Linear),
    )
    .unwrap();
    assert!(cor.diagnostics.non_rigid_joints > 0);
    assert_points_close("non-rigid", &lbs.positions, &cor.positions, NON_RIGID_REL);
}

#[test]
fn bind_pose_returns_the_input() {
    // Identity joints: R = I and LBS(p*) = p* up to the rounding of the weight sum.
    for fixture in fixtures::all() {
        let centers = centers_of(&fixture, &CorOptions::default()).centers;
        let input = SkinInput::new(
            &fixture.positions,
            Some(&fixture.normals),
            Some(&fixture.tangents),
            &fixture.influences,
        )
        .unwrap()
        .with_rotation_centers(&centers)
        .unwrap();
        let palette = vec![Mat4::IDENTITY; fixture.joint_from_bind.len()];
        let out = skin_cor(&input, &palette, Some(&fixture.joint_centers));
        assert_points_close(fixture.name, &fixture.positions, &out.positions, REL_F32);
        assert_points_close(
            fixture.name,
            &fixture.normals,
            out.normals.as_ref().unwrap(),
            REL_F32,
        );
        assert_eq!(out.diagnostics, skinblend::Diagnostics::default());
    }
}

/// The paper's formula in f64 for rigid palettes, written from the quaternions and matrices:
/// q = normalize(Σ ± w q), aligned to the heaviest influence; v' = R v + Σ w M p* − R p*.
fn reference_cor(
    position: Vec3,
    center: Vec3,
    joints: &[u16],
    weights: &[f32],
    palette: &[Mat4],
) -> DVec3 {
    let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
    let rotation_of =
        |j: u16| DQuat::from_mat3(&DMat3::from_mat4(palette[usize::from(j)].as_dmat4()));
    let mut pivot = 0;
    for (slot, &w) in weights.iter().enumerate() {
        if w > weights[pivot] {
            pivot = slot;
        }
    }
    let pivot_q = rotation_of(joints[pivot]);
    let mut q = DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    let mut placed = DVec3::ZERO;
    for (&j, &w) in joints.iter().zip(weights) {
        let w = f64::from(w) / sum;
        let qj = rotation_of(j);
        q += qj * if qj.dot(pivot_q) < 0.0 { -w } else { w };
        placed += palette[usize::from(j)]
            .as_dmat4()
            .transform_point3(center.as_dvec3())
            * w;
    }
    let q = q.normalize();
    q * position.as_dvec3() + placed - q * center.as_dvec3()
}

#[test]
fn library_agrees_with_the_f64_reference() {
    let mut rng = Rng::new(63);
    for k in [2, 4, 8] {
        let rig = random_rig(&mut rng, 400, k, 12, false);
        let centers = random_centers(&mut rng, 400);
        let input = SkinInput::new(&rig.positions, None, None, &rig.influences)
            .unwrap()
            .with_rotation_centers(&centers)
            .unwrap();
        let cor = skin_cor(&input, &rig.palette, None);
        // CoR falls back to the scalar DQS kernel (CoR has no SIMD kernel), so compare with the
        // scalar one: the SIMD DQS kernel differs from it by rounding.
        let scalar_dq = SkinOptions {
            simd: false,
            ..options(Method::DualQuaternion)
        };
        let dq = skin(&input, &rig.palette, None, &scalar_dq).unwrap();
        let expected: Vec<Vec3> = (0..400)
            .map(|v| {
                let (joints, weights) = rig.influences.vertex(v).unwrap();
                if has_rotation_center(centers[v]) {
                    reference_cor(rig.positions[v], centers[v], joints, weights, &rig.palette)
                        .as_vec3()
                } else {
                    dq.positions[v] // no center: DQS
                }
            })
            .collect();
        assert_points_close(
            &format!("k = {k}"),
            &expected,
            &cor.positions,
            REF_F64_VS_F32,
        );
        // Same pivot rule as DQS, so the same sign flips.
        assert_eq!(cor.diagnostics.sign_flips, dq.diagnostics.sign_flips);
        assert!(cor.diagnostics.sign_flips > 0);
        // Where the center is missing the result is DQS's, bit for bit.
        for v in (0..400).filter(|&v| !has_rotation_center(centers[v])) {
            assert_eq!(cor.positions[v], dq.positions[v], "vertex {v}");
        }
    }
}

#[test]
fn cor_is_immune_to_the_sign_of_stored_rotations() {
    let mut rng = Rng::new(64);
    let rig = random_rig(&mut rng, 300, 4, 6, false);
    let centers = random_centers(&mut rng, 300);
    let input = SkinInput::new(&rig.positions, None, None, &rig.influences)
        .unwrap()
        .with_rotation_centers(&centers)
        .unwrap();
    let dual_quats: Vec<DualQuat> = rig
        .palette
        .iter()
        .map(|m| {
            let (_, rotation, translation) = m.to_scale_rotation_translation();
            DualQuat::from_rotation_translation(rotation, translation)
        })
        .collect();
    let mixed: Vec<DualQuat> = dual_quats
        .iter()
        .enumerate()
        .map(|(j, dq)| if j % 2 == 0 { dq.negated() } else { *dq })
        .collect();
    let run = |dqs: &[DualQuat]| {
        let prepared =
            PreparedPalette::from_dual_quats(dqs, &options(Method::CenterOfRotation)).unwrap();
        let mut out = vec![Vec3::ZERO; 300];
        skin_into(
            &input,
            &prepared,
            SkinOutputs::positions(&mut out),
            RunOptions::default(),
        )
        .unwrap();
        out
    };
    assert_points_close("mixed signs", &run(&dual_quats), &run(&mixed), REL_F32);
}

#[test]
fn parallel_skinning_is_bit_identical_to_serial() {
    let mut rng = Rng::new(65);
    let rig = random_rig(&mut rng, 20_000, 4, 16, true);
    let centers = random_centers(&mut rng, 20_000);
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &rig.influences,
    )
    .unwrap()
    .with_rotation_centers(&centers)
    .unwrap();
    let prepared = prepare(
        &rig.palette,
        Some(&rig.centers),
        &options(Method::CenterOfRotation),
    )
    .unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut positions = vec![Vec3::ZERO; 20_000];
        let mut normals = vec![Vec3::ZERO; 20_000];
        let mut tangents = vec![Vec4::ZERO; 20_000];
        let diagnostics = pool
            .install(|| {
                skin_into(
                    &input,
                    &prepared,
                    SkinOutputs {
                        positions: &mut positions,
                        normals: Some(&mut normals),
                        tangents: Some(&mut tangents),
                    },
                    RunOptions::default(),
                )
            })
            .unwrap();
        (positions, normals, tangents, diagnostics)
    };
    let serial = run(1);
    for threads in [2, 3] {
        assert!(
            serial == run(threads),
            "{threads} threads differ from serial"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The paper's claims, measured on the fixtures.

fn row(fixture: &Fixture, angle_deg: f32, method: Method) -> EvidenceRow {
    evidence::measure(fixture, angle_deg, method).unwrap()
}

#[test]
fn twist_180_keeps_the_joint_ring_round() {
    let fixture = fixtures::twist_coarse();
    let cor = row(&fixture, 180.0, Method::CenterOfRotation);
    assert!(
        cor.candy_wrapper_ratio >= 0.99,
        "{}",
        cor.candy_wrapper_ratio
    );
    // The ring turns rigidly about its center: every pair distance kept.
    assert!((cor.ring_distance_ratio.min - 1.0).abs() < 1e-6);
    assert!((cor.ring_distance_ratio.max - 1.0).abs() < 1e-6);
    let lbs = row(&fixture, 180.0, Method::Linear);
    assert!(lbs.candy_wrapper_ratio < 1e-3);
}

/// The reference model's figures for `bend_fine` (the issue): bulge under CoR at 90° and 135°,
/// and volume ratio at 90°. Ours agree to the third decimal; 2e-3 allows for another
/// subdivision scheme's quadrature.
const REFERENCE_FIGURE: f64 = 2e-3;

#[test]
fn bend_fine_cor_bulges_less_than_dqs_and_keeps_volume_better_than_lbs() {
    let fixture = fixtures::bend_fine();
    for (angle, reference_bulge) in [(90.0, 1.053), (135.0, 1.024)] {
        let [lbs, dq, cor] = [
            Method::Linear,
            Method::DualQuaternion,
            Method::CenterOfRotation,
        ]
        .map(|m| row(&fixture, angle, m));
        let bulge = cor.bone_distance_ratio.max;
        assert!(
            bulge < dq.bone_distance_ratio.max,
            "{angle}°: CoR bulge {bulge} vs DQS {}",
            dq.bone_distance_ratio.max
        );
        assert!(
            (bulge - reference_bulge).abs() < REFERENCE_FIGURE,
            "{angle}°: {bulge}"
        );
        let volume = |r: &EvidenceRow| r.volume_ratio.unwrap();
        assert!(
            (volume(&cor) - 1.0).abs() < (volume(&lbs) - 1.0).abs(),
            "{angle}°: CoR volume {} vs LBS {}",
            volume(&cor),
            volume(&lbs)
        );
        if angle == 90.0 {
            assert!(
                (volume(&cor) - 0.995).abs() < REFERENCE_FIGURE,
                "{}",
                volume(&cor)
            );
            assert!((dq.bone_distance_ratio.max - 1.088).abs() < 5e-4);
            assert!((volume(&lbs) - 0.966).abs() < 5e-4);
        }
        // Honest about edges: on this fixture CoR does not beat DQS on the mean edge ratio.
        assert!(
            cor.edge_ratio.mean > dq.edge_ratio.mean,
            "{angle}°: CoR mean edge {} vs DQS {}",
            cor.edge_ratio.mean,
            dq.edge_ratio.mean
        );
        assert_eq!(cor.diagnostics, dq.diagnostics);
    }
}
