//! Where a run's rows come from. A local sweep, the ranks of an MPI job,
//! an import of other tools' logs and (soon) a script run by `run exec` are
//! all sources; the session owns the one lifecycle they share (manifest,
//! sink, flush per point, interrupt, final status), so they differ only in
//! how they make rows.

use crate::error::Result;
use crate::vocab::facts::BackendInfo;
use crate::vocab::progress::Progress;
use crate::vocab::rows::{RowSink, RunOutcome};

/// What a source says before its first row, for the manifest.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// `native`, or `import:<tool>[,<tool>…]`.
    pub kind: String,
    /// The resolved configuration, as recorded in the manifest.
    pub config: serde_json::Value,
    /// What each backend found (imports: the tools, as unavailable).
    pub backends: Vec<BackendInfo>,
    /// The run id's label when the user gives none (`quick`, `mpi`, ...).
    pub default_label: String,
}

/// A producer of rows for one run.
pub trait Source {
    /// Everything the manifest needs before any row exists. A source that
    /// can fail (an unreadable log) fails here, before the run is created.
    fn describe(&mut self) -> Result<SourceInfo>;

    /// Whether this process writes the archive (an MPI job: rank 0 only).
    fn writes_archive(&self) -> bool {
        true
    }

    /// Whether the run is all or nothing (an import): it is then built in a
    /// staging folder and renamed into place only when complete, so an
    /// error, Ctrl-C or a kill leaves no run behind. Measurements are not:
    /// their finished points are kept.
    fn all_or_nothing(&self) -> bool {
        false
    }

    /// The run id every process uses (an MPI job: rank 0's).
    fn agree_run_id(&mut self, proposed: String) -> Result<String> {
        Ok(proposed)
    }

    /// Make the rows, handing each finished point to `sink` at once.
    fn produce(&mut self, run_id: &str, sink: &mut dyn RowSink, progress: &dyn Progress) -> Result<RunOutcome>;

    /// A line for the manifest's status detail when the run completes with
    /// nothing failed (e.g. import warnings).
    fn completion_note(&self) -> Option<String> {
        None
    }
}
