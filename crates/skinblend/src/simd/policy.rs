//! The call-wide decisions the SIMD kernels take once from the mesh's weight-sum range and the
//! palette, instead of testing per block: whether to divide by the weight sums, the singular
//! test's bounds, whether a blended rotation can fail to normalize.
//!
//! Plain arithmetic, no intrinsics: `Block::new` asks these once per call, and the kernels
//! then read the answers from the block.

use crate::reference::SINGULAR_RELATIVE;

/// Distance from 1 within which every vertex's weight sum (f32, slot order;
/// `Influences::weight_sum_range`) lets LBS and CoR's center blend skip the division by it even
/// where the call renormalizes: 2⁻²⁰, 8 f32 ulps of 1. Weights divided by their sum in f32 (the
/// vertices `Influences::from_lists` renormalizes, the benchmark rig's) sum to 1 within about
/// `2k` roundings of 2⁻²⁴, inside it for up to eight influences. Dividing by such a sum would
/// move a blended position by at most 2⁻²⁰ of its length, a tenth of `SIMD_VS_SCALAR`
/// (`tests/simd_*.rs`), and the normals and tangents not at all (they are normalized and the
/// singular test is scale-free); skipping it saves a division and three multiplies per block of
/// eight (LBS with normals) or the weight sums and a multiply per vertex (positions only).
pub(super) const UNIT_WEIGHT_SUM_BAND: f32 = 1.0 / 1_048_576.0;

/// Whether LBS and CoR's center blend divide by each vertex's weight sum: where the call
/// renormalizes and some vertex's sum (`weight_sums`, `Influences::weight_sum_range`) is
/// farther from 1 than [`UNIT_WEIGHT_SUM_BAND`]. Decided once per call (`Block::new`).
pub(super) fn divides_by_weight_sums(renormalize: bool, weight_sums: (f32, f32)) -> bool {
    let (low, high) = weight_sums;
    // A mesh without vertices, `(∞, 0)`, divides by nothing (NaN sums divide).
    let no_vertices = low > high;
    renormalize && !no_vertices && !weight_sums_are_unit(weight_sums)
}

/// Whether every weight sum in `weight_sums` (`Influences::weight_sum_range`) is within
/// [`UNIT_WEIGHT_SUM_BAND`] of 1 (false for NaN and for a mesh without vertices, `(∞, 0)`).
fn weight_sums_are_unit(weight_sums: (f32, f32)) -> bool {
    let (low, high) = weight_sums;
    1.0 - UNIT_WEIGHT_SUM_BAND <= low && high <= 1.0 + UNIT_WEIGHT_SUM_BAND
}
/// Half-width of the relative band around the singular threshold inside which
/// `lbs::singular8`'s squared comparison defers to the exact one: both sides of the squared test
/// carry at most about ten f32 roundings (under 1e-6 relative), so outside this band the two
/// tests cannot disagree.
pub(super) const SINGULAR_BAND: f32 = 1.0e-5;

/// Relative margin on the cube of `lbs::singular8`'s column bound. A blend of `k` influences
/// (and its weight sum) rounds each column by at most about `k · 2⁻²⁴` relative, so up to
/// [`BOUND_MAX_INFLUENCES`] the cubes of the computed lengths exceed the bound's by under 5e-5;
/// the rest covers the rounding of the bound, of the exact test's own terms and
/// [`SINGULAR_BAND`], so that a lane the bound clears is one the exact test clears too.
const BOUND_MARGIN: f32 = 1.0e-3;

/// Most influences per vertex for which [`BOUND_MARGIN`] covers the blend's rounding; vertices
/// with more always take the exact singular test.
const BOUND_MAX_INFLUENCES: usize = 256;

/// Column bounds (`Σw` times the palette's largest column length) inside which `lbs::singular8`'s
/// first test keeps every term a normal f32: `(Σw r)³` in `[2⁻⁵⁰, 2¹¹]` (`r` of
/// [`singular_bound_root`]).
const BOUND_RANGE: (f64, f64) = (1.0 / 1024.0, 1024.0);

/// The factor `r` of `lbs::singular8`'s first test, `(SINGULAR_RELATIVE (1 + BOUND_MARGIN))^⅓`
/// times the palette's `largest` column length, so that `(Σw r)³` bounds
/// `SINGULAR_RELATIVE (largest column length)³` with the margin; `None` (the exact test for every
/// block) where `k` exceeds [`BOUND_MAX_INFLUENCES`] or the mesh's weight sums
/// (`Influences::weight_sum_range`) put a bound outside [`BOUND_RANGE`]. Once per call: the
/// blocks then test no range.
pub(super) fn singular_bound_root(k: usize, weight_sums: (f32, f32), largest: f32) -> Option<f32> {
    let (low, high) = (
        f64::from(weight_sums.0) * f64::from(largest),
        f64::from(weight_sums.1) * f64::from(largest),
    );
    // Also false for NaN, and for a mesh without vertices (an infinite smallest sum).
    let in_range = BOUND_RANGE.0 <= low && low <= high && high <= BOUND_RANGE.1;
    (k <= BOUND_MAX_INFLUENCES && in_range)
        .then(|| (*SINGULAR_RELATIVE_ROOT * f64::from(largest)) as f32)
}

/// `(SINGULAR_RELATIVE (1 + BOUND_MARGIN))^⅓`, [`singular_bound_root`]'s factor: taken once per
/// process, not three times per call (a call decides its bounds three times, and the software
/// `libm` cube root is a visible part of a small mesh's call: `perf` over `cargo run --release
/// -p skinblend --example kernel_loop -- linear pn 4 8 2000000` finds no `cbrt` now).
static SINGULAR_RELATIVE_ROOT: std::sync::LazyLock<f64> = std::sync::LazyLock::new(|| {
    (f64::from(SINGULAR_RELATIVE) * (1.0 + f64::from(BOUND_MARGIN))).cbrt()
});

/// `lbs::singular8`'s first bound for every block at once, `(r (1 + UNIT_WEIGHT_SUM_BAND))³` (`r`
/// of [`singular_bound_root`]), where every vertex's weight sum is within
/// [`UNIT_WEIGHT_SUM_BAND`] of 1, so that `Σw r ≤ r (1 + UNIT_WEIGHT_SUM_BAND)` in every lane
/// (the blend's rounding of `Σw` is inside [`BOUND_MARGIN`]); else `None`. Rounded up, so that
/// it is never below the per-lane bound it replaces.
pub(super) fn unit_singular_bound(k: usize, weight_sums: (f32, f32), largest: f32) -> Option<f32> {
    let root = singular_bound_root(k, weight_sums, largest)
        .filter(|_| weight_sums_are_unit(weight_sums))?;
    let bound = (f64::from(root) * (1.0 + f64::from(UNIT_WEIGHT_SUM_BAND))).powi(3);
    let rounded = bound as f32;
    Some(if f64::from(rounded) < bound {
        rounded.next_up()
    } else {
        rounded
    })
}

/// Weight sums inside which LBS's normals and tangents take the blend of the stored weights as
/// it is: its cofactors scale as `Σw²`, its determinant as `Σw³` and the normal's squared
/// length as `Σw⁴`, which underflow or overflow far from 1 (every normal of `tests/simd_variants.rs`'s
/// `tiny_and_huge_weight_sums` came out wrong, the input's or reversed, at sums of 2⁻⁴⁰ and
/// 2⁴⁰; right at 2⁻³⁰ and 2³⁰).
const SCALE_FREE_WEIGHT_SUMS: (f32, f32) = (1.0 / 1024.0, 1024.0);

/// Whether a call divides LBS's blended 3x3 by `Σw` (nine multiplies per block) before its
/// normals and tangents, as the scalar kernel blends normalized weights: where it
/// renormalizes and the mesh has a weight sum outside [`SCALE_FREE_WEIGHT_SUMS`]
/// (`Influences::weight_sum_range`). Decided once per call (`Block::normalize_columns`).
pub(super) fn columns_need_normalizing(renormalize: bool, weight_sums: (f32, f32)) -> bool {
    let (low, high) = SCALE_FREE_WEIGHT_SUMS;
    // A mesh without vertices, `(∞, 0)`, needs nothing.
    renormalize && (weight_sums.0 < low || weight_sums.1 > high)
}

/// Whether a call takes LBS's unit-weights variant (the kernel table's `R` for LBS): every
/// weight sum is 1 within [`UNIT_WEIGHT_SUM_BAND`] and the singular test has its one bound for
/// the call ([`unit_singular_bound`]). Then no vertex is unweighted, none is divided by its sum
/// (nor its 3x3 for the normals: the sums are inside [`SCALE_FREE_WEIGHT_SUMS`]), and the
/// blocks test no flag for any of it, nor transpose `Σw`. `k` influences per vertex,
/// `largest` the palette's largest column length. (Weights divided by their sum in f32, as
/// `Influences::from_lists` and most exporters make them, are such.)
pub(super) fn unit_weight_sums(k: usize, weight_sums: (f32, f32), largest: f32) -> bool {
    unit_singular_bound(k, weight_sums, largest).is_some()
}

/// Whether every vertex's blended real part (the sign-aligned blend of its influences'
/// rotation parts, as DQS and CoR blend them) has a squared length in `[2⁻¹⁰⁰, 2¹⁰⁰]`, so that
/// `Rotation8::from_real`'s test cannot fail, from the mesh's weight sums
/// (`Influences::weight_sum_range`), `k` and the lengths of the palette's rotation parts
/// (`real_lengths`, `PreparedPalette::real_length_range`: kept with the palette, since three
/// passes over its joints per call cost every piece of a parallel call; DQS with normals at
/// 10k on two threads 1.08×, `ab.py 15 "dq pn 4 10000 5000" A,64,2 B,64,2` against finding
/// them per call; the measuring recipe is in `simd/mod.rs`) alone. Every
/// influence's part is aligned to the pivot's (the heaviest, weight at least `Σw / k`), so the
/// blend is the pivot's term plus terms whose dot with it is not negative, and its length is at
/// least the pivot term's: `Σw / k · min |q|`; at most `Σw · max |q|`. The f32 blend is within
/// `k Σw max |q| 2⁻²⁴` of the exact one (one rounding per influence and lane, twice), which the
/// last condition keeps under half the lower bound. Once per call.
pub(super) fn real_blends_usable(
    k: usize,
    weight_sums: (f32, f32),
    real_lengths: (f32, f32),
) -> bool {
    let (low, high) = (f64::from(weight_sums.0), f64::from(weight_sums.1));
    let (shortest, longest) = (f64::from(real_lengths.0), f64::from(real_lengths.1));
    // No joint, `(∞, 0)`, or a rotation part that is not finite, `(NaN, NaN)`.
    if k == 0 || !(shortest.is_finite() && longest.is_finite()) {
        return false;
    }
    let k = k as f64;
    // Also false for NaN sums and for a mesh without vertices, `(∞, 0)`.
    if !(low > 0.0 && low <= high && high.is_finite()) {
        return false;
    }
    let (least, most) = (low / k * shortest, high * longest);
    let error = 2.0 * k * most * 2f64.powi(-24);
    least * least >= 2f64.powi(-100) && most * most <= 2f64.powi(100) && error <= 0.5 * least
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::{
        divides_by_weight_sums, real_blends_usable, singular_bound_root, unit_singular_bound,
        BOUND_MARGIN, BOUND_MAX_INFLUENCES, UNIT_WEIGHT_SUM_BAND,
    };
    use crate::dual_quat::DualQuat;
    use crate::palette::real_length_range;
    use crate::reference::SINGULAR_RELATIVE;

    /// The division by the weight sums is skipped only where the call renormalizes and every
    /// sum is inside the band around 1 (or there is no vertex), or where it does not renormalize.
    #[test]
    fn weight_sums_are_divided_outside_the_unit_band() {
        let band = UNIT_WEIGHT_SUM_BAND;
        assert!(!divides_by_weight_sums(true, (1.0, 1.0)));
        assert!(!divides_by_weight_sums(true, (1.0 - band, 1.0 + band)));
        assert!(!divides_by_weight_sums(true, (f32::INFINITY, 0.0)));
        assert!(divides_by_weight_sums(true, (1.0 - 2.0 * band, 1.0)));
        assert!(divides_by_weight_sums(true, (1.0, 1.0 + 2.0 * band)));
        assert!(divides_by_weight_sums(true, (0.5, 1.0)));
        assert!(divides_by_weight_sums(true, (f32::NAN, f32::NAN)));
        assert!(!divides_by_weight_sums(false, (0.5, 2.0)));
    }

    /// The call-wide bound is at least the per-lane bound `(Σw r)³` of every sum in the band,
    /// and there is none where a sum lies outside it or there is no per-lane bound.
    #[test]
    fn unit_singular_bound_covers_every_sum_in_the_band() {
        let band = UNIT_WEIGHT_SUM_BAND;
        let sums = (1.0 - band, 1.0 + band);
        for largest in [0.01, 1.0, 1.5, 700.0] {
            let bound = unit_singular_bound(4, sums, largest).unwrap();
            let root = singular_bound_root(4, sums, largest).unwrap();
            let per_lane = ((1.0 + band) * root).powi(3);
            assert!(bound >= per_lane, "{largest}: {bound} < {per_lane}");
            assert!(
                bound <= per_lane * (1.0 + 1e-6),
                "{largest}: {bound} far above {per_lane}"
            );
        }
        assert!(unit_singular_bound(4, (1.0, 1.0 + 2.0 * band), 1.0).is_none());
        assert!(unit_singular_bound(4, (0.5, 1.0), 1.0).is_none());
        assert!(unit_singular_bound(4, (1.0, 1.0), 4096.0).is_none());
    }

    /// The singular test's bound factor: `(Σw r)³` is `SINGULAR_RELATIVE (1 + BOUND_MARGIN)`
    /// times `(Σw · largest)³` (to f32 rounding), and there is none where a bound
    /// `Σw · largest` leaves `[2⁻¹⁰, 2¹⁰]`, for NaN, for a mesh without vertices or for more
    /// influences than the margin covers.
    #[test]
    fn singular_bound_root_is_in_range_or_none() {
        let root = singular_bound_root(4, (0.5, 2.0), 1.5).unwrap();
        let expected =
            f64::from(SINGULAR_RELATIVE) * (1.0 + f64::from(BOUND_MARGIN)) * 1.5f64.powi(3);
        // f32 rounding of the root, cubed: under 1e-6 relative.
        assert!((f64::from(root).powi(3) / expected - 1.0).abs() < 1e-6);
        assert!(singular_bound_root(4, (1.0, 1.0), 1024.0).is_some());
        for (k, sums, largest) in [
            (4, (1.0, 1.0), 1025.0),
            (4, (1.0 / 2048.0, 1.0), 1.0),
            (4, (1.0, 2048.0), 1.0),
            (4, (1.0, 1.0), 0.0),
            (4, (1.0, 1.0), f32::NAN),
            (4, (f32::INFINITY, 0.0), 1.0),
            (BOUND_MAX_INFLUENCES + 1, (1.0, 1.0), 1.0),
        ] {
            assert_eq!(
                singular_bound_root(k, sums, largest),
                None,
                "k = {k}, sums {sums:?}, largest {largest}"
            );
        }
    }

    /// The per-call proof that no blended rotation part can fail `Rotation8::from_real`'s test
    /// holds for normalized weights and unit rotations, and is refused wherever a sum or a
    /// rotation part could make a blend too short or too long, or rounding could cancel it.
    #[test]
    fn real_blends_are_usable_only_where_provably() {
        let unit: Vec<DualQuat> = (0..8)
            .map(|j| {
                let q = Quat::from_axis_angle(Vec3::Y, 0.7 * j as f32);
                DualQuat::from_rotation_translation(q, Vec3::new(1.0, 2.0, 3.0))
            })
            .collect();
        assert!(real_blends_usable(4, (1.0, 1.0), real_length_range(&unit)));
        assert!(real_blends_usable(8, (0.5, 2.0), real_length_range(&unit)));
        // Sums of zero (an unweighted vertex), tiny, huge, NaN, or no vertex at all.
        for sums in [
            (0.0, 1.0),
            (1e-16, 1.0),
            (1.0, 1e16),
            (f32::NAN, 1.0),
            (f32::INFINITY, 0.0),
        ] {
            assert!(
                !real_blends_usable(4, sums, real_length_range(&unit)),
                "{sums:?}"
            );
        }
        // Sums so far apart that the f32 blend's rounding could cancel the shortest blend.
        assert!(!real_blends_usable(
            4,
            (1e-4, 1e4),
            real_length_range(&unit)
        ));
        // No palette, no influences, a rotation part of NaN or zero length.
        assert!(!real_blends_usable(4, (1.0, 1.0), real_length_range(&[])));
        assert!(!real_blends_usable(0, (1.0, 1.0), real_length_range(&unit)));
        let mut broken = unit.clone();
        broken[3].real = Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0);
        assert!(!real_blends_usable(
            4,
            (1.0, 1.0),
            real_length_range(&broken)
        ));
        broken[3].real = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        assert!(!real_blends_usable(
            4,
            (1.0, 1.0),
            real_length_range(&broken)
        ));
    }
}
