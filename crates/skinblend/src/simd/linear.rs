//! Linear blend skinning, eight vertices at a time, and the 3x4 blend CoR shares.

use std::arch::x86_64::*;

use std::mem::MaybeUninit;

use glam::Vec3;

use super::lanes::{
    abs8, all8, cross8, dot8, fast_inverse_length8, load3x8, load_tangents8, normalize8_flipped_or,
    normalize8_or, scale8, store3x8, store_tangents8, transpose4_in_halves, transpose8, Block,
    LANES,
};
use crate::influences::MIN_WEIGHT_SUM;
use crate::palette::SIGNED_ENTRY_FLIP_BYTES;
use crate::reference::SINGULAR_RELATIVE;
use crate::types::{Diagnostics, SkinOutputs};

/// The blended 3x4s of eight vertices, one component of all eight per register.
pub(super) struct Linear8 {
    /// Columns x, y, z of the blended 3x3, as `[x, y, z]` each (weights as stored).
    pub(super) columns: [[__m256; 3]; 3],
    /// The blended translation (weights as stored).
    pub(super) translation: [__m256; 3],
    /// `1 / Σw` where the call divides by the weight sums (`Block::divide_by_weight_sums`),
    /// else `None`: the factor that turns the blend of the stored weights into the blend of
    /// normalized ones.
    pub(super) weight_scale: Option<__m256>,
    /// `Σw`, the stored weights' sum.
    pub(super) weight_sum: __m256,
}

impl Linear8 {
    /// `M p` with the weights normalized (where the call divides by the weight sums).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn point(&self, p: [__m256; 3]) -> [__m256; 3] {
        let [c0, c1, c2] = self.columns;
        let t = self.translation;
        let mut out = [_mm256_setzero_ps(); 3];
        for a in 0..3 {
            out[a] = _mm256_fmadd_ps(
                c2[a],
                p[2],
                _mm256_fmadd_ps(c1[a], p[1], _mm256_fmadd_ps(c0[a], p[0], t[a])),
            );
        }
        match self.weight_scale {
            Some(scale) => scale8(out, scale),
            None => out,
        }
    }
}

/// Blends the 3x4s of eight vertices, or `None` when one of them is unweighted (its weights
/// sum to less than `MIN_WEIGHT_SUM`, as the scalar kernel). `slots`: their joints and weights
/// (`Block::influences8`; with `OFFSETS`, their `Block::linear_offsets` in place of the
/// joints), sliced by the caller so that the driver's length check can stand for the slicing's
/// (`block`). `UNIT`: the call's weight sums are all 1 ([`unit_weight_sums`]), so no vertex is
/// unweighted or divided.
///
/// [`blend_rows8`] of the palette's 3x4s, `Σw` read from the translation's padding lane (which
/// the prepared palette sets to 1, so the blend sums the weights in slot order, as the scalar
/// kernel does). The weights are not divided by their sum per vertex: normalizing is one
/// eight-wide multiply of the result ([`Linear8::point`]), and the normal and tangent directions
/// are normalized anyway (the singular test is scale-free).
///
/// # Safety
/// The CPU has AVX2 and FMA. (Not a `#[target_feature]` function so that it can be
/// `#[inline(always)]`: returned through memory, its thirteen registers cost three
/// instructions per vertex; inlined into its `#[target_feature]` callers, its intrinsics
/// inline with it.)
#[inline(always)]
pub(super) unsafe fn blend8<
    const K: usize,
    const INTERLEAVE: bool,
    const UNIT: bool,
    const OFFSETS: bool,
>(
    block: &Block<'_>,
    slots: (&[u16], &[f32]),
) -> Option<Linear8> {
    // SAFETY: the caller guarantees AVX2 and FMA and the slots; `block.linear` is the
    // palette's 3x4s.
    let blend = unsafe {
        blend_rows8::<K, false, INTERLEAVE, OFFSETS>(
            block,
            slots,
            block.linear.as_ptr().cast(),
            None,
        )
    };
    let sum = blend.padding[3];
    if UNIT {
        // Every vertex weighted and none divided (`unit_weight_sums`); `Σw` unread.
        return Some(Linear8 {
            columns: blend.columns,
            translation: blend.translation,
            weight_scale: None,
            weight_sum: sum,
        });
    }
    // SAFETY: as above.
    if !unsafe { weighted8(block, sum) } {
        return None;
    }
    Some(Linear8 {
        columns: blend.columns,
        translation: blend.translation,
        // SAFETY: as above.
        weight_scale: unsafe { weight_scale8(block, sum) },
        weight_sum: sum,
    })
}

/// The blend of sixteen floats per influence (a 3x4 and its four padding lanes) of eight
/// vertices, one component of all eight per register.
pub(super) struct Blend16x8 {
    /// Columns x, y, z of the blended 3x3, as `[x, y, z]` each.
    pub(super) columns: [[__m256; 3]; 3],
    /// The blended translation.
    pub(super) translation: [__m256; 3],
    /// The blended padding lanes of columns x, y, z and the translation.
    pub(super) padding: [__m256; 4],
}

/// The signs of the quaternion lanes of a CoR blend ([`blend_rows8`]): each vertex's row of the
/// palette's pivot sign table, and the running count of the flips read (each adds its entry's
/// flip bit, as `dual_quat::table_flips` decodes it; only where the blend counts, its `C`).
pub(super) struct RotationSigns {
    /// Vertex `l`'s pivot joint's row of the table (byte offsets of lines, indexed by joint).
    pub(super) rows: [*const u16; LANES],
    /// The flip bits read, added.
    pub(super) count: usize,
}

/// Blends sixteen floats per influence of the eight vertices whose slots are `slots` (joints
/// or, with `OFFSETS`, LBS byte offsets, and weights, as [`blend8`]): without `signs`, those
/// at `entries + 16 joint` (a palette of 3x4s, 64 bytes each; with `OFFSETS`, at the byte
/// offsets); with `signs`, the line of
/// `entries` that the vertex's row of the pivot sign table gives for the joint (CoR's 3x4 with
/// its quaternion or with the quaternion negated, `PreparedPalette::signed_entries`), and where
/// `C` the flips are counted.
///
/// Each vertex is blended in two 256-bit registers ([`blend_vertex`]); the blends are then
/// transposed to one component of all eight per register: with eight influences as eight rows
/// and two 8x8 transposes; otherwise in two groups of four, each transposed inside the 128-bit
/// halves while its rows are still in registers, then the halves of the two groups joined (no
/// rows stored and reloaded; LBS with normals 1.04–1.07× in four of five `ab.py` runs, best
/// rounds, 0.95× in one; docs/bench.md). Without `signs` and without `INTERLEAVE`, the first
/// group is transposed before the second group's loads ([`barrier7`]); with `INTERLEAVE` the
/// compiler may interleave the two groups (the order LBS with tangents measured faster in).
///
/// # Safety
/// The CPU has AVX2 and FMA; `entries` holds 16 f32s for every joint of the palette (with
/// `signs`: `signs`' rows an entry for each, each the offset of 64 readable bytes of
/// `entries`). (Not a `#[target_feature]` function, as [`blend8`].)
#[inline(always)]
pub(super) unsafe fn blend_rows8<
    const K: usize,
    const C: bool,
    const INTERLEAVE: bool,
    const OFFSETS: bool,
>(
    block: &Block<'_>,
    (joints8, weights8): (&[u16], &[f32]),
    entries: *const f32,
    mut signs: Option<&mut RotationSigns>,
) -> Blend16x8 {
    // SAFETY: the caller guarantees AVX2 and FMA; the loads are justified where they are.
    unsafe {
        let k = block.k::<K>();
        // Vertex l's blend as `(c0 | c1)` and `(c2 | t)`. A macro, not a closure: a closure has
        // no target features, so its intrinsics would not inline.
        macro_rules! vertex {
            ($l:expr) => {{
                let l = $l;
                blend_vertex::<C, OFFSETS>(
                    entries,
                    &joints8[l * k..(l + 1) * k],
                    &weights8[l * k..(l + 1) * k],
                    signs
                        .as_deref_mut()
                        .map(|signs| (signs.rows[l], &mut signs.count)),
                )
            }};
        }
        if K == 8 {
            // Eight rows, two 8x8 transposes: with eight influences the two-group form below
            // retires 6 instructions per vertex more and measured 0.95x.
            let mut rows01 = [MaybeUninit::<__m256>::uninit(); LANES];
            let mut rows23 = [MaybeUninit::<__m256>::uninit(); LANES];
            // An opaque trip count keeps the loop a loop: unrolled eight times, the compiler
            // hoists every vertex's loads and spills them (about 15 instructions per vertex
            // more). It is still eight (`black_box` is the identity), so every row is written.
            let lanes = std::hint::black_box(LANES).min(LANES);
            for l in 0..lanes {
                let (c01, c23) = vertex!(l);
                rows01[l] = MaybeUninit::new(c01);
                rows23[l] = MaybeUninit::new(c23);
            }
            // Every row was written (above).
            let rows01 = rows01.map(|r| r.assume_init());
            let rows23 = rows23.map(|r| r.assume_init());
            // [c0x c0y c0z c0w c1x c1y c1z c1w] and [c2x c2y c2z c2w tx ty tz tw], per lane.
            let [c0x, c0y, c0z, c0w, c1x, c1y, c1z, c1w] = transpose8(rows01);
            let [c2x, c2y, c2z, c2w, tx, ty, tz, tw] = transpose8(rows23);
            Blend16x8 {
                columns: [[c0x, c0y, c0z], [c1x, c1y, c1z], [c2x, c2y, c2z]],
                translation: [tx, ty, tz],
                padding: [c0w, c1w, c2w, tw],
            }
        } else {
            // Two groups of four vertices, each transposed inside the 128-bit halves as soon
            // as it is blended (its rows stay in registers), then the halves joined: the
            // group's `(c0 | c1)` rows give `[c0x.. | c1x..]` .. `[c0w.. | c1w..]`, its
            // `(c2 | t)` rows `[c2x.. | tx..]` .. `[c2w.. | tw..]`.
            let [first, second] = if signs.is_none() {
                // LBS: written out, each group's rows in registers. (The loops below keep
                // them in stack arrays indexed by the loops here: LBS with normals 57.0
                // instead of 52.3 instructions per vertex; written out, 1.028× at 10k, 1.010×
                // at 100k, positions + normals + tangents 1.021×, by `ab.py`'s fastest calls,
                // two copies of the old binary 0.999–1.005×.)
                macro_rules! group {
                    ($g:expr) => {{
                        let (r0, s0) = vertex!(4 * $g);
                        let (r1, s1) = vertex!(4 * $g + 1);
                        let (r2, s2) = vertex!(4 * $g + 2);
                        let (r3, s3) = vertex!(4 * $g + 3);
                        let [a0, a1, a2, a3] = transpose4_in_halves([r0, r1, r2, r3]);
                        let [b0, b1, b2, b3] = transpose4_in_halves([s0, s1, s2, s3]);
                        [a0, a1, a2, a3, b0, b1, b2, b3]
                    }};
                }
                // The first group's rows finished before the second group's loads (`barrier7`:
                // 48.0 -> 47.6 instructions, three spills less per block; 1.020x at 10k,
                // 1.025x at 100k by `ab.py`, controls 0.996x, 0.994x; 1.033x at 10k by the
                // median of each binary's fastest third of 15 runs, control 1.000x).
                // With `INTERLEAVE` (where tangents follow) the compiler may blend both groups
                // at once: the barrier measured 0.965x there (48.0 -> 47.6 instructions
                // without tangents, 60.8 -> 60.3 with).
                let [a0, a1, a2, a3, b0, b1, b2, b3] = group!(0);
                let [a0, a1, a2, b0, b1, b2, b3] = if INTERLEAVE {
                    [a0, a1, a2, b0, b1, b2, b3]
                } else {
                    barrier7([a0, a1, a2, b0, b1, b2, b3])
                };
                [[a0, a1, a2, a3, b0, b1, b2, b3], group!(1)]
            } else {
                // CoR (with its sign table's rows): written out as above, the compiler hoists
                // the vertices' loads and spills them (CoR with normals 99.1 instead of 76.1
                // instructions per vertex).
                let mut groups = [[_mm256_setzero_ps(); 8]; 2];
                for (g, group) in groups.iter_mut().enumerate() {
                    let mut rows01 = [_mm256_setzero_ps(); 4];
                    let mut rows23 = [_mm256_setzero_ps(); 4];
                    // Opaque for the reason above; still four.
                    let lanes = std::hint::black_box(4usize).min(4);
                    for i in 0..lanes {
                        (rows01[i], rows23[i]) = vertex!(4 * g + i);
                    }
                    let [a0, a1, a2, a3] = transpose4_in_halves(rows01);
                    let [b0, b1, b2, b3] = transpose4_in_halves(rows23);
                    *group = [a0, a1, a2, a3, b0, b1, b2, b3];
                }
                groups
            };
            // Low halves of both groups (vertices 0-3 | 4-7), or high halves.
            macro_rules! low {
                ($i:expr) => {
                    _mm256_permute2f128_ps::<0x20>(first[$i], second[$i])
                };
            }
            macro_rules! high {
                ($i:expr) => {
                    _mm256_permute2f128_ps::<0x31>(first[$i], second[$i])
                };
            }
            Blend16x8 {
                columns: [
                    [low!(0), low!(1), low!(2)],
                    [high!(0), high!(1), high!(2)],
                    [low!(4), low!(5), low!(6)],
                ],
                translation: [high!(4), high!(5), high!(6)],
                padding: [low!(3), high!(3), low!(7), high!(7)],
            }
        }
    }
}

/// `r` unchanged, through an empty `asm!` block that may read or write memory: no load after it
/// in program order moves above it. Between LBS's two groups of four vertices, so that the
/// compiler finishes the first group's transposes before it starts the second group's loads (it
/// had hoisted all eight vertices' blends ahead, sixteen accumulators and a weight in sixteen
/// registers: spills). The first group's padding row is dead and not passed.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn barrier7(r: [__m256; 7]) -> [__m256; 7] {
    let [mut r0, mut r1, mut r2, mut r3, mut r4, mut r5, mut r6] = r;
    // SAFETY: the template is a comment; it changes no register, no memory and no flag.
    unsafe {
        std::arch::asm!(
            "/* {0} {1} {2} {3} {4} {5} {6} */",
            inout(ymm_reg) r0,
            inout(ymm_reg) r1,
            inout(ymm_reg) r2,
            inout(ymm_reg) r3,
            inout(ymm_reg) r4,
            inout(ymm_reg) r5,
            inout(ymm_reg) r6,
            options(nostack, preserves_flags),
        );
    }
    [r0, r1, r2, r3, r4, r5, r6]
}

/// One vertex's blended 16 floats as two 256-bit registers `(c0 | c1)` and `(c2 | t)`: per
/// influence one weight broadcast and two fused multiply-adds on the entry's halves. In a
/// prepared LBS palette the translation's lane 3 (padding in `Affine3A`) is 1, so the blend
/// carries `Σw` there (before, an insert of 1 per influence, or for `K = 4` three horizontal adds
/// per block: LBS with normals 1.03–1.06× at K = 4, 1.02× at K = 8 by
/// `tools/ozz-compare/ab.py`, docs/bench.md); the other padding lanes are blended and dropped
/// unread. With `signs` (`(row, count)`: the vertex's row of the pivot sign table, the running
/// count), each joint's entry is the line at its offset in the row (CoR's 3x4 with its
/// quaternion, or with the quaternion negated), and where `C` its flip bit is added to
/// `count`. Without, where `OFFSETS`, `joints` are the entries' byte offsets
/// (`Influences::linear_offsets`), added as they are: no shift per influence.
///
/// Each joint is read and scaled where it is used, not widened eight at a time per block and
/// read back from the stack (`JointOffsets`): that store and reload sat at the head of the
/// block's dependency chain, whose length the blocks' rate follows (docs/bench.md "Latency":
/// LBS with normals 1.037× at 10k, 1.064× at 100k, K = 8 1.024×, CoR 1.020×, fastest calls).
///
/// # Safety
/// The CPU has AVX2 and FMA; `entries` holds 16 f32s for every joint (with a row: the row an
/// entry for each joint, each the offset of 64 readable bytes of `entries`). (Not a
/// `#[target_feature]` function, as [`blend8`].)
#[inline(always)]
unsafe fn blend_vertex<const C: bool, const OFFSETS: bool>(
    entries: *const f32,
    joints: &[u16],
    weights: &[f32],
    mut signs: Option<(*const u16, &mut usize)>,
) -> (__m256, __m256) {
    // SAFETY (whole body): the caller guarantees AVX2, FMA, the entries and the row.
    unsafe {
        let mut c01 = _mm256_setzero_ps();
        let mut c23 = _mm256_setzero_ps();
        let mut first = true;
        for (joint, &weight) in joints.iter().zip(weights) {
            // A volatile read keeps each index a scalar load: the compiler would otherwise load
            // four at once and extract them with shuffles, on the port the transposes already
            // use. (Safe to read: the pointer comes from a reference.)
            let joint = usize::from(std::ptr::from_ref(joint).read_volatile());
            let w = _mm256_set1_ps(weight);
            // `Influences` guarantees joint < joint_count and `skin_into` checked that the
            // palette has at least joint_count entries of 16 contiguous f32s (layout asserts in
            // `lanes`), so both 32-byte loads are inside entry `joint`; with a row, inside the
            // line its offset gives (the caller's contract).
            let m = match signs.as_mut() {
                Some((row, count)) => {
                    let offset = row.add(joint).read();
                    if C {
                        **count += usize::from(offset & SIGNED_ENTRY_FLIP_BYTES);
                    }
                    entries.byte_add(usize::from(offset))
                }
                // LBS's entries by register; CoR's signed lines keep the indexed form (by
                // register 0.885× at 10k, `ab.py`'s fastest calls).
                None if OFFSETS => address_by_register(entries.byte_add(joint)),
                None => address_by_register(entries.add(16 * joint)),
            };
            let (m01, m23) = (_mm256_loadu_ps(m), _mm256_loadu_ps(m.add(8)));
            if first {
                // A multiply, not a multiply-add onto zero: that takes its entry as a separate
                // load (the zero is the addend's register) and holds a zero register (LBS with
                // normals 50.0 -> 48.3 instructions per vertex, callgrind).
                (c01, c23) = (_mm256_mul_ps(m01, w), _mm256_mul_ps(m23, w));
                first = false;
            } else {
                c01 = _mm256_fmadd_ps(m01, w, c01);
                c23 = _mm256_fmadd_ps(m23, w, c23);
            }
        }
        (c01, c23)
    }
}

/// `p` unchanged, through an empty `asm!` block the compiler cannot see into, so that it keeps
/// `p` in a register and addresses the two halves of the entry by that register alone (`[p]`,
/// `[p + 32]`) instead of folding `entries + 64 · joint` into indexed operands
/// (`[entries + offset]`): a multiply-add with an indexed memory operand takes two of this
/// core's rename slots instead of one (docs/bench.md, "Rename: indexed memory operands"), for
/// about the same instruction count. LBS with normals 1.05× at 10k and 100k by `ab.py`'s
/// fastest calls (docs/bench.md, "The Emerald Rapids host, twelfth session").
#[inline(always)]
fn address_by_register(p: *const f32) -> *const f32 {
    // The address alone passes through the block (`map_addr` keeps `p`'s provenance).
    p.map_addr(|mut address| {
        // SAFETY: an empty template: it reads and writes nothing but the register holding
        // `address`, which it leaves as it was.
        unsafe {
            std::arch::asm!(
                "/* {0} */",
                inout(reg) address,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        address
    })
}

/// Whether every one of eight vertices with weight sums `sum` is weighted (`Σw` at least
/// `MIN_WEIGHT_SUM`, as the scalar kernel). Not tested where the mesh has no unweighted vertex
/// (`Block::all_weighted`, from the slot-order sums, which decide as the blends' sums do: see
/// [`weight_sums4`]).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn weighted8(block: &Block<'_>, sum: __m256) -> bool {
    block.all_weighted
        || all8(_mm256_cmp_ps::<_CMP_GE_OQ>(
            sum,
            _mm256_set1_ps(MIN_WEIGHT_SUM),
        ))
}

/// The factor that turns a blend of eight vertices' stored weights into the blend of normalized
/// ones, `1 / Σw`, where the call divides by the weight sums (`Block::divide_by_weight_sums`);
/// else `None` (the blend is used as it is).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn weight_scale8(block: &Block<'_>, sum: __m256) -> Option<__m256> {
    block
        .divide_by_weight_sums
        .then(|| _mm256_div_ps(_mm256_set1_ps(1.0), sum))
}

/// Distance from 1 within which every vertex's weight sum (f32, slot order;
/// `Influences::weight_sum_range`) lets LBS and CoR's center blend skip the division by it even
/// where the call renormalizes: 2⁻²⁰, 8 f32 ulps of 1. Weights divided by their sum in f32 (the
/// vertices `Influences::from_lists` renormalizes, the benchmark rig's) sum to 1 within about
/// `2k` roundings of 2⁻²⁴, inside it for up to eight influences. Dividing by such a sum would
/// move a blended position by at most 2⁻²⁰ of its length, a tenth of `SIMD_VS_SCALAR`
/// (`tests/simd.rs`), and the normals and tangents not at all (they are normalized and the
/// singular test is scale-free); skipping it saves a division and three multiplies per block of
/// eight (LBS with normals) or the weight sums and a multiply per vertex (positions only).
pub(super) const UNIT_WEIGHT_SUM_BAND: f32 = 1.0 / 1_048_576.0;

/// Whether LBS and CoR's center blend divide by each vertex's weight sum: where the call
/// renormalizes and some vertex's sum (`weight_sums`, `Influences::weight_sum_range`) is
/// farther from 1 than [`UNIT_WEIGHT_SUM_BAND`]. Decided once per call (`Block::new`).
pub(super) fn divides_by_weight_sums(renormalize: bool, weight_sums: (f32, f32)) -> bool {
    let (low, high) = weight_sums;
    // A mesh without vertices, `(∞, 0)`, divides by nothing (NaN sums divide).
    let no_vertices = low > high;
    renormalize && !no_vertices && !weight_sums_are_unit(weight_sums)
}

/// Whether every weight sum in `weight_sums` (`Influences::weight_sum_range`) is within
/// [`UNIT_WEIGHT_SUM_BAND`] of 1 (false for NaN and for a mesh without vertices, `(∞, 0)`).
fn weight_sums_are_unit(weight_sums: (f32, f32)) -> bool {
    let (low, high) = weight_sums;
    1.0 - UNIT_WEIGHT_SUM_BAND <= low && high <= 1.0 + UNIT_WEIGHT_SUM_BAND
}

/// `Σw` of eight vertices with four influences each (32 consecutive weights), summed as
/// `(w₀ + w₁) + (w₂ + w₃)` by three horizontal adds: `[v₀ v₂ v₄ v₆ | v₁ v₃ v₅ v₇]`, then
/// permuted to vertex order. (The scalar kernel sums in slot order; the two differ by rounding
/// only, which moves neither the unweighted test, whose threshold is the smallest normal f32 —
/// sums of a few subnormals are exact either way — nor the result beyond `SIMD_VS_SCALAR`.)
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn weight_sums4(weights8: &[f32]) -> __m256 {
    let weights8 = &weights8[..4 * LANES];
    let p = weights8.as_ptr();
    // SAFETY: `weights8` is 32 f32s: loads at 0, 8, 16 and 24 are inside it.
    let (v01, v23, v45, v67) = unsafe {
        (
            _mm256_loadu_ps(p),
            _mm256_loadu_ps(p.add(8)),
            _mm256_loadu_ps(p.add(16)),
            _mm256_loadu_ps(p.add(24)),
        )
    };
    let pairs = _mm256_hadd_ps(_mm256_hadd_ps(v01, v23), _mm256_hadd_ps(v45, v67));
    _mm256_permutevar8x32_ps(pairs, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
}

/// `Σw` of eight vertices with eight influences each (64 consecutive weights), by horizontal
/// adds (`((w₀ + w₁) + (w₂ + w₃)) + ((w₄ + w₅) + (w₆ + w₇))`; rounding as [`weight_sums4`]).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn weight_sums8(weights8: &[f32]) -> __m256 {
    let weights8 = &weights8[..8 * LANES];
    let p = weights8.as_ptr();
    // SAFETY: `weights8` is 64 f32s: loads at 0, 8, .., 56 are inside it.
    let v: [__m256; 8] = std::array::from_fn(|i| unsafe { _mm256_loadu_ps(p.add(8 * i)) });
    // Vertices 4h .. 4h + 4: `[a₀₁₂₃ b₀₁₂₃ c₀₁₂₃ d₀₁₂₃ | a₄₅₆₇ b₄₅₆₇ ..]`, halves added.
    let four = |h: usize| {
        let quads = _mm256_hadd_ps(
            _mm256_hadd_ps(v[4 * h], v[4 * h + 1]),
            _mm256_hadd_ps(v[4 * h + 2], v[4 * h + 3]),
        );
        _mm_add_ps(
            _mm256_castps256_ps128(quads),
            _mm256_extractf128_ps::<1>(quads),
        )
    };
    _mm256_set_m128(four(1), four(0))
}

/// LBS positions only, four influences, of vertices `base .. base + 8`; `false`, having written
/// nothing, when one of them is unweighted. Each vertex's blended 3x4 stays in its two registers
/// `(c0 | c1)` and `(c2 | t)` (as [`blend8`] builds them) and transforms the vertex there:
/// `(c0·x + c2·z | c1·y + t)`, whose halves added are `M p`. No transposes, so the shuffle port
/// the eight-wide path saturates is left nearly idle. Rounding differs from [`block`]'s (the sums
/// are grouped differently), within `SIMD_VS_SCALAR` of the scalar kernel as every kernel.
///
/// Each pair of vertices is one `asm!` block ([`position_pair4`]; one block per vertex, as
/// before, measured 0.999× at 10k, 0.98× at 100k, 0.99× at 1M) that addresses the matrices by
/// register alone: against the compiler's indexed operands 1.08–1.13× at 10k, 1.10× at 100k, 1.00× at 1M
/// (`tools/ozz-compare/ab.py`, bests of 7–15 rounds; docs/bench.md "Rename"); written whole in
/// `asm!` rather than as intrinsics around an `asm!` blend, 42.4 -> 40.3 instructions per vertex
/// and 1.05–1.08× at 10k by `ab.py`'s fastest calls on the Zen 4 host (docs/bench.md). The
/// eight-wide kernels keep the compiler's indexed operands: the same blend in [`blend8`]
/// measured 1.03–1.07× at 10k and 0.95× at 100k with normals, not a gain (0.94× by fastest
/// calls). The matrices' addresses come from the joints read where they are used, not from
/// offsets widened per block and read back from the stack: 1.05× at 10k, 1.06× at 100k (fastest
/// calls, docs/bench.md "Latency"), nor computed one vertex ahead (0.95× against this: the
/// pointers spill).
///
/// The block's slices are taken unchecked (the driver checked their lengths once per call) and
/// with `R` no flag is tested: 32.4 -> 30.3 instructions per vertex, 1.028–1.030× at 10k,
/// 1.010–1.026× at 100k and 1.030× at 1M by `ab.py`'s fastest calls (docs/bench.md
/// "seventeenth session").
///
/// # Safety
/// The CPU has AVX2 and FMA; `base + 8` is at most the range's length, which `positions`,
/// `block.positions` and (four slots per vertex) `block.weights` and, with `OFFSETS`,
/// `block.linear_offsets`, else `block.joints`, have. (Not a `#[target_feature]` function, so
/// that it inlines into the driver loop, as [`blend8`]: as a `#[target_feature]` function it stayed a call per block,
/// saving and restoring seven registers each time: 46.9 -> 42.4 instructions per vertex, 1.10× at
/// 10k by `ab.py`'s fastest calls on the Zen 4 host, control 1.02×; docs/bench.md.)
#[inline(always)]
unsafe fn positions4<const R: bool, const OFFSETS: bool>(
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
    // f32s (layout asserts in `lanes`), so each matrix address is valid for 16 f32s. `src` and
    // `dst` are 8 `Vec3`s, 24 contiguous f32s each (layout asserts in `lanes`): vertex l < 7
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
/// addresses (joint · 64 bytes, or with `OFFSETS` the stored byte offsets as they are: 1.042× at
/// 10k, 1.049× at 100k, 1.054× at 1M by `ab.py`'s fastest calls, docs/bench.md "sixteenth
/// session"), the blend `(c01, c23) = Σ wₛ (m[s][0..8], m[s][8..16])`, the position broadcast
/// to both halves with 1 blended in as its fourth lane, and `c01·(x | y) + c23·(z | 1)` (`xy`
/// and `z1` the permutes that spread it), whose halves added are `M p`. The two vertices'
/// halves are added in one register, `(a₀ | b₁) + (a₁ | b₀)` (a blend and one lane crossing
/// for two vertices, against an extract per vertex), times `scale`'s lanes `2P` and `2P + 1`
/// (spread by `spread`) where `SCALE` (the call divides by the weight sums,
/// `Block::divide_by_weight_sums`). One `asm!` block, so that the compiler neither folds
/// `matrices + 64 · joint` into indexed operands (`[base + offset]`: an arithmetic instruction
/// with an indexed memory operand takes at least two of this core's six rename slots per cycle
/// instead of one, `port_probe`'s "rename" rows: eight multiplies among 24 nops, 8.0 cycles
/// indexed, 5.5 by a register) nor rewrites the permutes (LLVM turned them into two scalar
/// loads, a shuffle and a cross-lane permute) nor spills the pointers (as intrinsics: a stack
/// reload per vertex).
///
/// # Safety
/// AVX2 and FMA; `pointers` are `(joints, weights, matrices, src, dst)` of [`positions4`]'s
/// block, valid as it says.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn position_pair4<const P: usize, const SCALE: bool, const OFFSETS: bool>(
    pointers: (*const u16, *const f32, *const f32, *const f32, *mut f32),
    one: __m256,
    spreads: [__m256i; 4],
    scale: (__m256, __m256i),
) {
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

/// The lanes whose determinant `det` the singular bound `bound` does not clear: `|det| >
/// bound` fails (NaN included), so the exact test must decide them. [`singular8`]'s first test
/// and the deferred verdict of [`DeferredNormals::unclear`], which must agree for a block the
/// bound clears to be decided as the exact test decides it.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn not_cleared8(det: __m256, bound: __m256) -> __m256 {
    _mm256_cmp_ps::<_CMP_NGT_UQ>(abs8(det), bound)
}

/// Half-width of the relative band around the singular threshold inside which
/// [`singular8`]'s squared comparison defers to the exact one: both sides of the squared test
/// carry at most about ten f32 roundings (under 1e-6 relative), so outside this band the two
/// tests cannot disagree.
const SINGULAR_BAND: f32 = 1.0e-5;

/// Relative margin on the cube of [`singular8`]'s column bound. A blend of `k` influences
/// (and its weight sum) rounds each column by at most about `k · 2⁻²⁴` relative, so up to
/// [`BOUND_MAX_INFLUENCES`] the cubes of the computed lengths exceed the bound's by under 5e-5;
/// the rest covers the rounding of the bound, of the exact test's own terms and
/// [`SINGULAR_BAND`], so that a lane the bound clears is one the exact test clears too.
const BOUND_MARGIN: f32 = 1.0e-3;

/// Most influences per vertex for which [`BOUND_MARGIN`] covers the blend's rounding; vertices
/// with more always take the exact singular test.
const BOUND_MAX_INFLUENCES: usize = 256;

/// Column bounds (`Σw` times the palette's largest column length) inside which [`singular8`]'s
/// first test keeps every term a normal f32: `(Σw r)³` in `[2⁻⁵⁰, 2¹¹]` (`r` of
/// [`singular_bound_root`]).
const BOUND_RANGE: (f64, f64) = (1.0 / 1024.0, 1024.0);

/// The factor `r` of [`singular8`]'s first test, `(SINGULAR_RELATIVE (1 + BOUND_MARGIN))^⅓`
/// times the palette's `largest` column length, so that `(Σw r)³` bounds
/// `SINGULAR_RELATIVE (largest column length)³` with the margin; `None` (the exact test for every
/// block) where `k` exceeds [`BOUND_MAX_INFLUENCES`] or the mesh's weight sums
/// (`Influences::weight_sum_range`) put a bound outside [`BOUND_RANGE`]. Once per call: the
/// blocks then test no range.
pub(super) fn singular_bound_root(k: usize, weight_sums: (f32, f32), largest: f32) -> Option<f32> {
    let (low, high) = (
        f64::from(weight_sums.0) * f64::from(largest),
        f64::from(weight_sums.1) * f64::from(largest),
    );
    // Also false for NaN, and for a mesh without vertices (an infinite smallest sum).
    let in_range = BOUND_RANGE.0 <= low && low <= high && high <= BOUND_RANGE.1;
    (k <= BOUND_MAX_INFLUENCES && in_range).then(|| {
        let relative = f64::from(SINGULAR_RELATIVE) * (1.0 + f64::from(BOUND_MARGIN));
        (relative.cbrt() * f64::from(largest)) as f32
    })
}

/// [`singular8`]'s first bound for every block at once, `(r (1 + UNIT_WEIGHT_SUM_BAND))³` (`r`
/// of [`singular_bound_root`]), where every vertex's weight sum is within
/// [`UNIT_WEIGHT_SUM_BAND`] of 1, so that `Σw r ≤ r (1 + UNIT_WEIGHT_SUM_BAND)` in every lane
/// (the blend's rounding of `Σw` is inside [`BOUND_MARGIN`]); else `None`. Rounded up, so that
/// it is never below the per-lane bound it replaces.
pub(super) fn unit_singular_bound(k: usize, weight_sums: (f32, f32), largest: f32) -> Option<f32> {
    let root = singular_bound_root(k, weight_sums, largest)
        .filter(|_| weight_sums_are_unit(weight_sums))?;
    let bound = (f64::from(root) * (1.0 + f64::from(UNIT_WEIGHT_SUM_BAND))).powi(3);
    let rounded = bound as f32;
    Some(if f64::from(rounded) < bound {
        rounded.next_up()
    } else {
        rounded
    })
}

/// Weight sums inside which LBS's normals and tangents take the blend of the stored weights as
/// it is: its cofactors scale as `Σw²`, its determinant as `Σw³` and the normal's squared
/// length as `Σw⁴`, which underflow or overflow far from 1 (every normal of `tests/simd.rs`'s
/// `tiny_and_huge_weight_sums` came out wrong, the input's or reversed, at sums of 2⁻⁴⁰ and
/// 2⁴⁰; right at 2⁻³⁰ and 2³⁰).
const SCALE_FREE_WEIGHT_SUMS: (f32, f32) = (1.0 / 1024.0, 1024.0);

/// Whether a call divides LBS's blended 3x3 by `Σw` (nine multiplies per block) before its
/// normals and tangents, as the scalar kernel blends normalized weights: where it
/// renormalizes and the mesh has a weight sum outside [`SCALE_FREE_WEIGHT_SUMS`]
/// (`Influences::weight_sum_range`). Decided once per call (`Block::normalize_columns`).
pub(super) fn columns_need_normalizing(renormalize: bool, weight_sums: (f32, f32)) -> bool {
    let (low, high) = SCALE_FREE_WEIGHT_SUMS;
    // A mesh without vertices, `(∞, 0)`, needs nothing.
    renormalize && (weight_sums.0 < low || weight_sums.1 > high)
}

/// Whether a call takes LBS's unit-weights variant (the kernel table's `R` for LBS): every
/// weight sum is 1 within [`UNIT_WEIGHT_SUM_BAND`] and the singular test has its one bound for
/// the call ([`unit_singular_bound`]). Then no vertex is unweighted, none is divided by its sum
/// (nor its 3x3 for the normals: the sums are inside [`SCALE_FREE_WEIGHT_SUMS`]), and the
/// blocks test no flag for any of it, nor transpose `Σw`. `k` influences per vertex,
/// `largest` the palette's largest column length. (Weights divided by their sum in f32, as
/// `Influences::from_lists` and most exporters make them, are such.)
pub(super) fn unit_weight_sums(k: usize, weight_sums: (f32, f32), largest: f32) -> bool {
    unit_singular_bound(k, weight_sums, largest).is_some()
}

/// Largest squared column lengths inside this range keep every term of [`singular8`]'s squared
/// test a normal f32 (`SINGULAR_RELATIVE² m³` stays above 2⁻¹⁰⁰).
const SINGULAR_FAST_RANGE: (f32, f32) = (1.0 / 1_048_576.0, 1_048_576.0);

/// Lanes whose 3x3 (`columns`, determinant `det`) is singular for the normal transform:
/// `|det| ≤ SINGULAR_RELATIVE · (largest column length)³`, the scalar kernel's test; `None`
/// when the first test clears every lane (then every lane's `det` is also ordered and non-zero,
/// so its sign bit is its sign).
/// First, with no column length computed, where the call has a `bound_root`
/// ([`singular_bound_root`]): `(Σw r)³` bounds `SINGULAR_RELATIVE` times the cube of each
/// lane's largest column length with [`BOUND_MARGIN`] (`Σw` times the palette's largest column
/// length bounds the lane's, see [`PreparedPalette`]); when `|det|` exceeds it in every lane, no
/// lane is singular (three multiplies and a compare; the bound as `det²` against a sixth power,
/// its range tested per block, took nine instructions on the two pipes the multiplies need).
/// Otherwise compared squared (`det² ≤ SINGULAR_RELATIVE² m³`, `m` the largest squared
/// length), with no square root on the block's dependency chain; a block with a lane near the
/// threshold (within [`SINGULAR_BAND`]) or outside [`SINGULAR_FAST_RANGE`] takes the scalar
/// kernel's exact form, so every decision is the exact form's on this determinant (which itself
/// differs from the scalar kernel's by f32 rounding only).
///
/// [`PreparedPalette`]: crate::PreparedPalette
#[inline]
#[target_feature(enable = "avx2,fma")]
fn singular8(
    columns: [[__m256; 3]; 3],
    det: __m256,
    weight_sum: __m256,
    bound_root: Option<f32>,
    unit_bound: Option<f32>,
) -> Option<__m256> {
    // The bound for the whole block where the weight sums are 1, else per lane from `Σw`.
    let bound = match (unit_bound, bound_root) {
        (Some(bound), _) => Some(_mm256_set1_ps(bound)),
        (None, Some(root)) => {
            let b = _mm256_mul_ps(weight_sum, _mm256_set1_ps(root));
            Some(_mm256_mul_ps(_mm256_mul_ps(b, b), b))
        }
        (None, None) => None,
    };
    if let Some(bound) = bound {
        // The bound alone clears the block (the common case: no column length computed).
        // Every lane `|det| > bound` (ordered): no lane "not greater". Tested as `vtestps` of
        // the mask with itself, which needs no all-ones register (`all8` of the greater-than
        // mask took one, and a spill and reload to free it).
        let not_clear = not_cleared8(det, bound);
        if _mm256_testz_ps(not_clear, not_clear) == 1 {
            return None;
        }
    }
    let (low, high) = SINGULAR_FAST_RANGE;
    let det_squared = _mm256_mul_ps(det, det);
    let [c0, c1, c2] = columns;
    let m = _mm256_max_ps(_mm256_max_ps(dot8(c0, c0), dot8(c1, c1)), dot8(c2, c2));
    let bound_squared = _mm256_mul_ps(
        _mm256_mul_ps(
            _mm256_mul_ps(_mm256_set1_ps(SINGULAR_RELATIVE * SINGULAR_RELATIVE), m),
            m,
        ),
        m,
    );
    let in_range = _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_GE_OQ>(m, _mm256_set1_ps(low)),
        _mm256_cmp_ps::<_CMP_LE_OQ>(m, _mm256_set1_ps(high)),
    );
    let clear = _mm256_or_ps(
        _mm256_cmp_ps::<_CMP_LT_OQ>(
            det_squared,
            _mm256_mul_ps(bound_squared, _mm256_set1_ps(1.0 - SINGULAR_BAND)),
        ),
        _mm256_cmp_ps::<_CMP_GT_OQ>(
            det_squared,
            _mm256_mul_ps(bound_squared, _mm256_set1_ps(1.0 + SINGULAR_BAND)),
        ),
    );
    if all8(_mm256_and_ps(in_range, clear)) {
        return Some(_mm256_cmp_ps::<_CMP_LE_OQ>(det_squared, bound_squared));
    }
    // sqrt is monotonic and correctly rounded: the largest length is the root of the largest
    // squared length, exactly.
    let largest = _mm256_sqrt_ps(m);
    let bound = _mm256_mul_ps(
        _mm256_mul_ps(
            _mm256_mul_ps(_mm256_set1_ps(SINGULAR_RELATIVE), largest),
            largest,
        ),
        largest,
    );
    Some(_mm256_cmp_ps::<_CMP_LE_OQ>(abs8(det), bound))
}

/// One block's LBS normals, transformed and flipped where the blend mirrors, not yet of unit
/// length: [`block`] with normals and without tangents hands them on and normalizes and stores
/// them while it skins the next block (or the driver loop does, after its last block,
/// [`DeferredNormals::store`]). The normalize's chain (a dot product, `rsqrt`, a Newton step:
/// about 28 cycles by the latencies of its steps) then no longer ends each block's chain, which
/// the block rate follows (docs/bench.md "Latency"): LBS with normals 1.044× at 10k, 1.067× at
/// 100k, 1.05–1.12× at 1M (`tools/ozz-compare/ab.py`'s fastest calls; docs/bench.md "The
/// Emerald Rapids host, fifteenth session"). Off the chain, the fast inverse length is
/// taken as one factor (`rsqrt` times its Newton correction) and the normal scaled once, four
/// multiplies where normalizing at once ([`normalize8_flipped_or`], with tangents) takes six
/// with the chain shorter: so the last bit may differ from that one's, well inside
/// `SIMD_VS_SCALAR` (43.1 instead of 44.0 instructions per vertex, 1.020× at 10k by
/// `ab.py`'s fastest calls; docs/bench.md, eighteenth session). A length ignores the flip.
///
/// With `R` the singular test waits too ([`DeferredNormals::unclear`]): the block flips by the
/// determinant's sign and keeps the lanes the call's one bound did not clear, and the next
/// block tests them where it stores these normals, so that no branch waits at the end of the
/// block's chain (the determinant's). Where a lane is left, the block's normals are made again
/// with the exact test ([`exact_normals`]), so every normal and count is the exact test's.
/// LBS with normals 1.026× at 10k and 1.019× at 100k by `ab.py`'s fastest calls, controls
/// 0.999× and 1.000× (docs/bench.md, twentieth session).
pub(super) struct DeferredNormals {
    /// The block's normals, one component of all eight per register.
    pub(super) normals: [__m256; 3],
    /// The block's first vertex in the range.
    pub(super) base: usize,
    /// With `R`: the lanes (bit `l` for vertex `base + l`) whose determinant the call's
    /// singular bound ([`unit_singular_bound`]) did not clear, so that their flip by the sign
    /// alone may be wrong; else 0.
    pub(super) unclear: i32,
}

impl DeferredNormals {
    /// Normalizes the block's normals into `out` (by the fast inverse length where every
    /// lane's is in its window, else `normalize8_or`: where a normal has no length, the input's
    /// normal from `inputs`, as the scalar kernel); or, with `R`, where the singular bound left
    /// a lane unclear, makes them again by the exact test ([`exact_normals`]).
    ///
    /// # Safety
    /// `out` and `inputs` hold the block's vertices (they are the range's, which the block
    /// was inside), and so do `block`'s slices ([`block`]'s contract).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn store<const K: usize, const R: bool, const OFFSETS: bool>(
        self,
        block: &Block<'_>,
        out: &mut [Vec3],
        inputs: &[Vec3],
        diagnostics: &mut Diagnostics,
    ) {
        if R && self.unclear != 0 {
            // SAFETY: the caller's contract.
            unsafe { exact_normals::<K, OFFSETS>(block, self.base, out, inputs, diagnostics) };
            return;
        }
        let vertices = self.base..self.base + LANES;
        // SAFETY: the caller guarantees both slices hold the vertices.
        let (out, inputs) = unsafe {
            (
                out.get_unchecked_mut(vertices.clone()),
                inputs.get_unchecked(vertices),
            )
        };
        let normals = match fast_inverse_length8(dot8(self.normals, self.normals)) {
            Some(inverse) => scale8(self.normals, inverse),
            None => normalize8_or(self.normals, load3x8(inputs, 0)),
        };
        store3x8(out, 0, normals);
    }
}

/// LBS of vertices `base .. base + 8`. Returns `false`, having written nothing, when one of
/// them is unweighted. `R`: every weight sum is 1 ([`unit_weight_sums`], chosen once per
/// call): no flag is tested. Without it, the call's flags decide the unweighted test, the
/// division by `Σw`, whether the blended 3x3 is divided by `Σw` before the normals and
/// tangents ([`columns_need_normalizing`]) and the singular test's bound. With normals and
/// without tangents, the normals are left in `deferred` ([`DeferredNormals`]), after those held
/// there from an earlier block are stored. `OFFSETS`: the palette entries are addressed by
/// `Block::linear_offsets`, which the caller has seen cover the range (no shift per influence).
///
/// # Safety
/// `base + 8` is at most the range's length, which `outputs.positions` and the block's
/// positions have and (`k` slots per vertex) its joints, weights and, with `OFFSETS`, linear
/// offsets: the driver's length check for LBS (`drive_avx2`).
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn block<
    const K: usize,
    const N: bool,
    const T: bool,
    const R: bool,
    const OFFSETS: bool,
>(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    base: usize,
    diagnostics: &mut Diagnostics,
    deferred: &mut Option<DeferredNormals>,
) -> bool {
    if K == 4 && !(N || T) {
        // SAFETY: this function runs only where AVX2 and FMA are enabled; the lengths are the
        // caller's contract.
        return unsafe { positions4::<R, OFFSETS>(block, outputs.positions, base) };
    }
    // The block's slots and vertices, unchecked: the driver checked every slice's length once
    // per call (48.3 -> 45.5 instructions per vertex with normals by callgrind; with the first
    // influence's multiply, `blend_vertex`, 1.032× at 10k and 1.049× at 100k against `3f41fd1`
    // by `ab.py`'s fastest calls; docs/bench.md, eighteenth session).
    let vertices = base..base + LANES;
    // SAFETY: the caller's contract: the slices cover the block's slots and vertices.
    let slots = unsafe { block.linear_slots8::<K, OFFSETS>(base) };
    // SAFETY: this function runs only where AVX2 and FMA are enabled.
    // Tangents follow: the two groups' blends may interleave (`blend_rows8`).
    let Some(m) = (unsafe { blend8::<K, T, R, OFFSETS>(block, slots) }) else {
        return false;
    };
    // SAFETY (each slice of `vertices` below): the caller's contract.
    unsafe {
        store3x8(
            outputs.positions.get_unchecked_mut(vertices.clone()),
            0,
            m.point(load3x8(block.positions.get_unchecked(vertices.clone()), 0)),
        );
    }
    if !(N || T) {
        return true;
    }
    // Weight sums far from one, renormalized: the 3x3 of normalized weights, as the scalar
    // kernel blends it, and the exact singular test.
    let (columns, bound_root, unit_bound) = if R {
        // The call's one bound, which `unit_weight_sums` saw (infinite, were it missing: every
        // block would take the exact test).
        let bound = block.unit_singular_bound.unwrap_or(f32::INFINITY);
        (m.columns, None, Some(bound))
    } else if block.normalize_columns {
        let columns = match m.weight_scale {
            Some(scale) => m.columns.map(|column| scale8(column, scale)),
            None => m.columns,
        };
        (columns, None, None)
    } else {
        (
            m.columns,
            block.singular_bound_root,
            block.unit_singular_bound,
        )
    };
    let cofactor0 = cross8(columns[1], columns[2]);
    let det = dot8(columns[0], cofactor0);
    let [c0, c1, c2] = columns;
    // The same, where the singular test has shown every lane's determinant ordered and non-zero.
    let mut known_sign = None;
    if let (true, Some(out), Some(src)) = (N, outputs.normals.as_deref_mut(), block.normals) {
        // The earlier block's normals are stored after this block's are made (below): with
        // the block's slices unchecked, 45.5 -> 44.0 instructions per vertex and 27 -> 16 stack
        // accesses per block by callgrind, 1.058× at 10k and 1.043× at 100k by `ab.py`'s
        // fastest calls (docs/bench.md, eighteenth session; before those, storing them first
        // had been the shorter loop).
        let earlier = deferred.take();
        // SAFETY: the caller's contract.
        let n = load3x8(unsafe { src.get_unchecked(vertices.clone()) }, 0);
        let normal = cofactor_normal8(columns, cofactor0, n);
        // Flip where not singular and the determinant is negative: xor the sign, after the
        // length is taken (the determinant's test ends later than the normal).
        let mut unclear = 0;
        let flip = if R && !T {
            // The call's one bound (which `unit_weight_sums` saw), tested where the next block
            // stores these normals (`DeferredNormals::unclear`); meanwhile the sign's flip.
            let bound = block.unit_singular_bound.unwrap_or(f32::INFINITY);
            unclear = _mm256_movemask_ps(not_cleared8(det, _mm256_set1_ps(bound)));
            _mm256_and_ps(det, _mm256_set1_ps(-0.0))
        } else {
            singular_flip8(
                columns,
                det,
                (m.weight_sum, bound_root, unit_bound),
                diagnostics,
                &mut known_sign,
            )
        };
        if T {
            // SAFETY: the caller's contract.
            let out = unsafe { out.get_unchecked_mut(vertices.clone()) };
            store3x8(out, 0, normalize8_flipped_or(normal, flip, n));
        } else {
            let normals = normal.map(|c| _mm256_xor_ps(c, flip));
            if let Some(earlier) = earlier {
                // SAFETY: an earlier block's vertices, inside the range (the caller's contract).
                unsafe { earlier.store::<K, R, OFFSETS>(block, out, src, diagnostics) };
            }
            *deferred = Some(DeferredNormals {
                normals,
                base,
                unclear,
            });
        }
    }
    if let (true, Some(out), Some(src)) = (T, outputs.tangents.as_deref_mut(), block.tangents) {
        // SAFETY (both slices): the caller's contract.
        let (src, out) = unsafe {
            (
                src.get_unchecked(vertices.clone()),
                out.get_unchecked_mut(vertices),
            )
        };
        let (d, w) = load_tangents8(src, 0);
        let mut direction = [_mm256_setzero_ps(); 3];
        for a in 0..3 {
            direction[a] = _mm256_fmadd_ps(
                c2[a],
                d[2],
                _mm256_fmadd_ps(c1[a], d[1], _mm256_mul_ps(c0[a], d[0])),
            );
        }
        let sign = match known_sign {
            Some(sign) => sign,
            None => negative_sign8(det),
        };
        let w = _mm256_xor_ps(w, sign);
        store_tangents8(out, 0, normalize8_or(direction, d), w);
    }
    true
}

/// The cofactor matrix of `columns` times `n`, `n_x (c1 × c2) + n_y (c2 × c0) + n_z (c0 ×
/// c1)`, as `n_x (c1 × c2) + c0 × (n_z c1 − n_y c2)` (`cofactor0` is `c1 × c2`): 18
/// multiply-class instructions for the normal instead of 24 (two cross products less).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn cofactor_normal8(
    columns: [[__m256; 3]; 3],
    cofactor0: [__m256; 3],
    n: [__m256; 3],
) -> [__m256; 3] {
    let [c0, c1, c2] = columns;
    let mut v = [_mm256_setzero_ps(); 3];
    for a in 0..3 {
        v[a] = _mm256_fnmadd_ps(n[1], c2[a], _mm256_mul_ps(n[2], c1[a]));
    }
    let mut normal = [_mm256_setzero_ps(); 3];
    for a in 0..3 {
        let (b, c) = ((a + 1) % 3, (a + 2) % 3);
        normal[a] = _mm256_fmadd_ps(
            n[0],
            cofactor0[a],
            _mm256_fmsub_ps(c0[b], v[c], _mm256_mul_ps(c0[c], v[b])),
        );
    }
    normal
}

/// `-0.0` in the lanes whose determinant `det` is negative (a mirror), else `0.0` (also for
/// zero and NaN).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn negative_sign8(det: __m256) -> __m256 {
    _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_LT_OQ>(det, _mm256_setzero_ps()),
        _mm256_set1_ps(-0.0),
    )
}

/// The sign bits to xor into a block's normals: `-0.0` where the 3x3 (`columns`, determinant
/// `det`) mirrors and is not singular, else `0.0`, by [`singular8`] (`bounds`: the blocks'
/// `Σw`, bound root and unit bound it takes), its singular lanes counted in `diagnostics`.
/// Where no lane is singular, `known_sign` is set to the determinant's sign bits.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn singular_flip8(
    columns: [[__m256; 3]; 3],
    det: __m256,
    (weight_sum, bound_root, unit_bound): (__m256, Option<f32>, Option<f32>),
    diagnostics: &mut Diagnostics,
    known_sign: &mut Option<__m256>,
) -> __m256 {
    match singular8(columns, det, weight_sum, bound_root, unit_bound) {
        None => {
            // No lane singular, every determinant ordered and non-zero: its sign bit.
            let sign = _mm256_and_ps(det, _mm256_set1_ps(-0.0));
            *known_sign = Some(sign);
            sign
        }
        Some(singular) => {
            diagnostics.singular_normal_matrices +=
                _mm256_movemask_ps(singular).count_ones() as usize;
            _mm256_andnot_ps(singular, negative_sign8(det))
        }
    }
}

/// The normals of the block `base .. base + 8` with unit weight sums (`R`), made again with
/// the exact singular test and stored in `out`: where the call's bound left one of its lanes
/// unclear ([`DeferredNormals::unclear`]). The same blend, cofactor normal and normalize as
/// [`block`]'s, so the normals are those [`block`] makes with the exact test inline, and the
/// singular lanes are counted. Out of line: the bound leaves a lane only where a determinant
/// is within about `SINGULAR_RELATIVE` of the palette's scale cubed.
///
/// # Safety
/// As [`block`]'s for `base`; `out` and `inputs` are the range's normals.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx2,fma")]
unsafe fn exact_normals<const K: usize, const OFFSETS: bool>(
    block: &Block<'_>,
    base: usize,
    out: &mut [Vec3],
    inputs: &[Vec3],
    diagnostics: &mut Diagnostics,
) {
    // SAFETY: the caller's contract.
    let slots = unsafe { block.linear_slots8::<K, OFFSETS>(base) };
    // SAFETY: the caller's contract; with unit weight sums no vertex is unweighted.
    let Some(m) = (unsafe { blend8::<K, false, true, OFFSETS>(block, slots) }) else {
        return;
    };
    let cofactor0 = cross8(m.columns[1], m.columns[2]);
    let det = dot8(m.columns[0], cofactor0);
    // SAFETY: the caller's contract.
    let n = load3x8(unsafe { inputs.get_unchecked(base..base + LANES) }, 0);
    let normal = cofactor_normal8(m.columns, cofactor0, n);
    // As `block` with `R` and the exact test: no bound root, the call's unit bound.
    let bound = block.unit_singular_bound.unwrap_or(f32::INFINITY);
    let flip = singular_flip8(
        m.columns,
        det,
        (m.weight_sum, None, Some(bound)),
        diagnostics,
        &mut None,
    );
    let normals = DeferredNormals {
        normals: normal.map(|c| _mm256_xor_ps(c, flip)),
        base,
        unclear: 0,
    };
    // SAFETY: the caller's contract.
    unsafe { normals.store::<K, false, OFFSETS>(block, out, inputs, diagnostics) };
}

#[cfg(test)]
mod tests {
    use glam::{Vec3, Vec4};

    use super::{
        divides_by_weight_sums, singular_bound_root, unit_singular_bound, BOUND_MARGIN,
        BOUND_MAX_INFLUENCES, UNIT_WEIGHT_SUM_BAND,
    };
    use crate::reference::SINGULAR_RELATIVE;

    /// The division by the weight sums is skipped only where the call renormalizes and every
    /// sum is inside the band around 1 (or there is no vertex), or where it does not renormalize.
    #[test]
    fn weight_sums_are_divided_outside_the_unit_band() {
        let band = UNIT_WEIGHT_SUM_BAND;
        assert!(!divides_by_weight_sums(true, (1.0, 1.0)));
        assert!(!divides_by_weight_sums(true, (1.0 - band, 1.0 + band)));
        assert!(!divides_by_weight_sums(true, (f32::INFINITY, 0.0)));
        assert!(divides_by_weight_sums(true, (1.0 - 2.0 * band, 1.0)));
        assert!(divides_by_weight_sums(true, (1.0, 1.0 + 2.0 * band)));
        assert!(divides_by_weight_sums(true, (0.5, 1.0)));
        assert!(divides_by_weight_sums(true, (f32::NAN, f32::NAN)));
        assert!(!divides_by_weight_sums(false, (0.5, 2.0)));
    }

    /// The call-wide bound is at least the per-lane bound `(Σw r)³` of every sum in the band,
    /// and there is none where a sum lies outside it or there is no per-lane bound.
    #[test]
    fn unit_singular_bound_covers_every_sum_in_the_band() {
        let band = UNIT_WEIGHT_SUM_BAND;
        let sums = (1.0 - band, 1.0 + band);
        for largest in [0.01, 1.0, 1.5, 700.0] {
            let bound = unit_singular_bound(4, sums, largest).unwrap();
            let root = singular_bound_root(4, sums, largest).unwrap();
            let per_lane = ((1.0 + band) * root).powi(3);
            assert!(bound >= per_lane, "{largest}: {bound} < {per_lane}");
            assert!(
                bound <= per_lane * (1.0 + 1e-6),
                "{largest}: {bound} far above {per_lane}"
            );
        }
        assert!(unit_singular_bound(4, (1.0, 1.0 + 2.0 * band), 1.0).is_none());
        assert!(unit_singular_bound(4, (0.5, 1.0), 1.0).is_none());
        assert!(unit_singular_bound(4, (1.0, 1.0), 4096.0).is_none());
    }

    /// The singular test's bound factor: `(Σw r)³` is `SINGULAR_RELATIVE (1 + BOUND_MARGIN)`
    /// times `(Σw · largest)³` (to f32 rounding), and there is none where a bound
    /// `Σw · largest` leaves `[2⁻¹⁰, 2¹⁰]`, for NaN, for a mesh without vertices or for more
    /// influences than the margin covers.
    #[test]
    fn singular_bound_root_is_in_range_or_none() {
        let root = singular_bound_root(4, (0.5, 2.0), 1.5).unwrap();
        let expected =
            f64::from(SINGULAR_RELATIVE) * (1.0 + f64::from(BOUND_MARGIN)) * 1.5f64.powi(3);
        // f32 rounding of the root, cubed: under 1e-6 relative.
        assert!((f64::from(root).powi(3) / expected - 1.0).abs() < 1e-6);
        assert!(singular_bound_root(4, (1.0, 1.0), 1024.0).is_some());
        for (k, sums, largest) in [
            (4, (1.0, 1.0), 1025.0),
            (4, (1.0 / 2048.0, 1.0), 1.0),
            (4, (1.0, 2048.0), 1.0),
            (4, (1.0, 1.0), 0.0),
            (4, (1.0, 1.0), f32::NAN),
            (4, (f32::INFINITY, 0.0), 1.0),
            (BOUND_MAX_INFLUENCES + 1, (1.0, 1.0), 1.0),
        ] {
            assert_eq!(
                singular_bound_root(k, sums, largest),
                None,
                "k = {k}, sums {sums:?}, largest {largest}"
            );
        }
    }

    use crate::fixtures::benchmark_mesh;
    use crate::{prepare, skin_into, Method, SkinInput, SkinOptions, SkinOutputs};

    /// Skins `mesh` (positions, normals, tangents) with `palette`, one thread; the output bits
    /// and the diagnostics.
    fn skin_bits(
        mesh: &crate::fixtures::BenchmarkMesh,
        method: Method,
        palette: &crate::PreparedPalette,
    ) -> (Vec<u32>, crate::Diagnostics) {
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
        // An `Affine3A` is 16 f32s (layout asserts in `lanes`); on x86-64 each column is one
        // 128-bit register, so every lane is an f32.
        std::ptr::from_mut(matrix).cast::<f32>()
    }

    /// The kernels load each `Affine3A` column with its padding lane (lane 3 of each 16-byte
    /// `Vec3A`): poisoning the three columns' padding lanes with NaN must leave every output bit
    /// as it was. (The translation's padding lane is the weight-sum carrier, 1 in a prepared
    /// palette: the next test.)
    #[test]
    fn column_padding_lanes_are_never_used() {
        if super::super::simd_backend().is_none() {
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
                // SAFETY: as above.
                assert!(
                    unsafe { lanes.add(7).read() }.is_nan(),
                    "the poison must stick"
                );
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
        if super::super::simd_backend().is_none() {
            return; // the scalar kernel sums the weights itself
        }
        for k in [3, 4, 8] {
            let mut mesh = benchmark_mesh(203, k, 16, 9);
            // Weight sums of 1/2, so that the kernels divide by them (sums within
            // `UNIT_WEIGHT_SUM_BAND` of 1 would not read the lane).
            let halved: Vec<f32> = mesh.influences.weights().iter().map(|w| 0.5 * w).collect();
            mesh.influences =
                crate::Influences::new(k, mesh.influences.joints().to_vec(), halved, 16).unwrap();
            let clean = prepare(&mesh.palette, None, Method::Linear).unwrap();
            let mut doubled = clean.clone();
            for matrix in doubled.linear_matrices_mut() {
                let lanes = lanes_of(matrix);
                // SAFETY: inside the matrix (`lanes_of`).
                unsafe {
                    assert_eq!(
                        lanes.add(crate::palette::TRANSLATION_PADDING_LANE).read(),
                        1.0
                    );
                    lanes
                        .add(crate::palette::TRANSLATION_PADDING_LANE)
                        .write(2.0);
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
}
