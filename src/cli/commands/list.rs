//! `benchbook list`: the runs in the archive, from their manifests (no
//! Parquet file is opened).

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::archive::{Archive, RunStatus, MANIFEST_FILE};
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

pub fn list(archive: &Archive) -> Result<ListOutput> {
    let runs = archive
        .runs()?
        .into_iter()
        .map(|r| match r.manifest() {
            Ok(m) => Listed::Run {
                run_id: r.id,
                status: m.effective_status(),
                started_at: m.started_at,
                host: m.host.hostname,
                source: m.source.to_string(),
                label: m.label,
                benches: m.config.benches().map(|b| b.to_vec()),
                points: m.counts.points,
                rows: m.counts.rows,
            },
            Err(e) => {
                let error = if r.manifest_path().exists() {
                    e.to_string()
                } else {
                    format!("no {MANIFEST_FILE}: the run cannot be read or trusted (`benchbook verify {}`)", r.id)
                };
                Listed::Damaged { run_id: r.id, status: "damaged", error }
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
