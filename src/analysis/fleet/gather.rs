//! A fleet's runs, read from the archive and judged: what `fleet check`
//! prints and `fleet report` writes.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::links::{sweeps, Culprit, LinkSweep};
use super::{judge, FleetJudgement, Rule, Runs};
use crate::archive::Archive;
use crate::error::{Error, Result};
use crate::vocab::rows::Status;

/// Runs per node below which a verdict rests on single runs (measured on
/// this project's noisy 2-core host: one run per node named a clean node
/// in 1 of 30 fleets, three in 0 of 30; see the README's Fleets section).
pub const RUNS_ADVISED: usize = 3;

/// A fleet, judged.
#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    pub fleet: String,
    pub threshold: f64,
    pub runs: usize,
    /// Runs per node.
    pub nodes_seen: BTreeMap<String, usize>,
    /// The Slurm (or MPI) jobs the runs came from.
    pub jobs: BTreeSet<String>,
    /// The first and last run's start.
    pub first_started: String,
    pub last_started: String,
    #[serde(flatten)]
    pub judgement: FleetJudgement,
    /// Link sweeps (`run links`), with the second pass's verdicts.
    pub links: Vec<LinkSweep>,
    /// The slow nodes, by their own runs or blamed by a link sweep: what a
    /// scheduler drains.
    pub drain: Vec<String>,
    /// Links blamed themselves (both ends fine with a good node): a cable,
    /// port or route to look at, not a node to drain.
    pub slow_links: Vec<String>,
    /// Runs of the fleet that could not be read, and why.
    pub damaged: Vec<(String, String)>,
}

impl Fleet {
    /// Whether nothing could be judged: no point on enough nodes, no sweep.
    pub fn nothing_judged(&self) -> bool {
        self.judgement.points.is_empty() && self.links.is_empty()
    }

    /// The fewest runs any node has.
    pub fn fewest_runs(&self) -> usize {
        self.nodes_seen.values().min().copied().unwrap_or(0)
    }
}

/// The point a row is judged on: its parameters, and on a GPU its device
/// (`memcpy copy 64 MiB on GPU 2`), so each GPU is judged against the same
/// GPU of the other nodes and a node is ranked by its slowest GPU.
pub fn fleet_point(r: &crate::vocab::rows::Row) -> String {
    if crate::vocab::kinds::backend_is_gpu(&r.backend) {
        format!("{} on {}", r.params.label(), crate::vocab::rows::short_device(&r.device))
    } else {
        r.params.label()
    }
}

/// A point's speeds, by round.
type ByRound = BTreeMap<Option<u32>, Vec<f64>>;

/// What one run of a fleet adds: its node, job, start, link sweeps, and
/// each point's speeds by round.
struct RunPart {
    run_id: String,
    node: String,
    job: Option<String>,
    started_at: String,
    links: Vec<LinkSweep>,
    /// Whether it measured anything but link sweeps.
    measured: bool,
    points: BTreeMap<String, ByRound>,
}

/// Run `run` as fleet `name` sees it: `None` when it is not in the fleet
/// (or has no readable manifest), an error (run id, why) when its rows
/// cannot be read.
fn read_run(run: &crate::archive::RunDir, name: &str) -> Option<std::result::Result<RunPart, (String, String)>> {
    let manifest = run.manifest().ok()?;
    if manifest.fleet() != Some(name) {
        return None;
    }
    // A damaged run is named and left out; it never stops the check.
    let rows = match run.rows() {
        Ok(rows) => rows,
        Err(e) => return Some(Err((run.id.clone(), e.to_string()))),
    };
    // An imported run is the node its rows name (the log's host, or
    // `import --host`), not the machine that imported it.
    let hosts: BTreeSet<&str> =
        rows.iter().map(|r| r.host.as_str()).filter(|h| !h.is_empty() && *h != "unknown").collect();
    let node = match (manifest.is_import(), hosts.len()) {
        (true, 1) => hosts.first().copied().unwrap_or_default().to_string(),
        _ => manifest.node().to_string(),
    };
    let own = |r: &&crate::vocab::rows::Row| r.params.bench != crate::vocab::benches::Bench::Links;
    // A run's rows, by point (its label made once, not once a row).
    let mut by_point: BTreeMap<(u32, &str), (String, ByRound)> = BTreeMap::new();
    for r in rows.iter().filter(own).filter(|r| r.status == Status::Measured) {
        // Speed: operations per second, so higher is better for every point.
        let (Some(s), Some(n)) = (r.seconds, r.iterations) else { continue };
        if s > 0.0 && n > 0 {
            let e = by_point.entry((r.point, r.device.as_str())).or_insert_with(|| (fleet_point(r), BTreeMap::new()));
            e.1.entry(r.round).or_default().push(n as f64 / s);
        }
    }
    let mut points: BTreeMap<String, ByRound> = BTreeMap::new();
    for (_, (point, rounds)) in by_point {
        let mine = points.entry(point).or_default();
        for (round, speeds) in rounds {
            mine.entry(round).or_default().extend(speeds);
        }
    }
    Some(Ok(RunPart {
        run_id: run.id.clone(),
        links: sweeps(&run.id, &rows),
        measured: rows.iter().filter(own).any(|r| r.status == Status::Measured),
        job: manifest.placement.as_ref().and_then(|p| p.job_id.clone()),
        started_at: manifest.started_at.clone(),
        node,
        points,
    }))
}

/// Gather fleet `name`'s runs from `archive` and judge its nodes with a
/// ratio threshold δ of `threshold`.
pub fn gather(archive: &Archive, name: &str, threshold: f64) -> Result<Fleet> {
    // point → node → run → round → speeds.
    type ByRun = BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>>;
    let mut samples: BTreeMap<String, BTreeMap<String, ByRun>> = BTreeMap::new();
    let (mut runs, mut nodes_seen, mut damaged) = (0, BTreeMap::new(), Vec::new());
    let (mut jobs, mut started, mut links) = (BTreeSet::new(), Vec::new(), Vec::new());
    // Each run read on its own (in parallel: hashing and decoding are the
    // cost), then merged in run order.
    let all = archive.runs()?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(all.len().max(1));
    let chunk = all.len().div_ceil(threads.max(1)).max(1);
    let parts: Vec<Option<std::result::Result<RunPart, (String, String)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = all
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(|run| read_run(run, name)).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    for part in parts.into_iter().flatten() {
        let part = match part {
            Ok(p) => p,
            Err(d) => {
                damaged.push(d);
                continue;
            }
        };
        runs += 1;
        links.extend(part.links);
        if part.measured {
            *nodes_seen.entry(part.node.clone()).or_insert(0) += 1;
        }
        jobs.extend(part.job);
        started.push(part.started_at);
        for (point, rounds) in part.points {
            let by_run = samples.entry(point).or_default().entry(part.node.clone()).or_default();
            let mine = by_run.entry(part.run_id.clone()).or_default();
            for (round, speeds) in rounds {
                mine.entry(round).or_default().extend(speeds);
            }
        }
    }
    if runs == 0 {
        return Err(Error::config(
            "FLEET",
            format!(
                "no run in {} belongs to fleet `{name}`; record some with `benchbook run ... --fleet {name}`",
                archive.root.display()
            ),
        ));
    }
    let samples: BTreeMap<String, BTreeMap<String, Runs>> = samples
        .into_iter()
        .map(|(point, nodes)| {
            let runs = |r: ByRun| r.into_values().map(|rounds| rounds.into_values().collect()).collect();
            (point, nodes.into_iter().map(|(n, r)| (n, runs(r))).collect())
        })
        .collect();
    let judgement = judge(&samples, &Rule { threshold, ..Rule::default() });
    let mut drain: Vec<String> = judgement.nodes.iter().filter(|n| n.slow).map(|n| n.node.clone()).collect();
    let mut slow_links: Vec<String> =
        links.iter().flat_map(|l| &l.blamed).filter(|b| b.what == Culprit::Link).map(|b| b.name.clone()).collect();
    for l in &links {
        for n in l.blamed_nodes() {
            if l.ranks_share_hosts {
                // Not a node a scheduler can drain: ranks of one host.
                slow_links.push(format!("every link of {n}"));
            } else if !drain.iter().any(|d| d == n) {
                drain.push(n.to_string());
            }
        }
    }
    started.sort();
    Ok(Fleet {
        fleet: name.into(),
        threshold,
        runs,
        nodes_seen,
        jobs,
        first_started: started.first().cloned().unwrap_or_default(),
        last_started: started.last().cloned().unwrap_or_default(),
        judgement,
        links,
        drain,
        slow_links,
        damaged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::rows::Row;

    #[test]
    fn each_gpu_is_its_own_point_and_the_cpu_is_one() {
        let mut r = Row::blank();
        r.params.bench = "memcpy".into();
        r.params.op = "copy".into();
        r.params.size_bytes = Some(64 << 20);
        r.backend = "cuda".into();
        r.device = crate::vocab::rows::gpu_device_name(2, "NVIDIA H100 80GB HBM3");
        let gpu2 = fleet_point(&r);
        assert!(gpu2.ends_with(" on GPU 2"), "{gpu2}");
        r.device = crate::vocab::rows::gpu_device_name(3, "NVIDIA H100 80GB HBM3");
        assert_ne!(fleet_point(&r), gpu2);
        r.backend = "cpu".into();
        r.device = "AMD EPYC".into();
        assert_eq!(fleet_point(&r), r.params.label());
    }
}
