//! The local source: every backend of this build that the configuration
//! selects, probed, then each of its devices swept point by point. What
//! cannot run is recorded as skipped rows with the reason, never dropped.

use crate::backend::{self, Backend};
use crate::bench::runner::{outcome_rows, run_benchmarks_within, RowMeta, Step};
use crate::bench::{BenchConfig, Outcome};
use crate::error::Result;
use crate::vocab::benches::Bench;
use crate::vocab::config::RunConfig;
use crate::vocab::facts::{BackendInfo, Probe};
use crate::vocab::progress::Progress;
use crate::vocab::rows::{Point, Row, RowSink, RunOutcome, Status};
use crate::vocab::source::RunOrigin;
use crate::vocab::source::{Source, SourceInfo};

/// Measure a [`BenchConfig`] on this machine.
pub struct LocalSource {
    cfg: BenchConfig,
    backends: Vec<Box<dyn Backend>>,
    probes: Vec<Probe>,
}

impl LocalSource {
    pub fn new(cfg: BenchConfig) -> Self {
        let backends: Vec<Box<dyn Backend>> = backend::all()
            .into_iter()
            .filter(|b| cfg.backends.is_empty() || cfg.backends.iter().any(|n| n.name() == b.name()))
            .collect();
        LocalSource { cfg, backends, probes: Vec::new() }
    }

    fn selected(&self, name: &str) -> bool {
        self.cfg.backends.is_empty() || self.cfg.backends.iter().any(|n| n.name() == name)
    }
}

impl Source for LocalSource {
    fn describe(&mut self) -> Result<SourceInfo> {
        self.probes = self.backends.iter().map(|b| b.probe()).collect();
        let mut infos: Vec<BackendInfo> = self
            .backends
            .iter()
            .zip(&self.probes)
            .map(|(b, p)| BackendInfo { name: b.name().into(), probe: p.clone(), facts: b.facts() })
            .collect();
        // Backends this build lacks, so that a reader knows why there are no GPU rows.
        for (name, why) in backend::missing() {
            if self.selected(name) {
                infos.push(BackendInfo {
                    name: name.into(),
                    probe: Probe::Unavailable { reason: why.into() },
                    facts: None,
                });
            }
        }
        Ok(SourceInfo {
            kind: RunOrigin::Native,
            config: RunConfig::Sweep(Box::new(self.cfg.clone())),
            backends: infos,
            default_label: self.cfg.preset.name().into(),
        })
    }

    fn produce(&mut self, run_id: &str, sink: &mut dyn RowSink, progress: &dyn Progress) -> Result<RunOutcome> {
        let cfg = &self.cfg;
        let host = crate::host::hostname();
        let mut outcome = RunOutcome::default();
        // The budget is shared by the device sweeps still to run; what one
        // leaves over goes to the next.
        let start = std::time::Instant::now();
        let mut sweeps_left: usize = self
            .probes
            .iter()
            .map(|p| match p {
                Probe::Available { devices } => devices.len(),
                Probe::Unavailable { .. } => 0,
            })
            .sum();
        for (b, probe) in self.backends.iter().zip(&self.probes) {
            match probe {
                Probe::Available { devices } => {
                    for (i, device) in devices.iter().enumerate() {
                        let budget = cfg
                            .stop
                            .budget_seconds
                            .map(|total| (total - start.elapsed().as_secs_f64()).max(0.0) / sweeps_left.max(1) as f64);
                        sweeps_left = sweeps_left.saturating_sub(1);
                        let mut benches = b.benchmarks(cfg, i);
                        let meta = RowMeta {
                            run_id: run_id.into(),
                            backend: b.name().into(),
                            device: device.clone(),
                            host: host.clone(),
                            rank: 0,
                        };
                        outcome.add(run_benchmarks_within(
                            &mut benches,
                            cfg,
                            budget,
                            &meta,
                            Some(b.sensor(i)),
                            outcome.points,
                            sink,
                            progress,
                        )?);
                        if outcome.interrupted {
                            return Ok(outcome);
                        }
                    }
                }
                Probe::Unavailable { reason } => {
                    // Record, as data, that this backend's benchmarks could not run.
                    let mut rows = Vec::new();
                    for name in cfg.benches.iter().filter(|n| b.implements(**n)) {
                        rows.extend(bench_skipped(run_id, &host, b.name(), *name, outcome.points, reason));
                        outcome.count(Status::Skipped);
                    }
                    if !rows.is_empty() {
                        sink.write_point(rows)?;
                    }
                }
            }
        }
        // Benchmarks no backend of this build implements (e.g. `h2d` without a
        // GPU backend) are recorded as skipped too, never silently dropped.
        for name in cfg.benches.iter().filter(|n| !self.backends.iter().any(|b| b.implements(**n))) {
            let why = format!(
                "no backend of this run implements `{name}`{}",
                backend::missing().iter().map(|(b, w)| format!("; {b}: {w}")).collect::<String>()
            );
            let rows = bench_skipped(run_id, &host, "none", *name, outcome.points, &why);
            outcome.count(Status::Skipped);
            sink.write_point(rows)?;
        }
        Ok(outcome)
    }
}

/// The row recording that benchmark `name` could not run at all on
/// `backend` (op `*`, no device), with the reason.
fn bench_skipped(run_id: &str, host: &str, backend: &str, name: Bench, point: u32, reason: &str) -> Vec<Row> {
    let meta =
        RowMeta { run_id: run_id.into(), backend: backend.into(), device: "none".into(), host: host.into(), rank: 0 };
    let p = Point { bench: name.name().into(), op: "*".into(), ..Point::default() };
    outcome_rows(&meta, Step::single(point), &p, "none", &Outcome::Skipped(reason.into()))
}
