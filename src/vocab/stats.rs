//! Pure statistics on slices: no I/O, no polars, no timers. The runner uses
//! [`rel_std_dev`] for its stopping rule; the analysis uses the same
//! definitions so that the number a run stopped on is the number a report
//! prints. Quantiles interpolate linearly between order statistics (type 7,
//! as numpy's and polars' "linear"), so p50 is the median.

/// The one seeded random number generator (resampling, test data, GEMM
/// inputs): the same seed gives the same stream on every machine.
pub fn seeded_rng(seed: u64) -> rand::rngs::StdRng {
    <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed)
}

/// Summary of one point's samples (each value is seconds per operation).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Summary {
    pub count: usize,
    pub min: f64,
    pub p20: f64,
    pub median: f64,
    pub p80: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for one sample.
    pub std_dev: f64,
    /// Coefficient of variation, std_dev / mean.
    pub cv: f64,
}

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (Bessel-corrected); 0 for fewer than 2 values.
pub fn std_dev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (xs.len() - 1) as f64).sqrt()
}

/// Relative standard deviation (CV): std_dev / mean. Infinite when the mean
/// is 0, so a stopping rule never accepts it.
pub fn rel_std_dev(xs: &[f64]) -> f64 {
    let m = mean(xs);
    if m == 0.0 || !m.is_finite() {
        return f64::INFINITY;
    }
    std_dev(xs) / m.abs()
}

/// Linear-interpolated quantile of already sorted data, q in [0, 1].
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let q = q.clamp(0.0, 1.0);
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// Every statistic a report prints for one point. NaNs are dropped first.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = mean(&v);
    let sd = std_dev(&v);
    Some(Summary {
        count: v.len(),
        min: v[0],
        p20: quantile_sorted(&v, 0.2),
        median: quantile_sorted(&v, 0.5),
        p80: quantile_sorted(&v, 0.8),
        max: v[v.len() - 1],
        mean: m,
        std_dev: sd,
        cv: if m != 0.0 { sd / m.abs() } else { f64::INFINITY },
    })
}

/// The smallest size whose rate reaches `fraction` × `reference`.
/// `curve` is (size, rate) pairs in any order. None when no point reaches it.
pub fn saturation_size(curve: &[(u64, f64)], reference: f64, fraction: f64) -> Option<u64> {
    if !(reference > 0.0) {
        return None;
    }
    curve.iter().filter(|(_, r)| *r >= fraction * reference).map(|(s, _)| *s).min()
}

/// The plateau of a bandwidth curve: the median rate of its largest sizes
/// (up to three) that agree with the largest size's rate within 10 %, i.e.
/// where the curve has settled. A curve still rising at its end has the
/// last rate as plateau; a cache-resident peak at middle sizes is never it.
pub fn plateau(curve: &[(u64, f64)]) -> Option<f64> {
    plateau_span(curve).map(|(p, _)| p)
}

/// [`plateau`] and the sizes it was taken from, smallest first.
pub fn plateau_span(curve: &[(u64, f64)]) -> Option<(f64, Vec<u64>)> {
    let mut v: Vec<(u64, f64)> = curve.iter().copied().filter(|(_, r)| r.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by_key(|(s, _)| *s);
    let last = v[v.len() - 1].1;
    let tail: Vec<(u64, f64)> =
        v.iter().rev().take(3).copied().take_while(|(_, r)| (r - last).abs() <= 0.1 * last.abs()).collect();
    let mut rates: Vec<f64> = tail.iter().map(|(_, r)| *r).collect();
    rates.sort_by(f64::total_cmp);
    let mut sizes: Vec<u64> = tail.iter().map(|(s, _)| *s).collect();
    sizes.sort_unstable();
    Some((quantile_sorted(&rates, 0.5), sizes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(s.count, 5);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 5.0);
        assert!((s.p20 - 1.8).abs() < 1e-12);
        assert!((s.p80 - 4.2).abs() < 1e-12);
        assert!((s.std_dev - 2.5f64.sqrt()).abs() < 1e-12);
        assert!((s.cv - 2.5f64.sqrt() / 3.0).abs() < 1e-12);
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[f64::NAN]).is_none());
        assert_eq!(summarize(&[7.0]).unwrap().std_dev, 0.0);
    }

    #[test]
    fn rsd_of_constant_is_zero_and_of_zero_mean_is_infinite() {
        assert_eq!(rel_std_dev(&[2.0, 2.0, 2.0]), 0.0);
        assert!(rel_std_dev(&[0.0, 0.0]).is_infinite());
    }

    #[test]
    fn saturation_and_plateau() {
        let curve = [(1, 10.0), (2, 50.0), (4, 85.0), (8, 120.0), (16, 100.0), (32, 100.0), (64, 98.0)];
        assert_eq!(plateau(&curve), Some(100.0));
        assert_eq!(saturation_size(&curve, 100.0, 0.5), Some(2));
        assert_eq!(saturation_size(&curve, 100.0, 0.9), Some(8));
        assert_eq!(saturation_size(&curve, 1000.0, 0.9), None);
        assert_eq!(saturation_size(&curve, 0.0, 0.9), None);
        // Still rising at the end: the last point is the plateau.
        let rising = [(1, 1.0), (2, 17.5), (4, 140.0), (8, 331.0)];
        assert_eq!(plateau(&rising), Some(331.0));
        assert_eq!(plateau_span(&rising).unwrap().1, vec![8]);
        assert_eq!(plateau_span(&curve).unwrap().1, vec![16, 32, 64]);
    }

    proptest! {
        #[test]
        fn order_statistics_are_ordered(xs in proptest::collection::vec(1e-9f64..1e3, 1..200)) {
            let s = summarize(&xs).unwrap();
            prop_assert!(s.min <= s.p20 && s.p20 <= s.median && s.median <= s.p80 && s.p80 <= s.max);
            prop_assert!(s.min <= s.mean && s.mean <= s.max);
            prop_assert!(s.std_dev >= 0.0);
            prop_assert_eq!(s.count, xs.len());
        }

        #[test]
        fn scaling_preserves_cv(xs in proptest::collection::vec(1e-6f64..1.0, 2..100), k in 1e-3f64..1e3) {
            let a = rel_std_dev(&xs);
            let scaled: Vec<f64> = xs.iter().map(|x| x * k).collect();
            let b = rel_std_dev(&scaled);
            prop_assert!((a - b).abs() <= 1e-9 * a.max(1.0));
        }

        #[test]
        fn saturation_point_reaches_the_fraction(
            curve in proptest::collection::vec((1u64..1_000_000, 0.0f64..1000.0), 1..50),
            frac in 0.0f64..1.0,
        ) {
            let p = plateau(&curve).unwrap();
            if let Some(s) = saturation_size(&curve, p, frac) {
                // Some point at that size reaches it, and no smaller size does.
                prop_assert!(curve.iter().any(|(sz, r)| *sz == s && *r >= frac * p));
                prop_assert!(curve.iter().all(|(sz, r)| *sz >= s || *r < frac * p));
            }
        }
    }
}
