//! Which node is slower than its fleet, and how sure we are. Each node is
//! judged against its own fleet, per benchmark point, never against a
//! fixed floor:
//! - the node's figure is the median over its runs of each run's median
//!   of its rounds' medians (speeds: operations per second, higher is
//!   better; a run's samples come in rounds spread over its time);
//! - the fleet centre is the median of the node medians, and its robust
//!   scale 1.4826 × MAD (when the MAD is 0, 1.2533 × the mean absolute
//!   deviation, as Iglewicz and Hoaglin advise);
//! - the modified z-score is (node − centre) / scale;
//! - the node's ratio is to the median of its peers (the other nodes, so
//!   a slow node never pulls its own yardstick down), with a hierarchical
//!   bootstrap interval (resample the peers when there are 5 or more, then
//!   each node's runs, their rounds, and the samples within a round:
//!   Kalibera and Jones), at a confidence Bonferroni-corrected over every
//!   node and point judged.
//!
//! Every level matters. Resampling rounds keeps a burst of noise that hit
//! part of one run from reading as a slow node; resampling runs does the
//! same for a whole run that was unlucky (other tenants, page placement of
//! a large buffer), which one run per node cannot tell from a slow node.
//! Measured on a 4-node Slurm cluster sharing 2 noisy cores: with samples
//! only resampled, one run per node named a clean node in 3 of 20 fleets;
//! now 1 of 30 with one run per node (a whole run 12 % slow) and 0 of 30
//! with three; hence `fleet check` asks for 3.
//!
//! A node is **slow** on a point when z < −[`Z_SLOW`] *and* the whole
//! interval of its ratio lies below 1 − δ. Both are needed: the z-score
//! alone flags a node that is far out in a fleet that hardly varies, the
//! interval alone a node in a fleet too small to tell.

pub mod gate;
mod gather;
pub mod health;
pub mod health_check;
pub mod health_node;
mod health_xid;
pub mod large;
pub mod links;
pub mod summary;

pub use gather::{fleet_point, gather, Fleet, RUNS_ADVISED};

use super::on_every_cpu;
use std::collections::BTreeMap;

use rand::RngExt;
use serde::Serialize;

/// The modified z-score below which a node is an outlier (Iglewicz and
/// Hoaglin's 3.5).
pub const Z_SLOW: f64 = 3.5;
/// The fewest nodes a fleet needs for a centre and a scale.
pub const MIN_NODES: usize = 3;
/// The fewest peers whose choice is resampled. With fewer, a resample's
/// median can only be one of the peers' own figures, so the interval runs
/// from the fastest peer to the slowest, a slow node among them included
/// (measured: an ordinary node of 4 got 0.80–4.5 beside a node at 0.28×);
/// the spread between nodes is then left to the z-score, and the interval
/// carries each node's own runs, rounds and samples.
pub const MIN_PEERS_RESAMPLED: usize = 5;

/// One node's judgement on one point.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NodeJudgement {
    pub node: String,
    /// The point: `memcpy copy 64 MiB 1T`.
    pub point: String,
    pub samples: usize,
    /// The runs they came from, and the rounds of those runs.
    pub runs: usize,
    pub rounds: usize,
    /// The node's speed (operations per second): the median over its runs
    /// of each run's median of its rounds' medians.
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
    /// In a large fleet ([`large`]), a node that could not be slow (z ≥
    /// −[`Z_SLOW`]) gets a 95 % interval, not the corrected one.
    #[serde(default)]
    pub screened: bool,
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

use crate::vocab::stats::{median_unsorted as median_of, resampling_rng, RoundsResampler};

/// The fleet centre and robust scale of `medians` (`None`: no spread).
pub fn centre_and_scale(medians: &[f64]) -> (f64, Option<f64>) {
    let centre = median_of(&mut medians.to_vec());
    let mut dev: Vec<f64> = medians.iter().map(|m| (m - centre).abs()).collect();
    let mad = median_of(&mut dev);
    let scale = if mad > 0.0 { 1.4826 * mad } else { 1.2533 * dev.iter().sum::<f64>() / dev.len().max(1) as f64 };
    (centre, (scale > 0.0 && scale.is_finite()).then_some(scale))
}

/// One node's samples on one point: its runs, each run's rounds, each
/// round's samples. A source without rounds gives one round per run.
pub type Runs = Vec<Vec<Vec<f64>>>;

/// A node's figure and its bootstrap: the median over its runs of each
/// run's median over its rounds' medians; drawn again by resampling the
/// runs, then each run's rounds and samples ([`RoundsResampler`]).
struct NodeResampler {
    figure: f64,
    runs: Vec<RoundsResampler>,
    scratch: Vec<f64>,
}

impl NodeResampler {
    fn new(runs: &Runs) -> Option<NodeResampler> {
        let runs: Vec<RoundsResampler> = runs.iter().filter_map(|rounds| RoundsResampler::new(rounds)).collect();
        let figure = median_of(&mut runs.iter().map(RoundsResampler::figure).collect::<Vec<f64>>());
        (!runs.is_empty() && figure.is_finite()).then(|| NodeResampler { figure, scratch: vec![0.0; runs.len()], runs })
    }

    fn samples(&self) -> usize {
        self.runs.iter().map(RoundsResampler::samples).sum()
    }

    fn rounds(&self) -> usize {
        self.runs.iter().map(RoundsResampler::rounds).sum()
    }

    fn draw(&mut self, rng: &mut impl rand::Rng) -> f64 {
        let n = self.runs.len();
        for slot in 0..n {
            let k = if n == 1 { 0 } else { rng.random_range(0..n) };
            self.scratch[slot] = self.runs[k].draw(rng);
        }
        median_of(&mut self.scratch)
    }
}

/// Judge every node of one point. `nodes`: each node's samples by run and
/// round (speeds, higher is better); `tests`: how many (node, point) judgements
/// share the error rate. `None` below [`MIN_NODES`] nodes with samples.
pub fn judge_point(
    point: &str,
    nodes: &BTreeMap<String, Runs>,
    tests: usize,
    rule: &Rule,
) -> Option<Vec<NodeJudgement>> {
    let mut nodes: Vec<(&String, NodeResampler)> =
        nodes.iter().filter_map(|(name, r)| Some((name, NodeResampler::new(r)?))).collect();
    if nodes.len() < MIN_NODES {
        return None;
    }
    let medians: Vec<f64> = nodes.iter().map(|(_, r)| r.figure).collect();
    let (centre, scale) = centre_and_scale(&medians);
    if centre <= 0.0 {
        return None;
    }
    let alpha = rule.alpha / tests.max(1) as f64;
    let mut rng = resampling_rng(rule.seed ^ seed_of(point));
    if nodes.len() > large::LARGE_FLEET {
        return Some(large::judge_large(point, &mut nodes, &medians, (centre, scale), alpha, rule, &mut rng));
    }
    // Enough replicates that each tail holds 20 of them.
    let b = rule.replicates.max((40.0 / alpha).ceil() as usize).min(200_000);
    let mut ratios: Vec<Vec<f64>> = vec![Vec::with_capacity(b); nodes.len()];
    let n = nodes.len();
    // Within each node: its runs resampled, then their rounds and samples;
    // each node's draws all at once, while its samples are in cache.
    let boot: Vec<Vec<f64>> = nodes.iter_mut().map(|(_, r)| (0..b).map(|_| r.draw(&mut rng)).collect()).collect();
    let mut picked = vec![0.0; n - 1];
    // `boot` is node-major, so replicate `i` is a column, read by index.
    #[allow(clippy::needless_range_loop)]
    for i in 0..b {
        // Across nodes: each node against the median of a resample of its
        // peers (of the peers themselves when too few to resample).
        for (j, r) in ratios.iter_mut().enumerate() {
            for (slot, p) in picked.iter_mut().enumerate() {
                let k = if n > MIN_PEERS_RESAMPLED { rng.random_range(0..n - 1) } else { slot };
                *p = boot[if k >= j { k + 1 } else { k }][i];
            }
            r.push(boot[j][i] / median_of(&mut picked));
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
        .map(|((((node, res), peer), m), r)| {
            r.sort_by(f64::total_cmp);
            let q = |f: f64| crate::vocab::stats::quantile_sorted(r, f);
            let (low, high) = (q(alpha / 2.0), q(1.0 - alpha / 2.0));
            let z = scale.map_or(0.0, |sc| (m - centre) / sc);
            NodeJudgement {
                node: node.to_string(),
                point: point.to_string(),
                samples: res.samples(),
                runs: res.runs.len(),
                rounds: res.rounds(),
                median: *m,
                ratio: m / peer,
                ratio_low: low,
                ratio_high: high,
                confidence: 1.0 - alpha,
                z,
                slow: z < -Z_SLOW && high < 1.0 - rule.threshold,
                screened: false,
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

/// Judge a fleet: `samples[point][node]` are speeds, by run and round. Returns the per-point
/// judgements and the nodes ranked slowest first (by their worst point's
/// ratio), with the points that had too few nodes to judge.
pub fn judge(samples: &BTreeMap<String, BTreeMap<String, Runs>>, rule: &Rule) -> FleetJudgement {
    // Only nodes with samples on points with enough of them are tested.
    let with_samples =
        |n: &BTreeMap<String, Runs>| n.values().filter(|r| r.iter().flatten().any(|s| !s.is_empty())).count();
    let tests: usize = samples.values().map(with_samples).filter(|n| *n >= MIN_NODES).sum();
    // Points are independent (each has its own seed): judged on every CPU,
    // and gathered in point order, so the result does not depend on how many.
    let work: Vec<(&String, &BTreeMap<String, Runs>)> = samples.iter().collect();
    let judged: Vec<(String, Option<Vec<NodeJudgement>>)> =
        on_every_cpu(&work, |(p, n)| ((*p).clone(), judge_point(p, n, tests, rule)));
    let mut points = Vec::new();
    let mut unjudged = Vec::new();
    for (point, j) in judged {
        match j {
            Some(j) => points.extend(j),
            None => unjudged.push(point),
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

impl FleetJudgement {
    /// Each interval's confidence: `alpha` split over the tests (Bonferroni).
    pub fn confidence(&self) -> f64 {
        1.0 - self.alpha / self.tests.max(1) as f64
    }

    /// Each point with its nodes' judgements, slowest first within it:
    /// points where a node is slow first, then by their lowest ratio.
    pub fn by_point(&self) -> Vec<(&str, Vec<NodeJudgement>)> {
        let mut by_point: std::collections::BTreeMap<&str, Vec<NodeJudgement>> = Default::default();
        for p in &self.points {
            by_point.entry(&p.point).or_default().push(p.clone());
        }
        let mut points: Vec<(&str, Vec<NodeJudgement>)> = by_point.into_iter().collect();
        for (_, ns) in &mut points {
            ns.sort_by(|a, b| a.ratio.total_cmp(&b.ratio));
        }
        let lowest = |ns: &[NodeJudgement]| ns.first().map_or(f64::INFINITY, |n| n.ratio);
        points.sort_by(|a, b| {
            let key = |p: &(&str, Vec<NodeJudgement>)| (!p.1.iter().any(|n| n.slow), lowest(&p.1));
            key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal)
        });
        points
    }
}

#[cfg(test)]
mod tests;
