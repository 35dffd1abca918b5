//! `benchbook run`: resolve the flags, measure (on this machine, or across
//! the ranks of an MPI job), write the report when asked, and say what
//! became of the run.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::archive::{Archive, RunStatus};
use crate::bench::BenchConfig;
use crate::cli::config::resolve_config;
use crate::cli::print::{safe_path, terminal_safe, Render, Term};
use crate::cli::progress::{listener, Bar};
use crate::cli::RunArgs;
use crate::error::Result;
use crate::report::ReportOptions;
use crate::session::RunResult;
use crate::vocab::progress::Progress;
use crate::vocab::rows::RunOutcome;

/// What a run left in the archive, and the report written for it.
#[derive(Debug, Serialize)]
pub struct RunOutput {
    pub run_id: String,
    pub status: RunStatus,
    pub run_dir: PathBuf,
    pub outcome: RunOutcome,
    /// The report's files, with `--report`.
    pub report: Vec<PathBuf>,
    /// Each failed point and why: printed whatever `--quiet` says.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<Failure>,
    /// `run gpu`: the PyTorch pass's run, or why it was not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch: Option<String>,
}

/// A point that failed, named by everything that sets it apart, and why.
#[derive(Debug, Serialize)]
pub struct Failure {
    pub point: String,
    pub reason: String,
}

impl RunOutput {
    /// 130 for an interrupted run, 1 when a point failed, 0 otherwise.
    pub fn exit_code(&self) -> u8 {
        exit_code(self.status, &self.outcome)
    }
}

/// A measuring command's exit code: 130 for an interrupted run, 1 when a
/// point failed, 0 otherwise.
pub(crate) fn exit_code(status: RunStatus, outcome: &RunOutcome) -> u8 {
    match status {
        RunStatus::Interrupted => 130,
        _ if outcome.failed > 0 => 1,
        _ => 0,
    }
}

/// The archive's turn (`run --take-turns`): an exclusive lock on
/// `ARCHIVE/.turns.lock`, held until the returned file is dropped. Waits,
/// saying so, while another run holds it; the kernel lets go of it when a
/// run dies, so a killed run never blocks the next. `BENCHBOOK_TURNS`
/// names another lock file: nodes on one host whose archive is a bucket
/// each have their own mirror, and share that file instead.
pub(crate) fn take_turn(archive: &Archive, quiet: bool) -> Result<std::fs::File> {
    let path = std::env::var_os("BENCHBOOK_TURNS").map_or_else(|| archive.root.join(".turns.lock"), Into::into);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| crate::error::Error::io(dir, e))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| crate::error::Error::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => return Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {}
        Err(std::fs::TryLockError::Error(e)) => return Err(crate::error::Error::io(&path, e)),
    }
    if !quiet {
        eprintln!("waiting for another --take-turns run to finish measuring ({})", safe_path(&path));
    }
    file.lock().map_err(|e| crate::error::Error::io(&path, e))?;
    Ok(file)
}

/// Run what `a` asks for. `None` on the ranks of an MPI job other than 0:
/// they measure, hand their rows to rank 0, and have nothing to say.
pub fn run(archive: &Archive, a: &RunArgs, quiet: bool) -> Result<Option<RunOutput>> {
    let cfg = resolve_config(a)?;
    let mpi = cfg.benches.iter().any(|b| b.is_mpi());
    // Held until the run is written. The ranks of an MPI job measure
    // together: one holding the turn while the others wait for it would
    // never reach their first collective.
    let _turn = match (a.out.take_turns, mpi) {
        (true, true) => {
            return Err(crate::error::Error::config(
                "--take-turns",
                "the ranks of an MPI job measure together; --take-turns is for separate runs that share CPUs \
                 (srun -N4 --ntasks-per-node=1 benchbook run memcpy --take-turns)",
            ))
        }
        (true, false) => Some(take_turn(archive, quiet)?),
        (false, _) => None,
    };
    // Only rank 0 of an MPI job draws progress; the others would interleave on the terminal.
    let bar = Bar::unless(quiet || (mpi && !rank0()));
    let label = a.out.label.as_deref();
    let result = if mpi {
        run_mpi(archive, &cfg, label, listener(&bar))
    } else {
        crate::session::run(archive, &cfg, label, listener(&bar)).map(Some)
    };
    // Off the terminal before anything else is printed, errors included.
    if let Some(b) = &bar {
        b.finish();
    }
    let Some(result) = result? else {
        return Ok(None);
    };
    let gpu_run = cfg.preset == crate::bench::Preset::Gpu && result.outcome.measured > 0 && !result.outcome.interrupted;
    let run_label = a.out.label.clone().unwrap_or_else(|| "gpu".into());
    let mut out = finish(archive, result, &a.out)?;
    if std::env::var_os(crate::host::placement::FLEET_ENV).is_some() {
        // A fleet's run joins its node's summary, which peers' gates read
        // (a cache: failing to write it only costs them a read).
        let _ = crate::analysis::fleet::summary::record_run(archive, &out.run_id);
    }
    if gpu_run && a.torch_seconds > 0.0 {
        // The script, its JSON and its log go to a scratch folder; the JSON is imported.
        let work = std::env::temp_dir().join(format!("benchbook-torch-{}", out.run_id));
        let bar = Bar::unless(quiet);
        let pass = crate::session::torch::torch_pass(
            archive,
            &cfg,
            &format!("{run_label}-torch"),
            a.torch_seconds,
            &work,
            listener(&bar),
        );
        if let Some(b) = &bar {
            b.finish();
        }
        // The sweep is archived whatever becomes of the pass.
        out.torch = Some(match pass {
            Ok(crate::session::torch::TorchPass::Imported { run, log }) => {
                format!("PyTorch on the same GPU: run {} (log {})", run.run.id, log.display())
            }
            Ok(crate::session::torch::TorchPass::NotRun(why)) => format!("PyTorch reference not measured: {why}"),
            Err(e) => format!("PyTorch reference not measured: {e}"),
        });
    }
    Ok(Some(out))
}

/// `run exec`: run a command `repeat` times as one run.
pub fn exec(archive: &Archive, a: &crate::cli::ExecArgs, quiet: bool) -> Result<RunOutput> {
    let mut params = crate::vocab::metrics::Params::new();
    for p in &a.params {
        let (k, v) =
            crate::vocab::metrics::param_from_arg(p).map_err(|e| crate::error::Error::config("--param", e.0))?;
        params.insert(k, v);
    }
    let spec = match &a.from_spec {
        // An instance of `run exec --partitions`: the spec as its parent resolved it.
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| crate::error::Error::io(path, e))?;
            serde_json::from_str(&text)
                .map_err(|e| crate::error::Error::config("--from-spec", format!("{}: {e}", path.display())))?
        }
        None => {
            let (partitions, partition_devices) =
                crate::cli::config::partition_plan(a.partitions, &a.partition_devices)?;
            crate::session::ExecSpec {
                command: a.command.clone(),
                repeat: a.repeat,
                params,
                ignore_failure: a.ignore_failure,
                partitions,
                partition_devices,
                telemetry_ms: a.telemetry_ms,
            }
        }
    };
    // Held until the run is written.
    let _turn = if a.out.take_turns { Some(take_turn(archive, quiet)?) } else { None };
    let bar = Bar::unless(quiet);
    let result = crate::session::exec(archive, &spec, a.out.label.as_deref(), listener(&bar));
    if let Some(b) = &bar {
        b.finish();
    }
    finish(archive, result?, &a.out)
}

/// Write the report a recording command asked for, and say what became of the run.
fn finish(archive: &Archive, result: RunResult, a: &crate::cli::RecordFlags) -> Result<RunOutput> {
    let mut report = Vec::new();
    if a.report && result.outcome.measured > 0 {
        let opts = ReportOptions { format: a.format, png: a.png, ..ReportOptions::default() };
        let out = a.reports_dir.join(&result.run.id);
        report = crate::report::make(std::slice::from_ref(&result.run), &archive.root, &out, &opts)?;
    }
    let failures = if result.outcome.failed > 0 { failures(&result.run) } else { Vec::new() };
    Ok(RunOutput {
        run_id: result.run.id,
        status: result.status,
        run_dir: result.run.path,
        outcome: result.outcome,
        report,
        failures,
        torch: None,
    })
}

/// The failed points of a run and their reasons, from its rows (a run
/// whose rows cannot be read says so instead).
fn failures(run: &crate::archive::RunDir) -> Vec<Failure> {
    use crate::vocab::labels::distinct_labels;
    use crate::vocab::rows::Status;
    let rows = match run.rows() {
        Ok(r) => r,
        Err(e) => return vec![Failure { point: "(the run's rows)".into(), reason: e.to_string() }],
    };
    let firsts: Vec<&crate::vocab::rows::Row> = {
        let mut seen = std::collections::BTreeSet::new();
        rows.iter().filter(|r| seen.insert((r.rank, r.point))).collect()
    };
    // A point may fail in a later round than its first: any failed row counts.
    let mut failed = std::collections::BTreeMap::new();
    for r in rows.iter().filter(|r| r.status == Status::Failed) {
        failed.entry((r.rank, r.point)).or_insert(r);
    }
    let labels = distinct_labels(&firsts.iter().map(|r| &r.params).collect::<Vec<_>>());
    firsts
        .iter()
        .zip(labels)
        .filter_map(|(r, point)| failed.get(&(r.rank, r.point)).map(|f| (f, point)))
        .map(|(f, point)| Failure { point, reason: f.note.clone().unwrap_or_else(|| "no reason recorded".into()) })
        .collect()
}

/// Whether this process is rank 0 of an MPI job, as the launcher tells it
/// (true outside any job).
fn rank0() -> bool {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .is_none_or(|r| r == "0")
}

#[cfg(feature = "mpi")]
fn run_mpi(
    archive: &Archive,
    cfg: &BenchConfig,
    label: Option<&str>,
    progress: &dyn Progress,
) -> Result<Option<RunResult>> {
    crate::session::run_mpi(archive, cfg, label, progress)
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(
    _archive: &Archive,
    cfg: &BenchConfig,
    _label: Option<&str>,
    _progress: &dyn Progress,
) -> Result<Option<RunResult>> {
    Err(crate::error::Error::config(
        "PRESET|BENCH",
        format!(
            "`{}` needs MPI, and this benchbook was built without it; rebuild with `cargo build --release --features mpi` (needs an MPI library, e.g. Debian's libopenmpi-dev, and libclang)",
            cfg.benches.iter().map(|b| b.name()).collect::<Vec<_>>().join(" ")
        ),
    ))
}

impl Render for RunOutput {
    /// On stderr, so that stdout holds only what `--json` asks for.
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        // A failed point is an error the user must see, --quiet or not.
        for f in &self.failures {
            writeln!(t.err, "error: {} failed: {}", terminal_safe(&f.point), terminal_safe(&f.reason))?;
        }
        if t.quiet {
            return Ok(());
        }
        let o = &self.outcome;
        writeln!(
            t.err,
            "{} run {}: {} points ({} measured, {} skipped, {} failed)",
            self.status.as_str(),
            terminal_safe(&self.run_id),
            o.points,
            o.measured,
            o.skipped,
            o.failed
        )?;
        if o.short_of_rounds > 0 {
            writeln!(
                t.err,
                "note: {} measured points got fewer than their minimum rounds before --budget ran out{}",
                o.short_of_rounds,
                o.budget_wanted_s
                    .map(|s| format!("; at the pace they ran, about --budget {s} would give every point its minimum"))
                    .unwrap_or_default()
            )?;
        }
        if o.over_budget > 0 {
            writeln!(
                t.err,
                "note: {} points skipped: --budget could not give them 3 rounds beside the points it measured{}; \
                 or --budget-prefers points measures more points in fewer rounds",
                o.over_budget,
                o.budget_wanted_s
                    .map(|s| format!("; about --budget {s} would include every point"))
                    .unwrap_or_default()
            )?;
        }
        writeln!(t.err, "archive: {}", safe_path(&self.run_dir))?;
        for p in &self.report {
            writeln!(t.err, "report:  {}", safe_path(p))?;
        }
        if let Some(torch) = &self.torch {
            writeln!(t.err, "{}", terminal_safe(torch))?;
        }
        Ok(())
    }
}
