//! The format's name and version, and the numbers a checker uses: the position and normal
//! tolerances, the threshold below which an expected normal is undefined, and the normal
//! matrix's singular threshold.

/// The manifest's `format` value.
pub const FORMAT: &str = "skinblend-conformance";
/// The manifest's `version`: raised when a file or key changes meaning.
pub const FORMAT_VERSION: u32 = 1;

/// Position tolerance, relative to the case's `scale` (its largest absolute expected
/// coordinate, at least 1): a port passes where `|p − expected| ≤ POSITION_TOLERANCE · scale`.
/// The reference and a GPU both compute in f32; a few dozen operations per vertex with other
/// operation orders and fused multiply-adds differ by tens of ulps (skinblend's own WGSL kernel
/// differs from the CPU by at most 1.3e-6 relative on lavapipe, as printed by `cargo test -p
/// skinblend-gpu --test gpu_vs_cpu -- --nocapture`); 1e-5 leaves room for that, and a real error
/// (a wrong sign, a missing residual, unnormalized weights) is 1e-2 or more.
pub const POSITION_TOLERANCE: f32 = 1e-5;

/// Normal tolerance (unit vectors, absolute per component): normals go through a cofactor
/// matrix and a normalization, which loses a few more digits than positions where the blended
/// 3x3 is nearly singular; a wrong normal transform (no inverse transpose, no sign of the
/// determinant) is off by 1e-1 or more.
pub const NORMAL_TOLERANCE: f32 = 1e-4;

/// A vertex's expected normal is undefined where the exact normal direction before
/// normalization, `|C n|` (C the cofactor matrix of the blended 3x3: LBS the blended skin
/// matrices, DQS and CoR the blended residual; the rotation after it keeps lengths), is at most
/// this fraction of `largest² · |n|` (`largest` the blended 3x3's largest column length; the
/// cofactor scales as its square); under blended, where it is so for a method the vertex
/// evaluates or where the interpolation of the two unit normals is at most this long. The exact value is then zero (a mirrored joint's 50/50 ring
/// under DQS, the collapsed 180° ring under LBS) and the f32 result is rounding noise
/// normalized: any direction, or the input normal where f32 gives exactly zero. f32 inputs
/// carry about 1e-7 relative error, which moves a direction by `1e-7 / ratio`: at this ratio by
/// 1e-4, the normal tolerance, so every vertex above it is checkable. The written cases have
/// ratios either below 1e-6 or above 1e-2 (a unit test checks it).
pub const UNDEFINED_NORMAL_RELATIVE: f64 = 1e-3;

/// The normal matrix's singular threshold the manifest states: a 3x3 is singular when
/// `|det| ≤ SINGULAR_RELATIVE · largest³`. The value of skinblend's CPU reference and of
/// `SKIN_SINGULAR_RELATIVE` in its WGSL; the manifest's test
/// (`conformance/tests.rs`) reproduces the expected normals with it.
pub const SINGULAR_RELATIVE: f32 = 1e-6;
