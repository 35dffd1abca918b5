//! What one node's gate reads from the shared archive: its fresh runs, the
//! latest runs of every other node of its fleet, its own earlier runs, and
//! the floors that apply to its points. Only those runs' results files are
//! read (from the catalog: no manifest opened), in parallel.

use std::collections::{BTreeMap, BTreeSet};

use super::floors::{floor_for, FloorSpec};
use super::GateData;
use crate::analysis::fleet::gather::{read_parallel, RunPart};
use crate::analysis::fleet::summary;
use crate::analysis::specs::SpecBook;
use crate::archive::catalog::{Catalog, CatalogEntry};
use crate::archive::{Archive, ScanFilter};
use crate::error::{Error, Result};

/// How much of the archive a gate reads.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    /// The latest runs of each other node (its figure is their median).
    pub peer_runs: usize,
    /// This node's latest earlier runs (its history line).
    pub history_runs: usize,
    /// This node's latest earlier runs searched for a change of level
    /// (`changes`): the change-point detector needs 3 runs on each side
    /// and, for its penalty, 7 in all.
    pub change_runs: usize,
}

impl Default for Window {
    fn default() -> Self {
        Window { peer_runs: crate::analysis::fleet::RUNS_ADVISED, history_runs: 5, change_runs: 11 }
    }
}

/// From how many peers a gate reads their summaries (`fleet::summary`)
/// instead of their results. A summary keeps each run's figure, not its
/// samples, so a peer is then resampled over its runs alone; with this
/// many peers the reference is the median of their figures, and the
/// resampling of the peers themselves is what moves it.
pub const SUMMARY_FROM_PEERS: usize = 64;

/// A gate's data, and what it rests on.
#[derive(Debug, Clone)]
pub struct Collected {
    pub data: GateData,
    /// The other nodes with runs read, and this node's earlier runs.
    pub peers: BTreeSet<String>,
    pub history_runs: usize,
    /// Runs that could not be read, and why.
    pub damaged: Vec<(String, String)>,
    /// Peers taken from their summaries, not their results.
    pub from_summary: usize,
}

/// Whether catalog entry `e` is a run a gate can judge with: of the fleet,
/// finished, and not a gate's own verdict.
pub(in crate::analysis::fleet) fn usable(e: &CatalogEntry) -> bool {
    let verdict = e.source.as_deref() == Some(super::GATE_SOURCE);
    let status_ok = e.status.as_deref().is_none_or(|s| s == crate::archive::RunStatus::Complete.as_str());
    !verdict && status_ok && e.node.is_some()
}

/// Read node `node`'s gate data from fleet `fleet`: `fresh` (run ids, in
/// order) are the passes being judged.
pub fn collect(
    archive: &Archive,
    fleet: &str,
    node: &str,
    fresh: &[String],
    floors: &[FloorSpec],
    specs: &SpecBook,
    window: Window,
) -> Result<Collected> {
    let catalog = Catalog::open(archive)?;
    let mut by_node: BTreeMap<&str, Vec<&CatalogEntry>> = BTreeMap::new();
    for e in catalog.entries.iter().filter(|e| e.fleet.as_deref() == Some(fleet) && usable(e)) {
        if !fresh.contains(&e.run_id) {
            by_node.entry(e.node.as_deref().unwrap_or_default()).or_default().push(e);
        }
    }
    // Newest first, by start (then id): the latest runs of each node. A
    // large fleet's peers come from their summaries where those hold
    // exactly these runs; the others are read, and their summaries
    // rewritten.
    let large = by_node.keys().filter(|n| **n != node).count() >= SUMMARY_FROM_PEERS;
    let mut wanted: BTreeSet<String> = fresh.iter().cloned().collect();
    let (mut summarized, mut stale) = (Vec::new(), BTreeMap::new());
    for (n, runs) in by_node.iter_mut() {
        runs.sort_by(|a, b| (&b.started_at, &b.run_id).cmp(&(&a.started_at, &a.run_id)));
        let keep = if *n == node { window.history_runs.max(window.change_runs) } else { window.peer_runs };
        let latest: Vec<&str> = runs.iter().take(keep).map(|e| e.run_id.as_str()).collect();
        if large && *n != node && keep <= summary::KEEP {
            match summary::read(archive, fleet, n).filter(|s| s.run_ids() == latest) {
                Some(s) => {
                    summarized.push(s);
                    continue;
                }
                None => latest.iter().for_each(|id| drop(stale.insert(id.to_string(), n.to_string()))),
            }
        }
        wanted.extend(latest.iter().map(|id| id.to_string()));
    }
    let filter = ScanFilter { runs: Some(wanted), ..ScanFilter::default() };
    let (entries, mut damaged) = archive.verified(&filter)?;
    for id in fresh {
        if !entries.iter().any(|e| &e.run_id == id) {
            let why = damaged.iter().find(|(r, _)| r == id).map_or("not in the catalog".into(), |(_, w)| w.clone());
            return Err(Error::analysis(format!("the gate's own run {id} cannot be read: {why}")));
        }
    }
    let parts = read_parallel(archive, &entries);
    rewrite_summaries(archive, fleet, &stale, &parts);
    let mut data = GateData { node: node.to_string(), ..GateData::default() };
    let (mut peers, mut history_runs) = (BTreeSet::new(), 0);
    let mut fresh_parts: Vec<Option<RunPart>> = fresh.iter().map(|_| None).collect();
    let mut others = Vec::new();
    for part in parts {
        match part {
            Err(d) => damaged.push(d),
            Ok(p) => match fresh.iter().position(|f| *f == p.run_id) {
                Some(i) => fresh_parts[i] = Some(p),
                None => others.push(p),
            },
        }
    }
    for (i, p) in fresh_parts.into_iter().enumerate() {
        let p = p.ok_or_else(|| Error::analysis(format!("the gate's own run {} cannot be read", fresh[i])))?;
        for (point, rounds) in p.points {
            let runs = data.fresh.entry(point.clone()).or_default();
            // Run i of every point sits at index i, so passes can be picked by index.
            runs.resize(i, Vec::new());
            runs.push(rounds.into_values().collect());
        }
        for (point, first) in p.firsts {
            if let Some(f) = floor_for(floors, specs, &first) {
                data.floors.entry(point).or_insert(f);
            }
        }
    }
    // Oldest first: a node's own runs are a series in time.
    others.sort_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)));
    // This node's runs beyond its history window only feed `own_series`.
    let own_read = others.iter().filter(|p| p.node == node).count();
    let mut own_seen = 0;
    for p in others {
        let mine = p.node == node;
        let in_history = mine && {
            own_seen += 1;
            own_read - own_seen < window.history_runs
        };
        if in_history {
            history_runs += 1;
        } else if !mine {
            peers.insert(p.node.clone());
        }
        for (point, rounds) in p.points {
            if !data.fresh.contains_key(&point) {
                continue;
            }
            let run: Vec<Vec<f64>> = rounds.into_values().collect();
            if mine {
                data.own_series.entry(point.clone()).or_default().push(run.clone());
                if in_history {
                    data.own.entry(point).or_default().push(run);
                }
            } else {
                data.peers.entry(point).or_default().entry(p.node.clone()).or_default().push(run);
            }
        }
    }
    let from_summary = summarized.len();
    for s in summarized {
        for point in data.fresh.keys() {
            let runs = s.runs_of(point);
            if !runs.is_empty() {
                data.peers.entry(point.clone()).or_default().insert(s.node.clone(), runs);
            }
        }
        peers.insert(s.node);
    }
    Ok(Collected { data, peers, history_runs, damaged, from_summary })
}

/// Rewrite the summaries of the peers read in full (`stale`: run id →
/// node): a cache, so a summary that cannot be written only costs the
/// next gate the same reading.
fn rewrite_summaries(
    archive: &Archive,
    fleet: &str,
    stale: &BTreeMap<String, String>,
    parts: &[std::result::Result<RunPart, (String, String)>],
) {
    let mut by_node: BTreeMap<&str, Vec<&RunPart>> = BTreeMap::new();
    for p in parts.iter().flatten() {
        if let Some(n) = stale.get(&p.run_id) {
            by_node.entry(n.as_str()).or_default().push(p);
        }
    }
    for (n, runs) in by_node {
        let row_node = runs[0].node.clone();
        let _ = summary::record(archive, fleet, n, &row_node, runs.into_iter().map(summary::SummaryRun::of).collect());
    }
}
