//! A versus B: the same points in two runs, compared on their samples.
//! For each point both runs measured, the ratio of medians oriented so that
//! above 1 means B is better (timed points: median time A / median time B;
//! named metrics: B / A when higher is better, A / B when lower is), a 95 %
//! bootstrap confidence interval of that ratio, and a verdict that only
//! calls a difference when the whole interval clears a threshold. A
//! sample's time is the slowest rank's. With one sample on either side
//! (imported runs) there is no interval: `ci_low`/`ci_high` are `None` and
//! the verdict rests on the ratio alone, which the output says.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::vocab::rows::{Row, Status};
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
    /// The point's curve: its label without the size (`memcpy copy 4T`).
    pub curve: String,
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
    /// 95 % bootstrap interval of `ratio`; `None` with one sample on a side.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub samples_a: usize,
    pub samples_b: usize,
    pub verdict: Verdict,
}

/// A point's identity: every key column of the one column table (method
/// and device included), so copy-engine and SM-kernel samples never merge.
type Key = Vec<Option<String>>;

fn key(r: &Row) -> Key {
    crate::vocab::columns::point_key(r)
}

/// Per point: each sample's measurement (seconds per operation, slowest
/// rank per sample; a named metric's value).
fn samples(rows: &[Row]) -> BTreeMap<Key, (Row, Vec<f64>)> {
    let mut per_sample: BTreeMap<(Key, u32), (Row, f64)> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.status == Status::Measured) {
        let measurement = if r.params.metric.is_some() { r.value } else { r.seconds_per_op() };
        let (Some(s), Some(t)) = (r.sample, measurement) else { continue };
        let e = per_sample.entry((key(r), s)).or_insert((r.clone(), t));
        e.1 = e.1.max(t);
    }
    let mut out: BTreeMap<Key, (Row, Vec<f64>)> = BTreeMap::new();
    for ((k, _), (row, t)) in per_sample {
        out.entry(k).or_insert_with(|| (row, Vec::new())).1.push(t);
    }
    out
}

/// 95 % percentile-bootstrap interval of median(a) / median(b): each
/// resample's medians are drawn from their exact bootstrap distribution
/// ([`stats::MedianResampler`]).
pub fn bootstrap_ratio_ci(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    let (Some(ra), Some(rb)) = (stats::MedianResampler::new(a), stats::MedianResampler::new(b)) else {
        return (f64::NAN, f64::NAN);
    };
    let mut rng = stats::resampling_rng(seed);
    let mut ratios: Vec<f64> = (0..resamples).map(|_| ra.draw(&mut rng) / rb.draw(&mut rng)).collect();
    ratios.sort_by(f64::total_cmp);
    (stats::quantile_sorted(&ratios, 0.025), stats::quantile_sorted(&ratios, 0.975))
}

/// Bootstrap resamples behind every interval: enough that the 2.5 % and
/// 97.5 % percentiles rest on 250 resamples each.
pub const RESAMPLES: usize = 10_000;

/// Compare the points two runs share. `threshold` is the relative change
/// that counts (0.02 = 2 %).
pub fn compare(a: &[Row], b: &[Row], threshold: f64) -> Vec<PointComparison> {
    let (sa, sb) = (samples(a), samples(b));
    let mut out = Vec::new();
    for (k, (row, xa)) in &sa {
        let Some((_, xb)) = sb.get(k) else { continue };
        let (ma, mb) = (stats::median_unsorted(&mut xa.clone()), stats::median_unsorted(&mut xb.clone()));
        // Oriented so that above 1 means B is better.
        let higher = row.params.better.as_deref() == Some("higher");
        let (num, den) = if higher { (xb, xa) } else { (xa, xb) };
        let ratio = if higher { mb / ma } else { ma / mb };
        let ci = (xa.len() > 1 && xb.len() > 1).then(|| bootstrap_ratio_ci(num, den, RESAMPLES, 0x5eed));
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
        // A metric's curve is the metric: its points differ by parameters.
        let curve = match &row.params.metric {
            Some(m) => m.clone(),
            None => crate::vocab::rows::Point { size_bytes: None, ..row.params.clone() }.label(),
        };
        out.push(PointComparison {
            label: row.params.label(),
            curve,
            bench: row.params.bench.clone(),
            size_bytes: row.params.size_bytes,
            metric: row.params.metric.clone(),
            unit: row.params.unit.clone().unwrap_or_else(|| "s".into()),
            median_a: ma,
            median_b: mb,
            ratio,
            ci_low: ci.map(|c| c.0),
            ci_high: ci.map(|c| c.1),
            samples_a: xa.len(),
            samples_b: xb.len(),
            verdict,
        });
    }
    out
}

/// Verdicts in words, per curve and size band: "no significant difference
/// at any size", or "B is 7.1 % slower from 1 MiB to 64 MiB (95 % CI of the
/// ratio 0.91–0.95)". `b` names the second run in the sentences.
pub fn verdict_sentences(points: &[PointComparison], b: &str) -> Vec<String> {
    let mut curves: BTreeMap<&str, Vec<&PointComparison>> = BTreeMap::new();
    for p in points {
        curves.entry(p.curve.as_str()).or_default().push(p);
    }
    let mut out = Vec::new();
    for (curve, mut ps) in curves {
        ps.sort_by_key(|p| p.size_bytes);
        if ps.iter().all(|p| p.verdict == Verdict::Same) {
            out.push(format!("{curve}: no significant difference at any point ({} points).", ps.len()));
            continue;
        }
        // Runs of one verdict along the sizes.
        let mut i = 0;
        while i < ps.len() {
            let v = ps[i].verdict;
            let mut j = i;
            while j + 1 < ps.len() && ps[j + 1].verdict == v {
                j += 1;
            }
            let band = &ps[i..=j];
            let span = match (band[0].size_bytes, band[band.len() - 1].size_bytes) {
                (Some(lo), Some(hi)) if lo == hi => format!("at {}", crate::vocab::units::format_bytes(lo)),
                (Some(lo), Some(hi)) => {
                    format!(
                        "from {} to {}",
                        crate::vocab::units::format_bytes(lo),
                        crate::vocab::units::format_bytes(hi)
                    )
                }
                _ if ps.len() == band.len() => "at every point".to_string(),
                _ => format!("at {} of its points", band.len()),
            };
            let mid = stats::median_unsorted(&mut band.iter().map(|p| p.ratio).collect::<Vec<_>>());
            let lo = band.iter().filter_map(|p| p.ci_low).fold(f64::INFINITY, f64::min);
            let hi = band.iter().filter_map(|p| p.ci_high).fold(f64::NEG_INFINITY, f64::max);
            let ci = if lo.is_finite() && hi.is_finite() && band.iter().all(|p| p.ci_low.is_some()) {
                format!(" (95 % CIs of the ratio within {lo:.3}–{hi:.3})")
            } else {
                " (no uncertainty: one sample per point)".to_string()
            };
            let n = band.len();
            let text = match v {
                Verdict::Slower => format!("{b} is {:.1} % slower {span}{ci}", 100.0 * (1.0 - mid)),
                Verdict::Faster => format!("{b} is {:.1} % faster {span}{ci}", 100.0 * (mid - 1.0)),
                Verdict::Same => format!("no significant difference {span}"),
                Verdict::Inconclusive => format!("inconclusive {span}: the interval straddles the threshold"),
            };
            out.push(format!("{curve}: {} ({n} point{}).", text.trim_end(), if n == 1 { "" } else { "s" }));
            i = j + 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    bench: "memcpy".into(),
                    op: "copy".into(),
                    size_bytes: Some(size),
                    ..Default::default()
                },
                sample: Some(i as u32),
                iterations: Some(1),
                seconds: Some(*t),
                value: None,
                timer: None,
                status: Status::Measured,
                note: None,
                stop: None,
                source: "native".into(),
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
