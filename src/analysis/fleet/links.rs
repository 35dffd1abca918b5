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

/// What one retest found.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub enum RetestVerdict {
    #[serde(rename = "slow")]
    Slow,
    #[serde(rename = "fine")]
    Fine,
    /// The retest gave no number.
    #[serde(rename = "not measured")]
    NotMeasured,
}

impl RetestVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            RetestVerdict::Slow => "slow",
            RetestVerdict::Fine => "fine",
            RetestVerdict::NotMeasured => "not measured",
        }
    }
}

/// One retest of the second pass: a suspect endpoint against a good node,
/// or the suspect link's two ends again.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Retest {
    pub node: String,
    pub good: String,
    /// NaN (null in JSON) when the retest gave no number.
    pub gbps: f64,
    pub verdict: RetestVerdict,
}

/// Whom the second pass blamed: a node, or a link.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Culprit {
    Node,
    Link,
}

impl Culprit {
    pub fn as_str(self) -> &'static str {
        match self {
            Culprit::Node => "node",
            Culprit::Link => "link",
        }
    }
}

/// What the second pass blamed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Blamed {
    pub what: Culprit,
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
    /// Several ranks shared a host (`mpirun` on one machine), so they are
    /// named `host (rank N)` and a blamed "node" is a rank, not a machine
    /// to drain.
    pub ranks_share_hosts: bool,
}

impl LinkSweep {
    /// The nodes blamed (what a scheduler drains).
    pub fn blamed_nodes(&self) -> impl Iterator<Item = &str> {
        self.blamed.iter().filter(|b| b.what == Culprit::Node).map(|b| b.name.as_str())
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
    let ranks_share_hosts = nodes.values().any(shared);
    let name = |rank: usize| match nodes.get(&(rank as u32)) {
        Some(h) if shared(h) => format!("{h} (rank {rank})"),
        Some(h) => h.clone(),
        None => format!("rank {rank}"),
    };
    let median = |t: Option<&Vec<f64>>| t.map_or(f64::NAN, |t| median_unsorted(&mut t.clone()));
    let pair_name = |&(a, b): &(usize, usize)| format!("{}–{}", name(a), name(b));
    by_size
        .into_iter()
        .map(|(size, ops)| {
            let bytes = 2.0 * size as f64;
            // Each end's own median, as the run gathered them (GB/s).
            let own = ops.get(ROUND_OP).into_iter().flatten().flat_map(|(peer, ranks)| {
                pairs::parse(peer).into_iter().flat_map(move |(a, b)| {
                    [(a, b, median(ranks.get(&(a as u32)))), (b, a, median(ranks.get(&(b as u32))))]
                })
            });
            let first = pairs::link_matrix(own, bytes / 1e9);
            // The retests as measured: the pair's exchange time, the slower end's.
            let retest = |x: usize, g: usize| -> f64 {
                let label = pairs::label(&[(x.min(g), x.max(g))]);
                let ranks = ops.get(RETEST_OP).and_then(|o| o.get(&label));
                ranks.map_or(f64::NAN, |r| {
                    pairs::link_speed(bytes, median(r.get(&(x as u32))), median(r.get(&(g as u32)))) / 1e9
                })
            };
            let p = pairs::second_pass(&first, SUSPECT_BELOW, retest);
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
                floor_gbps: p.floor,
                retests: p
                    .retests
                    .iter()
                    .map(|&(x, g, v)| Retest {
                        node: name(x),
                        good: name(g),
                        gbps: v,
                        verdict: match v {
                            v if !v.is_finite() => RetestVerdict::NotMeasured,
                            v if v < p.floor => RetestVerdict::Slow,
                            _ => RetestVerdict::Fine,
                        },
                    })
                    .collect(),
                blamed: p
                    .blamed
                    .iter()
                    .map(|b| match *b {
                        Blame::Node { node } => Blamed { what: Culprit::Node, name: name(node) },
                        Blame::Link { a, b } => Blamed { what: Culprit::Link, name: pair_name(&(a, b)) },
                    })
                    .collect(),
                unresolved: p.unresolved.iter().map(pair_name).collect(),
                cleared: p.cleared.iter().map(pair_name).collect(),
                ranks_share_hosts,
            }
        })
        .filter(|s| !s.links.is_empty())
        .collect()
}
