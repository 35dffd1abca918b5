//! How well found change points match people's annotations, scored as the
//! Turing Change Point Detection Benchmark scores them (van den Burg and
//! Williams, "An Evaluation of Change Point Detection Algorithms", 2020;
//! TCPDBench's `analysis/scripts/metrics.py`, version 3): the F1 measure
//! with a margin of 5 points, and the covering metric, each over every
//! annotator of a series.
//!
//! Conventions, as the benchmark's: a change point `c` is the first index
//! of a new segment; predictions are kept only at 1..=n-2 (index 0 and
//! n-1 say nothing); F1 adds index 0 to every annotator's set and to the
//! predictions, so a series nobody annotated scores 1 for predicting none.
//! Truth points are matched in ascending order. TCPDBench visits them in
//! CPython's set order instead, which changes 5 of its 2352 published
//! per-series scores (none of binseg's, pelt's or zero's).

use std::collections::BTreeSet;

/// The F1 margin: a prediction within 5 points of an annotation is a hit.
pub const MARGIN: usize = 5;

/// `predictions` as the benchmark keeps them: distinct, inside 1..=n-2.
pub fn clean(predictions: &[usize], n: usize) -> BTreeSet<usize> {
    predictions.iter().copied().filter(|&c| c >= 1 && c + 2 <= n).collect()
}

/// How many of `truth` a distinct prediction within `margin` matches, each
/// prediction used once, the nearest first (a tie: the earlier).
fn true_positives(truth: &BTreeSet<usize>, predictions: &BTreeSet<usize>, margin: usize) -> usize {
    let mut free = predictions.clone();
    let mut hits = 0;
    for &t in truth {
        let best = free.range(t.saturating_sub(margin)..=t + margin).min_by_key(|&&x| (x.abs_diff(t), x)).copied();
        if let Some(x) = best {
            free.remove(&x);
            hits += 1;
        }
    }
    hits
}

/// Precision against the union of every annotator's points, recall the
/// mean over annotators, and their harmonic mean: TCPDBench's F1.
/// `annotations` holds each annotator's change points (an annotator may
/// mark none); `n` is the series' length.
pub fn f1(annotations: &[Vec<usize>], predictions: &[usize], n: usize) -> f64 {
    if annotations.is_empty() {
        return f64::NAN;
    }
    let mut x = clean(predictions, n);
    x.insert(0);
    let sets: Vec<BTreeSet<usize>> =
        annotations.iter().map(|a| a.iter().copied().chain(std::iter::once(0)).collect()).collect();
    let union: BTreeSet<usize> = sets.iter().flatten().copied().collect();
    let precision = true_positives(&union, &x, MARGIN) as f64 / x.len() as f64;
    let recall =
        sets.iter().map(|t| true_positives(t, &x, MARGIN) as f64 / t.len() as f64).sum::<f64>() / sets.len() as f64;
    precision * recall / (0.5 * recall + 0.5 * precision)
}

/// The segments `cps` cut `0..n` into, as half-open ranges.
fn segments(cps: impl IntoIterator<Item = usize>, n: usize) -> Vec<(usize, usize)> {
    let inner: BTreeSet<usize> = cps.into_iter().filter(|&c| c > 0 && c < n).collect();
    let bounds: Vec<usize> = std::iter::once(0).chain(inner).chain(std::iter::once(n)).collect();
    bounds.windows(2).map(|w| (w[0], w[1])).collect()
}

/// How well the segments of `by` cover those of `of`: each of `of`'s
/// segments weighted by its length, at its best Jaccard overlap with one
/// of `by`'s.
fn cover_of(of: &[(usize, usize)], by: &[(usize, usize)], n: usize) -> f64 {
    let jaccard = |a: (usize, usize), b: (usize, usize)| {
        let inter = a.1.min(b.1).saturating_sub(a.0.max(b.0));
        let union = a.1.max(b.1) - a.0.min(b.0);
        inter as f64 / union as f64
    };
    of.iter().map(|&a| (a.1 - a.0) as f64 * by.iter().map(|&b| jaccard(a, b)).fold(0.0, f64::max)).sum::<f64>()
        / n as f64
}

/// TCPDBench's covering metric: the mean over annotators of how well the
/// predicted segments cover the annotator's.
pub fn cover(annotations: &[Vec<usize>], predictions: &[usize], n: usize) -> f64 {
    if annotations.is_empty() || n == 0 {
        return f64::NAN;
    }
    let predicted = segments(clean(predictions, n), n);
    annotations.iter().map(|a| cover_of(&segments(a.iter().copied(), n), &predicted, n)).sum::<f64>()
        / annotations.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of TCPDBench's own metrics.py docstrings.
    #[test]
    fn the_benchmarks_own_examples() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        let four = [vec![10, 20], vec![11, 20], vec![10], vec![0, 5]];
        assert!(close(f1(&four, &[10, 20], 100), 1.0));
        let three = [vec![], vec![10], vec![50]];
        assert!(close(f1(&three, &[10], 100), 0.9090909090909091));
        assert!(close(f1(&three, &[], 100), 0.8));
        let c3 = [vec![10, 20], vec![10], vec![0, 5]];
        assert!(close(cover(&c3, &[10, 20], 45), 0.7962962962962963));
        let d3 = [vec![], vec![10], vec![40]];
        assert!(close(cover(&d3, &[10], 45), 0.7954144620811286));
        assert!(close(cover(&d3, &[], 45), 0.8189300411522634));
    }

    #[test]
    fn predictions_at_the_ends_and_twice_count_once_or_not_at_all() {
        let a = [vec![30]];
        assert_eq!(f1(&a, &[30, 30, 0, 99], 100), f1(&a, &[30], 100));
        assert_eq!(cover(&a, &[30, 99], 100), 1.0);
    }
}
