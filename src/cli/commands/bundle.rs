//! `benchbook bundle` and `benchbook unbundle`: runs as one portable,
//! hash-checked file (see [`crate::archive::bundle`]).

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::archive::bundle::{self, Unbundled};
use crate::archive::Archive;
use crate::cli::print::{safe_path, terminal_safe, Render, Term};
use crate::error::Result;

/// What went into the bundle.
#[derive(Debug, Serialize)]
pub struct BundleOutput {
    pub file: PathBuf,
    pub bytes: u64,
    pub runs: Vec<String>,
    /// Files in all, reports included.
    pub files: usize,
}

pub fn bundle(archive: &Archive, queries: &[String], reports: &Path, out: &Path) -> Result<BundleOutput> {
    let runs = queries.iter().map(|q| archive.resolve(q)).collect::<Result<Vec<_>>>()?;
    let index = bundle::bundle(&runs, reports, out)?;
    Ok(BundleOutput {
        file: out.to_path_buf(),
        bytes: std::fs::metadata(out).map(|m| m.len()).unwrap_or(0),
        files: index.runs.iter().map(|r| r.files.len() + r.report_files.len()).sum(),
        runs: index.runs.into_iter().map(|r| r.run_id).collect(),
    })
}

impl Render for BundleOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        if !t.quiet {
            writeln!(
                t.err,
                "bundled {} runs ({} files, {} bytes) into {}",
                self.runs.len(),
                self.files,
                self.bytes,
                safe_path(&self.file)
            )?;
        }
        Ok(())
    }
}

/// What unpacking did with each run.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct UnbundleOutput {
    pub runs: Vec<Unbundled>,
}

pub fn unbundle(archive: &Archive, file: &Path, reports: &Path) -> Result<UnbundleOutput> {
    Ok(UnbundleOutput { runs: bundle::unbundle(file, archive, reports)? })
}

impl Render for UnbundleOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        for r in &self.runs {
            let what = if r.action == "added" { "added" } else { "already in the archive, identical" };
            let report = r.report.as_ref().map(|p| format!("; report in {}", safe_path(p))).unwrap_or_default();
            writeln!(t.out, "{}: {what} ({} files{report})", terminal_safe(&r.run_id), r.files)?;
        }
        Ok(())
    }
}
