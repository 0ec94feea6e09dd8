//! The 3x4 blend LBS and CoR share: sixteen floats per influence (a joint's 3x4 and its
//! padding lanes) blended eight vertices at a time and transposed to one component per
//! register, with the weight sums it divides by.
//!
//! Two `asm!` blocks keep the compiler's scheduling in check, each beside its intrinsics twin:
//! [`barrier7`] and [`address_by_register`].

use std::arch::x86_64::*;

use std::mem::MaybeUninit;

use super::block::Block;
use super::layout::{SignedLayout, LANES};
use super::loads::{transpose4_in_halves, transpose8};
use super::math::{all8, scale8};
use crate::influence_tables::MIN_WEIGHT_SUM;

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
/// `#[inline(always)]`: returned through memory, its thirteen registers would cost stores and
/// reloads per block; inlined into its `#[target_feature]` callers, its intrinsics inline with
/// it.)
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
/// flip bit, as `block::table_flips` decodes it; only where the blend counts, its `C`).
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
/// rows stored and reloaded). Without `signs` and without `INTERLEAVE`, the first group is
/// transposed before the second group's loads ([`barrier7`]); with `INTERLEAVE` the compiler
/// may interleave the two groups (the order LBS with tangents runs faster in).
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
            // retires more instructions per vertex and runs slower.
            let mut rows01 = [MaybeUninit::<__m256>::uninit(); LANES];
            let mut rows23 = [MaybeUninit::<__m256>::uninit(); LANES];
            // An opaque trip count keeps the loop a loop: unrolled eight times, the compiler
            // hoists every vertex's loads and spills them. It is still eight (`black_box` is
            // the identity), so every row is written.
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
                // LBS: written out, each group's rows in registers (the loops below would
                // keep them in stack arrays: LBS with normals 1.03× at 10k written out,
                // `ab.py 15 "linear pn 4 10000 5000"` against the loops; the measuring recipe
                // is in `simd/mod.rs`).
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
                // The first group's rows finished before the second group's loads
                // (`barrier7`: three spills less per block). With `INTERLEAVE` (where tangents
                // follow) the compiler may blend both groups at once: there the barrier is
                // slower.
                let [a0, a1, a2, a3, b0, b1, b2, b3] = group!(0);
                let [a0, a1, a2, b0, b1, b2, b3] = if INTERLEAVE {
                    [a0, a1, a2, b0, b1, b2, b3]
                } else {
                    barrier7([a0, a1, a2, b0, b1, b2, b3])
                };
                [[a0, a1, a2, a3, b0, b1, b2, b3], group!(1)]
            } else {
                // CoR (with its sign table's rows): written out as above, the compiler hoists
                // the vertices' loads and spills them.
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
/// compiler finishes the first group's transposes before it starts the second group's loads
/// (without it, it hoists all eight vertices' blends ahead, sixteen accumulators and a weight
/// in sixteen registers, and spills). The first group's padding row is dead and not passed.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn barrier7(r: [__m256; 7]) -> [__m256; 7] {
    if cfg!(skinblend_intrinsics) {
        return barrier7_intrinsics(r);
    }
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

/// [`barrier7`]'s twin: the identity, which leaves the order to the compiler.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(super) fn barrier7_intrinsics(r: [__m256; 7]) -> [__m256; 7] {
    r
}

/// One vertex's blended 16 floats as two 256-bit registers `(c0 | c1)` and `(c2 | t)`: per
/// influence one weight broadcast and two fused multiply-adds on the entry's halves. In a
/// prepared LBS palette the translation's lane 3 (padding in `Affine3A`) is 1, so the blend
/// carries `Σw` there with no instruction of its own (LBS with normals 1.04× at K = 4 against
/// three horizontal adds per block, `ab.py 15 "linear pn 4 10000 5000"`; the measuring recipe
/// is in `simd/mod.rs`); the other padding lanes are blended and dropped unread. With `signs` (`(row, count)`: the vertex's row of the pivot sign table, the running
/// count), each joint's entry is the line at its offset in the row (CoR's 3x4 with its
/// quaternion, or with the quaternion negated), and where `C` its flip bit is added to
/// `count`. Without, where `OFFSETS`, `joints` are the entries' byte offsets
/// (`Influences::linear_offsets`), added as they are: no shift per influence.
///
/// Each joint is read and scaled where it is used, not widened eight at a time per block and
/// read back from the stack (`dq_blend::JointOffsets`): that store and reload would head the
/// block's dependency chain, whose length the blocks' rate follows (LBS with normals 1.06× at
/// 100k, `ab.py 15 "linear pn 4 100000 500"` against the widened offsets).
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
    // SAFETY: the caller guarantees AVX2, FMA, the entries and the row (the whole body).
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
            // palette has at least joint_count entries of 16 contiguous f32s (`layout`'s
            // asserts), so both 32-byte loads are inside entry `joint`; with a row, inside the
            // line its offset gives (the caller's contract).
            let m = match signs.as_mut() {
                Some((row, count)) => {
                    let offset = row.add(joint).read();
                    if C {
                        **count += usize::from(offset & SignedLayout::ROTATION_LANES.flip_bytes);
                    }
                    entries.byte_add(usize::from(offset))
                }
                // LBS's entries by register; CoR's signed lines keep the indexed form (by
                // register is slower there).
                None if OFFSETS => address_by_register(entries.byte_add(joint)),
                None => address_by_register(entries.add(16 * joint)),
            };
            let (m01, m23) = (_mm256_loadu_ps(m), _mm256_loadu_ps(m.add(8)));
            if first {
                // A multiply, not a multiply-add onto zero: that takes its entry as a separate
                // load (the zero is the addend's register) and holds a zero register.
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
/// (`[entries + offset]`): a multiply-add with an indexed memory operand takes two rename slots
/// instead of one (`tools/ozz-compare/port_probe.c`'s "rename" rows), for about the same
/// instruction count. LBS with normals 1.05× at 10k, `ab.py 15 "linear pn 4 10000 5000"`
/// against the twin (the measuring recipe is in `simd/mod.rs`).
#[inline(always)]
pub(super) fn address_by_register(p: *const f32) -> *const f32 {
    if cfg!(skinblend_intrinsics) {
        return address_by_register_intrinsics(p);
    }
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

/// [`address_by_register`]'s twin: the identity, which leaves the addressing to the compiler.
#[inline(always)]
pub(super) fn address_by_register_intrinsics(p: *const f32) -> *const f32 {
    p
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
