//! Where a run's rows come from. A local sweep, the ranks of an MPI job,
//! an import of other tools' logs and (soon) a script run by `run exec` are
//! all sources; the session owns the one lifecycle they share (manifest,
//! sink, flush per point, interrupt, final status), so they differ only in
//! how they make rows.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::vocab::config::RunConfig;
use crate::vocab::facts::BackendInfo;
use crate::vocab::progress::Progress;
use crate::vocab::rows::{RowSink, RunOutcome};

/// What a source says before its first row, for the manifest.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// Where the run's rows come from.
    pub kind: RunOrigin,
    /// The resolved configuration, as recorded in the manifest.
    pub config: RunConfig,
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

/// Where a run's rows came from (the manifest's `source`): measured by
/// benchbook, a `run exec` command, or other tools' files. Stored as the
/// text it always was (`native`, `exec`, `import:<tool>[,<tool>…]`); parsed
/// here, once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOrigin {
    Native,
    Exec,
    Import(Vec<String>),
    /// A `fleet gate` verdict (manifest v9).
    Gate,
    /// A source this version does not know (a later version's, or a
    /// synthetic archive's), kept as written so nothing is lost on rewrite.
    Other(String),
}

impl RunOrigin {
    /// Read the stored text.
    pub fn parse(text: &str) -> RunOrigin {
        match text {
            "native" => RunOrigin::Native,
            "exec" => RunOrigin::Exec,
            "gate" => RunOrigin::Gate,
            t => match t.strip_prefix(IMPORT_PREFIX) {
                Some(tools) => RunOrigin::Import(tools.split(',').map(String::from).collect()),
                None => RunOrigin::Other(t.to_string()),
            },
        }
    }

    pub fn is_import(&self) -> bool {
        matches!(self, RunOrigin::Import(_))
    }
}

impl std::fmt::Display for RunOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunOrigin::Native => f.write_str("native"),
            RunOrigin::Exec => f.write_str("exec"),
            RunOrigin::Gate => f.write_str("gate"),
            RunOrigin::Import(tools) => write!(f, "{IMPORT_PREFIX}{}", tools.join(",")),
            RunOrigin::Other(text) => f.write_str(text),
        }
    }
}

impl Serialize for RunOrigin {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RunOrigin {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Ok(RunOrigin::parse(&String::deserialize(d)?))
    }
}

const IMPORT_PREFIX: &str = "import:";

/// The name the `n`-th imported file of a run (from 1) is kept under in
/// it: `source-<n>-<name>`.
pub fn stored_file_name(n: usize, name: &str) -> String {
    format!("source-{n}-{name}")
}

/// The `n` and original name of a [`stored_file_name`].
pub fn stored_file_parts(stored: &str) -> Option<(usize, &str)> {
    let (n, name) = stored.strip_prefix("source-")?.split_once('-')?;
    Some((n.parse().ok()?, name))
}

/// Where one row came from (the `source` column): `native`, or the
/// imported tool and the name its file is kept under in the run
/// (`import:<tool>:<file>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOrigin<'a> {
    Native,
    Import { tool: &'a str, file: &'a str },
}

impl<'a> RowOrigin<'a> {
    /// Read a row's `source` (a missing one is native).
    pub fn parse(text: Option<&'a str>) -> RowOrigin<'a> {
        let Some(rest) = text.and_then(|t| t.strip_prefix(IMPORT_PREFIX)) else {
            return RowOrigin::Native;
        };
        let (tool, file) = rest.split_once(':').unwrap_or((rest, ""));
        RowOrigin::Import { tool, file }
    }

    /// The text stored in the `source` column.
    pub fn text(&self) -> String {
        match self {
            RowOrigin::Native => "native".into(),
            RowOrigin::Import { tool, file } => format!("{IMPORT_PREFIX}{tool}:{file}"),
        }
    }

    /// The tool an imported row was read by.
    pub fn tool(&self) -> Option<&'a str> {
        match self {
            RowOrigin::Native => None,
            RowOrigin::Import { tool, .. } => Some(tool),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_read_back_what_they_write() {
        for text in ["native", "exec", "import:nccl-tests", "import:perftest,osu,nccl-tests", "synthetic"] {
            assert_eq!(RunOrigin::parse(text).to_string(), text);
        }
        assert_eq!(RunOrigin::parse("import:a,b"), RunOrigin::Import(vec!["a".into(), "b".into()]));
        assert_eq!(RunOrigin::parse("synthetic"), RunOrigin::Other("synthetic".into()));
        let r = RowOrigin::parse(Some("import:osu:source-1-osu_bw.txt"));
        assert_eq!(r, RowOrigin::Import { tool: "osu", file: "source-1-osu_bw.txt" });
        assert_eq!(r.text(), "import:osu:source-1-osu_bw.txt");
        assert_eq!(RowOrigin::parse(Some("native")), RowOrigin::Native);
        assert_eq!(RowOrigin::parse(None).tool(), None);
        assert_eq!(stored_file_parts(&stored_file_name(12, "osu-bw.txt")), Some((12, "osu-bw.txt")));
        assert_eq!(stored_file_parts("results.parquet"), None);
    }
}
