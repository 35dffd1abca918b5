//! A fleet's link sweeps (`benchbook run links` under `srun`/`mpirun`, one
//! rank per node): the node × node matrix of the first pass, the retests
//! of the second, and who is blamed, read back from the rows with the same
//! rules the run used to choose its retests ([`crate::vocab::pairs`]).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::vocab::benches::Bench;
use crate::vocab::pairs::{self, Blame, RETEST_OP, ROUND_OP, SUSPECT_BELOW};
use crate::vocab::rows::{Row, Status};
use crate::vocab::stats::median_unsorted;

/// One link of the first pass.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LinkFigure {
    pub a: String,
    pub b: String,
    /// GB/s, both directions at once (2 × size per exchange), over the
    /// slower end's median time.
    pub gbps: f64,
    pub suspect: bool,
}

/// One retest of the second pass: a suspect endpoint against a good node.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Retest {
    pub node: String,
    pub good: String,
    /// NaN (null in JSON) when the retest gave no number.
    pub gbps: f64,
    /// `slow`, `fine`, or `not measured`.
    pub verdict: String,
}

/// What the second pass blamed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Blamed {
    /// `node` or `link`.
    pub what: String,
    /// The node, or the link as `a–b`.
    pub name: String,
}

/// One link sweep (a run and size).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LinkSweep {
    pub run_id: String,
    pub size_bytes: u64,
    /// Each rank's node, by rank.
    pub nodes: Vec<String>,
    pub links: Vec<LinkFigure>,
    /// The median link (GB/s) and the floor a link must reach.
    pub centre_gbps: f64,
    pub floor_gbps: f64,
    pub retests: Vec<Retest>,
    pub blamed: Vec<Blamed>,
    /// Suspects with no good node to retest against, or no number.
    pub unresolved: Vec<String>,
    /// Suspects whose dip did not come back when measured again.
    pub cleared: Vec<String>,
}

impl LinkSweep {
    /// Whether its ranks are named `host (rank N)`: several shared a host,
    /// so a blamed "node" is a rank, not a machine to drain.
    pub fn ranks_share_hosts(&self) -> bool {
        let hosts: std::collections::BTreeSet<&String> = self.nodes.iter().collect();
        self.nodes.iter().any(|n| n.contains(" (rank ") || n.starts_with("rank ")) || hosts.len() < self.nodes.len()
    }

    /// The nodes blamed (what a scheduler drains).
    pub fn blamed_nodes(&self) -> impl Iterator<Item = &str> {
        self.blamed.iter().filter(|b| b.what == "node").map(|b| b.name.as_str())
    }
}

/// The link sweeps in one run's rows (one per size).
pub fn sweeps(run_id: &str, rows: &[Row]) -> Vec<LinkSweep> {
    let measured = rows.iter().filter(|r| r.params.bench == Bench::Links && r.status == Status::Measured);
    // size → op → peer label → rank → seconds per exchange.
    type Times = BTreeMap<String, BTreeMap<u32, Vec<f64>>>;
    let mut by_size: BTreeMap<u64, BTreeMap<String, Times>> = BTreeMap::new();
    let mut nodes: BTreeMap<u32, String> = BTreeMap::new();
    for r in measured {
        let (Some(s), Some(n), Some(size)) = (r.seconds, r.iterations, r.params.size_bytes) else { continue };
        nodes.entry(r.rank).or_insert_with(|| r.host.clone());
        let peer = r.params.peer.clone().unwrap_or_default();
        let per_op = by_size.entry(size).or_default().entry(r.params.op.clone()).or_default();
        per_op.entry(peer).or_default().entry(r.rank).or_default().push(s / n.max(1) as f64);
    }
    // A node's name, with the rank where several ranks share one (mpirun
    // on one host).
    let shared = |h: &String| nodes.values().filter(|x| *x == h).count() > 1;
    let name = |rank: usize| match nodes.get(&(rank as u32)) {
        Some(h) if shared(h) => format!("{h} (rank {rank})"),
        Some(h) => h.clone(),
        None => format!("rank {rank}"),
    };
    let median = |t: Option<&Vec<f64>>| t.map_or(f64::NAN, |t| median_unsorted(&mut t.clone()));
    by_size
        .into_iter()
        .map(|(size, ops)| {
            let bytes = 2.0 * size as f64;
            let mut first: BTreeMap<(usize, usize), f64> = BTreeMap::new();
            for (peer, ranks) in ops.get(ROUND_OP).into_iter().flatten() {
                for (a, b) in pairs::parse(peer) {
                    let (ta, tb) = (median(ranks.get(&(a as u32))), median(ranks.get(&(b as u32))));
                    first.insert((a, b), pairs::link_speed(bytes, ta, tb) / 1e9);
                }
            }
            // The retests as measured: the pair's exchange time, the slower end's.
            let retest = |x: usize, g: usize| -> f64 {
                let label = pairs::label(&[(x.min(g), x.max(g))]);
                let ranks = ops.get(RETEST_OP).and_then(|o| o.get(&label));
                ranks.map_or(f64::NAN, |r| {
                    pairs::link_speed(bytes, median(r.get(&(x as u32))), median(r.get(&(g as u32)))) / 1e9
                })
            };
            let p = pairs::second_pass(&first, SUSPECT_BELOW, retest);
            let floor = (1.0 - SUSPECT_BELOW) * p.centre;
            LinkSweep {
                run_id: run_id.to_string(),
                size_bytes: size,
                nodes: (0..nodes.len()).map(name).collect(),
                links: first
                    .iter()
                    .map(|(&(a, b), &gbps)| LinkFigure {
                        a: name(a),
                        b: name(b),
                        gbps,
                        suspect: p.suspects.contains(&(a, b)),
                    })
                    .collect(),
                centre_gbps: p.centre,
                floor_gbps: floor,
                retests: p
                    .retests
                    .iter()
                    .map(|&(x, g, v)| Retest {
                        node: name(x),
                        good: name(g),
                        gbps: v,
                        verdict: match v {
                            v if !v.is_finite() => "not measured",
                            v if v < floor => "slow",
                            _ => "fine",
                        }
                        .into(),
                    })
                    .collect(),
                blamed: p
                    .blamed
                    .iter()
                    .map(|b| match *b {
                        Blame::Node { node } => Blamed { what: "node".into(), name: name(node) },
                        Blame::Link { a, b } => {
                            Blamed { what: "link".into(), name: format!("{}–{}", name(a), name(b)) }
                        }
                    })
                    .collect(),
                unresolved: p.unresolved.iter().map(|&(a, b)| format!("{}–{}", name(a), name(b))).collect(),
                cleared: p.cleared.iter().map(|&(a, b)| format!("{}–{}", name(a), name(b))).collect(),
            }
        })
        .filter(|s| !s.links.is_empty())
        .collect()
}
