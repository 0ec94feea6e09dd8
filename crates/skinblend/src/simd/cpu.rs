//! The proof that this CPU has AVX2 and FMA: a token only run-time detection can make.

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
