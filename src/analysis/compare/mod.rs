//! A versus B: the same points in two runs, compared on their samples.
//! For each point both runs measured, the ratio of medians oriented so that
//! above 1 means B is better (timed points: median time A / median time B;
//! named metrics: B / A when higher is better, A / B when lower is), a 95 %
//! bootstrap confidence interval of that ratio, and a verdict that only
//! calls a difference when the whole interval clears a threshold. A
//! sample's time is the slowest rank's. With one sample on either side
//! (imported runs) there is no interval: `ci_low`/`ci_high` are `None` and
//! the verdict rests on the ratio alone, which the output says.
//!
//! Groups of repeated runs ([`compare_groups`]) estimate each point by the
//! median of its per-run medians, and bootstrap at both levels (runs with
//! replacement, then each chosen run's samples), so the interval carries
//! the run-to-run variability that samples inside one run do not show
//! (Kalibera and Jones). One run a side is the plain two-sample case.
//! `runs` compares runs of an archive, as `benchbook compare`, the compare
//! report and the notebook all do.

pub mod bounds;
pub mod control;
mod detect;
pub mod groups;
mod points;
pub mod runs;
pub mod summary;
mod words;

pub use points::{bootstrap_ratio_ci, group_median, group_ratio_ci, RunPoint};
use points::{gather, group_samples, GroupSamples, RunPoints};
pub use runs::{compare_loaded, compare_runs, LoadedRun, RunComparison, Variability};
pub use summary::{summarize, CurveSummary, CurveVerdict};
pub use words::verdict_sentences;

use serde::Serialize;

use crate::vocab::rows::Row;
use crate::vocab::stats;

/// Verdict on one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// B is faster: the whole interval is above 1 + threshold.
    Faster,
    /// B is slower: the whole interval is below 1 − threshold.
    Slower,
    /// The whole interval is within ± threshold.
    Same,
    /// The interval straddles a threshold: more samples needed.
    Inconclusive,
}

impl Verdict {
    /// The word, as in JSON: `faster`, `slower`, `same`, `inconclusive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// One point measured in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct PointComparison {
    /// What the point is, e.g. `memcpy copy 1 MiB 4T`.
    pub label: String,
    /// The point's curve: its series' name (`memcpy copy, 4 threads`;
    /// `d2h copy pinned, copy_engine, GPU 0`), or a metric's name.
    pub curve: String,
    /// The series a size-swept point belongs to, without its run: what
    /// the report groups verdicts by (never the name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<crate::analysis::SeriesKey>,
    pub bench: String,
    pub size_bytes: Option<u64>,
    /// The named metric (schema v4), or `None` for a timed point (medians in
    /// seconds per operation).
    pub metric: Option<String>,
    /// The medians' unit: `s` for timed points, the metric's own otherwise.
    pub unit: String,
    pub median_a: f64,
    pub median_b: f64,
    /// How many times better B is (above 1: B is faster / higher / lower,
    /// as the point's direction says).
    pub ratio: f64,
    /// 95 % interval of `ratio`; `None` with one sample on a side. Groups
    /// of runs: a two-level bootstrap over runs, then their rounds and
    /// samples. One run a side: that bootstrap widened to at least what the
    /// two runs' rerun intervals give (a single run's samples do not show
    /// how far a second run lands).
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Where both sides read their clocks: B's median clock over A's, and
    /// whether a faster or slower verdict is the clocks' doing (the time ×
    /// clock, cycles per operation, within the threshold: "same work per
    /// cycle; clocks differ", as nvbench's compare normalises by clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_ratio: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub clocks_explain: bool,
    /// The smallest change (0.05: 5 %), in the direction this point moved,
    /// that its interval lets a verdict call at the threshold: the
    /// detectable change, as asv and nvbench's compare state it
    /// ([`detect::detectable_change`]). `None` without an interval.
    pub detectable: Option<f64>,
    /// Samples behind each side, over all its runs.
    pub samples_a: usize,
    pub samples_b: usize,
    /// Runs of each group that measured the point.
    pub runs_a: usize,
    pub runs_b: usize,
    /// Run-to-run variability of each side: the coefficient of variation
    /// of its per-run medians, where two or more runs measured the point.
    pub run_cv_a: Option<f64>,
    pub run_cv_b: Option<f64>,
    pub verdict: Verdict,
}

/// What compared points are grouped by: the curve's name, then its
/// series key, so two series never merge under one name.
pub type CurveGroup<'a> = (&'a str, Option<&'a crate::analysis::SeriesKey>);

impl PointComparison {
    /// Whether `other` (of another comparison against the same baseline)
    /// is the same point: the same series and size, or the same metric at
    /// the same parameters.
    pub fn same_point(&self, other: &PointComparison) -> bool {
        self.series == other.series
            && self.size_bytes == other.size_bytes
            && self.metric == other.metric
            && self.label == other.label
    }

    /// The curve this point is grouped with ([`CurveGroup`]).
    pub fn group(&self) -> CurveGroup<'_> {
        (self.curve.as_str(), self.series.as_ref())
    }

    /// A median as tables print it: a time per operation, or the metric's
    /// value with its unit.
    pub fn median_text(&self, v: f64) -> String {
        match self.metric {
            Some(_) => format!("{} {}", crate::vocab::units::format_sig3(v), self.unit),
            None => crate::vocab::units::format_seconds(v),
        }
    }

    /// The detectable change as tables and sentences print it: `4.1 %`,
    /// or `-` without an interval.
    pub fn detectable_text(&self) -> String {
        self.detectable.map_or("-".into(), |d| format!("{:.1} %", 100.0 * d))
    }

    /// The interval as tables print it, or why there is none.
    pub fn ci_text(&self) -> String {
        match (self.ci_low, self.ci_high) {
            (Some(lo), Some(hi)) => format!("{lo:.3}–{hi:.3}"),
            _ => "no uncertainty: one sample".into(),
        }
    }
}

/// A point's identity: every key column of the one column table (method
/// and device included), so copy-engine and SM-kernel samples never merge.
type Key = Vec<Option<String>>;

fn key(r: &Row) -> Key {
    crate::vocab::columns::point_key(r)
}

/// Bootstrap resamples behind every interval: enough that the 2.5 % and
/// 97.5 % percentiles rest on 250 resamples each.
pub const RESAMPLES: usize = 10_000;

/// Compare the points two runs share. `threshold` is the relative change
/// that counts (0.02 = 2 %).
pub fn compare(a: &[Row], b: &[Row], threshold: f64) -> Vec<PointComparison> {
    compare_samples(&group_samples([a]), &group_samples([b]), threshold)
}

/// Coefficient of variation of the per-run figures, with two or more runs.
fn run_cv(runs: &[RunPoint]) -> Option<f64> {
    (runs.len() > 1).then(|| stats::rel_std_dev(&runs.iter().map(|r| r.figure).collect::<Vec<_>>()))
}

/// Compare two groups of repeated runs (one run a group is [`compare`]):
/// the points both groups measured, each estimated by the median of its
/// per-run figures, with a two-level bootstrap interval.
pub fn compare_groups(a: &[Vec<Row>], b: &[Vec<Row>], threshold: f64) -> Vec<PointComparison> {
    compare_samples(&group_samples(a.iter().map(Vec::as_slice)), &group_samples(b.iter().map(Vec::as_slice)), threshold)
}

/// The interval of a ratio of two single runs' figures from their rerun
/// intervals: a run's figure moves between runs by its rounds' spread and
/// the share between runs (κ), so the log-ratio of two runs has half-width
/// √((h_A² + h_B²) / 2) where h is each side's rerun half-width relative to
/// its figure (that half-width already holds two runs' noise, √2 of one).
fn rerun_ratio_interval(ratio: f64, a: Option<f64>, b: Option<f64>) -> Option<(f64, f64)> {
    let (a, b) = (a?, b?);
    let half = ((a * a + b * b) / 2.0).sqrt();
    (half.is_finite() && half < 1.0).then(|| (ratio * (1.0 - half), ratio / (1.0 - half)))
}

/// [`compare_groups`] on samples already grouped by point and run.
fn compare_samples(sa: &GroupSamples, sb: &GroupSamples, threshold: f64) -> Vec<PointComparison> {
    let mut out = Vec::new();
    for (k, (row, xa)) in sa {
        let Some((_, xb)) = sb.get(k) else { continue };
        let (ma, mb) = (group_median(xa), group_median(xb));
        // Oriented so that above 1 means B is better.
        let higher = row.params.better.as_deref() == Some("higher");
        let (num, den) = if higher { (xb, xa) } else { (xa, xb) };
        let ratio = if higher { mb / ma } else { ma / mb };
        let count = |x: &[RunPoint]| x.iter().map(RunPoint::samples).sum::<usize>();
        let (na, nb) = (count(xa), count(xb));
        let mut ci = (na > 1 && nb > 1).then(|| group_ratio_ci(num, den, RESAMPLES, 0x5eed));
        // One run a side: the bootstrap sees only this run's samples and
        // rounds; a second run moves by more (the between-run share). The
        // interval is at least the one the two rerun intervals give.
        if let (Some((lo, hi)), [a], [b]) = (ci, xa.as_slice(), xb.as_slice()) {
            if let Some((rlo, rhi)) = rerun_ratio_interval(ratio, a.rerun_half, b.rerun_half) {
                ci = Some((lo.min(rlo), hi.max(rhi)));
            }
        }
        // One sample on a side: no interval, the verdict rests on the ratio.
        let (lo, hi) = ci.unwrap_or((ratio, ratio));
        let verdict = if lo > 1.0 + threshold {
            Verdict::Faster
        } else if hi < 1.0 - threshold {
            Verdict::Slower
        } else if lo >= 1.0 - threshold && hi <= 1.0 + threshold {
            Verdict::Same
        } else {
            Verdict::Inconclusive
        };
        let lower_better = row.params.metric.is_some() && !higher;
        let detectable = ci
            .filter(|(lo, hi)| *lo > 0.0 && hi.is_finite())
            .map(|(lo, hi)| detect::detectable_change(ratio, lo, hi, threshold, lower_better));
        // Confirmed in cycles: time × clock, where both sides read clocks.
        let clock = |x: &[RunPoint]| {
            let mut c: Option<Vec<f64>> = x.iter().map(|r| r.clock_mhz).collect();
            c.as_mut().filter(|c| !c.is_empty()).map(|c| stats::median_unsorted(c))
        };
        let clock_ratio = clock(xa).zip(clock(xb)).filter(|_| row.params.metric.is_none()).map(|(a, b)| b / a);
        let clocks_explain = matches!(verdict, Verdict::Faster | Verdict::Slower)
            && clock_ratio.is_some_and(|c| (ratio / c - 1.0).abs() <= threshold);
        let (curve, label) = points::names(row);
        out.push(PointComparison {
            label,
            curve,
            series: (row.params.metric.is_none() && row.params.size_bytes.is_some()).then(|| {
                crate::analysis::SeriesKey::of_params(&row.params, &row.backend, "", &row.device).measurement()
            }),
            bench: row.params.bench.clone(),
            size_bytes: row.params.size_bytes,
            metric: row.params.metric.clone(),
            unit: row.params.unit.clone().unwrap_or_else(|| "s".into()),
            median_a: ma,
            median_b: mb,
            ratio,
            ci_low: ci.map(|c| c.0),
            ci_high: ci.map(|c| c.1),
            detectable,
            clock_ratio,
            clocks_explain,
            samples_a: na,
            samples_b: nb,
            runs_a: xa.len(),
            runs_b: xb.len(),
            run_cv_a: run_cv(xa),
            run_cv_b: run_cv(xb),
            verdict,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::benches::Bench;
    use crate::vocab::rows::Status;

    #[test]
    fn bootstrap_interval_brackets_the_ratio_and_shrinks_with_samples() {
        let a: Vec<f64> = (0..50).map(|i| 2.0 + 0.01 * (i % 7) as f64).collect();
        let b: Vec<f64> = (0..50).map(|i| 1.0 + 0.005 * (i % 5) as f64).collect();
        let (lo, hi) = bootstrap_ratio_ci(&a, &b, 500, 1);
        let r = stats::median_unsorted(&mut a.clone()) / stats::median_unsorted(&mut b.clone());
        assert!(lo <= r && r <= hi, "{lo} {r} {hi}");
        assert!(lo > 1.9 && hi < 2.1, "{lo} {hi}");
    }

    fn rows(times: &[f64], size: u64) -> Vec<Row> {
        times
            .iter()
            .enumerate()
            .map(|(i, t)| Row {
                run_id: "r".into(),
                backend: "cpu".into(),
                device: "d".into(),
                host: "h".into(),
                rank: 0,
                point: 0,
                params: crate::vocab::rows::Point {
                    bench: Bench::Memcpy.name().into(),
                    op: "copy".into(),
                    size_bytes: Some(size),
                    ..Default::default()
                },
                sample: Some(i as u32),
                round: None,
                iterations: Some(1),
                seconds: Some(*t),
                value: None,
                timer: None,
                status: Status::Measured,
                note: None,
                stop: None,
                source: "native".into(),
                telemetry: None,
            })
            .collect()
    }

    fn with_method(mut rows: Vec<Row>, method: &str) -> Vec<Row> {
        for r in &mut rows {
            r.params.method = Some(method.into());
        }
        rows
    }

    #[test]
    fn points_match_on_method_and_device() {
        // A regression test: the key once left out `method` and `device`,
        // so copy-engine and SM-kernel samples of one size were merged.
        let fast: Vec<f64> = (0..30).map(|i| 1.0 + 0.001 * (i % 3) as f64).collect();
        let slow: Vec<f64> = (0..30).map(|i| 2.0 + 0.001 * (i % 3) as f64).collect();
        let mut a = with_method(rows(&fast, 64), "copy_engine");
        a.extend(with_method(rows(&slow, 64), "sm_kernel"));
        let mut b = with_method(rows(&fast, 64), "copy_engine");
        b.extend(with_method(rows(&slow, 64), "sm_kernel"));
        let c = compare(&a, &b, 0.02);
        assert_eq!(c.len(), 2, "one comparison per method");
        assert!(c.iter().all(|p| p.verdict == Verdict::Same && (p.ratio - 1.0).abs() < 1e-9), "{c:?}");
        assert!(c.iter().all(|p| p.ci_low.is_some()), "30 samples a side give an interval");
        let mut other_gpu = rows(&fast, 64);
        for r in &mut other_gpu {
            r.device = "GPU 1".into();
        }
        assert!(compare(&rows(&fast, 64), &other_gpu, 0.02).is_empty(), "devices do not pair");
    }

    #[test]
    fn verdicts_follow_the_interval() {
        let slow: Vec<f64> = (0..30).map(|i| 2.0 + 0.001 * (i % 3) as f64).collect();
        let fast: Vec<f64> = (0..30).map(|i| 1.0 + 0.001 * (i % 3) as f64).collect();
        let c = compare(&rows(&slow, 64), &rows(&fast, 64), 0.02);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].verdict, Verdict::Faster);
        assert_eq!(compare(&rows(&fast, 64), &rows(&slow, 64), 0.02)[0].verdict, Verdict::Slower);
        assert_eq!(compare(&rows(&fast, 64), &rows(&fast, 64), 0.02)[0].verdict, Verdict::Same);
        let noisy: Vec<f64> = (0..6).map(|i| if i % 2 == 0 { 0.8 } else { 1.3 }).collect();
        assert_eq!(compare(&rows(&noisy, 64), &rows(&fast, 64), 0.02)[0].verdict, Verdict::Inconclusive);
        assert!(compare(&rows(&fast, 64), &rows(&fast, 128), 0.02).is_empty(), "different points do not pair");
        let one = compare(&rows(&[1.0], 64), &rows(&[1.1], 64), 0.02);
        assert_eq!((one[0].ci_low, one[0].verdict), (None, Verdict::Slower), "one sample: no interval");
    }

    #[test]
    fn metrics_compare_in_their_direction() {
        let metric = |v: f64, better: &str| {
            let mut r = rows(&[v], 0);
            for x in &mut r {
                x.params.metric = Some("m".into());
                x.params.better = Some(better.into());
                x.params.size_bytes = None;
                x.value = Some(v);
                x.seconds = None;
            }
            r
        };
        // Throughput up 10 %: B is better; a latency up 10 %: B is worse.
        let up = compare(&metric(100.0, "higher"), &metric(110.0, "higher"), 0.02);
        assert!((up[0].ratio - 1.1).abs() < 1e-12 && up[0].verdict == Verdict::Faster);
        let lat = compare(&metric(100.0, "lower"), &metric(110.0, "lower"), 0.02);
        assert!(lat[0].ratio < 1.0 && lat[0].verdict == Verdict::Slower);
    }
}
