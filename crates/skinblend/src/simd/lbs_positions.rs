//! LBS with positions only and four influences: each vertex transformed in the two registers
//! its 3x4 blends into, two vertices per `asm!` block ([`position_pair4`], beside its
//! intrinsics twin).

use std::arch::x86_64::*;

use glam::Vec3;

use super::blend3x4::{weight_scale8, weight_sums4, weighted8};
use super::block::Block;
use super::layout::LANES;

/// The pointers [`position_pair4`] reads and writes: `(joints, weights, matrices, src, dst)`.
pub(super) type PairPointers = (*const u16, *const f32, *const f32, *const f32, *mut f32);

/// LBS positions only, four influences, of vertices `base .. base + 8`; `false`, having written
/// nothing, when one of them is unweighted. Each vertex's blended 3x4 stays in its two registers
/// `(c0 | c1)` and `(c2 | t)` (as `blend3x4::blend8` builds them) and transforms the vertex
/// there: `(c0·x + c2·z | c1·y + t)`, whose halves added are `M p`. No transposes, so the
/// shuffle port the eight-wide path saturates is left nearly idle. Rounding differs from
/// `lbs::block`'s (the sums are grouped differently), within `SIMD_VS_SCALAR` of the scalar
/// kernel as every kernel.
///
/// Each pair of vertices is one `asm!` block ([`position_pair4`]) that addresses the matrices
/// by register alone: against the compiler's indexed operands 1.10× at 100k
/// (`ab.py 15 "linear p 4 100000 500"` against the intrinsics twin; the measuring recipe is in
/// `simd/mod.rs`). The matrices' addresses come from the joints read where they are used, not
/// from offsets widened per block and read back from the stack, nor computed one vertex ahead
/// (the pointers spill). The block's slices are taken unchecked (the driver checked their
/// lengths once per call), and with `R` no flag is tested.
///
/// # Safety
/// The CPU has AVX2 and FMA; `base + 8` is at most the range's length, which `positions`,
/// `block.positions` and (four slots per vertex) `block.weights` and, with `OFFSETS`,
/// `block.linear_offsets`, else `block.joints`, have. (Not a `#[target_feature]` function, so
/// that it inlines into the driver loop, as `blend3x4::blend8`: a `#[target_feature]` function
/// stays a call per block, saving and restoring seven registers each time.)
#[inline(always)]
pub(super) unsafe fn positions4<const R: bool, const OFFSETS: bool>(
    block: &Block<'_>,
    positions: &mut [Vec3],
    base: usize,
) -> bool {
    // SAFETY: the caller guarantees the slices cover the block's 32 slots and 8 vertices.
    let (joints8, weights8) = unsafe { block.linear_slots8::<4, OFFSETS>(base) };
    // The weight sums where a vertex may be unweighted or the positions are divided by them.
    let scale = if !R && (block.divide_by_weight_sums || !block.all_weighted) {
        // SAFETY: the caller guarantees AVX2 and FMA.
        let sums = unsafe { weight_sums4(weights8) };
        // SAFETY: as above.
        if !unsafe { weighted8(block, sums) } {
            return false;
        }
        // SAFETY: as above.
        unsafe { weight_scale8(block, sums) }
    } else {
        None
    };
    // SAFETY: as above.
    let (src, dst) = unsafe {
        (
            block.positions.get_unchecked(base..base + LANES),
            positions.get_unchecked_mut(base..base + LANES),
        )
    };
    // SAFETY: AVX2 and FMA are enabled here. `joints8` is 32 u16s and `weights8` 32 f32s, so
    // vertex l's four of each at 4l are inside them. `Influences` guarantees joint <
    // joint_count and `skin_into` checked the palette covers it; an `Affine3A` is 16 contiguous
    // f32s (`layout`'s asserts), so each matrix address is valid for 16 f32s. `src` and
    // `dst` are 8 `Vec3`s, 24 contiguous f32s each (`layout`'s asserts): vertex l < 7
    // reads f32s 3l .. 3l + 4 (the fourth is vertex l + 1's x) and writes 3l .. 3l + 4 (the
    // fourth written again by the next vertex); vertex 7 reads 20 .. 24 and writes 21 .. 24.
    unsafe {
        let one = _mm256_set1_ps(1.0);
        // `(x | y)` and `(z | 1)` from `[x y z 1 | x y z 1]`; for the last vertex, read one
        // f32 early, from `[1 x y z | 1 x y z]`.
        let xy = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
        let z1 = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);
        let spreads = [xy, z1, xy, z1];
        let last = [
            xy,
            z1,
            _mm256_setr_epi32(1, 1, 1, 1, 2, 2, 2, 2),
            _mm256_setr_epi32(3, 3, 3, 3, 0, 0, 0, 0),
        ];
        let (joints, weights) = (joints8.as_ptr(), weights8.as_ptr());
        let (src, dst) = (src.as_ptr().cast::<f32>(), dst.as_mut_ptr().cast::<f32>());
        let matrices = block.linear.as_ptr().cast::<f32>();
        let pointers = (joints, weights, matrices, src, dst);
        // Lanes `2P` and `2P + 1` of `1 / Σw`, each spread over a half.
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
        // The four pairs, each times its lanes of `1 / Σw` where `$scale`.
        macro_rules! pairs {
            ($scale:literal, $factor:expr) => {
                position_pair4::<0, $scale, OFFSETS>(pointers, one, spreads, ($factor, spread(0)));
                position_pair4::<1, $scale, OFFSETS>(pointers, one, spreads, ($factor, spread(1)));
                position_pair4::<2, $scale, OFFSETS>(pointers, one, spreads, ($factor, spread(2)));
                position_pair4::<3, $scale, OFFSETS>(pointers, one, last, ($factor, spread(3)));
            };
        }
        match scale {
            Some(scale) => {
                pairs!(true, scale);
            }
            None => {
                pairs!(false, one);
            }
        }
    }
    true
}

/// Vertices `2P` and `2P + 1` of [`positions4`]'s block. Each vertex: its four matrices'
/// addresses (joint · 64 bytes, or with `OFFSETS` the stored byte offsets as they are: no
/// shift per influence), the blend `(c01, c23) = Σ wₛ (m[s][0..8], m[s][8..16])`, the position
/// broadcast to both halves with 1 blended in as its fourth lane, and `c01·(x | y) + c23·(z |
/// 1)` (`xy` and `z1` the permutes that spread it), whose halves added are `M p`. The two
/// vertices' halves are added in one register, `(a₀ | b₁) + (a₁ | b₀)` (a blend and one lane
/// crossing for two vertices, against an extract per vertex), times `scale`'s lanes `2P` and
/// `2P + 1` (spread by `spread`) where `SCALE` (the call divides by the weight sums,
/// `Block::divide_by_weight_sums`). As one `asm!` block, so that the compiler neither folds
/// `matrices + 64 · joint` into indexed operands (`[base + offset]`: an arithmetic instruction
/// with an indexed memory operand takes two rename slots instead of one,
/// `tools/ozz-compare/port_probe.c`'s "rename" rows) nor rewrites the permutes (into two scalar
/// loads, a shuffle and a cross-lane permute) nor spills the pointers.
///
/// # Safety
/// AVX2 and FMA; `pointers` are `(joints, weights, matrices, src, dst)` of [`positions4`]'s
/// block, valid as it says.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn position_pair4<const P: usize, const SCALE: bool, const OFFSETS: bool>(
    pointers: PairPointers,
    one: __m256,
    spreads: [__m256i; 4],
    scale: (__m256, __m256i),
) {
    if cfg!(skinblend_intrinsics) {
        // SAFETY: the caller's contract.
        unsafe { position_pair4_intrinsics::<P, SCALE, OFFSETS>(pointers, one, spreads, scale) };
        return;
    }
    let (joints, weights, matrices, src, dst) = pointers;
    let [xy_a, z1_a, xy_b, z1_b] = spreads;
    let (scale, spread) = scale;
    // Vertex `2P + 1` is the block's last where `P == 3`: read one f32 early, written in two.
    let last = P == 3;
    macro_rules! pair {
        ($shift:literal, $scale:literal, $store:literal) => {
            std::arch::asm!(
                "movzx {j0:e}, word ptr [{joints} + {jo_a}]",
                "movzx {j1:e}, word ptr [{joints} + {jo_a} + 2]",
                "movzx {j2:e}, word ptr [{joints} + {jo_a} + 4]",
                "movzx {j3:e}, word ptr [{joints} + {jo_a} + 6]",
                $shift,
                "add {j0}, {matrices}",
                "add {j1}, {matrices}",
                "add {j2}, {matrices}",
                "add {j3}, {matrices}",
                "vbroadcastss {w}, dword ptr [{weights} + {wo_a}]",
                "vmulps {a}, {w}, ymmword ptr [{j0}]",
                "vmulps {c23}, {w}, ymmword ptr [{j0} + 32]",
                "vbroadcastss {w}, dword ptr [{weights} + {wo_a} + 4]",
                "vfmadd231ps {a}, {w}, ymmword ptr [{j1}]",
                "vfmadd231ps {c23}, {w}, ymmword ptr [{j1} + 32]",
                "vbroadcastss {w}, dword ptr [{weights} + {wo_a} + 8]",
                "vfmadd231ps {a}, {w}, ymmword ptr [{j2}]",
                "vfmadd231ps {c23}, {w}, ymmword ptr [{j2} + 32]",
                "vbroadcastss {w}, dword ptr [{weights} + {wo_a} + 12]",
                "vfmadd231ps {a}, {w}, ymmword ptr [{j3}]",
                "vfmadd231ps {c23}, {w}, ymmword ptr [{j3} + 32]",
                "vbroadcastf128 {p}, xmmword ptr [{src} + {po_a}]",
                "vblendps {p}, {p}, {one}, 0x88",
                "vpermilps {w}, {p}, {xy_a}",
                "vpermilps {p}, {p}, {z1_a}",
                "vmulps {a}, {a}, {w}",
                "vfmadd231ps {a}, {c23}, {p}",
                "movzx {j0:e}, word ptr [{joints} + {jo_a} + 8]",
                "movzx {j1:e}, word ptr [{joints} + {jo_a} + 10]",
                "movzx {j2:e}, word ptr [{joints} + {jo_a} + 12]",
                "movzx {j3:e}, word ptr [{joints} + {jo_a} + 14]",
                $shift,
                "add {j0}, {matrices}",
                "add {j1}, {matrices}",
                "add {j2}, {matrices}",
                "add {j3}, {matrices}",
                "vbroadcastss {w}, dword ptr [{weights} + {wo_a} + 16]",
                "vmulps {b}, {w}, ymmword ptr [{j0}]",
                "vmulps {c23}, {w}, ymmword ptr [{j0} + 32]",
                "vbroadcastss {w}, dword ptr [{weights} + {wo_a} + 20]",
                "vfmadd231ps {b}, {w}, ymmword ptr [{j1}]",
                "vfmadd231ps {c23}, {w}, ymmword ptr [{j1} + 32]",
                "vbroadcastss {w}, dword ptr [{weights} + {wo_a} + 24]",
                "vfmadd231ps {b}, {w}, ymmword ptr [{j2}]",
                "vfmadd231ps {c23}, {w}, ymmword ptr [{j2} + 32]",
                "vbroadcastss {w}, dword ptr [{weights} + {wo_a} + 28]",
                "vfmadd231ps {b}, {w}, ymmword ptr [{j3}]",
                "vfmadd231ps {c23}, {w}, ymmword ptr [{j3} + 32]",
                "vbroadcastf128 {p}, xmmword ptr [{src} + {po_b}]",
                "vblendps {p}, {p}, {one}, {blend_b}",
                "vpermilps {w}, {p}, {xy_b}",
                "vpermilps {p}, {p}, {z1_b}",
                "vmulps {b}, {b}, {w}",
                "vfmadd231ps {b}, {c23}, {p}",
                "vperm2f128 {w}, {a}, {b}, 0x21",
                "vblendps {a}, {a}, {b}, 0xf0",
                "vaddps {a}, {a}, {w}",
                $scale,
                "vmovups xmmword ptr [{dst} + {qo_a}], {a:x}",
                $store,
                joints = in(reg) joints,
                weights = in(reg) weights,
                matrices = in(reg) matrices,
                src = in(reg) src,
                dst = in(reg) dst,
                jo_a = const 16 * P,
                wo_a = const 32 * P,
                po_a = const 24 * P,
                po_b = const if P == 3 { 24 * P + 8 } else { 24 * P + 12 },
                qo_a = const 24 * P,
                qo_b = const 24 * P + 12,
                blend_b = const if P == 3 { 0x11 } else { 0x88 },
                one = in(ymm_reg) one,
                xy_a = in(ymm_reg) xy_a,
                z1_a = in(ymm_reg) z1_a,
                xy_b = in(ymm_reg) xy_b,
                z1_b = in(ymm_reg) z1_b,
                scale = in(ymm_reg) scale,
                spread = in(ymm_reg) spread,
                j0 = out(reg) _,
                j1 = out(reg) _,
                j2 = out(reg) _,
                j3 = out(reg) _,
                w = out(ymm_reg) _,
                a = out(ymm_reg) _,
                b = out(ymm_reg) _,
                c23 = out(ymm_reg) _,
                p = out(ymm_reg) _,
                options(nostack),
            )
        };
    }
    // Times lanes `2P` and `2P + 1` of `scale`, or (without `SCALE`) not.
    macro_rules! scaled {
        ($shift:literal, $store:literal) => {
            if SCALE {
                pair!(
                    $shift,
                    "vpermps {w}, {spread}, {scale}\nvmulps {a}, {a}, {w}",
                    $store
                )
            } else {
                pair!($shift, "/* not scaled: {scale} {spread} */", $store)
            }
        };
    }
    // The joints times 64 (an entry's bytes), or (with `OFFSETS`, already bytes) not.
    macro_rules! shifted {
        ($store:literal) => {
            if OFFSETS {
                scaled!("/* byte offsets */", $store)
            } else {
                scaled!(
                    "shl {j0:e}, 6\nshl {j1:e}, 6\nshl {j2:e}, 6\nshl {j3:e}, 6",
                    $store
                )
            }
        };
    }
    // SAFETY: the caller's contract: the vertices' joints, weights, matrices, positions and
    // outputs are inside the pointers' ranges.
    unsafe {
        if last {
            shifted!(
                "vextractf128 {w:x}, {a}, 1\n\
                 vmovlps qword ptr [{dst} + {qo_b}], {w:x}\n\
                 vextractps dword ptr [{dst} + {qo_b} + 8], {w:x}, 2"
            );
        } else {
            shifted!("vextractf128 xmmword ptr [{dst} + {qo_b}], {a}, 1");
        }
    }
}

/// [`position_pair4`]'s intrinsics twin: the same loads, multiplies, fused multiply-adds,
/// shuffles and stores in the same order, so the same bits.
///
/// # Safety
/// As [`position_pair4`].
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn position_pair4_intrinsics<
    const P: usize,
    const SCALE: bool,
    const OFFSETS: bool,
>(
    pointers: PairPointers,
    one: __m256,
    spreads: [__m256i; 4],
    scale: (__m256, __m256i),
) {
    let (joints, weights, matrices, src, dst) = pointers;
    let [xy_a, z1_a, xy_b, z1_b] = spreads;
    let (scale, spread) = scale;
    // Vertex `2P + 1` is the block's last where `P == 3`: read one f32 early, written in two.
    let last = P == 3;
    // SAFETY: the caller's contract: the pair's joints, weights, matrices, positions and
    // outputs are inside the pointers' ranges, as `positions4` lays them out.
    unsafe {
        // Vertex `2P + v`: `c01·(x | y) + c23·(z | 1)`, its position read at f32 `position`.
        let vertex = |v: usize, xy: __m256i, z1: __m256i, position: usize, early: bool| {
            let slot = 8 * P + 4 * v;
            let entry = |s: usize| {
                let joint = usize::from(joints.add(slot + s).read());
                matrices.byte_add(if OFFSETS { joint } else { joint << 6 })
            };
            let weight = |s: usize| _mm256_set1_ps(weights.add(slot + s).read());
            let (m, w) = (entry(0), weight(0));
            let mut c01 = _mm256_mul_ps(w, _mm256_loadu_ps(m));
            let mut c23 = _mm256_mul_ps(w, _mm256_loadu_ps(m.add(8)));
            for s in 1..4 {
                let (m, w) = (entry(s), weight(s));
                c01 = _mm256_fmadd_ps(w, _mm256_loadu_ps(m), c01);
                c23 = _mm256_fmadd_ps(w, _mm256_loadu_ps(m.add(8)), c23);
            }
            let half = _mm_loadu_ps(src.add(position));
            let p = _mm256_set_m128(half, half);
            let p = if early {
                _mm256_blend_ps::<0x11>(p, one)
            } else {
                _mm256_blend_ps::<0x88>(p, one)
            };
            let a = _mm256_mul_ps(c01, _mm256_permutevar_ps(p, xy));
            _mm256_fmadd_ps(c23, _mm256_permutevar_ps(p, z1), a)
        };
        let a = vertex(0, xy_a, z1_a, 6 * P, false);
        let b = if last {
            vertex(1, xy_b, z1_b, 6 * P + 2, true)
        } else {
            vertex(1, xy_b, z1_b, 6 * P + 3, false)
        };
        let crossed = _mm256_permute2f128_ps::<0x21>(a, b);
        let mut sum = _mm256_add_ps(_mm256_blend_ps::<0xF0>(a, b), crossed);
        if SCALE {
            sum = _mm256_mul_ps(sum, _mm256_permutevar8x32_ps(scale, spread));
        }
        _mm_storeu_ps(dst.add(6 * P), _mm256_castps256_ps128(sum));
        let high = _mm256_extractf128_ps::<1>(sum);
        if last {
            let lanes: [f32; 4] = std::mem::transmute(high);
            for (i, &lane) in lanes[..3].iter().enumerate() {
                dst.add(6 * P + 3 + i).write(lane);
            }
        } else {
            _mm_storeu_ps(dst.add(6 * P + 3), high);
        }
    }
}
