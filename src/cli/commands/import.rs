//! `benchbook import`: other tools' output as one run in the archive.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::archive::Archive;
use crate::cli::print::{safe_path, terminal_safe, Render, Term};
use crate::cli::progress::{listener, Bar};
use crate::cli::ImportArgs;
use crate::error::Result;

/// The run the files became.
#[derive(Debug, Serialize)]
pub struct ImportOutput {
    pub run_id: String,
    pub run_dir: PathBuf,
    pub files: Vec<ImportedFile>,
}

/// One imported file: the format it was read as, its rows, what was odd.
#[derive(Debug, Serialize)]
pub struct ImportedFile {
    pub file: PathBuf,
    pub tool: String,
    pub rows: usize,
    pub warnings: Vec<String>,
}

pub fn import(archive: &Archive, a: &ImportArgs, quiet: bool) -> Result<ImportOutput> {
    let bar = Bar::unless(quiet);
    let source =
        crate::import::ImportSource::new(a.files.clone(), a.tool.clone()).with_origin(a.device.clone(), a.host.clone());
    let result = crate::session::import_from(archive, source, a.label.as_deref(), listener(&bar));
    if let Some(b) = &bar {
        b.finish();
    }
    let (run, parsed) = result?;
    let files = parsed
        .into_iter()
        .zip(&a.files)
        .map(|(p, f)| ImportedFile { file: f.clone(), tool: p.tool, rows: p.record_count, warnings: p.warnings })
        .collect();
    Ok(ImportOutput { run_id: run.run.id, run_dir: run.run.path, files })
}

impl Render for ImportOutput {
    /// On stderr; warnings even with `--quiet`.
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        for f in &self.files {
            let file = safe_path(&f.file);
            if !t.quiet {
                writeln!(t.err, "{file}: {} rows as {}", f.rows, terminal_safe(&f.tool))?;
            }
            for w in &f.warnings {
                writeln!(t.err, "warning: {file}: {}", terminal_safe(w))?;
            }
        }
        if !t.quiet {
            writeln!(t.err, "imported run {} ({})", terminal_safe(&self.run_id), safe_path(&self.run_dir))?;
        }
        Ok(())
    }
}
