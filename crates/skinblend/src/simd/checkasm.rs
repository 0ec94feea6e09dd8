//! Every `asm!` routine of the kernels against its intrinsics twin and a scalar model of what it
//! computes, on the same random inputs, as dav1d's checkasm tests its assembly: the `asm!` and
//! the twin bit for bit; the scalar model bit for bit where it can do the same operations in the
//! same order (`f32::mul_add` is the fused multiply-add), else within a named tolerance. Each
//! routine's plain name is its `asm!` (in a `--cfg skinblend_intrinsics` build, its twin too).

use std::arch::x86_64::*;

use glam::{Affine3A, Mat4, Quat, Vec3};

use super::blend3x4::{
    address_by_register, address_by_register_intrinsics, barrier7, barrier7_intrinsics,
};
use super::block::Block;
use super::block::CallTables;
use super::cpu::Avx2Fma;
use super::dq_table::{blend4_signed, blend4_signed_intrinsics};
use super::driver::{whole_blocks, Run, LINEAR};
use super::layout::{LineAligned, SignedEntry, SignedLayout, LANES};
use super::lbs_positions::{position_pair4, position_pair4_intrinsics, PairPointers};
use super::loads::{
    load_entry_halves, load_entry_halves_intrinsics, load_entry_pairs, load_entry_pairs_intrinsics,
    shuffle_ps, shuffle_ps_intrinsics, store3x8, store_rows3_intrinsics,
};
use super::policy;
use crate::fixtures::benchmark_mesh;
use crate::input::SkinInput;
use crate::mesh::SkinMesh;
use crate::palette::prepare;
use crate::reference::skin_range;
use crate::types::{Method, RangeCounts, SkinOutputs};

/// The whole LBS loop against the scalar reference kernel: fused multiply-adds, another
/// summation order and `rsqrt` with a Newton step, on values of order one (the integration
/// tests' `SIMD_VS_SCALAR`).
const LOOP_VS_SCALAR: f32 = 1e-5;

/// A deterministic source of test values (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// In `[-1, 1)`.
    fn signed(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn floats<const N: usize>(&mut self) -> [f32; N] {
        std::array::from_fn(|_| self.signed())
    }
}

fn bits<const N: usize>(values: [f32; N]) -> [u32; N] {
    values.map(f32::to_bits)
}

/// The eight lanes of a register.
fn lanes(v: __m256) -> [f32; 8] {
    // SAFETY: a `__m256` is eight f32s.
    unsafe { std::mem::transmute::<__m256, [f32; 8]>(v) }
}

/// A register of eight lanes.
fn register(lanes: [f32; 8]) -> __m256 {
    // SAFETY: a `__m256` is eight f32s.
    unsafe { std::mem::transmute::<[f32; 8], __m256>(lanes) }
}

/// The token, or `None` where this CPU cannot run the routines (the test then has nothing to
/// check).
fn avx2_fma() -> Option<Avx2Fma> {
    Avx2Fma::detect()
}

#[test]
fn shuffle_ps_against_its_twin_and_vshufps_semantics() {
    let Some(_avx2_fma) = avx2_fma() else { return };
    let mut rng = Rng(0x5EED_0001);
    // `vshufps` per 128-bit half: two lanes of `a` by the low bit pairs, two of `b` by the high.
    let model = |a: [f32; 8], b: [f32; 8], imm: i32| -> [f32; 8] {
        let pick = |shift: i32| (imm >> shift & 3) as usize;
        std::array::from_fn(|l| {
            let (half, lane) = (l / 4 * 4, l % 4);
            let source = if lane < 2 { &a } else { &b };
            source[half + pick(2 * lane as i32)]
        })
    };
    for _ in 0..64 {
        let (a, b) = (rng.floats::<8>(), rng.floats::<8>());
        macro_rules! check {
            ($($imm:literal),*) => {$(
                // SAFETY: the token proves AVX2 and FMA.
                let (asm, twin) = unsafe {
                    (
                        lanes(shuffle_ps::<$imm>(register(a), register(b))),
                        lanes(shuffle_ps_intrinsics::<$imm>(register(a), register(b))),
                    )
                };
                assert_eq!(bits(asm), bits(twin), "mask {:#x}", $imm);
                assert_eq!(bits(asm), bits(model(a, b, $imm)), "mask {:#x}", $imm);
            )*};
        }
        // Every mask the kernels use.
        check!(0x44, 0xEE, 0x88, 0xDD, 0x9E, 0x49, 0x8C, 0xD8, 0xCD, 0x00, 0xFF, 0x1B);
    }
}

#[test]
fn vec3_stores_against_their_twin_and_the_packed_layout() {
    let Some(_avx2_fma) = avx2_fma() else { return };
    let mut rng = Rng(0x5EED_0002);
    for _ in 0..64 {
        let xyz: [[f32; 8]; 3] = std::array::from_fn(|_| rng.floats::<8>());
        let mut asm = [Vec3::NAN; LANES];
        // SAFETY: the token proves AVX2 and FMA.
        unsafe { store3x8(&mut asm, 0, xyz.map(register)) };
        // The twin stores the rows `store3x8` shuffles the components into, `(v_l.. | v_l+4..)`
        // of the packed vertices; from the packed result, those rows are known.
        let packed: Vec<f32> = asm.iter().flat_map(|v| v.to_array()).collect();
        let rows: [[f32; 8]; 3] = std::array::from_fn(|r| {
            std::array::from_fn(|l| packed[if l < 4 { 4 * r + l } else { 12 + 4 * r + l - 4 }])
        });
        let mut twin = [f32::NAN; 24];
        // SAFETY: the token proves AVX2 and FMA; `twin` is 96 writable bytes.
        unsafe { store_rows3_intrinsics(twin.as_mut_ptr(), rows.map(register)) };
        let model: Vec<f32> = (0..LANES)
            .flat_map(|v| [xyz[0][v], xyz[1][v], xyz[2][v]])
            .collect();
        assert_eq!(
            bits(twin).to_vec(),
            packed.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(
            packed.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            model.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn entry_loads_against_their_twins_and_the_entries() {
    let Some(_avx2_fma) = avx2_fma() else { return };
    let mut rng = Rng(0x5EED_0003);
    // Sixteen 32-byte entries (a palette of dual quaternions, say).
    let entries: Vec<f32> = (0..16 * 8).map(|_| rng.signed()).collect();
    for _ in 0..64 {
        let (low, high) = (8 * rng.below(16), 8 * rng.below(16));
        let base = entries.as_ptr();
        // SAFETY: the token proves AVX2 and FMA; every read is inside `entries` (32 bytes from
        // an entry's start).
        let (halves, halves_twin, dual, dual_twin, pairs, pairs_twin) = unsafe {
            (
                lanes(load_entry_halves::<0>(base, low, high)),
                lanes(load_entry_halves_intrinsics::<0>(base, low, high)),
                lanes(load_entry_halves::<16>(base, low, high)),
                lanes(load_entry_halves_intrinsics::<16>(base, low, high)),
                load_entry_pairs(base, low, high),
                load_entry_pairs_intrinsics(base, low, high),
            )
        };
        // Lane `l` of `(low entry | high entry)` from `offset` f32s into each entry.
        let model = |offset: usize| -> [f32; 8] {
            std::array::from_fn(|l| entries[if l < 4 { low } else { high } + offset + l % 4])
        };
        assert_eq!(bits(halves), bits(halves_twin));
        assert_eq!(bits(halves), bits(model(0)));
        assert_eq!(bits(dual), bits(dual_twin));
        assert_eq!(bits(dual), bits(model(4)));
        let (first, second) = (lanes(pairs.0), lanes(pairs.1));
        assert_eq!(bits(first), bits(lanes(pairs_twin.0)));
        assert_eq!(bits(second), bits(lanes(pairs_twin.1)));
        assert_eq!(bits(first), bits(model(0)));
        assert_eq!(bits(second), bits(model(4)));
    }
}

#[test]
fn empty_blocks_pass_their_values_through() {
    let Some(_avx2_fma) = avx2_fma() else { return };
    let mut rng = Rng(0x5EED_0004);
    let rows: [[f32; 8]; 7] = std::array::from_fn(|_| rng.floats::<8>());
    // SAFETY: the token proves AVX2 and FMA.
    let (asm, twin) = unsafe {
        (
            barrier7(rows.map(register)).map(lanes),
            barrier7_intrinsics(rows.map(register)).map(lanes),
        )
    };
    assert_eq!(asm.map(bits), twin.map(bits));
    assert_eq!(asm.map(bits), rows.map(bits));
    let data = [1.0f32; 4];
    let p = data.as_ptr().wrapping_add(2);
    assert_eq!(address_by_register(p), p);
    assert_eq!(address_by_register_intrinsics(p), p);
}

#[test]
fn position_pairs_against_their_twin_and_a_scalar_model() {
    let Some(_avx2_fma) = avx2_fma() else { return };
    let mut rng = Rng(0x5EED_0005);
    let joints_in_palette = 12;
    for round in 0..32 {
        let matrices: Vec<LineAligned> = (0..joints_in_palette)
            .map(|_| {
                let rotation = Quat::from_xyzw(rng.signed(), rng.signed(), rng.signed(), 1.0);
                let scale = Vec3::new(1.0 + rng.signed() * 0.3, 1.0, 0.8);
                let translation = Vec3::new(rng.signed(), rng.signed(), rng.signed());
                LineAligned::new(Affine3A::from_scale_rotation_translation(
                    scale,
                    rotation.normalize(),
                    translation,
                ))
            })
            .collect();
        let joints: [u16; 32] = std::array::from_fn(|_| rng.below(joints_in_palette) as u16);
        let offsets = joints.map(|j| j * 64);
        let weights: [f32; 32] = std::array::from_fn(|_| 0.5 + 0.5 * rng.signed());
        let positions: [f32; 24] = rng.floats::<24>();
        let scale_lanes: [f32; 8] = std::array::from_fn(|_| 1.0 + 0.25 * rng.signed());
        let matrix_floats = matrices.as_ptr().cast::<f32>();
        // Vertex `v`, component `c`, as `position_pair4` computes it: the blend of `(c0 | c1)`
        // and `(c2 | t)` by multiply-adds in slot order, `c0·x` then `+ c2·z` fused, the halves
        // added, times the vertex's scale where scaled.
        let model = |v: usize, scaled: bool| -> [f32; 3] {
            let entry = |s: usize| &matrices[usize::from(joints[4 * v + s])].0;
            let lane = |m: &Affine3A, i: usize| -> f32 {
                // Columns x, y, z, translation, four lanes each (padding included).
                let columns = [
                    m.matrix3.x_axis.extend(0.0),
                    m.matrix3.y_axis.extend(0.0),
                    m.matrix3.z_axis.extend(0.0),
                    m.translation.extend(1.0),
                ];
                columns[i / 4][i % 4]
            };
            let blend = |i: usize| {
                (1..4).fold(weights[4 * v] * lane(entry(0), i), |sum, s| {
                    weights[4 * v + s].mul_add(lane(entry(s), i), sum)
                })
            };
            let p = &positions[3 * v..3 * v + 3];
            std::array::from_fn(|c| {
                let low = blend(8 + c).mul_add(p[2], blend(c) * p[0]);
                let high = blend(12 + c).mul_add(1.0, blend(4 + c) * p[1]);
                let sum = low + high;
                if scaled {
                    sum * scale_lanes[v]
                } else {
                    sum
                }
            })
        };
        for by_offsets in [false, true] {
            for scaled in [false, true] {
                let mut asm = [f32::NAN; 24];
                let mut twin = [f32::NAN; 24];
                let keys: *const u16 = if by_offsets {
                    offsets.as_ptr()
                } else {
                    joints.as_ptr()
                };
                let pointers = |dst: *mut f32| -> PairPointers {
                    (
                        keys,
                        weights.as_ptr(),
                        matrix_floats,
                        positions.as_ptr(),
                        dst,
                    )
                };
                // SAFETY: the token proves AVX2 and FMA; the pointers cover a block of eight
                // vertices as `positions4` lays it out (32 slots, 8 positions, 8 outputs, every
                // joint inside the palette).
                unsafe {
                    pairs(
                        pointers(asm.as_mut_ptr()),
                        scale_lanes,
                        scaled,
                        by_offsets,
                        true,
                    );
                    pairs(
                        pointers(twin.as_mut_ptr()),
                        scale_lanes,
                        scaled,
                        by_offsets,
                        false,
                    );
                }
                let what = format!("round {round}, offsets {by_offsets}, scaled {scaled}");
                assert_eq!(bits(asm), bits(twin), "{what}");
                let model: Vec<u32> = (0..LANES)
                    .flat_map(|v| model(v, scaled))
                    .map(f32::to_bits)
                    .collect();
                assert_eq!(bits(asm).to_vec(), model, "{what}");
            }
        }
    }
}

/// The four pairs of a block, as `positions4` calls them, by the `asm!` or the twin.
///
/// # Safety
/// AVX2 and FMA; `pointers` as `position_pair4` needs them.
#[target_feature(enable = "avx2,fma")]
unsafe fn pairs(pointers: PairPointers, scale: [f32; 8], scaled: bool, offsets: bool, asm: bool) {
    let one = _mm256_set1_ps(1.0);
    let xy = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    let z1 = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);
    let spreads = [xy, z1, xy, z1];
    let last = [
        xy,
        z1,
        _mm256_setr_epi32(1, 1, 1, 1, 2, 2, 2, 2),
        _mm256_setr_epi32(3, 3, 3, 3, 0, 0, 0, 0),
    ];
    let spread = |p: i32| {
        _mm256_setr_epi32(
            2 * p,
            2 * p,
            2 * p,
            2 * p,
            2 * p + 1,
            2 * p + 1,
            2 * p + 1,
            2 * p + 1,
        )
    };
    let scale = register(scale);
    macro_rules! four {
        ($f:ident, $scaled:literal, $offsets:literal) => {{
            $f::<0, $scaled, $offsets>(pointers, one, spreads, (scale, spread(0)));
            $f::<1, $scaled, $offsets>(pointers, one, spreads, (scale, spread(1)));
            $f::<2, $scaled, $offsets>(pointers, one, spreads, (scale, spread(2)));
            $f::<3, $scaled, $offsets>(pointers, one, last, (scale, spread(3)));
        }};
    }
    macro_rules! by {
        ($f:ident) => {
            match (scaled, offsets) {
                (false, false) => four!($f, false, false),
                (false, true) => four!($f, false, true),
                (true, false) => four!($f, true, false),
                (true, true) => four!($f, true, true),
            }
        };
    }
    // SAFETY: the caller's contract.
    unsafe {
        if asm {
            by!(position_pair4);
        } else {
            by!(position_pair4_intrinsics);
        }
    }
}

#[test]
fn signed_blends_against_their_twin_and_a_scalar_model() {
    let Some(_avx2_fma) = avx2_fma() else { return };
    let mut rng = Rng(0x5EED_0006);
    let joints_in_palette = 10;
    // Each joint's line: its eight f32s as prepared, then another eight (a DQS palette's are
    // the negation; any will do here), and a row of the table per "pivot".
    let SignedLayout {
        stride_bytes,
        flip_bytes,
    } = SignedLayout::DUAL_QUAT;
    let lines: Vec<SignedEntry> = (0..joints_in_palette)
        .map(|_| SignedEntry(std::array::from_fn(|_| rng.signed())))
        .collect();
    for _ in 0..64 {
        let row: Vec<u16> = (0..joints_in_palette)
            .map(|j| (j as u16 * stride_bytes) | (flip_bytes * rng.below(2) as u16))
            .collect();
        let joints: [u16; 4] = std::array::from_fn(|_| rng.below(joints_in_palette) as u16);
        let weights: [f32; 4] = std::array::from_fn(|_| 0.5 + 0.5 * rng.signed());
        let start: [f32; 8] = rng.floats::<8>();
        let entries = lines.as_ptr().cast::<f32>();
        let (mut asm_count, mut twin_count) = (0usize, 0usize);
        // SAFETY: the token proves AVX2 and FMA; four joints and weights, every joint inside
        // the row, every offset that of eight f32s of `lines`.
        let (asm, twin, asm_uncounted) = unsafe {
            let (w, j, r) = (weights.as_ptr(), joints.as_ptr(), row.as_ptr());
            let mut ignored = 0;
            (
                lanes(blend4_signed::<true>(
                    register(start),
                    w,
                    j,
                    r,
                    entries,
                    &mut asm_count,
                )),
                lanes(blend4_signed_intrinsics::<true>(
                    register(start),
                    w,
                    j,
                    r,
                    entries,
                    &mut twin_count,
                )),
                lanes(blend4_signed::<false>(
                    register(start),
                    w,
                    j,
                    r,
                    entries,
                    &mut ignored,
                )),
            )
        };
        let mut model = start;
        let (mut flips, mut offsets_sum) = (0, 0);
        for (&joint, &weight) in joints.iter().zip(&weights) {
            let offset = row[usize::from(joint)];
            // The blend sums the offsets; the flips are what remains past the joints' lines.
            offsets_sum += usize::from(offset);
            flips += usize::from(offset & flip_bytes != 0);
            let line = &lines[usize::from(offset / stride_bytes)].0;
            let half = usize::from(offset % stride_bytes) / size_of::<f32>();
            for (sum, &x) in model.iter_mut().zip(&line[half..half + 8]) {
                *sum = weight.mul_add(x, *sum);
            }
        }
        assert_eq!(bits(asm), bits(twin));
        assert_eq!(bits(asm), bits(model));
        assert_eq!(bits(asm_uncounted), bits(model));
        assert_eq!((asm_count, twin_count), (offsets_sum, offsets_sum));
        let joints_sum: usize = joints.iter().map(|&j| usize::from(j)).sum();
        let flip_bits = offsets_sum - usize::from(stride_bytes) * joints_sum;
        assert_eq!(flip_bits, flips * usize::from(flip_bytes));
    }
}

/// The hand-written LBS loop (`lbs_loop`) against its twin, the compiled driver loop over
/// `lbs::block`, and the scalar reference kernel, on the benchmark rig read from the `Vec3`
/// arrays and from a mesh handle's vertex blocks (the loop's two expansions), as it is and with
/// a zero normal (the loop's exit for the fast normalize's window) and degenerate joints (its
/// exit for a lane the singular bound leaves unclear).
#[test]
fn lbs_loop_against_its_twin_and_the_scalar_kernel() {
    let Some(_avx2_fma) = avx2_fma() else { return };
    for (variant, vertices) in [
        ("rig", 203),
        ("zero normal", 1_003),
        ("degenerate joints", 517),
    ] {
        let mut mesh = benchmark_mesh(vertices, 4, 16, 0x5EED);
        if variant == "zero normal" {
            mesh.normals[77] = Vec3::ZERO;
        }
        if variant == "degenerate joints" {
            for joint in 0..16 {
                mesh.palette[joint] *= Mat4::from_scale(Vec3::new(1.0, 1.0, 0.0));
            }
        }
        let input =
            SkinInput::new(&mesh.positions, Some(&mesh.normals), None, &mesh.influences).unwrap();
        let handle = SkinMesh::from_input(&input);
        let palette = prepare(&mesh.palette, None, Method::Linear).unwrap();
        let influences = input.influences();
        assert!(policy::unit_weight_sums(
            4,
            influences.weight_sum_range(),
            palette.largest_column_length
        ));
        let n = vertices;
        let whole = n / LANES * LANES;
        // The scalar reference, on the whole blocks.
        let (mut scalar_p, mut scalar_n) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
        let scalar = skin_range(
            &input,
            &palette,
            true,
            0,
            SkinOutputs {
                positions: &mut scalar_p[..whole],
                normals: Some(&mut scalar_n[..whole]),
                tangents: None,
            },
        );
        if variant == "degenerate joints" {
            assert!(
                scalar.singular_normal_matrices > 0,
                "the singular exit is taken"
            );
        }
        let _ = handle.input(); // the blocks are built on the second request
                                // The offsets, as a reused mesh's call reads them.
        let tables = CallTables {
            linear_offsets: true,
            flip_tally: false,
            prefetch: false,
        };
        for (reads, input) in [("arrays", input), ("vertex blocks", handle.input())] {
            let block = Block::new::<4>(&input, &palette, tables, true, 0, n);
            assert!(!block.linear_offsets.is_empty());
            let run = Run {
                input: &input,
                palette: &palette,
                renormalize: true,
                first_vertex: 0,
                block: &block,
            };
            let skin = |asm: bool| {
                let (mut p, mut normals) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
                let mut counts = RangeCounts::default();
                let mut outputs = SkinOutputs {
                    positions: &mut p,
                    normals: Some(&mut normals),
                    tangents: None,
                };
                // SAFETY: the token proves AVX2 and FMA; the block is the whole call's range,
                // whose slices have the outputs' lengths (LBS, four influences, unit weight
                // sums, byte offsets: asserted above).
                let done = unsafe {
                    if asm {
                        whole_blocks::<LINEAR, 4, true, false, true, true, true>(
                            &run,
                            &block,
                            &mut outputs,
                            &mut counts,
                            0..whole,
                        )
                    } else {
                        whole_blocks::<LINEAR, 4, true, false, true, true, false>(
                            &run,
                            &block,
                            &mut outputs,
                            &mut counts,
                            0..whole,
                        )
                    }
                };
                assert_eq!(done, whole);
                (p, normals, counts)
            };
            let (asm_p, asm_n, asm_counts) = skin(true);
            let (twin_p, twin_n, twin_counts) = skin(false);
            let what = format!("{variant}, from the {reads}");
            let all = |v: &[Vec3]| -> Vec<u32> {
                v.iter()
                    .flat_map(|v| v.to_array())
                    .map(f32::to_bits)
                    .collect()
            };
            assert_eq!(all(&asm_p), all(&twin_p), "{what}: positions");
            assert_eq!(all(&asm_n), all(&twin_n), "{what}: normals");
            assert_eq!(asm_counts, twin_counts, "{what}: counts");
            assert_eq!(
                asm_counts.counted, scalar,
                "{what}: counts against the scalar kernel"
            );
            for v in 0..whole {
                for (got, expected) in [(asm_p[v], scalar_p[v]), (asm_n[v], scalar_n[v])] {
                    let error = (got - expected).abs().max_element();
                    assert!(
                        error <= LOOP_VS_SCALAR * expected.abs().max_element().max(1.0),
                        "{what}: vertex {v}: {got} against {expected}"
                    );
                }
            }
        }
    }
}
