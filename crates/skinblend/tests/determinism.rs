//! Determinism: the same inputs give the same bits, whatever the thread count, however often
//! and in whichever process they run. (SIMD against scalar is not bit-identical, by design:
//! fused multiply-adds and another summation order. `tests/simd_*.rs` hold it within their named
//! tolerance `SIMD_VS_SCALAR`.)

mod common;

use common::{mixed_blend_values, random_rig, Rng};
use glam::{Vec3, Vec4};
use skinblend::{prepare, skin_into, Method, SkinInput, SkinOptions, SkinOutputs};

/// Several parallel chunks (4096 vertices each) and a SIMD tail (not a multiple of 8).
const VERTICES: usize = 20_003;
const CHILD_ENV: &str = "SKINBLEND_DETERMINISM_CHILD";

/// Every output bit of one frame (positions, normals, tangents) and the diagnostics.
fn frame_bits(method: Method, simd: bool, parallel: bool, threads: usize) -> Vec<u32> {
    let mut rng = Rng::new(2026);
    let rig = random_rig(&mut rng, VERTICES, 4, 16, true);
    let centers: Vec<Vec3> = rig.positions.iter().map(|p| *p * 0.5).collect();
    let input = SkinInput::new(
        &rig.positions,
        Some(&rig.normals),
        Some(&rig.tangents),
        &rig.influences,
    )
    .unwrap()
    .with_rotation_centers(&centers)
    .unwrap();
    let blend_values = mixed_blend_values(VERTICES);
    let input = input
        .with_blend_values(skinblend::BlendValues::PerVertex(&blend_values))
        .unwrap();
    let options = SkinOptions {
        method,
        simd,
        parallel,
        ..SkinOptions::default()
    };
    let prepared = prepare(&rig.palette, Some(&rig.centers), &options).unwrap();
    let mut positions = vec![Vec3::ZERO; VERTICES];
    let mut normals = vec![Vec3::ZERO; VERTICES];
    let mut tangents = vec![Vec4::ZERO; VERTICES];
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
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
                options.run_options(),
            )
        })
        .unwrap();
    let floats = positions
        .iter()
        .chain(&normals)
        .flat_map(|v| v.to_array())
        .chain(tangents.iter().flat_map(|t| t.to_array()));
    let mut bits: Vec<u32> = floats.map(f32::to_bits).collect();
    bits.extend(
        [
            diagnostics.singular_normal_matrices,
            diagnostics.non_rigid_joints,
            diagnostics.sign_flips,
            diagnostics.unweighted_vertices,
        ]
        .map(|count| count as u32),
    );
    bits
}

/// FNV-1a over the bits of every method and kernel, serial: one line a child process prints.
fn fingerprint() -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for method in Method::ALL {
        for simd in [false, true] {
            for word in frame_bits(method, simd, false, 1) {
                for byte in word.to_le_bytes() {
                    hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
                }
            }
        }
    }
    hash
}

#[test]
fn identical_bits_for_every_thread_count_and_repeated_runs() {
    for method in Method::ALL {
        for simd in [false, true] {
            let serial = frame_bits(method, simd, false, 1);
            assert!(serial.len() > VERTICES * 10);
            for (parallel, threads) in [(false, 1), (true, 1), (true, 2), (true, 3), (true, 8)] {
                assert!(
                    frame_bits(method, simd, parallel, threads) == serial,
                    "{} simd={simd}: parallel={parallel} on {threads} threads differs from serial",
                    method.name()
                );
            }
        }
    }
}

#[test]
fn identical_bits_in_another_process() {
    if std::env::var_os(CHILD_ENV).is_some() {
        println!("fingerprint={:016x}", fingerprint());
        return;
    }
    let ours = fingerprint();
    for run in 0..2 {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "identical_bits_in_another_process",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "child {run} failed: {stdout}");
        let theirs = stdout
            .lines()
            .find_map(|line| line.split_once("fingerprint=").map(|(_, hash)| hash.trim()))
            .unwrap_or_else(|| panic!("child {run} printed no fingerprint: {stdout}"));
        assert_eq!(
            theirs,
            format!("{ours:016x}"),
            "child process {run} skinned other bits"
        );
    }
}
