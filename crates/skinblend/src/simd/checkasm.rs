//! Every `asm!` routine against its intrinsics twin and a scalar model (placeholder).
