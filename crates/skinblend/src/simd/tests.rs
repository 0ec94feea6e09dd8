//! Tests of the SIMD kernels through the crate's entry points that need the crate's private
//! palette layout (the padding lanes the kernels read or ignore).

use glam::{Vec3, Vec4};

use crate::fixtures::{benchmark_mesh, BenchmarkMesh};
use crate::input::SkinInput;
use crate::palette::{prepare, PreparedPalette};
use crate::simd::layout::TRANSLATION_PADDING_LANE;
use crate::skin::skin_into;
use crate::types::{Diagnostics, Method, SkinOptions, SkinOutputs};

/// Skins `mesh` (positions, normals, tangents) with `palette`, one thread; the output bits
/// and the diagnostics.
fn skin_bits(
    mesh: &BenchmarkMesh,
    method: Method,
    palette: &PreparedPalette,
) -> (Vec<u32>, Diagnostics) {
    let input = SkinInput::new(
        &mesh.positions,
        Some(&mesh.normals),
        Some(&mesh.tangents),
        &mesh.influences,
    )
    .and_then(|input| input.with_rotation_centers(&mesh.positions))
    .unwrap();
    let options = SkinOptions {
        method,
        parallel: false,
        ..SkinOptions::default()
    };
    let n = mesh.positions.len();
    let (mut p, mut nn, mut t) = (
        vec![Vec3::ZERO; n],
        vec![Vec3::ZERO; n],
        vec![Vec4::ZERO; n],
    );
    let d = skin_into(
        &input,
        palette,
        SkinOutputs {
            positions: &mut p,
            normals: Some(&mut nn),
            tangents: Some(&mut t),
        },
        options.run_options(),
    )
    .unwrap();
    let bits = p
        .iter()
        .chain(&nn)
        .flat_map(|v| v.to_array())
        .chain(t.iter().flat_map(|v| v.to_array()))
        .map(f32::to_bits)
        .collect();
    (bits, d)
}

/// The lanes of a prepared palette matrix, as the kernels read them.
fn lanes_of(matrix: &mut glam::Affine3A) -> *mut f32 {
    // An `Affine3A` is 16 f32s (`layout`'s asserts); on x86-64 each column is one
    // 128-bit register, so every lane is an f32.
    std::ptr::from_mut(matrix).cast::<f32>()
}

/// The kernels load each `Affine3A` column with its padding lane (lane 3 of each 16-byte
/// `Vec3A`): poisoning the three columns' padding lanes with NaN must leave every output bit
/// as it was. (The translation's padding lane is the weight-sum carrier, 1 in a prepared
/// palette: the next test.)
#[test]
fn column_padding_lanes_are_never_used() {
    if super::simd_backend().is_none() {
        return; // no SIMD kernel on this CPU: nothing reads the palette through a cast
    }
    for (k, method) in [
        (4, Method::Linear),
        (3, Method::Linear),
        (8, Method::Linear),
        (4, Method::CenterOfRotation),
    ] {
        let mesh = benchmark_mesh(203, k, 16, 9);
        let clean = prepare(&mesh.palette, None, method).unwrap();
        let mut poisoned = clean.clone();
        for matrix in poisoned.linear_matrices_mut() {
            let lanes = lanes_of(matrix);
            for padding in [3, 7, 11] {
                // SAFETY: inside the matrix (`lanes_of`).
                unsafe { lanes.add(padding).write(f32::NAN) };
            }
            // SAFETY: inside the matrix (`lanes_of`).
            let poisoned = unsafe { lanes.add(7).read() };
            assert!(poisoned.is_nan(), "the poison must stick");
        }
        assert_eq!(
            skin_bits(&mesh, method, &clean),
            skin_bits(&mesh, method, &poisoned),
            "{method:?}, K = {k}"
        );
    }
}

/// The translation's padding lane of every prepared matrix is 1, and the LBS kernels take
/// each vertex's weight sum from it: set to 2 it doubles the sums, which renormalizing
/// halves the result by (so the kernels do read it, and a palette that lost the 1 would
/// show).
#[test]
fn translation_padding_lane_carries_the_weight_sum() {
    if super::simd_backend().is_none() {
        return; // the scalar kernel sums the weights itself
    }
    for k in [3, 4, 8] {
        let mut mesh = benchmark_mesh(203, k, 16, 9);
        // Weight sums of 1/2, so that the kernels divide by them (sums within
        // `UNIT_WEIGHT_SUM_BAND` of 1 would not read the lane).
        let halved: Vec<f32> = mesh.influences.weights().iter().map(|w| 0.5 * w).collect();
        mesh.influences =
            crate::influences::Influences::new(k, mesh.influences.joints().to_vec(), halved, 16)
                .unwrap();
        let clean = prepare(&mesh.palette, None, Method::Linear).unwrap();
        let mut doubled = clean.clone();
        for matrix in doubled.linear_matrices_mut() {
            let lanes = lanes_of(matrix);
            // SAFETY: inside the matrix (`lanes_of`).
            unsafe {
                assert_eq!(lanes.add(TRANSLATION_PADDING_LANE).read(), 1.0);
                lanes.add(TRANSLATION_PADDING_LANE).write(2.0);
            }
        }
        let (clean_bits, _) = skin_bits(&mesh, Method::Linear, &clean);
        let (doubled_bits, _) = skin_bits(&mesh, Method::Linear, &doubled);
        let n = mesh.positions.len();
        // Positions: halved in every SIMD block (the last n mod 8 take the scalar kernel).
        for v in 0..n / 8 * 8 {
            for a in 0..3 {
                let (c, d) = (
                    f32::from_bits(clean_bits[3 * v + a]),
                    f32::from_bits(doubled_bits[3 * v + a]),
                );
                assert!(
                    (d - 0.5 * c).abs() <= 1e-6 * c.abs().max(1.0),
                    "K = {k}, vertex {v}: {d} is not half of {c}"
                );
            }
        }
    }
}

/// DQS's prefetch (`CallTables::prefetch`, which `select` turns on for large calls on Intel
/// CPUs only) is a hint: forced on, on any CPU, the driver writes the same bits and counts the
/// same flips as without it, reading the arrays and reading a mesh handle's vertex blocks (the
/// two streams it prefetches from).
#[test]
fn dqs_prefetch_changes_no_bit() {
    use super::{block::CallTables, select, Kernel};
    let mesh = benchmark_mesh(1_003, 4, 64, 0xF37C);
    let input =
        SkinInput::new(&mesh.positions, Some(&mesh.normals), None, &mesh.influences).unwrap();
    let handle = crate::mesh::SkinMesh::from_input(&input);
    let _ = handle.input(); // the blocks are built on the second request
    assert!(handle.input().vertex_blocks().is_some());
    let palette = prepare(&mesh.palette, None, Method::DualQuaternion).unwrap();
    let n = mesh.positions.len();
    for (reads, input) in [("arrays", input), ("vertex blocks", handle.input())] {
        let skin = |prefetch: bool| {
            let (mut p, mut normals) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
            let outputs = SkinOutputs {
                positions: &mut p,
                normals: Some(&mut normals),
                tangents: None,
            };
            let kernel = match select(&input, &palette, &outputs, true, n) {
                Kernel::Avx2(token, kernel, tables) => {
                    Kernel::Avx2(token, kernel, CallTables { prefetch, ..tables })
                }
                Kernel::Scalar => Kernel::Scalar,
            };
            let counts = kernel.run(&input, &palette, true, 0, outputs);
            let bits: Vec<u32> = p
                .iter()
                .chain(&normals)
                .flat_map(|v| v.to_array())
                .map(f32::to_bits)
                .collect();
            (bits, counts.counted.sign_flips)
        };
        assert_eq!(skin(true), skin(false), "DQS reading the {reads}");
    }
}

/// `cpu::vendor` reads the vendor from `cpuid` as the kernel reports it in `/proc/cpuinfo`
/// (`vendor_id`), on whichever host runs the test (where that file exists), and
/// `input_prefetch_gains` follows it and the kernel's `avx512f` flag.
#[test]
fn cpu_vendor_agrees_with_the_kernels_vendor_id() {
    let Ok(cpuinfo) = std::fs::read_to_string("/proc/cpuinfo") else {
        return;
    };
    let expected = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("vendor_id"))
        .and_then(|rest| rest.split(':').nth(1))
        .map(str::trim)
        .expect("/proc/cpuinfo names the vendor");
    let vendor = super::cpu::vendor();
    assert_eq!(std::str::from_utf8(&vendor), Ok(expected));
    let avx512f = cpuinfo
        .lines()
        .find(|line| line.starts_with("flags"))
        .is_some_and(|flags| flags.split_whitespace().any(|flag| flag == "avx512f"));
    assert_eq!(
        super::cpu::input_prefetch_gains(),
        expected == "GenuineIntel" || expected == "AuthenticAMD" && avx512f
    );
}
