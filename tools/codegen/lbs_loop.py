#!/usr/bin/env python3
"""Generates crates/skinblend/src/simd/lbs_loop.rs: LBS with positions and normals, four
influences, unit weight sums and palette byte offsets, written as one `asm!` loop.

    python3 tools/codegen/lbs_loop.py > crates/skinblend/src/simd/lbs_loop.rs
    rustfmt --edition 2021 crates/skinblend/src/simd/lbs_loop.rs

CI regenerates the file and fails where it differs from the committed one (.ci/run), so edit
this script, never the output. The loop skins every whole block of a call of that variant
(`simd::driver::whole_blocks` calls it): the variant `skinblend bench` and the comparison with
ozz-animation measure. Its twin is the compiled driver loop over `simd::lbs::block` (the same
operations in the same order), which a build with `RUSTFLAGS="--cfg skinblend_intrinsics"`
runs instead; `simd::checkasm` holds the loop, the twin and the scalar reference to each other
on the same inputs, and `crates/skinblend/tests/simd_*.rs` the whole kernel to the scalar
reference.

The design, as the loop's registers are chosen by hand:
- The two groups of four vertices are blended as the compiled kernel blends them
  (`simd::blend3x4::blend_rows8`): per vertex `(c0 | c1)` and `(c2 | t)` by four multiply-adds
  each, transposed inside the 128-bit halves, then the halves joined.
- Each vertex's four matrix addresses are made one vertex ahead (the first two in the block
  before), in two sets of four registers that alternate vertex by vertex, and used by register
  alone (an indexed memory operand would take a second rename slot).
- The block before's normals are normalized and stored between the two groups, so they stay in
  `ymm13`-`ymm15` and need no spill; the mirror flip is folded into their inverse length.
- The loop leaves to the Rust wrapper where the call's singular bound leaves a lane unclear or a
  normal's squared length is outside the fast normalize's window; the wrapper then stores that
  block's normals through `DeferredNormals::store`, as the compiled kernel does, and re-enters.
- The loop is written once, as the macro `pn4_loop!` whose arguments are the loads of positions
  and normals, and expanded twice: reading them as `Vec3`s (three 16-byte loads, three inserts
  and five shuffles per attribute and block), and from the input's `VertexBlocks` (three
  aligned 32-byte loads).

The operations are the compiled kernel's in the same order, so positions are bit-identical to
it; the normals differ only in that the flip is xored into the inverse length instead of the
normal, a sign that moves no other bit, so they are bit-identical too.
"""

L = []


def e(line):
    L.append(line)


def load3x8(ptr, a, b, c, yz, soa):
    """The eight `Vec3`s at `ptr` as x, y, z in ymm`a`, `b`, `yz` (`c` a scratch): with `soa`
    None, a marker where the loop's two expansions differ (`loop_macro` splits there)."""
    if soa is None:
        e(f"@{ptr}")
        return
    if soa:
        # A `Vec3x8`: x, y, z at 0, 32, 64, 32-byte aligned.
        e(f"vmovaps ymm{a}, ymmword ptr [{ptr}]")
        e(f"vmovaps ymm{b}, ymmword ptr [{ptr} + 32]")
        e(f"vmovaps ymm{yz}, ymmword ptr [{ptr} + 64]")
        return
    e(f"vmovups xmm{a}, xmmword ptr [{ptr}]")
    e(f"vinsertf128 ymm{a}, ymm{a}, xmmword ptr [{ptr} + 48], 1")
    e(f"vmovups xmm{b}, xmmword ptr [{ptr} + 16]")
    e(f"vinsertf128 ymm{b}, ymm{b}, xmmword ptr [{ptr} + 64], 1")
    e(f"vshufps ymm{yz}, ymm{a}, ymm{b}, 0x49")
    e(f"vmovups xmm{c}, xmmword ptr [{ptr} + 32]")
    e(f"vinsertf128 ymm{c}, ymm{c}, xmmword ptr [{ptr} + 80], 1")
    e(f"vshufps ymm{b}, ymm{b}, ymm{c}, 0x9E")
    e(f"vshufps ymm{a}, ymm{a}, ymm{b}, 0x8C")
    e(f"vshufps ymm{b}, ymm{yz}, ymm{b}, 0xD8")
    e(f"vshufps ymm{yz}, ymm{yz}, ymm{c}, 0xCD")


def store3x8(ptr, x, y, z, t0, t1, t2, t3):
    """x, y, z stored as eight `Vec3`s at `ptr` (`simd::loads::store3x8`)."""
    e(f"vshufps ymm{t0}, ymm{x}, ymm{y}, 0x44")
    e(f"vshufps ymm{t1}, ymm{x}, ymm{y}, 0xEE")
    e(f"vshufps ymm{t2}, ymm{z}, ymm{x}, 0xD8")
    e(f"vshufps ymm{t3}, ymm{y}, ymm{z}, 0xDD")
    e(f"vshufps ymm{x}, ymm{t0}, ymm{t2}, 0x88")
    e(f"vshufps ymm{y}, ymm{t3}, ymm{t1}, 0x88")
    e(f"vshufps ymm{z}, ymm{t2}, ymm{t3}, 0xDD")
    for row, reg in enumerate((x, y, z)):
        e(f"vmovups xmmword ptr [{ptr} + {16 * row}], xmm{reg}")
        e(f"vextractf128 xmmword ptr [{ptr} + {48 + 16 * row}], ymm{reg}, 1")


# Two sets of four address registers, alternating vertex by vertex.
SETS = [["rax", "rcx", "rdx", "rbx"], ["rbp", "rsi", "rdi", "r15"]]
LOW32 = {"rax": "eax", "rcx": "ecx", "rdx": "edx", "rbx": "ebx", "rbp": "ebp", "rsi": "esi",
         "rdi": "edi", "r15": "r15d"}


def addresses(vertex, regs):
    """Vertex `vertex`'s four palette entry addresses (offsets in r8, palette in r10)."""
    for k in range(4):
        e(f"movzx {LOW32[regs[k]]}, word ptr [r8 + {8 * vertex + 2 * k}]")
    for k in range(4):
        e(f"add {regs[k]}, r10")


def blend(vertex, regs, r01, r23, w):
    """Vertex `vertex`'s `(c0 | c1)` into r01 and `(c2 | t)` into r23 (weights in r9)."""
    for k in range(4):
        e(f"vbroadcastss ymm{w}, dword ptr [r9 + {16 * vertex + 4 * k}]")
        op = "vmulps" if k == 0 else "vfmadd231ps"
        e(f"{op} ymm{r01}, ymm{w}, ymmword ptr [{regs[k]}]")
        e(f"{op} ymm{r23}, ymm{w}, ymmword ptr [{regs[k]} + 32]")


def transpose_pair(rows, temps, outs):
    """`simd::loads::transpose4_in_halves` of four rows, three of its outputs kept."""
    r0, r1, r2, r3 = rows
    t0, t1, t2, t3 = temps
    e(f"vshufps ymm{t0}, ymm{r0}, ymm{r1}, 0x44")
    e(f"vshufps ymm{t1}, ymm{r0}, ymm{r1}, 0xEE")
    e(f"vshufps ymm{t2}, ymm{r2}, ymm{r3}, 0x44")
    e(f"vshufps ymm{t3}, ymm{r2}, ymm{r3}, 0xEE")
    e(f"vshufps ymm{outs[0]}, ymm{t0}, ymm{t2}, 0x88")
    e(f"vshufps ymm{outs[1]}, ymm{t0}, ymm{t2}, 0xDD")
    e(f"vshufps ymm{outs[2]}, ymm{t1}, ymm{t3}, 0x88")


def generate(soa):
    # Stack frame: [rsp] the block before's normal output, [rsp + 8] the constants, [rsp + 16]
    # the blocks left.
    e("push rbx")
    e("push rbp")
    e("sub rsp, 24")
    e("mov qword ptr [rsp], r15")
    e("mov qword ptr [rsp + 8], rdi")
    e("mov qword ptr [rsp + 16], rsi")
    addresses(0, SETS[0])
    addresses(1, SETS[1])
    e("2:")
    # First group: rows in ymm0-7, weight ymm8; the block before's normals in ymm13-15 and
    # their flip in ymm12.
    blend(0, SETS[0], 0, 1, 8)
    addresses(2, SETS[0])
    blend(1, SETS[1], 2, 3, 8)
    addresses(3, SETS[1])
    blend(2, SETS[0], 4, 5, 8)
    addresses(4, SETS[0])
    blend(3, SETS[1], 6, 7, 8)
    transpose_pair((0, 2, 4, 6), (8, 9, 10, 11), (0, 2, 4))
    transpose_pair((1, 3, 5, 7), (8, 9, 10, 11), (1, 3, 5))
    # The block before's normals: unit length by rsqrt and a Newton step, flipped, stored.
    e("mov rdi, qword ptr [rsp + 8]")
    e("mov r15, qword ptr [rsp]")
    e("vmulps ymm6, ymm13, ymm13")
    e("vfmadd231ps ymm6, ymm14, ymm14")
    e("vfmadd231ps ymm6, ymm15, ymm15")
    e("vpsubd ymm7, ymm6, ymmword ptr [rdi + 96]")
    e("vptest ymm7, ymmword ptr [rdi + 128]")
    e("jnz 5f")
    e("vrsqrtps ymm7, ymm6")
    e("vmulps ymm8, ymm6, ymm7")
    e("vmulps ymm9, ymm7, ymmword ptr [rdi + 160]")
    e("vmovaps ymm10, ymmword ptr [rdi + 192]")
    e("vfnmadd231ps ymm10, ymm8, ymm9")
    e("vmulps ymm7, ymm7, ymm10")
    e("vxorps ymm7, ymm7, ymm12")
    for n in (13, 14, 15):
        e(f"vmulps ymm{n}, ymm{n}, ymm7")
    store3x8("r15", 13, 14, 15, 6, 7, 8, 9)
    # Second group: rows in ymm6-13, weight ymm14; the first group's halves in ymm0-5.
    addresses(5, SETS[1])
    blend(4, SETS[0], 6, 7, 14)
    addresses(6, SETS[0])
    blend(5, SETS[1], 8, 9, 14)
    addresses(7, SETS[1])
    blend(6, SETS[0], 10, 11, 14)
    blend(7, SETS[1], 12, 13, 14)
    transpose_pair((6, 8, 10, 12), (14, 15, 6, 8), (10, 12, 14))
    transpose_pair((7, 9, 11, 13), (6, 8, 7, 9), (11, 13, 6))
    # Halves joined: c0 in ymm7-9, c1 in ymm0, 2, 4, c2 in ymm10, 12, 14, t in ymm1, 3, 5.
    for c_low, c_high, first, second in [(7, 0, 0, 10), (8, 2, 2, 12), (9, 4, 4, 14),
                                         (10, 1, 1, 11), (12, 3, 3, 13), (14, 5, 5, 6)]:
        e(f"vinsertf128 ymm{c_low}, ymm{first}, xmm{second}, 1")
        e(f"vperm2f128 ymm{c_high}, ymm{first}, ymm{second}, 0x31")
    load3x8("r11", 6, 11, 15, 13, soa)
    for t, c0, c1, c2 in [(1, 7, 0, 10), (3, 8, 2, 12), (5, 9, 4, 14)]:
        e(f"vfmadd231ps ymm{t}, ymm{c0}, ymm6")
        e(f"vfmadd231ps ymm{t}, ymm{c1}, ymm11")
        e(f"vfmadd231ps ymm{t}, ymm{c2}, ymm13")
    store3x8("r13", 1, 3, 5, 6, 11, 13, 15)
    # Normals: n in ymm6, 11, 13; cofactor column 0 in ymm1, 3, 5; determinant in ymm15.
    load3x8("r12", 6, 11, 15, 13, soa)
    e("vmulps ymm1, ymm4, ymm12")
    e("vfmsub231ps ymm1, ymm2, ymm14")
    e("vmulps ymm3, ymm0, ymm14")
    e("vfmsub231ps ymm3, ymm4, ymm10")
    e("vmulps ymm5, ymm2, ymm10")
    e("vfmsub231ps ymm5, ymm0, ymm12")
    e("vmulps ymm15, ymm7, ymm1")
    e("vfmadd231ps ymm15, ymm8, ymm3")
    e("vfmadd231ps ymm15, ymm9, ymm5")
    for c1, c2 in [(0, 10), (2, 12), (4, 14)]:
        e(f"vmulps ymm{c1}, ymm13, ymm{c1}")
        e(f"vfnmadd231ps ymm{c1}, ymm11, ymm{c2}")
    e("vmulps ymm13, ymm9, ymm2")
    e("vfmsub231ps ymm13, ymm8, ymm4")
    e("vfmadd231ps ymm13, ymm6, ymm1")
    e("vmulps ymm14, ymm7, ymm4")
    e("vfmsub231ps ymm14, ymm9, ymm0")
    e("vfmadd231ps ymm14, ymm6, ymm3")
    e("vmulps ymm10, ymm8, ymm0")
    e("vfmsub231ps ymm10, ymm7, ymm2")
    e("vfmadd231ps ymm10, ymm6, ymm5")
    e("mov rdi, qword ptr [rsp + 8]")
    e("vandps ymm0, ymm15, ymmword ptr [rdi + 32]")
    e("vcmpps ymm0, ymm0, ymmword ptr [rdi + 64], 0x1A")
    e("vandps ymm12, ymm15, ymmword ptr [rdi]")
    e("vmovmskps eax, ymm0")
    e("vmovaps ymm15, ymm10")
    e("test eax, eax")
    e("jnz 6f")
    e("mov qword ptr [rsp], r14")
    for register, step in [("r8", 64), ("r9", 128), ("r11", 96), ("r12", 96), ("r13", 96),
                           ("r14", 96)]:
        e(f"add {register}, {step}")
    e("dec qword ptr [rsp + 16]")
    e("jz 8f")
    addresses(0, SETS[0])
    addresses(1, SETS[1])
    e("jmp 2b")
    e("8:")
    e("xor ecx, ecx")
    e("jmp 7f")
    e("5:")
    e("mov ecx, 1")
    e("jmp 7f")
    e("6:")
    e("mov ecx, 2")
    e("7:")
    e("mov rsi, qword ptr [rsp + 16]")
    e("add rsp, 24")
    e("pop rbp")
    e("pop rbx")


HEADER = '''//! Generated by tools/codegen/lbs_loop.py; do not edit (CI regenerates it and compares).
//!
//! LBS with positions and normals, four influences, unit weight sums, palette byte offsets and
//! no tangents: every whole block of a call in one `asm!` loop, expanded once reading the
//! `Vec3` arrays and once the input's `VertexBlocks`. The generator's doc has the design; the
//! loop's twin is the compiled driver loop (`driver::whole_blocks` without `ASM`), and
//! `checkasm` tests the two against each other and the scalar reference.

use std::arch::x86_64::*;

use glam::Vec3;

use super::block::Block;
use super::layout::LANES;
use super::lbs::DeferredNormals;
use super::math::FAST_NORMALIZE_WINDOW_BITS;
use crate::types::{Diagnostics, SkinOutputs};

/// The loop's constants, one 32-byte row each: the sign bit, the absolute-value mask, the
/// call's singular bound, the fast normalize's window (its low exponent and the mask of the
/// exponent bits that must then be zero), 0.5 and 1.5 (the Newton step).
#[repr(C, align(32))]
struct LoopConstants([[u32; 8]; 7]);

/// Skins the whole blocks `vertices` of the range of `block` (multiples of eight at both ends,
/// inside the range's whole blocks) and returns the vertex after the last it skinned:
/// `vertices.end`, or `vertices.start` where the call has no normals.
///
/// # Safety
/// The CPU has AVX2 and FMA; `block` is a range of an LBS call of this variant (four
/// influences, every weight sum 1, `Block::linear_offsets` covering it), whose slices have the
/// range's length and the outputs' (`driver::drive_avx2`'s length check), with normals in and
/// out; `block.position_blocks` and `block.normal_blocks` are empty or hold at least the
/// range's whole blocks.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn pn4_unit_blocks(
    block: &Block<'_>,
    outputs: &mut SkinOutputs<'_>,
    diagnostics: &mut Diagnostics,
    vertices: std::ops::Range<usize>,
) -> usize {
    let (first, blocks) = (vertices.start / LANES, vertices.end / LANES);
    let (Some(out_normals), Some(in_normals)) = (outputs.normals.as_deref_mut(), block.normals)
    else {
        return vertices.start;
    };
    if first >= blocks {
        return vertices.start;
    }
    let from_blocks =
        block.position_blocks.len() >= blocks && block.normal_blocks.len() >= blocks;
    let bound = block.unit_singular_bound.unwrap_or(f32::INFINITY);
    let consts = LoopConstants([
        [(-0.0f32).to_bits(); 8],
        [0x7fff_ffff; 8],
        [bound.to_bits(); 8],
        [FAST_NORMALIZE_WINDOW_BITS[0]; 8],
        [FAST_NORMALIZE_WINDOW_BITS[1]; 8],
        [0.5f32.to_bits(); 8],
        [1.5f32.to_bits(); 8],
    ]);
    // Where the first block of each entry stores "the block before's" normals (unit x).
    let mut scratch = [Vec3::ZERO; LANES];
    let mut next = first;
    while next < blocks {
        let (mut n0, mut n1, mut n2) =
            (_mm256_set1_ps(1.0), _mm256_setzero_ps(), _mm256_setzero_ps());
        let mut sign = _mm256_setzero_ps();
        let (status, unclear): (u32, u32);
        let mut remaining = blocks - next;
        // SAFETY: the contract above: every block from `next` on is inside each slice (the
        // loop runs `remaining` blocks); the stack frame is the asm's own.
        unsafe {
            let (positions, normals) = if from_blocks {
                (
                    block.position_blocks.as_ptr().add(next).cast::<f32>(),
                    block.normal_blocks.as_ptr().add(next).cast::<f32>(),
                )
            } else {
                (
                    block.positions.as_ptr().add(LANES * next).cast::<f32>(),
                    in_normals.as_ptr().add(LANES * next).cast::<f32>(),
                )
            };
            // The loop once; its two expansions differ in the loads of positions and normals.
            macro_rules! pn4_loop {
                ([$($positions:literal),*], [$($normals:literal),*]) => {
                    std::arch::asm!(
LOOP_BODY
OPERANDS
                    )
                };
            }
            if from_blocks {
                pn4_loop!(BLOCKS_POSITIONS, BLOCKS_NORMALS);
            } else {
                pn4_loop!(ARRAYS_POSITIONS, ARRAYS_NORMALS);
            }
        }
        // 0: done, the last block's normals left; 1: the block before `stopped` failed the
        // normalize's window; 2: block `stopped`'s singular test left a lane unclear.
        let stopped = blocks - remaining;
        let (normal_block, resume) = match status {
            0 => (blocks - 1, blocks),
            1 => (stopped - 1, stopped),
            _ => (stopped, stopped + 1),
        };
        let deferred = DeferredNormals {
            normals: [n0, n1, n2].map(|c| _mm256_xor_ps(c, sign)),
            base: LANES * normal_block,
            unclear: if status == 2 { unclear as i32 } else { 0 },
        };
        // SAFETY: that block is inside the range (the contract above).
        unsafe { deferred.store::<4, true, true>(block, out_normals, in_normals, diagnostics) };
        next = resume;
    }
    blocks * LANES
}
'''

OPERANDS = '''                    inout("r8") block.linear_offsets.as_ptr().add(4 * LANES * next) => _,
                    inout("r9") block.weights.as_ptr().add(4 * LANES * next) => _,
                    inout("r10") block.linear.as_ptr().cast::<f32>() => _,
                    inout("r11") positions => _,
                    inout("r12") normals => _,
                    inout("r13") outputs.positions.as_mut_ptr().add(LANES * next).cast::<f32>() => _,
                    inout("r14") out_normals.as_mut_ptr().add(LANES * next).cast::<f32>() => _,
                    inout("r15") scratch.as_mut_ptr().cast::<f32>() => _,
                    inout("rdi") consts.0.as_ptr() => _,
                    inout("rsi") remaining,
                    out("eax") unclear,
                    out("ecx") status,
                    out("rdx") _,
                    out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                    out("ymm4") _, out("ymm5") _, out("ymm6") _, out("ymm7") _,
                    out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
                    inout("ymm12") sign,
                    inout("ymm13") n0, inout("ymm14") n1, inout("ymm15") n2,'''


def quoted(lines, indent):
    return "".join(f'{indent}"{line}",\n' for line in lines)


def loads(ptr, soa):
    """The load sequence of one attribute at `ptr` in one copy, as a macro argument list."""
    L.clear()
    load3x8(ptr, 6, 11, 15, 13, soa)
    return "[" + ", ".join(f'"{line}"' for line in L) + "]"


def loop_macro():
    """`pn4_loop!`: the loop once, the positions' (r11) and normals' (r12) loads its arguments."""
    L.clear()
    generate(None)
    body = ""
    indent = " " * 24
    chunk = []
    for line in L:
        if line == "@r11":
            body += quoted(chunk, indent) + f"{indent}$($positions,)*\n"
            chunk = []
        elif line == "@r12":
            body += quoted(chunk, indent) + f"{indent}$($normals,)*\n"
            chunk = []
        else:
            chunk.append(line)
    return body + quoted(chunk, indent)


def main():
    operands = "\n".join("        " + line for line in OPERANDS.split("\n"))
    module = (HEADER.replace("LOOP_BODY\n", loop_macro())
              .replace("OPERANDS", operands)
              .replace("BLOCKS_POSITIONS", loads("r11", True))
              .replace("BLOCKS_NORMALS", loads("r12", True))
              .replace("ARRAYS_POSITIONS", loads("r11", False))
              .replace("ARRAYS_NORMALS", loads("r12", False)))
    print(module, end="")


if __name__ == "__main__":
    main()
