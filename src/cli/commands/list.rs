//! `benchbook list`: the runs in the archive, from its catalog
//! ([`crate::archive::catalog`]: one file, brought up to date from the run
//! folders, so 10^4 runs list without parsing 10^4 manifests), filtered by
//! node, fleet or label. No results file is opened.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::archive::{Archive, Catalog, RunStatus, ScanFilter, MANIFEST_FILE};
use crate::cli::print::{cell, safe_path, table, terminal_safe, write_table, Render, Term};
use crate::error::Result;

/// The runs, oldest first; as JSON, an array of [`Listed`].
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct ListOutput {
    pub runs: Vec<Listed>,
    /// Where runs live, for the hint when there is none.
    #[serde(skip)]
    pub runs_dir: PathBuf,
    /// Staging folders of imports that were killed before they finished.
    #[serde(skip)]
    pub stale: Vec<PathBuf>,
}

/// One run directory.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Listed {
    Run {
        run_id: String,
        status: RunStatus,
        started_at: String,
        host: String,
        source: String,
        label: Option<String>,
        /// The `benches` of the run's configuration, as stored.
        benches: Option<Vec<crate::vocab::benches::Bench>>,
        points: u32,
        rows: u64,
    },
    /// A run folder whose manifest is missing, unreadable or edited:
    /// `status` is `damaged` and `error` says why.
    Damaged { run_id: String, status: &'static str, error: String },
}

pub fn list(archive: &Archive, filter: &ScanFilter) -> Result<ListOutput> {
    let catalog = Catalog::open(archive)?;
    let runs = catalog
        .entries
        .iter()
        .filter(|e| filter.keeps(e))
        .map(|e| {
            let status = match e.status.as_deref().and_then(RunStatus::parse) {
                // A run still "running" may have been killed: its manifest knows.
                Some(RunStatus::Running) => {
                    let dir = archive.run_dir(&e.run_id);
                    dir.manifest().ok().map(|m| m.effective_status())
                }
                other => other,
            };
            match (&e.damaged, status) {
                (None, Some(status)) => Listed::Run {
                    run_id: e.run_id.clone(),
                    status,
                    started_at: e.started_at.clone().unwrap_or_default(),
                    host: e.host.clone().unwrap_or_default(),
                    source: e.source.clone().unwrap_or_default(),
                    label: e.label.clone(),
                    benches: e
                        .benches
                        .as_ref()
                        .map(|b| b.split(',').filter_map(crate::vocab::benches::Bench::of).collect()),
                    points: e.points.unwrap_or(0),
                    rows: e.rows.unwrap_or(0),
                },
                (damaged, _) => {
                    let error = match damaged {
                        _ if !archive.runs_dir().join(&e.run_id).join(MANIFEST_FILE).exists() => format!(
                            "no {MANIFEST_FILE}: the run cannot be read or trusted (`benchbook verify {}`)",
                            e.run_id
                        ),
                        Some(why) => why.clone(),
                        None => "its manifest has no status".into(),
                    };
                    Listed::Damaged { run_id: e.run_id.clone(), status: "damaged", error }
                }
            }
        })
        .collect();
    Ok(ListOutput { runs, runs_dir: archive.runs_dir(), stale: archive.stale_staging() })
}

impl Render for ListOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        for s in &self.stale {
            writeln!(
                t.err,
                "note: {} is an import that was killed before it finished; it is not a run, and can be removed",
                safe_path(s)
            )?;
        }
        if self.runs.is_empty() {
            return writeln!(t.err, "no runs in {}; `benchbook run quick` makes one", safe_path(&self.runs_dir));
        }
        let mut tab = table(&["RUN", "STATUS", "STARTED", "POINTS", "ROWS", "HOST / SOURCE"], &[3, 4]);
        // Host and source stand a little apart from the numbers.
        if let Some(c) = tab.column_mut(5) {
            c.set_padding((1, 1));
        }
        for run in &self.runs {
            tab.add_row(match run {
                Listed::Run { run_id, status, started_at, host, source, points, rows, .. } => vec![
                    cell(run_id),
                    status.as_str().to_string(),
                    cell(started_at),
                    points.to_string(),
                    rows.to_string(),
                    format!("{} / {}", terminal_safe(host), terminal_safe(source)),
                ],
                Listed::Damaged { run_id, status, error } => {
                    vec![cell(run_id), status.to_string(), String::new(), String::new(), String::new(), cell(error)]
                }
            });
        }
        write_table(&mut *t.out, &tab)
    }
}
