//! `benchbook report`: write the Markdown/HTML report of one or more runs.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::archive::Archive;
use crate::cli::print::{safe_path, Render, Term};
use crate::cli::ReportArgs;
use crate::error::Result;
use crate::report::ReportOptions;

/// The files written, every run's in turn.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct ReportOutput {
    pub files: Vec<PathBuf>,
}

/// Build and write the report of each run `a` names: into `--out` for one
/// run, `<out>/<run-id>/` for several, `reports/<run-id>/` by default.
pub fn report(archive: &Archive, a: &ReportArgs) -> Result<ReportOutput> {
    let opts = ReportOptions {
        format: a.format,
        spec: a.spec.clone(),
        png: a.png,
        templates: a.templates.clone(),
        no_verify: a.no_verify,
        ..ReportOptions::default()
    };
    let mut files = Vec::new();
    for q in &a.runs {
        let run = archive.resolve(q)?;
        let out = match &a.out {
            Some(o) if a.runs.len() == 1 => o.clone(),
            Some(o) => o.join(&run.id),
            None => PathBuf::from("reports").join(&run.id),
        };
        let r = crate::report::build(&run, &archive.root, &opts)?;
        files.extend(crate::report::write(&r, &out, &opts)?);
    }
    Ok(ReportOutput { files })
}

impl Render for ReportOutput {
    /// One path a line, on stdout, for scripts; nothing with `--quiet`.
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        if t.quiet {
            return Ok(());
        }
        for p in &self.files {
            writeln!(t.out, "{}", safe_path(p))?;
        }
        Ok(())
    }
}
