//! The proof that this CPU has AVX2 and FMA (a token only run-time detection can make), and the
//! way to compile a plain pass for them where it does.

/// Proof that the running CPU has AVX2 and FMA. Zero-sized, and its field is private, so the
/// only way to get one is [`Avx2Fma::detect`], which checks the CPU: a function that takes one
/// may call the `#[target_feature(enable = "avx2,fma")]` kernels, and its `SAFETY` comment
/// points here instead of to a convention about who called it when.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx2Fma {
    _detected: (),
}

impl Avx2Fma {
    /// The token where the CPU has AVX2 and FMA (`is_x86_feature_detected!`, cached by std
    /// after the first call), else `None`.
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        (std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma"))
            .then_some(Self { _detected: () })
    }
}

/// Runs `pass` compiled for AVX2 and FMA where this CPU has them, else as built (SSE2; code
/// outside the kernels calls it through `crate::vectorize::vectorized`): for the
/// plain-Rust passes over a mesh's arrays (validation, derived tables) that the compiler
/// vectorizes. `pass` and what it calls must inline into it for the wider code: write it
/// `on_avx2(#[inline(always)] || ...)` (an attribute a closure may carry as an argument) over
/// `#[inline(always)]` helpers; a larger closure left to the inliner stayed out of line, built
/// for SSE2 (seen in `perf`). The result is the same either way (integer and comparison
/// work, or float operations in a fixed order; Rust contracts nothing into FMAs).
#[inline]
pub(crate) fn on_avx2<R>(pass: impl FnOnce() -> R) -> R {
    match Avx2Fma::detect() {
        // SAFETY: the token proves AVX2 and FMA, the only features `compiled_for_avx2` enables.
        Some(token) => unsafe { compiled_for_avx2(token, pass) },
        None => pass(),
    }
}

/// `pass()`, with AVX2 and FMA enabled for what inlines into it.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn compiled_for_avx2<R>(_: Avx2Fma, pass: impl FnOnce() -> R) -> R {
    pass()
}

/// Whether DQS's input prefetch (`driver::PREFETCH_MIN_VERTICES`) was measured to gain on
/// this kind of CPU, read once: Intel's, and AMD's with AVX-512F (Zen 4 and later). It gained
/// on an Intel Xeon (family 6 model 167) and on an AMD EPYC Zen 4 (family 25 model 17), and
/// cost on an AMD EPYC Zen 3 (family 25 model 1), which shares Zen 4's family and lacks
/// AVX-512; the feature is what tells the two apart.
pub(crate) fn input_prefetch_gains() -> bool {
    static GAINS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *GAINS.get_or_init(|| {
        let vendor = vendor();
        &vendor == b"GenuineIntel"
            || &vendor == b"AuthenticAMD" && std::arch::is_x86_feature_detected!("avx512f")
    })
}

/// The CPU's vendor string (`GenuineIntel`, `AuthenticAMD`, ...): `cpuid` leaf 0's `ebx`, `edx`
/// and `ecx`, four little-endian bytes each.
pub(crate) fn vendor() -> [u8; 12] {
    let leaf = std::arch::x86_64::__cpuid(0);
    let mut vendor = [0; 12];
    for (bytes, word) in vendor
        .chunks_exact_mut(4)
        .zip([leaf.ebx, leaf.edx, leaf.ecx])
    {
        bytes.copy_from_slice(&word.to_le_bytes());
    }
    vendor
}
