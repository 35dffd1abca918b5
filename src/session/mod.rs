//! A whole run: probe backends, create the run in the archive, measure
//! every point of every available backend into it, and finish it with the
//! right status. This is what `benchbook run` does, as a library call.

use indicatif::ProgressBar;

use crate::archive::manifest::BackendInfo;
use crate::archive::{Archive, Manifest, RunDir, RunStatus};
use crate::backend::{self, Probe};
use crate::bench::{run_benchmarks, BenchConfig, RowMeta, RowSink, RunOutcome};
use crate::error::Result;
use crate::rows::{Point, Status};

/// What a finished (or interrupted) run left in the archive.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub run: RunDir,
    pub status: RunStatus,
    pub outcome: RunOutcome,
}

/// Run `cfg` into `archive`, labelled `label`.
pub fn run(archive: &Archive, cfg: &BenchConfig, label: Option<&str>, progress: &ProgressBar) -> Result<RunResult> {
    cfg.validate()?;
    let backends: Vec<Box<dyn backend::Backend>> = backend::all()
        .into_iter()
        .filter(|b| cfg.backends.is_empty() || cfg.backends.iter().any(|n| n == b.name()))
        .collect();
    let probes: Vec<Probe> = backends.iter().map(|b| b.probe()).collect();
    let mut infos: Vec<BackendInfo> = backends
        .iter()
        .zip(&probes)
        .map(|(b, p)| BackendInfo { name: b.name().into(), probe: p.clone(), facts: b.facts() })
        .collect();
    // Backends this build lacks, so that a reader knows why there are no GPU rows.
    for (name, why) in backend::missing() {
        if cfg.backends.is_empty() || cfg.backends.iter().any(|n| n == name) {
            infos.push(BackendInfo {
                name: name.into(),
                probe: Probe::Unavailable { reason: why.into() },
                facts: None,
            });
        }
    }
    let run_id = crate::archive::manifest::new_run_id(label.unwrap_or(&cfg.preset));
    let config = serde_json::to_value(cfg).expect("a config always serializes");
    let mut manifest = Manifest::begin(&run_id, "native", config, infos);
    manifest.label = label.map(String::from);
    let mut writer = archive.create_run(manifest)?;
    let host = crate::host::hostname();
    let mut outcome = RunOutcome::default();
    for (b, probe) in backends.iter().zip(&probes) {
        let result = match probe {
            Probe::Available { devices } => {
                let mut r = Ok(RunOutcome::default());
                for (i, device) in devices.iter().enumerate() {
                    let mut benches = b.benchmarks(&cfg.benches, i);
                    let meta = RowMeta {
                        run_id: run_id.clone(),
                        backend: b.name().into(),
                        device: device.clone(),
                        host: host.clone(),
                        rank: 0,
                    };
                    r = run_benchmarks(&mut benches, cfg, &meta, outcome.points, &mut writer, progress);
                    match &r {
                        Ok(o) => outcome.add(*o),
                        Err(_) => break,
                    }
                    if outcome.interrupted {
                        break;
                    }
                }
                r.map(|_| ())
            }
            Probe::Unavailable { reason } => {
                // Record, as data, that this backend's benchmarks could not run.
                let rows: Vec<crate::rows::Row> = cfg
                    .benches
                    .iter()
                    .filter(|n| b.implements(n))
                    .flat_map(|name| {
                        outcome.points += 1;
                        outcome.skipped += 1;
                        bench_skipped(&run_id, &host, b.name(), name, outcome.points - 1, reason)
                    })
                    .collect();
                if rows.is_empty() {
                    Ok(())
                } else {
                    debug_assert!(rows.iter().all(|r| r.status == Status::Skipped));
                    writer.write_point(rows)
                }
            }
        };
        if let Err(e) = result {
            let _ = writer.finish(RunStatus::Failed, Some(e.to_string()));
            return Err(e);
        }
        if outcome.interrupted {
            break;
        }
    }
    // Benchmarks no backend of this build implements (e.g. `h2d` without a
    // GPU backend) are recorded as skipped too, never silently dropped.
    if !outcome.interrupted {
        let orphans: Vec<&String> = cfg.benches.iter().filter(|n| !backends.iter().any(|b| b.implements(n))).collect();
        for name in orphans {
            let why = format!(
                "no backend of this run implements `{name}`{}",
                backend::missing().iter().map(|(b, w)| format!("; {b}: {w}")).collect::<String>()
            );
            let rows = bench_skipped(&run_id, &host, "none", name, outcome.points, &why);
            outcome.points += 1;
            outcome.skipped += 1;
            if let Err(e) = writer.write_point(rows) {
                let _ = writer.finish(RunStatus::Failed, Some(e.to_string()));
                return Err(e);
            }
        }
    }
    let (status, detail) = if outcome.interrupted {
        (RunStatus::Interrupted, Some("interrupted by a signal; finished points are kept".to_string()))
    } else if outcome.failed > 0 {
        (RunStatus::Complete, Some(format!("{} point(s) failed validation or errored", outcome.failed)))
    } else {
        (RunStatus::Complete, None)
    };
    let run = writer.finish(status, detail)?;
    Ok(RunResult { run, status, outcome })
}

/// The row recording that benchmark `name` could not run at all on
/// `backend` (op `*`, no device), with the reason.
fn bench_skipped(
    run_id: &str,
    host: &str,
    backend: &str,
    name: &str,
    point: u32,
    reason: &str,
) -> Vec<crate::rows::Row> {
    let meta =
        RowMeta { run_id: run_id.into(), backend: backend.into(), device: "none".into(), host: host.into(), rank: 0 };
    let p = Point { bench: name.into(), op: "*".into(), ..Point::default() };
    crate::bench::runner::outcome_rows(&meta, point, &p, "none", &crate::bench::Outcome::Skipped(reason.into()))
}
