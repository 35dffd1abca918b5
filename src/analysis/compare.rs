//! A versus B: the same points in two runs, compared on their samples.
//! For each point both runs measured, the ratio of median times
//! (A / B: above 1 means B is faster), a 95 % bootstrap confidence interval
//! of that ratio, and a verdict that only calls a difference when the whole
//! interval clears a threshold. A sample's time is the slowest rank's.

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
    pub bench: String,
    pub size_bytes: Option<u64>,
    pub median_a: f64,
    pub median_b: f64,
    /// median_a / median_b: how many times faster B is.
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
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

/// Per point: seconds per operation of each sample, slowest rank per sample.
fn samples(rows: &[Row]) -> BTreeMap<Key, (Row, Vec<f64>)> {
    let mut per_sample: BTreeMap<(Key, u32), (Row, f64)> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.status == Status::Measured) {
        let (Some(s), Some(t)) = (r.sample, r.seconds_per_op()) else { continue };
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
        let (lo, hi) = if xa.len() > 1 && xb.len() > 1 {
            bootstrap_ratio_ci(xa, xb, RESAMPLES, 0x5eed)
        } else {
            (ma / mb, ma / mb)
        };
        let verdict = if lo > 1.0 + threshold {
            Verdict::Faster
        } else if hi < 1.0 - threshold {
            Verdict::Slower
        } else if lo >= 1.0 - threshold && hi <= 1.0 + threshold {
            Verdict::Same
        } else {
            Verdict::Inconclusive
        };
        out.push(PointComparison {
            label: row.params.label(),
            bench: row.params.bench.clone(),
            size_bytes: row.params.size_bytes,
            median_a: ma,
            median_b: mb,
            ratio: ma / mb,
            ci_low: lo,
            ci_high: hi,
            samples_a: xa.len(),
            samples_b: xb.len(),
            verdict,
        });
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
    }
}
