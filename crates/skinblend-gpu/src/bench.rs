//! Benchmark (to do).
