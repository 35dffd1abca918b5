//! One verdict per curve (a benchmark at one setting, over its sizes or
//! parameters): what a write-up's summary table says of each benchmark
//! ("on par", "slower at 3 of 8 sizes"), from the point verdicts under it.
//! `compare --json` carries it, and the compare report's summary table
//! prints it, so the two never disagree.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{PointComparison, Verdict};
use crate::vocab::stats;

/// A curve's verdict, from its points' verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CurveVerdict {
    /// Every point `same`: no difference this data can resolve beyond the
    /// threshold.
    Same,
    /// More points faster than chance gives ([`beyond_chance`]), none
    /// slower beyond it.
    Faster,
    /// More points slower than chance gives, none faster beyond it.
    Slower,
    /// Faster at some points, slower at others, each beyond chance.
    Mixed,
    /// Neither: some point inconclusive, or faster or slower at no more
    /// points than chance gives.
    Inconclusive,
}

impl CurveVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            CurveVerdict::Same => "same",
            CurveVerdict::Faster => "faster",
            CurveVerdict::Slower => "slower",
            CurveVerdict::Mixed => "mixed",
            CurveVerdict::Inconclusive => "inconclusive",
        }
    }
}

/// One curve of a comparison, summed up.
#[derive(Debug, Clone, Serialize)]
pub struct CurveSummary {
    pub curve: String,
    pub bench: String,
    /// How its changes read (faster, or a metric higher or lower).
    pub reading: Reading,
    pub points: usize,
    pub same: usize,
    pub faster: usize,
    pub slower: usize,
    pub inconclusive: usize,
    /// The median of the points' ratios (above 1: the compared side is
    /// better).
    pub ratio: f64,
    /// For a `slower` or `faster` curve, the median ratio of the points
    /// with that verdict (how much slower where it is slower); `None`
    /// otherwise.
    pub verdict_ratio: Option<f64>,
    /// The smallest and largest ratio over its points.
    pub ratio_min: f64,
    pub ratio_max: f64,
    /// Every point's 95 % interval lies inside `ci_low`–`ci_high`; `None`
    /// where a point has one sample a side (no interval).
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// The median over its points of the smallest change a verdict could
    /// call ([`PointComparison::detectable`]); `None` without intervals.
    pub detectable: Option<f64>,
    /// How far from 1 (as a fraction) the widest interval bound reaches:
    /// "within ±x %" of the baseline at every point. `None` without
    /// intervals.
    pub within: Option<f64>,
    pub verdict: CurveVerdict,
    /// The run-to-run spread of its points: the median over them of the
    /// larger side's coefficient of variation of per-run medians; `None`
    /// where no side measured a point in two runs or more.
    pub run_cv: Option<f64>,
    /// The fewest runs a side behind any of its points.
    pub runs: usize,
}

/// How a change of a point reads: a time per operation gets faster or
/// slower (by the speed-up, ratio − 1); a named metric gets higher or lower
/// (by its own change), whichever way it improves, never "faster".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    Time,
    HigherBetter,
    LowerBetter,
}

impl Reading {
    /// The reading of a compared point: its metric's direction, from which
    /// way its ratio (above 1: better) runs against its medians.
    pub fn of(p: &PointComparison) -> Reading {
        if p.metric.is_none() {
            return Reading::Time;
        }
        if (p.median_b < p.median_a) == (p.ratio > 1.0) && p.median_a != p.median_b {
            Reading::LowerBetter
        } else {
            Reading::HigherBetter
        }
    }

    /// A point verdict in words: `faster`, or `lower` for a latency that
    /// improved.
    pub fn verdict_word(self, v: Verdict) -> &'static str {
        match (self, v) {
            (Reading::Time, Verdict::Faster) => "faster",
            (Reading::Time, Verdict::Slower) => "slower",
            (Reading::HigherBetter, Verdict::Faster) => "higher, better",
            (Reading::HigherBetter, Verdict::Slower) => "lower, worse",
            (Reading::LowerBetter, Verdict::Faster) => "lower, better",
            (Reading::LowerBetter, Verdict::Slower) => "higher, worse",
            (_, other) => other.as_str(),
        }
    }

    /// A point verdict as a count of many points of mixed kinds names it:
    /// `faster`, `slower`, or for a metric `better (lower)`, `worse (higher)`.
    pub fn count_word(self, v: Verdict) -> String {
        let (better, worse) = self.words();
        match (self, v) {
            (Reading::Time, Verdict::Faster) => better.into(),
            (Reading::Time, Verdict::Slower) => worse.into(),
            (_, Verdict::Faster) => format!("better ({better})"),
            (_, Verdict::Slower) => format!("worse ({worse})"),
            (_, other) => other.as_str().into(),
        }
    }

    /// The words for (better, worse).
    pub fn words(self) -> (&'static str, &'static str) {
        match self {
            Reading::Time => ("faster", "slower"),
            Reading::HigherBetter => ("higher", "lower"),
            Reading::LowerBetter => ("lower", "higher"),
        }
    }

    /// The change a ratio (above 1: better) means, as a share: the
    /// speed-up of a time, the metric's own change otherwise (a latency at
    /// ratio 1.74 is 42.5 % lower, not 74 % "faster").
    pub fn change(self, ratio: f64) -> f64 {
        match self {
            Reading::Time | Reading::HigherBetter => (ratio - 1.0).abs(),
            Reading::LowerBetter => (1.0 - 1.0 / ratio).abs(),
        }
    }
}

impl CurveSummary {
    /// About how many runs a side would make the 95 % interval of its
    /// median ratio narrow enough to fall on one side of the threshold, at
    /// this curve's run-to-run spread: the half-width 1.96 · cv · √(2/n)
    /// at most d, the distance of the ratio from the threshold it
    /// straddles (| threshold − |ratio − 1| |), so n ≥ 2 · (1.96 · cv / d)².
    /// `None` without a measured spread (one run a side shows none), or
    /// where that is no more runs than it has (the spread within runs, not
    /// between them, keeps it open).
    pub fn runs_to_resolve(&self, threshold: f64) -> Option<usize> {
        let cv = self.run_cv.filter(|c| c.is_finite() && *c > 0.0)?;
        let d = (threshold - (self.ratio - 1.0).abs()).abs();
        let n = (2.0 * (1.96 * cv / d).powi(2)).ceil();
        (d > 0.0 && n.is_finite() && n > self.runs as f64).then_some(n as usize)
    }

    /// Its points' verdicts counted: "5 slower, 2 inconclusive".
    pub fn counts_text(&self) -> String {
        let of = |n: usize, w: &str| (n > 0).then(|| format!("{n} {w}"));
        [
            of(self.same, "same"),
            of(self.faster, self.reading.words().0),
            of(self.slower, self.reading.words().1),
            of(self.inconclusive, "inconclusive"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
    }
}

/// Per curve, in the order the points come (curve, then size).
/// How often a point with no real change gets a `faster` (or a `slower`)
/// verdict at most: its 95 % interval wholly above (below) the threshold
/// band, one tail of the interval's 5 %.
pub const POINT_CHANCE: f64 = 0.025;

/// A curve is called faster or slower only where that many of its points
/// would be so called by chance alone less often than this.
pub const CURVE_ALPHA: f64 = 0.05;

/// Whether `hits` verdicts one way among `points` are more than chance
/// gives: P(X ≥ hits) < [`CURVE_ALPHA`] for X ~ Binomial(points,
/// [`POINT_CHANCE`]). One point of one is (2.5 %); one of 7 is not
/// (16 %); two of 7 are (1.2 %).
pub fn beyond_chance(hits: usize, points: usize) -> bool {
    if hits == 0 {
        return false;
    }
    let (p, q) = (POINT_CHANCE, 1.0 - POINT_CHANCE);
    // P(X < hits), term by term: pmf(i + 1) = pmf(i) (n − i) / (i + 1) · p / q.
    let mut pmf = q.powi(points as i32);
    let mut below = 0.0;
    for i in 0..hits.min(points + 1) {
        below += pmf;
        pmf *= (points - i) as f64 / (i + 1) as f64 * p / q;
    }
    1.0 - below < CURVE_ALPHA
}

pub fn summarize(points: &[PointComparison]) -> Vec<CurveSummary> {
    let mut curves: BTreeMap<super::CurveGroup, Vec<&PointComparison>> = BTreeMap::new();
    for p in points {
        curves.entry(p.group()).or_default().push(p);
    }
    curves
        .into_iter()
        .map(|((curve, _), ps)| {
            let count = |v: Verdict| ps.iter().filter(|p| p.verdict == v).count();
            let (same, faster, slower, inconclusive) =
                (count(Verdict::Same), count(Verdict::Faster), count(Verdict::Slower), count(Verdict::Inconclusive));
            // Across the many points of a comparison some verdicts are
            // chance: a curve is called one way only where its points are
            // so called more often than chance gives.
            let n = ps.len();
            let verdict = match (beyond_chance(faster, n), beyond_chance(slower, n)) {
                (true, true) => CurveVerdict::Mixed,
                (true, false) => CurveVerdict::Faster,
                (false, true) => CurveVerdict::Slower,
                (false, false) if inconclusive + faster + slower > 0 => CurveVerdict::Inconclusive,
                (false, false) => CurveVerdict::Same,
            };
            let ratios: Vec<f64> = ps.iter().map(|p| p.ratio).collect();
            let of_verdict = |v: Verdict| {
                let mut xs: Vec<f64> = ps.iter().filter(|p| p.verdict == v).map(|p| p.ratio).collect();
                stats::median_unsorted(&mut xs)
            };
            let verdict_ratio = match verdict {
                CurveVerdict::Slower => Some(of_verdict(Verdict::Slower)),
                CurveVerdict::Faster => Some(of_verdict(Verdict::Faster)),
                _ => None,
            };
            let all_ci = ps.iter().all(|p| p.ci_low.is_some() && p.ci_high.is_some());
            let ci_low = all_ci.then(|| ps.iter().filter_map(|p| p.ci_low).fold(f64::INFINITY, f64::min));
            let ci_high = all_ci.then(|| ps.iter().filter_map(|p| p.ci_high).fold(f64::NEG_INFINITY, f64::max));
            CurveSummary {
                curve: curve.to_string(),
                bench: ps[0].bench.clone(),
                reading: Reading::of(ps[0]),
                points: ps.len(),
                same,
                faster,
                slower,
                inconclusive,
                ratio: stats::median_unsorted(&mut ratios.clone()),
                verdict_ratio,
                ratio_min: ratios.iter().copied().fold(f64::INFINITY, f64::min),
                ratio_max: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ci_low,
                ci_high,
                detectable: {
                    let mut d: Vec<f64> = ps.iter().filter_map(|p| p.detectable).collect();
                    (!d.is_empty()).then(|| stats::median_unsorted(&mut d))
                },
                within: ci_low.zip(ci_high).map(|(lo, hi)| (1.0 - lo).abs().max((hi - 1.0).abs())),
                verdict,
                runs: ps.iter().map(|p| p.runs_a.min(p.runs_b)).min().unwrap_or(0),
                run_cv: {
                    let mut cv: Vec<f64> =
                        ps.iter().filter_map(|p| p.run_cv_a.into_iter().chain(p.run_cv_b).reduce(f64::max)).collect();
                    (!cv.is_empty()).then(|| stats::median_unsorted(&mut cv))
                },
            }
        })
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A memcpy point of `curve` at `ratio`.
    pub(in crate::analysis::compare) fn point(
        curve: &str,
        ratio: f64,
        ci: Option<(f64, f64)>,
        verdict: Verdict,
    ) -> PointComparison {
        PointComparison {
            label: format!("{curve} {ratio}"),
            curve: curve.into(),
            series: None,
            bench: "memcpy".into(),
            size_bytes: Some(1),
            metric: None,
            unit: "s".into(),
            median_a: 1.0,
            median_b: 1.0 / ratio,
            ratio,
            ci_low: ci.map(|c| c.0),
            ci_high: ci.map(|c| c.1),
            detectable: None,
            clock_ratio: None,
            clocks_explain: false,
            samples_a: 10,
            samples_b: 10,
            runs_a: 1,
            runs_b: 1,
            run_cv_a: None,
            run_cv_b: None,
            verdict,
        }
    }

    #[test]
    fn runs_to_resolve_a_threshold_follow_the_run_spread() {
        let mut c = summarize(&[point("c", 1.0, Some((0.9, 1.1)), Verdict::Inconclusive)]).remove(0);
        assert_eq!(c.runs_to_resolve(0.02), None, "one run a side: no spread, no number");
        // A ratio of 1 and a 10 % run-to-run CV against ±2 %:
        // 2 · (1.96 · 0.10 / 0.02)² = 192.08.
        c.run_cv = Some(0.10);
        assert_eq!(c.ratio, 1.0);
        assert_eq!(c.runs_to_resolve(0.02), Some(193));
        // Four times the threshold needs a sixteenth of the runs.
        assert_eq!(c.runs_to_resolve(0.08), Some(13));
        // A ratio near the threshold needs many more: d = 0.002.
        c.ratio = 1.022;
        assert_eq!(c.runs_to_resolve(0.02), Some(19208));
        // No more runs than it has: nothing to state.
        c.runs = 20_000;
        assert_eq!(c.runs_to_resolve(0.02), None);
    }

    #[test]
    fn a_curve_is_same_only_when_every_point_is() {
        let s = summarize(&[
            point("a", 1.0, Some((0.99, 1.01)), Verdict::Same),
            point("a", 0.995, Some((0.985, 1.004)), Verdict::Same),
            point("b", 1.0, Some((0.99, 1.01)), Verdict::Same),
            point("b", 0.9, Some((0.88, 0.92)), Verdict::Slower),
            point("b", 0.88, Some((0.86, 0.90)), Verdict::Slower),
            point("b", 1.001, Some((0.99, 1.01)), Verdict::Same),
            point("b", 1.0, Some((0.99, 1.01)), Verdict::Same),
            point("c", 1.1, Some((1.08, 1.12)), Verdict::Faster),
            point("c", 0.9, Some((0.88, 0.92)), Verdict::Slower),
            point("d", 1.0, Some((0.97, 1.03)), Verdict::Inconclusive),
            point("e", 1.0, None, Verdict::Same),
        ]);
        let v: Vec<_> = s.iter().map(|c| (c.curve.as_str(), c.verdict)).collect();
        assert_eq!(
            v,
            [
                ("a", CurveVerdict::Same),
                ("b", CurveVerdict::Slower),
                ("c", CurveVerdict::Mixed),
                ("d", CurveVerdict::Inconclusive),
                ("e", CurveVerdict::Same)
            ]
        );
        let a = &s[0];
        assert_eq!((a.ci_low, a.ci_high), (Some(0.985), Some(1.01)));
        assert!((a.within.unwrap() - 0.015).abs() < 1e-12);
        assert_eq!((s[1].slower, s[1].same, s[1].points), (2, 3, 5));
        // How much slower is said of the slower points, not of all.
        assert_eq!((s[1].ratio, s[1].verdict_ratio), (1.0, Some(0.89)));
        assert_eq!(s[0].verdict_ratio, None);
        // One sample: no interval, and no "within".
        assert_eq!((s[4].ci_low, s[4].within), (None, None));
    }

    /// One faster point among 7 is what chance gives across a comparison's
    /// many points (seed 004's "stream add: faster (1 faster, 6
    /// inconclusive)"): the curve is inconclusive, not faster.
    #[test]
    fn one_point_in_seven_is_within_chance() {
        assert!(beyond_chance(1, 1) && beyond_chance(2, 7) && !beyond_chance(1, 7) && !beyond_chance(0, 3));
        let mut ps = vec![point("s", 1.66, Some((1.3, 2.1)), Verdict::Faster)];
        ps.extend((0..6).map(|_| point("s", 1.0, Some((0.8, 1.25)), Verdict::Inconclusive)));
        assert_eq!(summarize(&ps)[0].verdict, CurveVerdict::Inconclusive);
        ps[1] = point("s", 1.5, Some((1.2, 1.8)), Verdict::Faster);
        assert_eq!(summarize(&ps)[0].verdict, CurveVerdict::Faster);
    }
}
