//! Compiling a plain pass over a mesh's arrays or a palette for the widest instructions the CPU
//! has: the one door to `simd::cpu::on_avx2` for code outside the kernels.

/// Runs `pass` compiled for AVX2 and FMA where the CPU has them (`simd::cpu::on_avx2`, which
/// says how to write `pass`), else as built.
#[inline]
pub(crate) fn vectorized<R>(pass: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    return crate::simd::cpu::on_avx2(pass);
    #[cfg(not(target_arch = "x86_64"))]
    pass()
}
