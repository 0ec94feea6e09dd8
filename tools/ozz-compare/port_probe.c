/* Throughput of the instructions the SIMD kernels are made of, in instructions per cycle, on
 * this core: which shuffles share the single lane-crossing port (about 1 per cycle) and which
 * issue on two (about 2 per cycle), how many loads of each kind retire per cycle, and what a
 * load split across two cache lines costs. The clock is measured first (a dependent chain of
 * register adds, one per cycle), so the figures need no performance counters (this VM has none).
 *
 *   cc -O2 tools/ozz-compare/port_probe.c -o /tmp/port_probe && /tmp/port_probe
 *
 * Each test runs ten independent copies of one instruction (no chain between them: inputs are
 * registers the loop never writes, or L1-resident memory), so the rate is the issue limit.
 * Then, latencies (cycles per link of a dependent chain): of the vector arithmetic on a block's
 * chain (an add, a fused multiply-add, `rsqrt`), and of store-to-load forwarding from a
 * 32-byte store read back as 4-byte loads (eight offsets written at once, then read one by one).
 * Last, what an indexed memory operand costs at rename (six slots per cycle): eight independent
 * multiplies with a memory operand among 24 nops, addressed [base + index*4 + disp] or
 * [base + disp]; an indexed operand splits the instruction in two there ("unlamination"), so the
 * first takes longer than the second does with eight more nops (40 slots).
 */
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static float buffer[4096] __attribute__((aligned(64)));

/* Ten copies of INS per iteration; %0 is the 64-byte-aligned buffer. */
#define TEN(ins) ins "\n" ins "\n" ins "\n" ins "\n" ins "\n" ins "\n" ins "\n" ins "\n" ins "\n" ins "\n"

/* Ten loads INS OFFSET(%0), OPERANDS at OFFSET = FIRST, FIRST + STEP, ... (distinct addresses). */
#define AT(ins, operands, offset) ins " " #offset "(%0), " operands "\n"
#define LOADS(ins, operands, first, step)                                                \
  AT(ins, operands, first) AT(ins, operands, first + step) AT(ins, operands, first + 2 * step) \
  AT(ins, operands, first + 3 * step) AT(ins, operands, first + 4 * step)                       \
  AT(ins, operands, first + 5 * step) AT(ins, operands, first + 6 * step)                       \
  AT(ins, operands, first + 7 * step) AT(ins, operands, first + 8 * step)                       \
  AT(ins, operands, first + 9 * step)

#define RATE(label, body)                                                                     \
  do {                                                                                        \
    const long n = 20000000L;                                                                 \
    double begin = now();                                                                     \
    for (long i = 0; i < n; i++) {                                                            \
      __asm__ volatile(body : : "r"(buffer) : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", \
                       "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "eax", "memory");             \
    }                                                                                         \
    printf("%-44s %5.2f per cycle\n", label, 10.0 * n / ((now() - begin) * ghz * 1e9));       \
  } while (0)

/* Cycles per iteration of BODY (%0: the buffer, %1: a zero index; the forwarding chains run
 * through eax). */
#define CYCLES(label, body)                                                                   \
  do {                                                                                        \
    const long n = 20000000L;                                                                 \
    double begin = now();                                                                     \
    for (long i = 0; i < n; i++) {                                                            \
      __asm__ volatile(body : : "r"(buffer), "r"(0L) : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", \
                       "xmm5", "xmm6", "xmm7", "eax", "memory");                              \
    }                                                                                         \
    printf("%-44s %5.2f cycles\n", label, (now() - begin) * ghz * 1e9 / n);                   \
  } while (0)
#define NOP8 "nop\n nop\n nop\n nop\n nop\n nop\n nop\n nop\n"
/* Eight multiplies at OPERAND(displacement) among 24 nops. */
#define MULS(operand)                                                                       \
  "vmulps " operand(0) ", %%ymm11, %%ymm0\n" NOP8 "vmulps " operand(32) ", %%ymm11, %%ymm1\n"   \
  "vmulps " operand(64) ", %%ymm11, %%ymm2\n vmulps " operand(96) ", %%ymm11, %%ymm3\n" NOP8     \
  "vmulps " operand(128) ", %%ymm11, %%ymm4\n vmulps " operand(160) ", %%ymm11, %%ymm5\n" NOP8   \
  "vmulps " operand(192) ", %%ymm11, %%ymm6\n vmulps " operand(224) ", %%ymm11, %%ymm7\n"
#define INDEXED(d) #d "(%0,%1,4)"
#define BASE_ONLY(d) #d "(%0)"

int main(void) {
  for (int i = 0; i < 4096; i++) buffer[i] = 1.0f + i * 1e-6f;
  const long adds = 1000000000L;
  long chain = 0;
  double start = now();
  for (long i = 0; i < adds; i += 10) {
    __asm__ volatile(TEN("add %1, %0") : "+r"(chain) : "r"(i));
  }
  const double ghz = adds / (now() - start) / 1e9;
  printf("clock: %.2f GHz (dependent scalar adds)\n", ghz);
  /* Lane-crossing and in-lane shuffles (register operands). */
  RATE("vshufps ymm (in-lane)", TEN("vshufps $0x44, %%ymm12, %%ymm11, %%ymm0"));
  RATE("vunpcklps ymm (in-lane)", TEN("vunpcklps %%ymm12, %%ymm11, %%ymm0"));
  RATE("vunpcklpd ymm (in-lane; LLVM's form of shufps 0x44)", TEN("vunpcklpd %%ymm12, %%ymm11, %%ymm0"));
  RATE("vpermilps imm ymm (in-lane)", TEN("vpermilps $0x1b, %%ymm11, %%ymm0"));
  RATE("vmovshdup ymm (in-lane)", TEN("vmovshdup %%ymm11, %%ymm0"));
  RATE("vperm2f128 (crossing)", TEN("vperm2f128 $0x20, %%ymm12, %%ymm11, %%ymm0"));
  RATE("vinsertf128 register (crossing)", TEN("vinsertf128 $1, %%xmm12, %%ymm11, %%ymm0"));
  RATE("vpermps (crossing)", TEN("vpermps %%ymm12, %%ymm11, %%ymm0"));
  RATE("vhaddps ymm", TEN("vhaddps %%ymm12, %%ymm11, %%ymm0"));
  RATE("vblendps ymm", TEN("vblendps $0xf0, %%ymm12, %%ymm11, %%ymm0"));
  /* Arithmetic. */
  RATE("vmulps ymm", TEN("vmulps %%ymm12, %%ymm11, %%ymm0"));
  RATE("vcmpltps ymm", TEN("vcmpltps %%ymm12, %%ymm11, %%ymm0"));
  RATE("vandps ymm", TEN("vandps %%ymm12, %%ymm11, %%ymm0"));
  RATE("vrsqrtps ymm", TEN("vrsqrtps %%ymm11, %%ymm0"));
  /* Loads (L1-resident). */
  RATE("vmovups ymm load, 32-byte aligned", LOADS("vmovups", "%%ymm0", 0, 32));
  RATE("vmovups ymm load, half split over lines", LOADS("vmovups", "%%ymm0", 16, 32));
  RATE("vmovups xmm load, 16-byte aligned", LOADS("vmovups", "%%xmm0", 0, 16));
  RATE("vbroadcastss load", LOADS("vbroadcastss", "%%ymm0", 0, 4));
  RATE("vinsertf128 from memory", LOADS("vinsertf128 $1,", "%%ymm11, %%ymm0", 0, 16));
  RATE("movzwl (scalar u16 load)", LOADS("movzwl", "%%eax", 0, 2));
  /* Latencies: ten dependent links through ymm0 per iteration (ymm1 and ymm2 zeroed, so the
   * values stay normal). */
  CYCLES("chain, vaddps ymm (10 links)",
         "vxorps %%ymm1, %%ymm1, %%ymm1\n" TEN("vaddps %%ymm1, %%ymm0, %%ymm0"));
  CYCLES("chain, vfmadd231ps ymm (10 links)",
         "vxorps %%ymm1, %%ymm1, %%ymm1\n vxorps %%ymm2, %%ymm2, %%ymm2\n"
         TEN("vfmadd231ps %%ymm1, %%ymm2, %%ymm0"));
  CYCLES("chain, vrsqrtps ymm (10 links)", TEN("vrsqrtps %%ymm0, %%ymm0"));
  /* Store-to-load forwarding, as a chain: eax to a vector, stored, read back into eax. */
  CYCLES("chain, 4-byte store -> 4-byte load",
          "vmovd %%eax, %%xmm0\n vpbroadcastd %%xmm0, %%ymm0\n vmovd %%xmm0, %%eax\n"
          " mov %%eax, (%0)\n mov (%0), %%eax\n");
  CYCLES("chain, 32-byte store -> 4-byte load at 0",
          "vmovd %%eax, %%xmm0\n vpbroadcastd %%xmm0, %%ymm0\n vmovdqa %%ymm0, (%0)\n mov (%0), %%eax\n");
  CYCLES("chain, 32-byte store -> 4-byte load at 12",
          "vmovd %%eax, %%xmm0\n vpbroadcastd %%xmm0, %%ymm0\n vmovdqa %%ymm0, (%0)\n mov 12(%0), %%eax\n");
  CYCLES("chain, 32-byte store -> 4-byte load at 16",
          "vmovd %%eax, %%xmm0\n vpbroadcastd %%xmm0, %%ymm0\n vmovdqa %%ymm0, (%0)\n mov 16(%0), %%eax\n");
  CYCLES("chain, 32-byte store -> 4-byte load at 28",
          "vmovd %%eax, %%xmm0\n vpbroadcastd %%xmm0, %%ymm0\n vmovdqa %%ymm0, (%0)\n mov 28(%0), %%eax\n");
  /* Rename: 32 instructions per iteration in the first two, 40 in the third. */
  CYCLES("rename: 8 vmulps [base+index*4+disp], 24 nops", MULS(INDEXED));
  CYCLES("rename: 8 vmulps [base+disp], 24 nops", MULS(BASE_ONLY));
  CYCLES("rename: 8 vmulps [base+disp], 32 nops", MULS(BASE_ONLY) NOP8);
  return 0;
}
