//! The paper's weight similarity of two weight vectors, and the one term of it every sum adds.

/// The similarity `s(a, b)` of two weight vectors given as `(joint, weight)` lists (any order;
/// a repeated joint's weights are added), in f64, as the `cor` module docs define it.
///
/// Unitless, non-negative; 0 unless `a` and `b` share two joints with non-zero weight. The
/// weights are used as given (not normalized). Allocates two small lists.
#[must_use]
pub fn weight_similarity(a: &[(u16, f32)], b: &[(u16, f32)], sigma: f32) -> f64 {
    let a = merge(a.iter().map(|&(j, w)| (j, f64::from(w))));
    let b = merge(b.iter().map(|&(j, w)| (j, f64::from(w))));
    let lookup = |list: &[(u16, f64)], joint| {
        list.iter()
            .find(|&&(j, _)| j == joint)
            .map_or(0.0, |&(_, w)| w)
    };
    let inverse_sigma_sq = 1.0 / (f64::from(sigma) * f64::from(sigma));
    let mut sum = 0.0;
    for (x, &(j, wpj)) in a.iter().enumerate() {
        for &(k, wpk) in &a[x + 1..] {
            let (wvj, wvk) = (lookup(&b, j), lookup(&b, k));
            sum += pair_term(wpj, wpk, wvj, wvk, inverse_sigma_sq);
        }
    }
    sum
}

/// One `(j, k)` term of the similarity.
#[inline]
pub(super) fn pair_term(wpj: f64, wpk: f64, wvj: f64, wvk: f64, inverse_sigma_sq: f64) -> f64 {
    let d = wpj * wvk - wpk * wvj;
    wpj * wpk * wvj * wvk * (-d * d * inverse_sigma_sq).exp()
}

/// Sorted by joint, repeated joints added, zero weights dropped.
pub(super) fn merge(entries: impl Iterator<Item = (u16, f64)>) -> Vec<(u16, f64)> {
    let mut list: Vec<(u16, f64)> = entries.filter(|&(_, w)| w > 0.0).collect();
    list.sort_by_key(|&(j, _)| j);
    list.dedup_by(|later, kept| {
        if later.0 == kept.0 {
            kept.1 += later.1;
            true
        } else {
            false
        }
    });
    list
}
