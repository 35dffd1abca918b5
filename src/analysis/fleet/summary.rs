//! The fleet summary: for each node of a fleet, the figure of every point
//! in its latest runs (each run's median of its rounds' medians), so that
//! a gate reads one small file per peer instead of every peer's results.
//!
//! - **Where:** `ARCHIVE/fleet-summary/FLEET/NODE.json`, one file per
//!   node (named as the site names its pages, `archive::store::file_name`),
//!   written atomically (`archive::store::write_atomic`) under an
//!   exclusive lock on `NODE.lock`. Two nodes archiving at once
//!   write different files; two writers of one node take turns, and each
//!   merges what it adds into what the file holds (by run id, newest
//!   [`KEEP`] kept), so no order of writes loses a run.
//! - **When:** a node records its own runs as they are archived (`run
//!   --fleet`, each gate pass), and a gate records every peer it had to
//!   read in full.
//! - **Never trusted blindly:** a gate uses a node's summary only when its
//!   runs are exactly the node's latest usable runs in the catalog; a
//!   missing, older or unreadable summary means reading those runs, as
//!   before, and rewriting it. It is a cache: deleting the folder loses
//!   nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::gather::RunPart;
use super::Runs;
use crate::archive::store::{file_name, write_atomic};
use crate::archive::Archive;
use crate::error::{IoContext, Result};
use crate::vocab::stats::RoundsResampler;

/// Runs kept per node: as many as a gate reads of each peer.
pub const KEEP: usize = super::RUNS_ADVISED;

/// The file format's version: a file of another version is not read (and
/// is rewritten).
const VERSION: u32 = 1;

/// One node's summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeSummary {
    pub version: u32,
    /// The node its rows name (an imported run's host).
    pub node: String,
    /// Newest first.
    pub runs: Vec<SummaryRun>,
}

/// One run's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRun {
    pub run_id: String,
    pub started_at: String,
    /// point → the run's figure (operations per second): its median of
    /// its rounds' medians, as the fleet judgement computes it.
    pub points: BTreeMap<String, f64>,
}

impl SummaryRun {
    pub(super) fn of(part: &RunPart) -> SummaryRun {
        let points = part
            .points
            .iter()
            .filter_map(|(point, rounds)| {
                let rounds: Vec<Vec<f64>> = rounds.values().cloned().collect();
                Some((point.clone(), RoundsResampler::new(&rounds)?.figure()))
            })
            .collect();
        SummaryRun { run_id: part.run_id.clone(), started_at: part.started_at.clone(), points }
    }
}

impl NodeSummary {
    /// The run ids, newest first.
    pub fn run_ids(&self) -> Vec<&str> {
        self.runs.iter().map(|r| r.run_id.as_str()).collect()
    }

    /// point → the node's runs as the judgement takes them: each run one
    /// round of one sample, its figure.
    pub fn runs_of(&self, point: &str) -> Runs {
        self.runs.iter().rev().filter_map(|r| r.points.get(point)).map(|f| vec![vec![*f]]).collect()
    }
}

fn dir(archive: &Archive, fleet: &str) -> PathBuf {
    archive.root.join("fleet-summary").join(file_name(fleet))
}

fn path(archive: &Archive, fleet: &str, node: &str) -> PathBuf {
    dir(archive, fleet).join(format!("{}.json", file_name(node)))
}

/// Node `node`'s summary in fleet `fleet`, if there is a readable one of
/// this version.
pub fn read(archive: &Archive, fleet: &str, node: &str) -> Option<NodeSummary> {
    let bytes = std::fs::read(path(archive, fleet, node)).ok()?;
    serde_json::from_slice::<NodeSummary>(&bytes).ok().filter(|s| s.version == VERSION)
}

/// Merge `runs` (of node `node`, as the catalog names it) into its
/// summary, keeping the newest [`KEEP`].
pub fn record(archive: &Archive, fleet: &str, node: &str, row_node: &str, runs: Vec<SummaryRun>) -> Result<()> {
    if runs.is_empty() {
        return Ok(());
    }
    let d = dir(archive, fleet);
    std::fs::create_dir_all(&d).at(&d)?;
    let lock_path = d.join(format!("{}.lock", file_name(node)));
    let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).at(&lock_path)?;
    lock.lock().at(&lock_path)?;
    let mut s = read(archive, fleet, node).unwrap_or_default();
    s.version = VERSION;
    s.node = row_node.to_string();
    for r in runs {
        s.runs.retain(|old| old.run_id != r.run_id);
        s.runs.push(r);
    }
    s.runs.sort_by(|a, b| (&b.started_at, &b.run_id).cmp(&(&a.started_at, &a.run_id)));
    s.runs.truncate(KEEP);
    let bytes = serde_json::to_vec(&s).map_err(crate::error::Error::analysis)?;
    write_atomic(&path(archive, fleet, node), &bytes)
}

/// After run `run_id` is archived: if it is a usable run of a fleet, add
/// it to its node's summary. `Ok(false)` when it is not a fleet's.
pub fn record_run(archive: &Archive, run_id: &str) -> Result<bool> {
    let catalog = crate::archive::catalog::Catalog::open(archive)?;
    let Some(e) = catalog.entries.iter().find(|e| e.run_id == run_id) else { return Ok(false) };
    let (Some(fleet), Some(node)) = (e.fleet.as_deref(), e.node.as_deref()) else { return Ok(false) };
    if !super::gate::collect::usable(e) {
        return Ok(false);
    }
    let part = super::gather::read_run(archive, e).map_err(|(_, why)| crate::error::Error::analysis(why))?;
    record(archive, fleet, node, &part.node, vec![SummaryRun::of(&part)])?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, at: &str, figure: f64) -> SummaryRun {
        SummaryRun { run_id: id.into(), started_at: at.into(), points: [("p".to_string(), figure)].into() }
    }

    #[test]
    fn records_merge_in_any_order_and_keep_the_newest() {
        let tmp = tempfile::tempdir().unwrap();
        let a = Archive::new(tmp.path());
        let runs = [run("r1", "1", 1.0), run("r2", "2", 2.0), run("r3", "3", 3.0), run("r4", "4", 4.0)];
        record(&a, "f/leet", "n 1", "n 1", vec![runs[3].clone(), runs[0].clone()]).unwrap();
        record(&a, "f/leet", "n 1", "n 1", vec![runs[1].clone(), runs[2].clone(), runs[3].clone()]).unwrap();
        let s = read(&a, "f/leet", "n 1").unwrap();
        assert_eq!(s.run_ids(), vec!["r4", "r3", "r2"]);
        // Oldest first, one round of one sample each.
        assert_eq!(s.runs_of("p"), vec![vec![vec![2.0]], vec![vec![3.0]], vec![vec![4.0]]]);
        assert!(read(&a, "f/leet", "n 2").is_none());
        // A damaged file is not read, and the next record rewrites it.
        std::fs::write(path(&a, "f/leet", "n 1"), b"{").unwrap();
        assert!(read(&a, "f/leet", "n 1").is_none());
        record(&a, "f/leet", "n 1", "n 1", vec![runs[0].clone()]).unwrap();
        assert_eq!(read(&a, "f/leet", "n 1").unwrap().run_ids(), vec!["r1"]);
    }

    #[test]
    fn two_writers_of_one_node_lose_no_run() {
        let tmp = tempfile::tempdir().unwrap();
        let a = Archive::new(tmp.path());
        std::thread::scope(|s| {
            for k in 0..2 {
                let a = &a;
                s.spawn(move || {
                    for i in 0..20 {
                        let n = i * 2 + k;
                        record(a, "f", "n", "n", vec![run(&format!("r{n:02}"), &format!("{n:02}"), 1.0)]).unwrap();
                    }
                });
            }
        });
        assert_eq!(read(&a, "f", "n").unwrap().run_ids(), vec!["r39", "r38", "r37"]);
    }
}
