//! A fleet's runs, read from the archive and judged: what `fleet check`
//! prints and `fleet report` writes.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::gate::GATE_BENCH;
use super::links::{sweeps, Culprit, LinkSweep};
use super::{judge, FleetJudgement, Rule, Runs};
use crate::archive::catalog::CatalogEntry;
use crate::archive::Archive;
use crate::archive::ScanFilter;
use crate::error::{Error, Result};
use crate::vocab::benches::Bench;
use crate::vocab::rows::{Row, Status};
use crate::vocab::telemetry::{capped_rounds, headline_rounds, RoundState};
use polars::prelude::{DataFrame, DataType, IdxCa, IdxSize};

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

/// The point a row is judged on: its parameters, what sets it apart from
/// others of its label (on a GPU its copy method, cache state or host
/// memory, and peer; on a CPU a variant other than the default `warm`),
/// and on a GPU its device (`memcpy copy 64 MiB (copy_engine, warm) on
/// GPU 2`), so each GPU is judged against the same GPU of the other nodes
/// and a node is ranked by its slowest GPU. Pinned and pageable copies are
/// never one point.
pub fn fleet_point(r: &crate::vocab::rows::Row) -> String {
    let mut s = r.params.label();
    let gpu = crate::vocab::kinds::backend_is_gpu(&r.backend);
    let q: Vec<String> = r
        .params
        .qualifiers()
        .into_iter()
        .filter(|(what, v)| gpu || (*what == "variant" && v != crate::vocab::kinds::CacheMode::Warm.name()))
        .map(|(_, v)| v)
        .collect();
    if !q.is_empty() {
        s += &format!(" ({})", q.join(", "));
    }
    if gpu {
        s += &format!(" on {}", crate::vocab::rows::short_device(&r.device));
    }
    s
}

/// A point's speeds, by round.
type ByRound = BTreeMap<Option<u32>, Vec<f64>>;

/// What one run of a fleet adds: its node, job, start, link sweeps, and
/// each point's speeds by round.
pub(super) struct RunPart {
    pub(super) run_id: String,
    pub(super) node: String,
    job: Option<String>,
    pub(super) started_at: String,
    links: Vec<LinkSweep>,
    /// Whether it measured anything but link sweeps.
    measured: bool,
    pub(super) points: BTreeMap<String, ByRound>,
    /// Each point's first row (what a floor is matched on).
    pub(super) firsts: BTreeMap<String, Row>,
}

/// Run `e` of a fleet, from its results file alone (the catalog holds its
/// manifest's facts, and checked its hash): only the rows of its own
/// link sweeps, and of each point's first row, are made into [`Row`]s.
/// An error (run id, why) when it cannot be read.
pub(super) fn read_run(archive: &Archive, e: &CatalogEntry) -> std::result::Result<RunPart, (String, String)> {
    let path = archive.runs_dir().join(&e.run_id).join(crate::archive::RESULTS_FILE);
    let df = crate::archive::schema::read_parquet(&path).map_err(|err| (e.run_id.clone(), err.to_string()))?;
    run_part(e, &df).map_err(|err| (e.run_id.clone(), format!("{}: {err}", path.display())))
}

fn run_part(e: &CatalogEntry, df: &DataFrame) -> Result<RunPart> {
    let column = |name: &str| df.column(name).map_err(Error::analysis);
    let (bench, host, device, status) =
        (column("bench")?.str(), column("host")?.str(), column("device")?.str(), column("status")?.str());
    let (bench, host, device, status) = (
        bench.map_err(Error::analysis)?,
        host.map_err(Error::analysis)?,
        device.map_err(Error::analysis)?,
        status.map_err(Error::analysis)?,
    );
    let (point, round) =
        (column("point")?.u32().map_err(Error::analysis)?, column("round")?.u32().map_err(Error::analysis)?);
    let (iterations, seconds) =
        (column("iterations")?.u64().map_err(Error::analysis)?, column("seconds")?.f64().map_err(Error::analysis)?);
    // Each round's power state, where its rows carry telemetry: a point is
    // judged on its full-clock rounds, as its report states it.
    let cast = |name: &str, t: DataType| column(name)?.cast(&t).map_err(Error::analysis);
    let (clock, mask) = (cast("clock_mhz", DataType::Float64)?, cast("throttle", DataType::UInt64)?);
    let (clock, mask) = (clock.f64().map_err(Error::analysis)?, mask.u64().map_err(Error::analysis)?);
    let links = Bench::Links.name();
    let measured = Status::Measured.as_str();
    // A run's speeds by point (operations per second, so higher is better
    // for every point), and the row its label is made from.
    let mut by_point: BTreeMap<(u32, &str), (usize, ByRound)> = BTreeMap::new();
    let mut states: BTreeMap<(u32, &str), BTreeMap<Option<u32>, RoundState>> = BTreeMap::new();
    let (mut own_measured, mut sweep_rows) = (false, Vec::new());
    let rows = bench
        .iter()
        .zip(device.iter())
        .zip(status.iter())
        .zip(point.iter())
        .zip(round.iter())
        .zip(iterations.iter().zip(seconds.iter()))
        .zip(clock.iter().zip(mask.iter()));
    for (i, ((((((b, d), st), p), r), (n, s)), state)) in rows.enumerate() {
        if b == Some(GATE_BENCH) {
            continue;
        }
        if b == Some(links) {
            sweep_rows.push(i as IdxSize);
            continue;
        }
        if st != Some(measured) {
            continue;
        }
        own_measured = true;
        let (Some(s), Some(n)) = (s, n) else { continue };
        if s > 0.0 && n > 0 {
            let key = (p.unwrap_or(0), d.unwrap_or_default());
            let e = by_point.entry(key).or_insert_with(|| (i, BTreeMap::new()));
            e.1.entry(r).or_default().push(n as f64 / s);
            if state.0.is_some() || state.1.is_some() {
                states.entry(key).or_default().entry(r).or_insert(state);
            }
        }
    }
    let rows_at = |at: Vec<IdxSize>| -> Result<Vec<Row>> {
        let taken = df.take(&IdxCa::from_vec("at".into(), at)).map_err(Error::analysis)?;
        crate::vocab::columns::from_dataframe(&taken)
    };
    for (key, (_, rounds)) in by_point.iter_mut() {
        let Some(states) = states.get(key) else { continue };
        let state: Vec<RoundState> = rounds.keys().map(|r| states.get(r).copied().unwrap_or((None, None))).collect();
        let keep = headline_rounds(&capped_rounds(&state));
        let mut keep = keep.into_iter();
        rounds.retain(|_, _| keep.next().unwrap_or(true));
    }
    let firsts = rows_at(by_point.values().map(|(i, _)| *i as IdxSize).collect())?;
    let mut points: BTreeMap<String, ByRound> = BTreeMap::new();
    let mut first_rows = BTreeMap::new();
    for (first, (_, rounds)) in firsts.into_iter().zip(by_point.into_values()) {
        let label = fleet_point(&first);
        let mine = points.entry(label.clone()).or_default();
        first_rows.entry(label).or_insert(first);
        for (round, speeds) in rounds {
            mine.entry(round).or_default().extend(speeds);
        }
    }
    // An imported run is the node its rows name (the log's host, or
    // `import --host`), not the machine that imported it.
    let import = e.source.as_deref().is_some_and(|s| crate::vocab::source::RunOrigin::parse(s).is_import());
    let hosts: BTreeSet<&str> = host.iter().flatten().filter(|h| !h.is_empty() && *h != "unknown").collect();
    let node = match (import, hosts.len()) {
        (true, 1) => hosts.first().copied().unwrap_or_default().to_string(),
        _ => e.node.clone().unwrap_or_default(),
    };
    let sweeps = if sweep_rows.is_empty() { Vec::new() } else { sweeps(&e.run_id, &rows_at(sweep_rows)?) };
    Ok(RunPart {
        run_id: e.run_id.clone(),
        links: sweeps,
        measured: own_measured,
        job: e.job_id.clone(),
        started_at: e.started_at.clone().unwrap_or_default(),
        node,
        points,
        firsts: first_rows,
    })
}

/// Read `entries`' results on every CPU, in their order.
pub(super) fn read_parallel(
    archive: &Archive,
    entries: &[CatalogEntry],
) -> Vec<std::result::Result<RunPart, (String, String)>> {
    super::on_every_cpu(entries, |e| read_run(archive, e))
}

/// Gather fleet `name`'s runs from `archive` and judge its nodes with a
/// ratio threshold δ of `threshold`.
pub fn gather(archive: &Archive, name: &str, threshold: f64) -> Result<Fleet> {
    // point → node → run → round → speeds.
    type ByRun = BTreeMap<String, BTreeMap<Option<u32>, Vec<f64>>>;
    let mut samples: BTreeMap<String, BTreeMap<String, ByRun>> = BTreeMap::new();
    let (mut runs, mut nodes_seen, mut damaged) = (0, BTreeMap::new(), Vec::new());
    let (mut jobs, mut started, mut links) = (BTreeSet::new(), Vec::new(), Vec::new());
    // The fleet's runs from the catalog (no manifest opened), each results
    // file's hash checked once and remembered there; then each run read on
    // its own, in parallel, and merged in run order.
    let filter = ScanFilter { fleet: Some(name.to_string()), ..ScanFilter::default() };
    let (verified, left_out) = archive.verified(&filter)?;
    damaged.extend(left_out);
    let parts = read_parallel(archive, &verified);
    for part in parts {
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
    use crate::vocab::rows::{Point, Row};
    use crate::vocab::telemetry::StepTelemetry;

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

    /// A node's point whose first round ran power-capped is judged on its
    /// full-clock rounds, as its report states it.
    #[test]
    fn a_capped_round_is_left_out_of_a_nodes_point() {
        let rows: Vec<Row> = (0..5u32)
            .flat_map(|round| {
                let (secs, clock) = if round == 0 { (1.3, 1485.0) } else { (1.0, 1980.0) };
                (0..4u32).map(move |i| Row {
                    run_id: "r".into(),
                    backend: "cuda".into(),
                    device: "GPU 0: NVIDIA H200".into(),
                    host: "node1".into(),
                    point: 0,
                    params: Point { bench: "gemm".into(), op: "gemm".into(), m: Some(64), ..Point::default() },
                    sample: Some(round * 4 + i),
                    round: Some(round),
                    iterations: Some(1),
                    seconds: Some(secs),
                    status: Status::Measured,
                    source: "native".into(),
                    telemetry: Some(StepTelemetry {
                        readings: 30,
                        clock_mhz: Some(clock),
                        throttle: Some(4),
                        ..Default::default()
                    }),
                    ..Row::blank()
                })
            })
            .collect();
        let df = crate::vocab::columns::to_dataframe(&rows).unwrap();
        let entry = CatalogEntry {
            run_id: "r".into(),
            node: Some("node1".into()),
            fleet: Some("f".into()),
            verified: true,
            ..CatalogEntry::default()
        };
        let part = run_part(&entry, &df).unwrap();
        let (_, rounds) = part.points.iter().next().unwrap();
        assert_eq!(rounds.keys().copied().collect::<Vec<_>>(), [Some(1), Some(2), Some(3), Some(4)]);
        assert!(rounds.values().flatten().all(|&speed| (speed - 1.0).abs() < 1e-12));
    }
}
