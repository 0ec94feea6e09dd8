/* How fast this core runs scalar, 128-bit and 256-bit code: a dependent chain of register adds
 * (one per cycle, so adds per nanosecond is the clock in GHz), then eight independent chains of
 * 128-bit and of 256-bit fused multiply-adds (two per cycle on cores with two FMA units, so
 * FMAs per nanosecond / 2 is the clock those instructions run at). On many Intel server cores
 * heavy 256-bit instructions lower the clock (the "AVX2 licence"); ozz's kernels are 128-bit.
 *
 *   cc -O2 -mavx2 -mfma tools/ozz-compare/clock_probe.c -o /tmp/clock_probe && /tmp/clock_probe
 */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

#define FMA(x) __asm__ volatile("vfmadd213ps %2, %1, %0" : "+x"(x) : "x"(m), "x"(c))

/* Eight independent FMA chains of vector type T, n FMAs in all; prints the rate. */
#define MEASURE(label, T, SET1, ADD, STORE, LANES)                                         \
  do {                                                                                    \
    T m = SET1(0.999999f), c = SET1(1e-7f);                                               \
    T x0 = SET1(1), x1 = x0, x2 = x0, x3 = x0, x4 = x0, x5 = x0, x6 = x0, x7 = x0;        \
    double begin = now();                                                                 \
    for (long i = 0; i < n; i += 8) {                                                     \
      FMA(x0); FMA(x1); FMA(x2); FMA(x3);                                                 \
      FMA(x4); FMA(x5); FMA(x6); FMA(x7);                                                 \
    }                                                                                     \
    double rate = n / (now() - begin) / 1e9;                                              \
    float out[LANES];                                                                     \
    STORE(out, ADD(ADD(x0, x7), ADD(x3, x4)));                                            \
    printf("%s FMAs: %.2f per ns (%.2f GHz at two per cycle) [%g]\n", label, rate,        \
           rate / 2, out[0]);                                                             \
  } while (0)

int main(void) {
  const long n = 1000000000L;
  long chain = 0;
  double start = now();
  for (long i = 0; i < n; i += 10) {
    __asm__ volatile(
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
        : "+r"(chain)
        : "r"(i));
  }
  printf("scalar adds:  %.2f GHz\n", n / (now() - start) / 1e9);
  MEASURE("128-bit", __m128, _mm_set1_ps, _mm_add_ps, _mm_storeu_ps, 4);
  MEASURE("256-bit", __m256, _mm256_set1_ps, _mm256_add_ps, _mm256_storeu_ps, 8);
  return 0;
}
