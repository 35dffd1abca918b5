//! The node-local health gate (`fleet gate`): one node's fresh pass of a
//! short suite judged on each point against three lines, each with a
//! stated confidence:
//! - **its fleet:** the median of the other nodes' figures (each the
//!   median of its latest runs). The z-score is taken on the robust scale
//!   of those nodes' single *runs*, since the gate judges a single run (or
//!   two) of this node, not a median of many;
//! - **its own history:** the median of its own earlier runs, used to
//!   judge only where the fleet cannot (too few peers measured the point):
//!   a whole fleet that changed together (a driver update) must not drain
//!   every node;
//! - **a published floor** for its device ([`floors`]), an absolute line:
//!   the figure's whole interval below the floor.
//!
//! A point is a fault against the fleet or its history when z < −[`Z_SLOW`]
//! *and* the whole interval of the ratio lies below 1 − δ, as in
//! `fleet check`. The interval is a bootstrap over this node's runs,
//! rounds and samples against one over the reference's, Bonferroni-
//! corrected over the node's points. What makes a drain is decided by the
//! caller over passes ([`confirm`]): a point must fail in the first pass
//! *and* in a retest, so one flaky pass is not a fault.

pub mod changes;
pub mod collect;
pub mod floors;
pub mod reason;

use std::collections::{BTreeMap, BTreeSet};

use rand::RngExt;
use serde::Serialize;

use super::{centre_and_scale, median_of, seed_of, NodeResampler, Runs, MIN_PEERS_RESAMPLED, Z_SLOW};
use crate::vocab::stats::{quantile_sorted, resampling_rng};
pub use floors::Floor;

/// The bench name of a gate's verdict rows (one metric row per point and
/// line), which fleets never judge.
pub const GATE_BENCH: &str = "gate";
/// The source of a gate's verdict run.
pub const GATE_SOURCE: &str = "gate";

/// How a node is gated.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct GateRule {
    /// δ: a fault's whole ratio interval lies below 1 − δ.
    pub threshold: f64,
    /// The error rate of one node's gate, split over its points.
    pub alpha: f64,
    /// Bootstrap replicates (at least; more when the correction needs them).
    pub replicates: usize,
    pub seed: u64,
    /// The fewest other nodes with runs of a point for a fleet line.
    pub min_peers: usize,
    /// The fewest earlier runs of this node for a history line.
    pub min_history: usize,
}

impl Default for GateRule {
    fn default() -> Self {
        GateRule { threshold: 0.05, alpha: 0.01, replicates: 2000, seed: 0x6a7e_5eed, min_peers: 3, min_history: 3 }
    }
}

/// Replicates of a reference (the fleet's median, or the node's history):
/// a 95 % interval's tails hold 25 each, and a corrected interval draws
/// this node's figure as often as it needs against them. A large fleet's
/// median moves little between replicates (its spread shrinks as 1/√n), so
/// from 200 peers up fewer replicates draw it, as many as 2·10^5 peer
/// draws allow (200 at 1,000 peers): each costs a draw of every peer.
const REFERENCE_REPLICATES: usize = 1000;
const REFERENCE_DRAWS: usize = 200_000;
const FEWEST_REFERENCE_REPLICATES: usize = 200;

/// What one node's gate judges. Points are [`super::fleet_point`] labels.
#[derive(Debug, Clone, Default)]
pub struct GateData {
    pub node: String,
    /// point → this node's runs being judged (one pass, or two).
    pub fresh: BTreeMap<String, Runs>,
    /// point → other node → its latest runs.
    pub peers: BTreeMap<String, BTreeMap<String, Runs>>,
    /// point → this node's earlier runs (before the fresh ones).
    pub own: BTreeMap<String, Runs>,
    /// point → this node's earlier runs over the longer change window,
    /// oldest first (`changes`).
    pub own_series: BTreeMap<String, Runs>,
    /// point → the published floor that applies to it, in operations per second.
    pub floors: BTreeMap<String, Floor>,
}

impl GateData {
    /// The same data with only the runs `keep` of the fresh ones (by index).
    pub fn with_fresh(&self, keep: &[usize]) -> GateData {
        let fresh = self
            .fresh
            .iter()
            .map(|(p, runs)| (p.clone(), keep.iter().filter_map(|&i| runs.get(i).cloned()).collect::<Runs>()))
            .filter(|(_, r)| !r.is_empty())
            .collect();
        GateData { fresh, ..self.clone() }
    }
}

/// A figure against one reference line.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Against {
    /// The reference, in operations per second (higher is better).
    pub reference: f64,
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
    pub confidence: f64,
    /// The modified z-score (none against a floor, 0 with no spread).
    pub z: Option<f64>,
    /// The peers, or the earlier runs, behind the reference (1 for a floor).
    pub n: usize,
    /// Whether this line calls the point a fault.
    pub below: bool,
}

/// Which line a fault crossed.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Line {
    Fleet,
    Floor,
    History,
}

impl Line {
    /// The word, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Line::Fleet => "fleet",
            Line::Floor => "floor",
            Line::History => "history",
        }
    }
}

/// One point of one node's gate.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GatePoint {
    pub point: String,
    /// This node's figure (operations per second) and what it rests on.
    pub median: f64,
    pub runs: usize,
    pub samples: usize,
    pub fleet: Option<Against>,
    pub history: Option<Against>,
    pub floor: Option<(Floor, Against)>,
    /// The line this point failed, if any (fleet first, then floor; history
    /// only where there is no fleet line).
    pub fault: Option<Line>,
}

impl GatePoint {
    pub fn judged(&self) -> bool {
        self.fleet.is_some() || self.history.is_some() || self.floor.is_some()
    }

    /// The line a fault crossed, with its figures.
    pub fn failed(&self) -> Option<(Line, &Against)> {
        let line = self.fault?;
        let a = match line {
            Line::Fleet => self.fleet.as_ref()?,
            Line::Floor => &self.floor.as_ref()?.1,
            Line::History => self.history.as_ref()?,
        };
        Some((line, a))
    }

    /// The lowest ratio of the lines judged: how close the point came.
    pub fn worst_ratio(&self) -> f64 {
        [self.fleet.as_ref(), self.history.as_ref(), self.floor.as_ref().map(|f| &f.1)]
            .into_iter()
            .flatten()
            .map(|a| a.ratio)
            .fold(f64::INFINITY, f64::min)
    }
}

/// One pass of a node's gate, judged.
#[derive(Debug, Clone, Serialize)]
pub struct GateJudgement {
    pub node: String,
    pub points: Vec<GatePoint>,
    /// Points of the fresh runs with no samples to judge.
    pub empty: Vec<String>,
    /// Each interval's confidence (1 − α / points).
    pub confidence: f64,
    pub threshold: f64,
}

impl GateJudgement {
    pub fn faults(&self) -> impl Iterator<Item = &GatePoint> {
        self.points.iter().filter(|p| p.fault.is_some())
    }

    /// Whether any line judged any point.
    pub fn judged(&self) -> bool {
        self.points.iter().any(GatePoint::judged)
    }
}

/// Judge one pass: `data.fresh` against the fleet, history and floors.
/// Points are independent (each has its own seed): judged on every CPU and
/// gathered in point order, so the result does not depend on how many.
pub fn judge(data: &GateData, rule: &GateRule) -> GateJudgement {
    let tests = data.fresh.len().max(1);
    let alpha = rule.alpha / tests as f64;
    let work: Vec<(&String, &Runs)> = data.fresh.iter().collect();
    let judged: Vec<Result<GatePoint, String>> =
        super::on_every_cpu(&work, |(p, r)| judge_point(data, p, r, alpha, rule));
    let (mut points, mut empty) = (Vec::new(), Vec::new());
    for j in judged {
        match j {
            Ok(p) => points.push(p),
            Err(point) => empty.push(point),
        }
    }
    GateJudgement { node: data.node.clone(), points, empty, confidence: 1.0 - alpha, threshold: rule.threshold }
}

/// One point of [`judge`]; its name back when it has no samples.
fn judge_point(data: &GateData, point: &str, runs: &Runs, alpha: f64, rule: &GateRule) -> Result<GatePoint, String> {
    // Enough draws of this node that each tail of the interval holds 20.
    let b = rule.replicates.max((40.0 / alpha).ceil() as usize).min(200_000);
    let Some(mut node) = NodeResampler::new(runs) else { return Err(point.to_string()) };
    let mut rng = resampling_rng(rule.seed ^ seed_of(point));
    let m = node.figure;
    let draws: Vec<f64> = (0..b).map(|_| node.draw(&mut rng)).collect();
    let line = |reference: Reference, rng: &mut rand::rngs::Xoshiro256PlusPlus| {
        reference.against(m, &draws, alpha, rule.threshold, rng)
    };
    let fleet = data.peers.get(point).and_then(|p| Reference::fleet(p, rule.min_peers)).map(|r| line(r, &mut rng));
    let history = data.own.get(point).and_then(|o| Reference::history(o, rule.min_history)).map(|r| line(r, &mut rng));
    let floor = data.floors.get(point).map(|f| (f.clone(), line(Reference::floor(f), &mut rng)));
    let below = |a: &Option<Against>| a.as_ref().is_some_and(|a| a.below);
    let fault = if below(&fleet) {
        Some(Line::Fleet)
    } else if floor.as_ref().is_some_and(|(_, a)| a.below) {
        Some(Line::Floor)
    } else if fleet.is_none() && below(&history) {
        Some(Line::History)
    } else {
        None
    };
    Ok(GatePoint {
        point: point.to_string(),
        median: m,
        runs: node.runs.len(),
        samples: node.samples(),
        fleet,
        history,
        floor,
        fault,
    })
}

/// A line to judge a figure against: its centre, the scale of single runs
/// around it (for z), and replicates of the centre.
struct Reference {
    centre: f64,
    scale: Option<f64>,
    n: usize,
    replicates: Vec<f64>,
    /// A floor: below when the whole interval is under 1, with no z.
    absolute: bool,
}

impl Reference {
    /// The median of the peers' figures; z on the scale of their runs.
    fn fleet(peers: &BTreeMap<String, Runs>, min_peers: usize) -> Option<Reference> {
        let mut peers: Vec<NodeResampler> = peers.values().filter_map(NodeResampler::new).collect();
        if peers.len() < min_peers.max(1) {
            return None;
        }
        let centre = median_of(&mut peers.iter().map(|p| p.figure).collect::<Vec<f64>>());
        let runs: Vec<f64> = peers.iter().flat_map(|p| p.runs.iter().map(|r| r.figure())).collect();
        let n = peers.len();
        let mut rng = resampling_rng(seed_of(&format!("fleet {n} {centre}")));
        let mut picked = vec![0.0; n];
        let count = (REFERENCE_DRAWS / n).clamp(FEWEST_REFERENCE_REPLICATES, REFERENCE_REPLICATES);
        let replicates = (0..count)
            .map(|_| {
                for (slot, p) in picked.iter_mut().enumerate() {
                    // Peers themselves resampled from 5 up (see MIN_PEERS_RESAMPLED).
                    let k = if n >= MIN_PEERS_RESAMPLED { rng.random_range(0..n) } else { slot };
                    *p = peers[k].draw(&mut rng);
                }
                median_of(&mut picked)
            })
            .collect();
        Some(Reference { centre, scale: centre_and_scale(&runs).1, n, replicates, absolute: false })
    }

    /// The median of this node's earlier runs; z on their scale.
    fn history(own: &Runs, min_runs: usize) -> Option<Reference> {
        let mut r = NodeResampler::new(own)?;
        if r.runs.len() < min_runs.max(1) {
            return None;
        }
        let runs: Vec<f64> = r.runs.iter().map(|x| x.figure()).collect();
        let mut rng = resampling_rng(seed_of(&format!("history {} {}", runs.len(), r.figure)));
        let replicates = (0..REFERENCE_REPLICATES).map(|_| r.draw(&mut rng)).collect();
        Some(Reference {
            centre: r.figure,
            scale: centre_and_scale(&runs).1,
            n: runs.len(),
            replicates,
            absolute: false,
        })
    }

    fn floor(f: &Floor) -> Reference {
        Reference { centre: f.ops_per_second, scale: None, n: 1, replicates: vec![f.ops_per_second], absolute: true }
    }

    /// Figure `m` (its bootstrap `draws`) against this line.
    fn against(
        &self,
        m: f64,
        draws: &[f64],
        alpha: f64,
        threshold: f64,
        rng: &mut rand::rngs::Xoshiro256PlusPlus,
    ) -> Against {
        let k = self.replicates.len();
        let mut ratios: Vec<f64> = draws.iter().map(|d| d / self.replicates[rng.random_range(0..k)]).collect();
        ratios.sort_by(f64::total_cmp);
        let (low, high) = (quantile_sorted(&ratios, alpha / 2.0), quantile_sorted(&ratios, 1.0 - alpha / 2.0));
        let z = (!self.absolute).then(|| self.scale.map_or(0.0, |s| (m - self.centre) / s));
        let below = if self.absolute { high < 1.0 } else { z.is_some_and(|z| z < -Z_SLOW) && high < 1.0 - threshold };
        Against {
            reference: self.centre,
            ratio: m / self.centre,
            ratio_low: low,
            ratio_high: high,
            confidence: 1.0 - alpha,
            z,
            n: self.n,
            below,
        }
    }
}

/// The outcome of a gate over its passes.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Judged, and no point failed twice.
    Pass,
    /// A point failed in the first pass and again in the retest.
    Bad,
    /// Nothing could be judged (too little history, no floor), or the
    /// gate could not run: never a reason to drain.
    NotJudged,
}

impl Verdict {
    /// The word, as in JSON and the verdict run's record.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Bad => "bad",
            Verdict::NotJudged => "not_judged",
        }
    }

    /// The gate's exit code, as scripts and the textfile read it: 0 pass,
    /// 1 bad, 3 not judged.
    pub fn code(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::Bad => 1,
            Verdict::NotJudged => 3,
        }
    }
}

/// The points that failed in every pass: what a drain rests on.
pub fn confirm(passes: &[&GateJudgement]) -> BTreeSet<String> {
    let mut it = passes.iter();
    let Some(first) = it.next() else { return BTreeSet::new() };
    let mut failed: BTreeSet<String> = first.faults().map(|p| p.point.clone()).collect();
    for p in it {
        let here: BTreeSet<String> = p.faults().map(|p| p.point.clone()).collect();
        failed = failed.intersection(&here).cloned().collect();
    }
    failed
}

#[cfg(test)]
mod tests;
