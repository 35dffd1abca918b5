//! The one run lifecycle. Whatever makes the rows (a [`Source`]: a local
//! sweep, the ranks of an MPI job, an import), a run is born, fed and ended
//! here and only here:
//!
//! manifest begun → run folder created → rows handed to the sink after
//! every point (each flush leaves complete files on disk) → interrupt
//! honoured between points → final status and counts written.
//!
//! An all-or-nothing source (an import) is built in a staging folder that
//! becomes the run only when complete; an error or Ctrl-C removes it.

mod exec;
mod local;
pub mod partitions;
pub mod torch;

use std::path::PathBuf;

use crate::archive::{Archive, Manifest, RunDir, RunStatus};
use crate::bench::BenchConfig;
use crate::error::Result;
use crate::import::{ImportSource, Parsed};
use crate::vocab::config::RunConfig;
use crate::vocab::progress::Progress;
use crate::vocab::rows::{NullSink, RunOutcome};
use crate::vocab::source::Source;

pub use exec::{parse_metrics, ExecSource, ExecSpec, METRICS_ENV, WALL_METRIC};
pub use local::LocalSource;

/// What this node's GPUs report about their own health (passive: nothing
/// runs), or why nothing could be read.
pub use crate::backend::gpu_health;
pub use crate::backend::kernel_log::{xids as kernel_xids, KMSG};
pub use crate::backend::sysfs::{cpu_topology, has_interface, pci_numa_node, ports as ib_ports};

/// What a finished (or interrupted) run left in the archive.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub run: RunDir,
    pub status: RunStatus,
    pub outcome: RunOutcome,
}

/// Record one run of `source` into `archive`. Returns `None` in a process
/// that does not write the archive (MPI ranks other than 0).
pub fn record(
    archive: &Archive,
    source: &mut dyn Source,
    label: Option<&str>,
    progress: &dyn Progress,
) -> Result<Option<RunResult>> {
    record_repeat(archive, source, label, None, progress)
}

/// [`record`], for a run that repeats the run `repeats` names.
fn record_repeat(
    archive: &Archive,
    source: &mut dyn Source,
    label: Option<&str>,
    repeats: Option<&str>,
    progress: &dyn Progress,
) -> Result<Option<RunResult>> {
    let info = source.describe()?;
    let proposed = crate::archive::manifest::new_run_id(label.unwrap_or(&info.default_label));
    let run_id = source.agree_run_id(proposed)?;
    if !source.writes_archive() {
        source.produce(&run_id, &mut NullSink, progress)?;
        return Ok(None);
    }
    let what = info.kind.to_string();
    let mut manifest = Manifest::begin(&run_id, info.kind, info.config, info.backends);
    manifest.label = label.map(String::from);
    manifest.repeats = repeats.map(String::from);
    let staged = source.all_or_nothing();
    crate::vocab::interrupt::set_cancels(staged);
    let mut writer = if staged { archive.create_run_staged(manifest)? } else { archive.create_run(manifest)? };
    // The archive may have given the run a fresh suffix (the id was taken).
    let run_id = writer.dir.id.clone();
    match source.produce(&run_id, &mut writer, progress) {
        Ok(outcome) if staged && (outcome.interrupted || crate::vocab::interrupt::requested()) => {
            writer.discard();
            Err(crate::error::Error::Cancelled { what })
        }
        Ok(outcome) => {
            let (status, detail) = final_status(&outcome, source.completion_note());
            writer.set_telemetry(outcome.telemetry.clone());
            let run = writer.finish(status, detail)?;
            Ok(Some(RunResult { run, status, outcome }))
        }
        Err(e) if staged => {
            writer.discard();
            Err(e)
        }
        Err(e) => {
            let run = writer.dir.id.clone();
            let _ = writer.finish(RunStatus::Failed, Some(e.to_string()));
            Err(crate::error::Error::RunKept { run, error: Box::new(e) })
        }
    }
}

/// How a run that produced `outcome` ended, and the detail to record.
pub fn final_status(outcome: &RunOutcome, note: Option<String>) -> (RunStatus, Option<String>) {
    if outcome.interrupted {
        (RunStatus::Interrupted, Some("interrupted by a signal; finished points are kept".to_string()))
    } else if outcome.failed > 0 {
        let failed = format!("{} point(s) failed validation or errored", outcome.failed);
        (RunStatus::Complete, Some(note.map_or(failed.clone(), |n| format!("{failed}; {n}"))))
    } else {
        (RunStatus::Complete, note)
    }
}

/// Measure `cfg` on this machine's backends into `archive`, labelled `label`.
pub fn run(archive: &Archive, cfg: &BenchConfig, label: Option<&str>, progress: &dyn Progress) -> Result<RunResult> {
    cfg.validate()?;
    if !cfg.partitions.is_empty() {
        let mut source = partitions::PartitionSource::new(cfg.clone());
        return Ok(record(archive, &mut source, label, progress)?.expect("a partitioned run writes its archive"));
    }
    let mut source = LocalSource::new(cfg.clone());
    Ok(record(archive, &mut source, label, progress)?.expect("a local run writes its archive"))
}

/// Measure again, on this machine, exactly what the run `original`
/// measured (its resolved configuration, as its manifest recorded it), as
/// a new run whose manifest names the one it repeats. Imported runs cannot
/// be re-run (the error quotes the command their log holds), nor MPI runs
/// from here (the error gives the command line to launch again).
pub fn rerun(archive: &Archive, original: &crate::archive::RunDir, progress: &dyn Progress) -> Result<RunResult> {
    let m = original.manifest()?;
    let not = |why: String| crate::error::Error::NotRerunnable { run: original.id.clone(), why };
    match m.config {
        RunConfig::Import { import } => {
            let commands: Vec<String> =
                import.iter().filter_map(|f| f.command.as_ref().map(|c| format!("`{c}`"))).collect();
            let said = if commands.is_empty() {
                "its log does not record the command that produced it".to_string()
            } else {
                format!("the log's command: {}", commands.join("; "))
            };
            let tools = match &m.source {
                crate::vocab::source::RunOrigin::Import(t) => t.join(","),
                other => other.to_string(),
            };
            Err(not(format!("it was imported from {tools}, and benchbook does not run other tools; {said}")))
        }
        RunConfig::Exec(exec) => {
            let mut source = ExecSource::new(exec.exec);
            Ok(record_repeat(archive, &mut source, m.label.as_deref(), Some(&original.id), progress)?
                .expect("an exec run writes its archive"))
        }
        RunConfig::Gate(g) => Err(not(format!(
            "it is a gate's verdict on runs {}; gate the node again: `benchbook fleet gate {} --node {}`",
            g.gate.passes.join(", "),
            g.gate.fleet,
            g.gate.node
        ))),
        RunConfig::Mpi(_) => Err(not(format!(
            "it ran across MPI ranks; launch it again the same way: `{}`",
            crate::vocab::units::shell_join(&m.argv)
        ))),
        RunConfig::Sweep(cfg) => {
            cfg.validate()?;
            let mut source = LocalSource::new(*cfg);
            Ok(record_repeat(archive, &mut source, m.label.as_deref(), Some(&original.id), progress)?
                .expect("a local run writes its archive"))
        }
    }
}

/// Run `spec`'s command `spec.repeat` times as one run (`run exec`).
pub fn exec(archive: &Archive, spec: &ExecSpec, label: Option<&str>, progress: &dyn Progress) -> Result<RunResult> {
    spec.validate()?;
    if !spec.partitions.is_empty() {
        let mut source = partitions::PartitionSource::exec(spec.clone());
        return Ok(record(archive, &mut source, label, progress)?.expect("a partitioned run writes its archive"));
    }
    let mut source = ExecSource::new(spec.clone());
    Ok(record(archive, &mut source, label, progress)?.expect("an exec run writes its archive"))
}

/// Import other tools' output `files` into `archive` as one run. Every file
/// is parsed before anything is written: a file that fails leaves the
/// archive untouched.
pub fn import(
    archive: &Archive,
    files: &[PathBuf],
    tool: Option<&str>,
    label: Option<&str>,
    progress: &dyn Progress,
) -> Result<(RunResult, Vec<Parsed>)> {
    import_from(archive, ImportSource::new(files.to_vec(), tool.map(String::from)), label, progress)
}

/// [`import`] from a configured source (e.g. with the device and host the
/// files came from, [`ImportSource::with_origin`]).
pub fn import_from(
    archive: &Archive,
    mut source: ImportSource,
    label: Option<&str>,
    progress: &dyn Progress,
) -> Result<(RunResult, Vec<Parsed>)> {
    let result = record(archive, &mut source, label, progress)?.expect("an import writes its archive");
    Ok((result, source.into_parsed()))
}

/// Run the MPI benchmarks of `cfg` across the ranks of this job. Every rank
/// calls this; rank 0 writes the archive and gets `Some`.
#[cfg(feature = "mpi")]
pub fn run_mpi(
    archive: &Archive,
    cfg: &BenchConfig,
    label: Option<&str>,
    progress: &dyn Progress,
) -> Result<Option<RunResult>> {
    cfg.validate()?;
    let mut source = crate::backend::mpi::MpiSource::new(cfg.clone())?;
    record(archive, &mut source, label, progress)
}
