//! The 95 % confidence interval of a point's median that benchbook states
//! everywhere (the scheduler's stopping rule, `show`, reports, notebooks).
//!
//! Samples inside one round are not independent: the machine's state
//! (frequency, page placement, other tenants) drifts, so the spread of the
//! samples of one round understates how far a second run may land. Following
//! Kalibera and Jones ("Rigorous benchmarking in reasonable time", 2013), the
//! run is repeated at a higher level: a sweep measures every point in R
//! rounds, in a shuffled order, with fresh buffers each round, and the
//! interval is built from what varies between rounds.
//!
//! A point's figure is the median of its round medians: every round weighs
//! the same, however many samples it took (a round that ran power-capped
//! and kept sampling to its time limit once held 362 of a point's 422
//! samples, and the pooled median was that round's figure). With R ≥ 2
//! rounds the interval is that figure ± t · s̃ / √R, from the rounds alone
//! (the pooled samples' order statistics are not an interval of a median
//! of medians). s̃ is the spread between rounds,
//! moderated as in empirical Bayes (Smyth's limma): the standard deviation
//! s of the R round medians, with R − 1 degrees of freedom, is pooled with
//! a prior spread s₀ worth [`PRIOR_WEIGHT`] degrees of freedom,
//! s̃² = (d₀ s₀² + (R − 1) s²) / (d₀ + R − 1), and t takes d₀ + R − 1
//! degrees of freedom. The prior is local ([`prior_spreads`]): the median
//! spread of the point and its neighbours on the same curve (two sizes
//! either side), and never below the run's median spread. Three round
//! medians that happen to agree then say little, as they should, while a
//! point in a quiet region (a cache-resident size) is not given the
//! spread of the run's noisiest sizes: a run-wide floor (the upper
//! quartile of every point's spread, used before) made the intervals of
//! quiet memcpy sizes ten times wider than the differences between two
//! runs. With one round (older archives, imported logs) only the
//! samples-only interval exists, and [`Basis::Samples`] says so: it
//! assumes independent samples and is too narrow when the machine drifts.
//!
//! **Two intervals.** The interval above is the *within-run* interval of
//! the median: how precisely this run pinned its own median. It answers
//! "is this run's median known to ±1 %?", which is what the scheduler's
//! stopping rule (`--target-ci`) asks. Users ask something else: "what
//! would I get if I ran this again?". A rerun's median has its own noise,
//! and runs differ by more than rounds do (where the buffers land, the
//! frequency the CPU settles at, what else runs), so the within-run
//! interval holds a rerun's median far less often than 95 %. The *rerun*
//! interval ([`Intervals::rerun`]) is a 95 % prediction interval for the
//! median of a second run of the same design: the difference of two run
//! medians has variance 2 s̃² / R from their rounds plus 2 κ s̃² from what
//! differs between runs, κ = [`RERUN_SHARE`]. Reports, `show` and every
//! rate interval state the rerun interval; the within-run one stays beside
//! it, named so. Where repeated runs exist (`compare` groups, a node's
//! history), the spread between their medians is measured directly.
//!
//! The file is longer than 400 lines because the interval's tests (its
//! coverage under the model, the prior's locality, property tests) sit
//! beside it.
//!
//! Everything is O(n): one selection per round, one sort of the pooled
//! samples. No resampling, so the interval is the same on every machine and
//! cheap at millions of rows.

/// A 95 % interval, (low, high), in the unit of the value it brackets.
pub type Interval = (f64, f64);

use serde::Serialize;

use crate::vocab::stats::{median_ci, median_unsorted, quantile_sorted, std_dev};

/// The confidence level of every stated interval.
pub const LEVEL: f64 = 0.95;

/// What an interval rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The variation between two or more rounds (and the samples within).
    Rounds,
    /// The samples of one round only, as if independent: no estimate of
    /// run-to-run drift.
    Samples,
}

/// A point's two intervals ([module docs](self)): the within-run interval
/// of its median, and the rerun interval that a second run's median falls
/// in 95 % of the time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Intervals {
    pub within: MedianInterval,
    pub rerun: MedianInterval,
}

/// The share of a point's round variance (s̃², moderated) that its median
/// moves by between runs on top of what its rounds show: κ in
/// var(rerun median − this median) = 2 s̃² / R + 2 κ s̃².
///
/// Rounds in one process re-allocate their buffers and are measured in a
/// shuffled order, so they already see placement and drift within a run.
/// What they cannot see is the state a whole process lands in. Calibrated
/// on this project's 2-core VM, 2026-11-26: 12 `run memcpy --sizes
/// 4K..256M --threads 1` sweeps, 6 idle and 6 under the load that
/// `scripts/interval_check.py --load` applies (one busy process per core),
/// every ordered pair of the same case (60 directions, 1,020 point pairs),
/// with this formula's t · s̃ · √(2/R + 2κ) applied to each point's rounds
/// (the order-statistic widening left out): κ = 0 (runs differ as rounds
/// do) held the other run's median at 84 % of point pairs idle and 90 %
/// under load; κ = 0.1 at 91 % and 95 %; κ = 0.2 at 95 % and 97 %, the
/// nominal level idle; κ = 0.5 at 98 % and 99 % with intervals a third
/// wider. The README keeps the sweeps `interval_check.py --sweeps` ran
/// with this κ since.
pub const RERUN_SHARE: f64 = 0.2;

/// The rerun interval's model in words, for the places that state it.
pub fn rerun_model() -> String {
    format!("κ = {RERUN_SHARE} of the round variance, calibrated on memcpy sweeps")
}

/// A point's median with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MedianInterval {
    pub median: f64,
    pub low: f64,
    pub high: f64,
    /// How many rounds had samples.
    pub rounds: u32,
    pub basis: Basis,
}

impl MedianInterval {
    /// Half the interval's width relative to the median (0.01 = ±1 %).
    pub fn relative_half_width(&self) -> f64 {
        if self.median == 0.0 {
            return f64::INFINITY;
        }
        (self.high - self.low) / 2.0 / self.median.abs()
    }
}

/// How far a rate's interval may reach above its median before it is
/// stated as unbounded: 10×.
pub const RATE_BOUND: f64 = 10.0;

/// The 95 % interval of a rate computed as work / time (GB/s, GFLOP/s,
/// Gb/s): the time interval inverted, computed once per point
/// ([`RateInterval::of`]) and printed one way everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RateInterval {
    /// Both bounds, in the rate's unit.
    Bounded { low: f64, high: f64 },
    /// The time interval reaches zero (or so near it that the rate's upper
    /// bound would exceed [`RATE_BOUND`] × the rate): only a lower bound.
    Unbounded { low: f64 },
    /// The point has no interval (one sample, an imported figure).
    None,
}

impl RateInterval {
    /// The interval of `rate`, measured at `time` (its median) with the
    /// time interval `ci`.
    pub fn of(rate: f64, ci: Option<&MedianInterval>) -> RateInterval {
        let Some(ci) = ci else { return RateInterval::None };
        if !(rate.is_finite() && ci.median > 0.0 && ci.high > 0.0) {
            return RateInterval::None;
        }
        let low = rate * ci.median / ci.high;
        if ci.low <= 0.0 || rate * ci.median / ci.low > RATE_BOUND * rate {
            return RateInterval::Unbounded { low };
        }
        RateInterval::Bounded { low, high: rate * ci.median / ci.low }
    }

    /// (low, high) when both bounds exist.
    pub fn bounded(&self) -> Option<Interval> {
        match *self {
            RateInterval::Bounded { low, high } => Some((low, high)),
            _ => None,
        }
    }

    /// (low, high), with an unbounded interval's high at infinity.
    pub fn range(&self) -> Option<Interval> {
        match *self {
            RateInterval::Bounded { low, high } => Some((low, high)),
            RateInterval::Unbounded { low } => Some((low, f64::INFINITY)),
            RateInterval::None => None,
        }
    }

    /// Scaled by `k` (GB/s to Gb/s: 8).
    pub fn scaled(&self, k: f64) -> RateInterval {
        match *self {
            RateInterval::Bounded { low, high } => RateInterval::Bounded { low: low * k, high: high * k },
            RateInterval::Unbounded { low } => RateInterval::Unbounded { low: low * k },
            RateInterval::None => RateInterval::None,
        }
    }

    /// Whether it is no wider than `half` (relative) around `rate`; an
    /// unbounded interval never is, a missing one always is.
    pub fn within(&self, rate: f64, half: f64) -> bool {
        match *self {
            RateInterval::Bounded { low, high } => (high - low) / 2.0 <= half * rate,
            RateInterval::Unbounded { .. } => false,
            RateInterval::None => true,
        }
    }

    /// `(743–751)`, `(≥ 35.9, no upper bound: the time interval reaches
    /// zero)`, or `None`, each number through `show`.
    pub fn show(&self, show: impl Fn(f64) -> String) -> Option<String> {
        self.bounds(show).map(|b| format!("({b})"))
    }

    /// The bounds alone: `743–751`, or `≥ 35.9, no upper bound: the time
    /// interval reaches zero`.
    pub fn bounds(&self, show: impl Fn(f64) -> String) -> Option<String> {
        match *self {
            RateInterval::Bounded { low, high } => Some(format!("{}–{}", show(low), show(high))),
            RateInterval::Unbounded { low } => {
                Some(format!("≥ {}, no upper bound: the time interval reaches zero", show(low)))
            }
            RateInterval::None => None,
        }
    }
}

/// Student's t quantile at 0.975 for `df` degrees of freedom (tabulated to
/// 30, then the Cornish–Fisher expansion, which is within 1e-4 there).
pub fn t975(df: u32) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df as usize - 1],
        _ => {
            let (z, n) = (1.959964f64, df as f64);
            let g1 = (z.powi(3) + z) / 4.0;
            let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
            z + g1 / n + g2 / (n * n)
        }
    }
}

/// The interval of the median of samples grouped by round: `rounds[r]`
/// holds round r's values (empty rounds are ignored). `None` when there
/// are no values, or one round of fewer than 6 (no distribution-free
/// interval reaches 95 % there).
pub fn median_interval(rounds: &[Vec<f64>]) -> Option<MedianInterval> {
    median_interval_moderated(rounds, None)
}

/// [`median_interval`] with a prior spread between rounds
/// ([`prior_spreads`]), relative to the median.
pub fn median_interval_moderated(rounds: &[Vec<f64>], prior: Option<f64>) -> Option<MedianInterval> {
    let mut round_medians = Vec::new();
    let mut pooled = Vec::new();
    for r in rounds {
        let mut xs: Vec<f64> = r.iter().copied().filter(|x| !x.is_nan()).collect();
        if xs.is_empty() {
            continue;
        }
        pooled.extend_from_slice(&xs);
        round_medians.push(median_unsorted(&mut xs));
    }
    pooled.sort_by(f64::total_cmp);
    interval_from_parts(&round_medians, &pooled, prior).map(|i| i.within)
}

/// The round medians of a point and their standard deviation relative to
/// the pooled median, when it has at least 3 rounds (2 say too little
/// about a spread to lend it to other points).
pub fn relative_spread(rounds: &[Vec<f64>]) -> Option<f64> {
    let medians: Vec<f64> = rounds.iter().filter(|r| !r.is_empty()).map(|r| median_unsorted(&mut r.clone())).collect();
    spread_of(&medians)
}

/// The standard deviation of round medians relative to their median (the
/// point's figure), from 3 rounds on.
pub fn spread_of(round_medians: &[f64]) -> Option<f64> {
    if round_medians.len() < 3 {
        return None;
    }
    let figure = median_unsorted(&mut round_medians.to_vec());
    (figure > 0.0).then(|| std_dev(round_medians) / figure)
}

/// A point's figure: the median of its round medians (one round: its
/// median). `None` without a round.
pub fn figure(round_medians: &[f64]) -> Option<f64> {
    (!round_medians.is_empty()).then(|| median_unsorted(&mut round_medians.to_vec()))
}

/// Values already sorted, each with its round (`rounds[i]` is the round of
/// `sorted[i]`), split by round: each round's values, still sorted, in
/// round order (rounds without a value left out).
pub fn rounds_sorted(sorted: &[f64], rounds: &[u32]) -> Vec<(u32, Vec<f64>)> {
    debug_assert_eq!(sorted.len(), rounds.len());
    let mut by_round: std::collections::BTreeMap<u32, Vec<f64>> = std::collections::BTreeMap::new();
    for (&x, &r) in sorted.iter().zip(rounds) {
        by_round.entry(r).or_default().push(x);
    }
    by_round.into_iter().collect()
}

/// How many degrees of freedom the prior spread is worth: as much as five
/// rounds of the point's own. Two nearby values (2 and 8) gave about the
/// same coverage on back-to-back memcpy sweeps (`scripts/interval_check.py`).
pub const PRIOR_WEIGHT: f64 = 4.0;

/// The share of the upper quartile of a run's spreads that every point's
/// prior keeps. Rounds inside one process miss some of what moves a whole
/// run against the next (back-to-back memcpy sweeps on a 2-core VM moved
/// by about 1.75 times the variance their rounds showed). On 6 such
/// sweeps (15 pairs, `scripts/interval_check.py`), a prior of the local
/// median alone held the other run's median at 78 % of points with
/// half-widths of ±0.8 %; with this share of the upper quartile, 84 % at
/// ±2.2 %; the upper quartile itself (used before), 90 % at ±5.5 %.
pub const RUN_SHARE: f64 = 0.5;

/// How many neighbours on each side of a point, along its curve, lend it
/// their spread.
const NEIGHBOURS: usize = 2;

/// Each point's prior spread between rounds, relative to its median: the
/// median of the spreads ([`relative_spread`]) of the point and its
/// [`NEIGHBOURS`] neighbours on either side along its curve (the points
/// with the same `curve` key, ordered by `position`, e.g. the size), and
/// never below the run's level: the median spread of all the points
/// given, or [`RUN_SHARE`] of their upper quartile if that is more. The machine's
/// drift touches every point of a run, but not equally: a cache-resident
/// size moves by tenths of a percent between rounds where one at the edge
/// of the last-level cache moves by ten percent. `None` where no point has
/// a spread (no point has 3 rounds).
pub fn prior_spreads<K: Eq + std::hash::Hash>(points: &[(K, u64, Option<f64>)]) -> Vec<Option<f64>> {
    let mut all: Vec<f64> = points.iter().filter_map(|p| p.2).filter(|s| s.is_finite()).collect();
    if all.is_empty() {
        return vec![None; points.len()];
    }
    all.sort_by(f64::total_cmp);
    let run = quantile_sorted(&all, 0.5).max(RUN_SHARE * quantile_sorted(&all, 0.75));
    let mut curves: std::collections::HashMap<&K, Vec<usize>> = std::collections::HashMap::new();
    for (i, p) in points.iter().enumerate() {
        curves.entry(&p.0).or_default().push(i);
    }
    let mut out = vec![Some(run); points.len()];
    for members in curves.values_mut() {
        members.sort_by_key(|&i| points[i].1);
        for (pos, &i) in members.iter().enumerate() {
            let window = &members[pos.saturating_sub(NEIGHBOURS)..(pos + NEIGHBOURS + 1).min(members.len())];
            let mut near: Vec<f64> = window.iter().filter_map(|&j| points[j].2).filter(|s| s.is_finite()).collect();
            if !near.is_empty() {
                out[i] = Some(median_unsorted(&mut near).max(run));
            }
        }
    }
    out
}

/// The spread between rounds pooled with the prior (in the same unit), and
/// the degrees of freedom t then takes.
fn moderated(own: f64, df: u32, prior: Option<f64>) -> (f64, u32) {
    match prior.filter(|p| p.is_finite() && *p >= 0.0) {
        Some(p) => {
            let d0 = PRIOR_WEIGHT;
            let pooled = ((d0 * p * p + df as f64 * own * own) / (d0 + df as f64)).sqrt();
            (pooled, df + d0 as u32)
        }
        None => (own, df),
    }
}

/// [`median_interval`] of values already sorted, each with its round
/// (`rounds[i]` is the round of `sorted[i]`): what the analysis has after
/// one sort per point. Round medians follow without another sort, since
/// each round's values arrive in order.
pub fn median_interval_sorted(sorted: &[f64], rounds: &[u32], prior: Option<f64>) -> Option<MedianInterval> {
    intervals_sorted(sorted, rounds, prior).map(|i| i.within)
}

/// Both intervals ([`Intervals`]) of values already sorted, each with its
/// round, as [`median_interval_sorted`] takes them.
pub fn intervals_sorted(sorted: &[f64], rounds: &[u32], prior: Option<f64>) -> Option<Intervals> {
    let (medians, _) = round_medians_sorted(sorted, rounds);
    interval_from_parts(&medians, sorted, prior)
}

/// The round medians of sorted values with their rounds, and their
/// spread relative to the pooled median ([`relative_spread`]).
pub fn round_medians_sorted(sorted: &[f64], rounds: &[u32]) -> (Vec<f64>, Option<f64>) {
    debug_assert_eq!(sorted.len(), rounds.len());
    let n_rounds = rounds.iter().copied().max().map_or(0, |r| r as usize + 1);
    let mut by_round: Vec<Vec<f64>> = vec![Vec::new(); n_rounds];
    if n_rounds > 1 {
        for (&x, &r) in sorted.iter().zip(rounds) {
            by_round[r as usize].push(x);
        }
    }
    let round_medians: Vec<f64> = by_round.iter().filter(|r| !r.is_empty()).map(|r| quantile_sorted(r, 0.5)).collect();
    let spread = spread_of(&round_medians);
    (round_medians, spread)
}

/// Both intervals from the round medians (as [`round_medians_sorted`]
/// gives them) and all samples, sorted: [`intervals_sorted`] for a caller
/// that already has the medians.
pub fn intervals_from_round_medians(round_medians: &[f64], sorted: &[f64], prior: Option<f64>) -> Option<Intervals> {
    interval_from_parts(round_medians, sorted, prior)
}

/// Both intervals from the round medians and all samples, sorted.
fn interval_from_parts(round_medians: &[f64], pooled: &[f64], prior: Option<f64>) -> Option<Intervals> {
    if pooled.is_empty() {
        return None;
    }
    let n_rounds = round_medians.len() as u32;
    // The figure: the median of the round medians (one round: its median).
    let median = match n_rounds {
        0 | 1 => quantile_sorted(pooled, 0.5),
        _ => figure(round_medians).expect("two or more rounds"),
    };
    let prior = prior.filter(|p| p.is_finite() && *p >= 0.0).map(|p| p * median.abs());
    // Times are never negative; a bound is not clipped to the samples'
    // range, since another run's median may well lie outside them.
    let clip = |low: f64| if pooled[0] >= 0.0 { low.max(0.0) } else { low };
    let make =
        |low: f64, high: f64, rounds: u32, basis: Basis| MedianInterval { median, low: clip(low), high, rounds, basis };
    if n_rounds < 2 {
        let (low, high, _) = median_ci(pooled, LEVEL)?;
        let within = make(low, high, 1, Basis::Samples);
        // A rerun's median has the noise of this one's again (√2), and,
        // where the run's other points lend a spread between rounds, that
        // spread as one round's plus the share between runs.
        let mut half_low = std::f64::consts::SQRT_2 * (median - low);
        let mut half_high = std::f64::consts::SQRT_2 * (high - median);
        if let Some(p) = prior {
            let half = t975(PRIOR_WEIGHT as u32) * p * (2.0 + 2.0 * RERUN_SHARE).sqrt();
            (half_low, half_high) = (half_low.max(half), half_high.max(half));
        }
        let rerun = make(median - half_low, median + half_high, 1, Basis::Samples);
        return Some(Intervals { within, rerun });
    }
    let (spread, df) = moderated(std_dev(round_medians), n_rounds - 1, prior);
    let t = t975(df);
    let r = n_rounds as f64;
    let half = t * spread / r.sqrt();
    let within = make(median - half, median + half, n_rounds, Basis::Rounds);
    // The difference of two run figures: 2 s̃² / R from their rounds, and
    // 2 κ s̃² from what differs between runs.
    let rerun_half = t * spread * (2.0 / r + 2.0 * RERUN_SHARE).sqrt();
    let rerun = make(median - rerun_half, median + rerun_half, n_rounds, Basis::Rounds);
    Some(Intervals { within, rerun })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand_distr::{Distribution, Normal};

    /// [`median_interval`] of (round, value) pairs in any order.
    fn median_interval_of_pairs(pairs: impl IntoIterator<Item = (u32, f64)>) -> Option<MedianInterval> {
        let mut rounds: Vec<Vec<f64>> = Vec::new();
        for (r, x) in pairs {
            let r = r as usize;
            if rounds.len() <= r {
                rounds.resize_with(r + 1, Vec::new);
            }
            rounds[r].push(x);
        }
        median_interval(&rounds)
    }

    fn holds(ci: &MedianInterval, x: f64) -> bool {
        ci.low <= x && x <= ci.high
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(4), 2.776);
        assert!((t975(40) - 2.021).abs() < 2e-3, "{}", t975(40));
        assert!((t975(120) - 1.980).abs() < 2e-3, "{}", t975(120));
        assert!((t975(100_000) - 1.960).abs() < 1e-3);
        assert!((2..200).all(|d| t975(d) < t975(d - 1)), "t quantiles fall with the degrees of freedom");
    }

    #[test]
    fn one_round_rests_on_its_samples() {
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        let ci = median_interval(std::slice::from_ref(&xs)).unwrap();
        assert_eq!(ci.basis, Basis::Samples);
        assert_eq!(ci.median, 10.5);
        let (l, h, _) = median_ci(&xs, LEVEL).unwrap();
        assert_eq!((ci.low, ci.high), (l, h));
        assert!(median_interval(&[vec![1.0, 2.0, 3.0]]).is_none(), "3 samples cannot make a 95 % interval");
        assert!(median_interval(&[]).is_none());
    }

    #[test]
    fn rounds_that_disagree_widen_the_interval() {
        // Three rounds, tight inside, 10 % apart from each other: the
        // samples-only interval would be tiny; the rounds' one is not.
        let rounds: Vec<Vec<f64>> =
            [1.0, 1.1, 1.2].iter().map(|m| (0..30).map(|i| m + i as f64 * 1e-5).collect()).collect();
        let ci = median_interval(&rounds).unwrap();
        assert_eq!(ci.basis, Basis::Rounds);
        assert_eq!(ci.rounds, 3);
        assert!(ci.relative_half_width() > 0.05, "{ci:?}");
        let pooled: Vec<f64> = rounds.concat();
        let mut sorted = pooled.clone();
        sorted.sort_by(f64::total_cmp);
        let (l, h, _) = median_ci(&sorted, LEVEL).unwrap();
        assert!(ci.low <= l && ci.high >= h);
        // Wider than the samples' own interval, and not below zero.
        assert!(ci.low >= 0.0 && ci.low < l && ci.high > h, "{ci:?}");
    }

    #[test]
    fn a_lucky_point_borrows_its_neighbours_spread() {
        // Three rounds that agree to 1e-5: alone, a tiny interval.
        let lucky: Vec<Vec<f64>> = (0..3).map(|r| vec![1.0 + r as f64 * 1e-5; 10]).collect();
        let alone = median_interval(&lucky).unwrap();
        assert!(alone.relative_half_width() < 1e-4, "{alone:?}");
        assert!(relative_spread(&lucky).unwrap() < 1e-4);
        assert!(relative_spread(&lucky[..2]).is_none(), "two rounds lend no spread");
        // Its neighbours spread 2 % between rounds: with a prior worth four
        // rounds' degrees of freedom, s̃ = 2 % · √(4/6) and t takes 6.
        let moderated = median_interval_moderated(&lucky, Some(0.02)).unwrap();
        let expected = t975(6) * 0.02 * (4.0f64 / 6.0).sqrt() / 3f64.sqrt();
        assert!((moderated.relative_half_width() - expected).abs() < 1e-3 * expected, "{moderated:?} vs {expected}");
        // A point whose own rounds spread more than the prior keeps most of
        // its own spread.
        let noisy: Vec<Vec<f64>> = [1.0, 1.1, 1.2].iter().map(|m| vec![*m; 10]).collect();
        let own = median_interval(&noisy).unwrap().relative_half_width();
        let with_prior = median_interval_moderated(&noisy, Some(0.001)).unwrap().relative_half_width();
        assert!(with_prior < own && with_prior > own / 4.0, "{with_prior} vs {own}");
    }

    #[test]
    fn priors_come_from_neighbours_on_the_same_curve_and_never_below_the_runs_median() {
        // A quiet curve (0.2 %) and a noisy one (10 %), each of 6 sizes, and
        // a point of the quiet curve with no spread of its own.
        let mut points: Vec<(&str, u64, Option<f64>)> = Vec::new();
        for size in 0..6u64 {
            points.push(("quiet", size, if size == 2 { None } else { Some(0.002) }));
            points.push(("noisy", size, Some(0.10)));
        }
        // A lone point, on a curve of its own, far from both.
        points.push(("lone", 0, Some(0.5)));
        let priors = prior_spreads(&points);
        // The 12 spreads given, sorted: 5 × 0.002, 6 × 0.10, 0.5; median
        // 0.10, upper quartile 0.10.
        let run_median = 0.10;
        for (p, prior) in points.iter().zip(&priors) {
            let prior = prior.unwrap();
            match p.0 {
                "quiet" => assert_eq!(prior, run_median, "the run's median is the floor: {p:?}"),
                "noisy" => assert_eq!(prior, 0.10, "{p:?}"),
                _ => assert_eq!(prior, 0.5, "its own spread, above the run's median"),
            }
        }
        // Order along the curve is by place, not by position in the list.
        let shuffled = vec![
            ("c", 3, Some(0.04)),
            ("c", 0, Some(0.01)),
            ("c", 2, Some(0.03)),
            ("c", 1, Some(0.02)),
            ("c", 9, Some(0.05)),
        ];
        let p = prior_spreads(&shuffled);
        // Place 0's window is places 0, 1, 2: median 0.02; the run's median
        // is 0.03 (half its upper quartile, 0.02, is less).
        assert_eq!(p[1], Some(0.03));
        // Place 9's window is places 2, 3, 9: median 0.04.
        assert_eq!(p[4], Some(0.04));
        // A run whose upper quartile is far above its median: half of it.
        let skewed = vec![
            ("c", 0, Some(0.001)),
            ("c", 1, Some(0.001)),
            ("c", 2, Some(0.001)),
            ("c", 3, Some(0.2)),
            ("c", 4, Some(0.2)),
        ];
        assert_eq!(prior_spreads(&skewed)[0], Some(0.1));
        assert_eq!(prior_spreads::<&str>(&[("a", 0, None)]), vec![None], "no spread anywhere: no prior");
    }

    #[test]
    fn pairs_group_by_round() {
        let pairs = vec![(1, 2.0), (0, 1.0), (2, 3.0), (0, 1.0), (1, 2.0), (2, 3.0)];
        let ci = median_interval_of_pairs(pairs).unwrap();
        assert_eq!(ci.rounds, 3);
        assert_eq!(ci.median, 2.0);
    }

    /// Coverage under the model the interval is built for: each round has
    /// its own offset (drift, page placement), samples scatter around it.
    /// Two independent "runs" of the same machine: how often does one
    /// run's interval hold the other run's median? Seeded, so it is the
    /// same every time, and it fails if the interval ignores the rounds.
    #[test]
    fn intervals_hold_an_independent_runs_median() {
        let mut rng = crate::vocab::stats::seeded_rng(7);
        let between = Normal::new(0.0, 0.03).unwrap();
        let within = Normal::new(0.0, 0.01).unwrap();
        let mut run = |rounds: usize| -> Vec<Vec<f64>> {
            (0..rounds)
                .map(|_| {
                    let offset = between.sample(&mut rng);
                    (0..20).map(|_| 1.0 + offset + within.sample(&mut rng)).collect()
                })
                .collect()
        };
        let trials = 400;
        let mut held = 0;
        let mut held_samples_only = 0;
        for _ in 0..trials {
            let (a, b) = (run(5), run(5));
            let ci = median_interval(&a).unwrap();
            let other = median_interval(&b).unwrap().median;
            held += holds(&ci, other) as u32;
            let naive = median_interval(&[a.concat()]).unwrap();
            held_samples_only += holds(&naive, other) as u32;
        }
        let share = held as f64 / trials as f64;
        let naive_share = held_samples_only as f64 / trials as f64;
        // The other run's median has its own noise, so even a perfect 95 %
        // interval holds it less than 95 % of the time (about 83 % here).
        assert!(share >= 0.75, "rounds-based intervals held the other median {share:.2} of the time");
        assert!(naive_share < 0.6, "a samples-only interval should fail here: {naive_share:.2}");
    }

    /// Runs that differ by more than their rounds show (a run offset with
    /// [`RERUN_SHARE`] of the round variance): the rerun interval holds an
    /// independent run's median about 95 % of the time, the within-run
    /// interval of the median far less. Seeded, so it is the same every
    /// time; it fails if the rerun interval drops either the second run's
    /// own noise or the share between runs.
    #[test]
    fn the_rerun_interval_holds_a_second_runs_median() {
        let mut rng = crate::vocab::stats::seeded_rng(11);
        let round_sd = 0.03;
        let between = Normal::new(0.0, (RERUN_SHARE * round_sd * round_sd).sqrt()).unwrap();
        let rounds = Normal::new(0.0, round_sd).unwrap();
        let within = Normal::new(0.0, 0.002).unwrap();
        let mut run = || -> Vec<Vec<f64>> {
            let offset = between.sample(&mut rng);
            (0..5)
                .map(|_| {
                    let r = offset + rounds.sample(&mut rng);
                    (0..20).map(|_| 1.0 + r + within.sample(&mut rng)).collect()
                })
                .collect()
        };
        let both = |rounds: &[Vec<f64>]| {
            let mut pairs: Vec<(f64, u32)> =
                rounds.iter().enumerate().flat_map(|(r, xs)| xs.iter().map(move |&x| (x, r as u32))).collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (xs, rs): (Vec<f64>, Vec<u32>) = pairs.into_iter().unzip();
            intervals_sorted(&xs, &rs, None).unwrap()
        };
        let trials = 600;
        let (mut rerun, mut within_run) = (0, 0);
        for _ in 0..trials {
            let (a, b) = (both(&run()), both(&run()));
            rerun += holds(&a.rerun, b.within.median) as u32;
            within_run += holds(&a.within, b.within.median) as u32;
            assert!(a.rerun.low <= a.within.low && a.rerun.high >= a.within.high, "{a:?}");
        }
        let (rerun, within_run) = (rerun as f64 / trials as f64, within_run as f64 / trials as f64);
        assert!((0.91..=0.99).contains(&rerun), "rerun intervals held the other median {rerun:.3} of the time");
        assert!(within_run < 0.85, "within-run intervals held it {within_run:.3} of the time: no gap to close?");
    }

    proptest! {
        #[test]
        fn sorted_input_gives_the_same_interval(
            pairs in proptest::collection::vec((0u32..5, 1e-9f64..1e3), 1..200)
        ) {
            let a = median_interval_of_pairs(pairs.clone());
            let mut sorted = pairs;
            sorted.sort_by(|x, y| x.1.total_cmp(&y.1));
            let (rounds, values): (Vec<u32>, Vec<f64>) = sorted.into_iter().unzip();
            let b = median_interval_sorted(&values, &rounds, None);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn the_interval_holds_the_median_and_stays_positive(
            rounds in proptest::collection::vec(proptest::collection::vec(1e-9f64..1e3, 1..40), 1..8)
        ) {
            if let Some(ci) = median_interval(&rounds) {
                let pooled = rounds.concat();
                let lo = pooled.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = pooled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                prop_assert!(ci.low <= ci.median && ci.median <= ci.high, "{ci:?}");
                prop_assert!(ci.low >= 0.0 && lo >= 0.0 && ci.median <= hi, "{ci:?}");
                prop_assert_eq!(ci.rounds as usize, rounds.iter().filter(|r| !r.is_empty()).count());
            }
        }

        #[test]
        fn scaling_scales_the_interval(
            rounds in proptest::collection::vec(proptest::collection::vec(1e-6f64..1.0, 6..30), 1..6),
            k in 1e-3f64..1e3,
        ) {
            let a = median_interval(&rounds).unwrap();
            let scaled: Vec<Vec<f64>> = rounds.iter().map(|r| r.iter().map(|x| x * k).collect()).collect();
            let b = median_interval(&scaled).unwrap();
            prop_assert!((b.relative_half_width() - a.relative_half_width()).abs() < 1e-9 * (1.0 + a.relative_half_width()));
        }
    }
}
