//! `benchbook rerun`: measure again what a run measured, on this machine,
//! as a new run linked to the first; then say what differs in the
//! environment and how each point compares.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::analysis::compare::{compare, PointComparison};
use crate::analysis::environment::{environment_diff, EnvDifference};
use crate::archive::{Archive, RunStatus};
use crate::cli::print::{safe_path, terminal_safe, Render, Term};
use crate::cli::progress::{listener, Bar};
use crate::error::Result;
use crate::vocab::rows::RunOutcome;

/// The new run, what differs from the original's environment, and each
/// point's comparison (original = A, the re-run = B).
#[derive(Debug, Serialize)]
pub struct RerunOutput {
    pub original: String,
    pub run_id: String,
    pub run_dir: PathBuf,
    pub status: RunStatus,
    pub outcome: RunOutcome,
    pub environment: Vec<EnvDifference>,
    pub points: Vec<PointComparison>,
    /// The relative change a verdict needs (0.02 = 2 %).
    pub threshold: f64,
}

impl RerunOutput {
    /// As `run`: 130 interrupted, 1 when a point failed, 0 otherwise.
    pub fn exit_code(&self) -> u8 {
        super::run::exit_code(self.status, &self.outcome)
    }
}

pub fn rerun(archive: &Archive, query: &str, threshold: f64, quiet: bool) -> Result<RerunOutput> {
    let original = archive.resolve(query)?;
    let bar = Bar::unless(quiet);
    let result = crate::session::rerun(archive, &original, listener(&bar));
    if let Some(b) = &bar {
        b.finish();
    }
    let result = result?;
    let environment = environment_diff(&original.manifest()?, &result.run.manifest()?);
    let mut points = compare(&original.rows()?, &result.run.rows()?, threshold);
    points.sort_by(|a, b| (&a.bench, a.size_bytes, &a.label).cmp(&(&b.bench, b.size_bytes, &b.label)));
    Ok(RerunOutput {
        original: original.id,
        run_id: result.run.id,
        run_dir: result.run.path,
        status: result.status,
        outcome: result.outcome,
        environment,
        points,
        threshold,
    })
}

impl Render for RerunOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let s = terminal_safe;
        writeln!(t.out, "{} run {} repeats {}", self.status.as_str(), s(&self.run_id), s(&self.original))?;
        writeln!(t.out, "archive: {}", safe_path(&self.run_dir))?;
        writeln!(t.out)?;
        super::compare::write_environment(&mut *t.out, &self.environment, ["ORIGINAL", "RE-RUN"])?;
        writeln!(t.out)?;
        let pct = self.threshold * 100.0;
        writeln!(
            t.out,
            "points (ratio = original / re-run time: above 1 means the re-run is faster; verdicts need the 95 % interval beyond ±{pct} %):"
        )?;
        super::compare::write_points(&mut *t.out, &self.points, ["ORIGINAL", "RE-RUN"])
    }
}
