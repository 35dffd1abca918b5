//! Which node is slower than its fleet, and how sure we are. Each node is
//! judged against its own fleet, per benchmark point, never against a
//! fixed floor:
//! - the node's figure is the median of its samples (speeds: operations
//!   per second, higher is better);
//! - the fleet centre is the median of the node medians, and its robust
//!   scale 1.4826 × MAD (when the MAD is 0, 1.2533 × the mean absolute
//!   deviation, as Iglewicz and Hoaglin advise);
//! - the modified z-score is (node − centre) / scale;
//! - the node's ratio is to the median of its peers (the other nodes, so
//!   a slow node never pulls its own yardstick down), with a hierarchical
//!   bootstrap interval (resample the peers, then every node's samples:
//!   Kalibera and Jones), at a confidence Bonferroni-corrected over every
//!   node and point judged.
//!
//! A node is **slow** on a point when z < −[`Z_SLOW`] *and* the whole
//! interval of its ratio lies below 1 − δ. Both are needed: the z-score
//! alone flags a node that is far out in a fleet that hardly varies, the
//! interval alone a node in a fleet too small to tell.

use std::collections::BTreeMap;

use rand::RngExt;
use serde::Serialize;

/// The modified z-score below which a node is an outlier (Iglewicz and
/// Hoaglin's 3.5).
pub const Z_SLOW: f64 = 3.5;
/// The fewest nodes a fleet needs for a centre and a scale.
pub const MIN_NODES: usize = 3;

/// One node's judgement on one point.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NodeJudgement {
    pub node: String,
    /// The point: `memcpy copy 64 MiB 1T`.
    pub point: String,
    pub samples: usize,
    /// The node's median speed (operations per second).
    pub median: f64,
    /// Its ratio to the median of its peers' medians, and that ratio's interval.
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    /// The interval's confidence (0.95 before the Bonferroni correction,
    /// higher after it).
    pub confidence: f64,
    /// The modified z-score; 0 when the fleet has no spread at all.
    pub z: f64,
    pub slow: bool,
}

/// How a fleet is judged.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// δ: a node is slow only when its ratio's interval lies below 1 − δ.
    pub threshold: f64,
    /// The family-wise error rate (0.05), split over every test.
    pub alpha: f64,
    /// Bootstrap replicates (at least; more when the correction needs them).
    pub replicates: usize,
    pub seed: u64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule { threshold: 0.05, alpha: 0.05, replicates: 2000, seed: 0x5eed_f1ee7 }
    }
}

use crate::vocab::stats::{median_unsorted as median_of, resampling_rng, MedianResampler};

/// The fleet centre and robust scale of `medians` (`None`: no spread).
pub fn centre_and_scale(medians: &[f64]) -> (f64, Option<f64>) {
    let centre = median_of(&mut medians.to_vec());
    let mut dev: Vec<f64> = medians.iter().map(|m| (m - centre).abs()).collect();
    let mad = median_of(&mut dev);
    let scale = if mad > 0.0 { 1.4826 * mad } else { 1.2533 * dev.iter().sum::<f64>() / dev.len().max(1) as f64 };
    (centre, (scale > 0.0 && scale.is_finite()).then_some(scale))
}

/// Judge every node of one point. `nodes`: each node's samples (speeds,
/// higher is better); `tests`: how many (node, point) judgements share the
/// error rate. `None` below [`MIN_NODES`] nodes with samples.
pub fn judge_point(
    point: &str,
    nodes: &BTreeMap<String, Vec<f64>>,
    tests: usize,
    rule: &Rule,
) -> Option<Vec<NodeJudgement>> {
    let nodes: Vec<(&String, &Vec<f64>)> = nodes.iter().filter(|(_, s)| !s.is_empty()).collect();
    if nodes.len() < MIN_NODES {
        return None;
    }
    let medians: Vec<f64> = nodes.iter().map(|(_, s)| median_of(&mut s.to_vec())).collect();
    let (centre, scale) = centre_and_scale(&medians);
    if centre <= 0.0 {
        return None;
    }
    let alpha = rule.alpha / tests.max(1) as f64;
    // Enough replicates that each tail holds 20 of them.
    let b = rule.replicates.max((40.0 / alpha).ceil() as usize).min(200_000);
    let mut rng = resampling_rng(rule.seed ^ seed_of(point));
    let resamplers: Vec<Option<MedianResampler>> = nodes.iter().map(|(_, s)| MedianResampler::new(s)).collect();
    let mut ratios: Vec<Vec<f64>> = vec![Vec::with_capacity(b); nodes.len()];
    let n = nodes.len();
    let mut boot_medians = vec![0.0; n];
    let mut picked = vec![0.0; n - 1];
    for _ in 0..b {
        // Within each node: the median of a resample of its samples.
        for (j, r) in resamplers.iter().enumerate() {
            boot_medians[j] = r.as_ref().map_or(medians[j], |r| r.draw(&mut rng));
        }
        // Across nodes: each node against the median of a resample of its peers.
        for (j, r) in ratios.iter_mut().enumerate() {
            for p in picked.iter_mut() {
                let k = rng.random_range(0..n - 1);
                *p = boot_medians[if k >= j { k + 1 } else { k }];
            }
            r.push(boot_medians[j] / median_of(&mut picked));
        }
    }
    let peers = |j: usize| {
        let mut others: Vec<f64> = medians.iter().enumerate().filter(|(k, _)| *k != j).map(|(_, m)| *m).collect();
        median_of(&mut others)
    };
    let out = nodes
        .iter()
        .enumerate()
        .map(|(j, x)| (x, peers(j)))
        .zip(&medians)
        .zip(ratios.iter_mut())
        .map(|((((node, s), peer), m), r)| {
            r.sort_by(f64::total_cmp);
            let q = |f: f64| crate::vocab::stats::quantile_sorted(r, f);
            let (low, high) = (q(alpha / 2.0), q(1.0 - alpha / 2.0));
            let z = scale.map_or(0.0, |sc| (m - centre) / sc);
            NodeJudgement {
                node: node.to_string(),
                point: point.to_string(),
                samples: s.len(),
                median: *m,
                ratio: m / peer,
                ratio_low: low,
                ratio_high: high,
                confidence: 1.0 - alpha,
                z,
                slow: z < -Z_SLOW && high < 1.0 - rule.threshold,
            }
        })
        .collect();
    Some(out)
}

/// A stable seed per point, so a report is the same every time it is made.
fn seed_of(point: &str) -> u64 {
    point.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// A node's verdict over every point: its worst (lowest-ratio) point, and
/// how many points found it slow.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NodeVerdict {
    pub node: String,
    pub worst: NodeJudgement,
    pub slow_points: usize,
    pub points: usize,
    pub slow: bool,
}

/// Judge a fleet: `samples[point][node]` are speeds. Returns the per-point
/// judgements and the nodes ranked slowest first (by their worst point's
/// ratio), with the points that had too few nodes to judge.
pub fn judge(samples: &BTreeMap<String, BTreeMap<String, Vec<f64>>>, rule: &Rule) -> FleetJudgement {
    // Only nodes with samples on points with enough of them are tested.
    let with_samples = |n: &BTreeMap<String, Vec<f64>>| n.values().filter(|s| !s.is_empty()).count();
    let tests: usize = samples.values().map(with_samples).filter(|n| *n >= MIN_NODES).sum();
    let mut points = Vec::new();
    let mut unjudged = Vec::new();
    for (point, nodes) in samples {
        match judge_point(point, nodes, tests, rule) {
            Some(j) => points.extend(j),
            None => unjudged.push(point.clone()),
        }
    }
    let mut by_node: BTreeMap<&str, Vec<&NodeJudgement>> = BTreeMap::new();
    for j in &points {
        by_node.entry(&j.node).or_default().push(j);
    }
    let mut nodes: Vec<NodeVerdict> = by_node
        .into_iter()
        .filter_map(|(node, js)| {
            let worst = js.iter().min_by(|a, b| a.ratio.total_cmp(&b.ratio))?;
            let slow_points = js.iter().filter(|j| j.slow).count();
            Some(NodeVerdict {
                node: node.to_string(),
                worst: (*worst).clone(),
                slow_points,
                points: js.len(),
                slow: slow_points > 0,
            })
        })
        .collect();
    nodes.sort_by(|a, b| {
        (!a.slow, a.worst.ratio).partial_cmp(&(!b.slow, b.worst.ratio)).unwrap_or(std::cmp::Ordering::Equal)
    });
    FleetJudgement { nodes, points, unjudged, tests, alpha: rule.alpha }
}

#[derive(Debug, Clone, Serialize)]
pub struct FleetJudgement {
    /// Slow nodes first, then by worst ratio.
    pub nodes: Vec<NodeVerdict>,
    pub points: Vec<NodeJudgement>,
    /// Points with fewer than [`MIN_NODES`] nodes.
    pub unjudged: Vec<String>,
    /// How many (node, point) judgements share the error rate `alpha`.
    pub tests: usize,
    pub alpha: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand_distr::{Distribution, Normal};

    /// `n` nodes of `k` samples around `level` with a relative noise;
    /// `slow` nodes run at `factor` × the level.
    fn fleet(n: usize, k: usize, noise: f64, slow: &[(usize, f64)], seed: u64) -> BTreeMap<String, Vec<f64>> {
        let mut rng = crate::vocab::stats::seeded_rng(seed);
        (0..n)
            .map(|i| {
                let f = slow.iter().find(|(j, _)| *j == i).map_or(1.0, |(_, f)| *f);
                // Each node has its own small offset, as real nodes do.
                let offset = Normal::new(1.0, noise / 2.0).unwrap().sample(&mut rng);
                let d = Normal::new(100.0 * f * offset, 100.0 * noise).unwrap();
                (format!("node{i}"), (0..k).map(|_| d.sample(&mut rng).max(1.0)).collect())
            })
            .collect()
    }

    #[test]
    fn a_slow_node_is_named_and_only_it() {
        let nodes = fleet(8, 20, 0.02, &[(3, 0.7)], 1);
        let j = judge_point("memcpy", &nodes, 8, &Rule::default()).unwrap();
        let slow: Vec<&str> = j.iter().filter(|j| j.slow).map(|j| j.node.as_str()).collect();
        assert_eq!(slow, vec!["node3"], "{j:#?}");
        let n3 = j.iter().find(|j| j.node == "node3").unwrap();
        assert!(n3.ratio_low < n3.ratio && n3.ratio < n3.ratio_high && n3.ratio_high < 0.95, "{n3:?}");
        assert!(n3.z < -Z_SLOW && n3.confidence > 0.99, "{n3:?}");
    }

    #[test]
    fn three_nodes_are_the_least_and_no_spread_is_no_outlier() {
        let two: BTreeMap<String, Vec<f64>> = [("a".into(), vec![1.0]), ("b".into(), vec![2.0])].into();
        assert!(judge_point("p", &two, 2, &Rule::default()).is_none());
        let same: BTreeMap<String, Vec<f64>> = (0..4).map(|i| (format!("n{i}"), vec![5.0, 5.0])).collect();
        let j = judge_point("p", &same, 4, &Rule::default()).unwrap();
        assert!(j.iter().all(|j| j.z == 0.0 && !j.slow && j.ratio == 1.0), "{j:?}");
        // MAD 0 but one node off: the mean-absolute-deviation fallback scores it.
        let (c, s) = centre_and_scale(&[10.0, 10.0, 10.0, 4.0]);
        assert_eq!(c, 10.0);
        assert!((s.unwrap() - 1.2533 * 1.5).abs() < 1e-9);
    }

    #[test]
    fn a_small_slowdown_inside_the_threshold_is_not_slow() {
        // 3 % slower, very precisely: an outlier by z, but not by δ = 5 %.
        let nodes = fleet(8, 40, 0.002, &[(5, 0.97)], 7);
        let j = judge_point("p", &nodes, 8, &Rule::default()).unwrap();
        let n5 = j.iter().find(|j| j.node == "node5").unwrap();
        assert!(n5.z < -Z_SLOW && !n5.slow, "{n5:?}");
    }

    #[test]
    fn clean_fleets_raise_few_false_alarms() {
        // 100 clean fleets of 5 nodes × 2 points, each node with its own
        // offset: the family-wise rate of naming anyone must stay within
        // the 5 % the rule promises.
        let rule = Rule { replicates: 400, ..Rule::default() };
        let alarms = (0..100)
            .filter(|seed| {
                let samples: BTreeMap<String, BTreeMap<String, Vec<f64>>> =
                    (0..2).map(|p| (format!("p{p}"), fleet(5, 10, 0.05, &[], seed * 2 + p))).collect();
                judge(&samples, &rule).nodes.iter().any(|n| n.slow)
            })
            .count();
        eprintln!("{alarms} of 100 clean fleets named a node");
        assert!(alarms <= 5, "{alarms} of 100 clean fleets named a node");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        /// The interval holds the point estimate, and a node faster than
        /// the centre is never slow.
        #[test]
        fn intervals_hold_the_ratio_and_fast_nodes_are_never_slow(
            n in 3usize..9, k in 1usize..12, noise in 0.001f64..0.3, seed in 0u64..1000,
        ) {
            let nodes = fleet(n, k, noise, &[], seed);
            let j = judge_point("p", &nodes, n, &Rule { replicates: 300, ..Rule::default() }).unwrap();
            for x in &j {
                prop_assert!(x.ratio_low <= x.ratio_high, "{:?}", x);
                prop_assert!(!(x.ratio >= 1.0 && x.slow), "{:?}", x);
                prop_assert!(x.z.is_finite());
            }
        }
    }
}
