//! Judging a point of a large fleet (more than [`LARGE_FLEET`] nodes) in
//! time linear in its nodes. The small-fleet bootstrap compares every node
//! with its own resample of its peers (n² work per replicate) and gives
//! every node the Bonferroni-corrected interval (up to 200,000
//! replicates): at 1,000 nodes that is hours. Here:
//! - every replicate draws each node's figure once, and one resample of
//!   all of them gives the fleet's reference median, shared by every node
//!   (with this many nodes, leaving a node out of its own reference moves
//!   the median by at most one rank);
//! - up to 1,000 such replicates give each node a 95 % interval;
//! - only nodes with z < −[`Z_SLOW`], the only ones that can be slow, get
//!   the corrected interval: their own figure drawn as many times as the
//!   correction needs, each over a reference drawn from the first stage's.
//!   The others are marked `screened`, their interval a 95 % one.

use rand::RngExt;

use super::{median_of, NodeJudgement, NodeResampler, Rule, Z_SLOW};
use crate::vocab::stats::quantile_sorted;

/// Above this many nodes a point is judged here.
pub const LARGE_FLEET: usize = 20;

/// The judgements of one point of a large fleet. `medians` are the nodes'
/// figures, `centre` and `scale` their robust centre and scale, `alpha`
/// the corrected error rate.
pub(super) fn judge_large(
    point: &str,
    nodes: &mut [(&String, NodeResampler)],
    medians: &[f64],
    (centre, scale): (f64, Option<f64>),
    alpha: f64,
    rule: &Rule,
    rng: &mut rand::rngs::Xoshiro256PlusPlus,
) -> Vec<NodeJudgement> {
    let n = nodes.len();
    // A 95 % interval: 1,000 replicates leave 25 in each tail.
    let b1 = rule.replicates.clamp(200, 1000);
    // Each node's draws all at once, while its samples are in cache (drawn
    // replicate by replicate, every draw missed the cache: 10^4 runs'
    // samples do not fit in it).
    let boot: Vec<Vec<f64>> = nodes.iter_mut().map(|(_, r)| (0..b1).map(|_| r.draw(rng)).collect()).collect();
    let mut picked = vec![0.0; n];
    let references: Vec<f64> = (0..b1)
        .map(|b| {
            for p in picked.iter_mut() {
                *p = boot[rng.random_range(0..n)][b];
            }
            median_of(&mut picked)
        })
        .collect();
    let draws: Vec<Vec<f64>> =
        boot.into_iter().map(|d| d.iter().zip(&references).map(|(x, r)| x / r).collect()).collect();
    let fleet = median_of(&mut medians.to_vec());
    nodes
        .iter_mut()
        .zip(medians)
        .zip(draws)
        .map(|(((node, res), m), mut ratios)| {
            let z = scale.map_or(0.0, |sc| (m - centre) / sc);
            let candidate = z < -Z_SLOW;
            let confidence = if candidate {
                let b2 = rule.replicates.max((40.0 / alpha).ceil() as usize).min(200_000);
                ratios = (0..b2).map(|_| res.draw(rng) / references[rng.random_range(0..references.len())]).collect();
                1.0 - alpha
            } else {
                0.95
            };
            ratios.sort_by(f64::total_cmp);
            let tail = (1.0 - confidence) / 2.0;
            let (low, high) = (quantile_sorted(&ratios, tail), quantile_sorted(&ratios, 1.0 - tail));
            NodeJudgement {
                node: node.to_string(),
                point: point.to_string(),
                samples: res.samples(),
                runs: res.runs.len(),
                rounds: res.rounds(),
                median: *m,
                ratio: m / fleet,
                ratio_low: low,
                ratio_high: high,
                confidence,
                z,
                slow: candidate && high < 1.0 - rule.threshold,
                screened: !candidate,
            }
        })
        .collect()
}
