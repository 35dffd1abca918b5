//! Writing one run. [`RunWriter`] rewrites `results.parquet` and
//! `manifest.json` after every point, each through a temporary file, fsync
//! and rename, so at every instant both files on disk are complete: a run
//! killed at any moment keeps every finished point.

use std::fs;
use std::path::PathBuf;

use super::manifest::{now_rfc3339, Counts, FileEntry, Manifest, RunStatus};
use super::schema;
use super::store::{write_atomic, RunDir, RESULTS_FILE};
use crate::error::{Error, IoContext, Result};
use crate::vocab::rows::{Row, RowSink, Status};

/// Writes one run, durably after every point.
pub struct RunWriter {
    pub dir: RunDir,
    pub manifest: Manifest,
    rows: Vec<Row>,
    /// How many rows the results file on disk holds (None: not yet written).
    written_rows: Option<usize>,
    /// Other files of the run (imported logs, ...) with their hashes.
    extra_files: Vec<FileEntry>,
    /// Where a staged run moves when it finishes.
    final_path: Option<PathBuf>,
}

impl RunWriter {
    /// A writer for a run in `dir` (already created), which moves to
    /// `final_path` when it finishes if it was staged. Writes the first
    /// manifest at once.
    pub(crate) fn start(dir: RunDir, manifest: Manifest, final_path: Option<PathBuf>) -> Result<RunWriter> {
        let mut w =
            RunWriter { dir, manifest, rows: Vec::new(), written_rows: None, extra_files: Vec::new(), final_path };
        w.flush()?;
        Ok(w)
    }

    /// Rows written so far.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Store an extra file (e.g. an imported tool's original log) in the run.
    pub fn add_file(&mut self, name: &str, data: &[u8]) -> Result<()> {
        write_atomic(&self.dir.path.join(name), data)?;
        self.extra_files.retain(|f| f.path != name);
        self.extra_files.push(FileEntry::of(name, data));
        Ok(())
    }

    /// Rewrite results and manifest from what is held now.
    pub fn flush(&mut self) -> Result<()> {
        let results = self.dir.results_path();
        // The results file is rewritten only when rows were added since the
        // last write (finishing a run changes only its manifest).
        let entry = match (self.written_rows, self.manifest.files.first()) {
            (Some(n), Some(e)) if n == self.rows.len() && e.path == RESULTS_FILE => e.clone(),
            _ => {
                let tmp = results.with_extension("parquet.tmp");
                schema::write_parquet(&tmp, &self.rows)?;
                fs::File::open(&tmp).and_then(|f| f.sync_all()).at(&tmp)?;
                fs::rename(&tmp, &results).at(&results)?;
                self.written_rows = Some(self.rows.len());
                FileEntry::of(RESULTS_FILE, &fs::read(&results).at(&results)?)
            }
        };
        let mut files = vec![entry];
        files.extend(self.extra_files.iter().cloned());
        self.manifest.files = files;
        let mut counts = Counts { rows: self.rows.len() as u64, ..Counts::default() };
        // A point counts once, however many ranks sent rows for it; a point
        // failed on any rank counts as failed.
        let mut status_of: std::collections::BTreeMap<u32, Status> = std::collections::BTreeMap::new();
        for r in &self.rows {
            let s = status_of.entry(r.point).or_insert(r.status);
            if r.status == Status::Failed {
                *s = Status::Failed;
            }
        }
        for s in status_of.values() {
            counts.points += 1;
            match s {
                Status::Measured => counts.measured += 1,
                Status::Skipped => counts.skipped += 1,
                Status::Failed => counts.failed += 1,
            }
        }
        self.manifest.counts = counts;
        self.write_manifest()
    }

    fn write_manifest(&mut self) -> Result<()> {
        let json = self.manifest.sealed_json();
        write_atomic(&self.dir.manifest_path(), &json)
    }

    /// Mark the run finished with `status` and write everything one last time.
    pub fn finish(mut self, status: RunStatus, detail: Option<String>) -> Result<RunDir> {
        self.manifest.status = status;
        self.manifest.status_detail = detail;
        self.manifest.ended_at = Some(now_rfc3339());
        self.flush()?;
        if let Some(target) = self.final_path.clone() {
            if target.exists() {
                self.discard();
                return Err(Error::config("run id", format!("{} already exists", target.display())));
            }
            fs::rename(&self.dir.path, &target).at(&target)?;
            self.dir.path = target;
            self.final_path = None;
        }
        Ok(self.dir)
    }

    /// Remove a staged run that will not finish (an error or Ctrl-C during
    /// an import). A run created in place is never removed.
    pub fn discard(self) {
        if self.final_path.is_some() {
            let _ = fs::remove_dir_all(&self.dir.path);
        }
    }
}

impl RowSink for RunWriter {
    /// Rows carry their run's id: the one the archive gave it, whatever the
    /// producer (another MPI rank, say) was told before.
    fn write_point(&mut self, mut rows: Vec<Row>) -> Result<()> {
        for r in &mut rows {
            r.run_id.clone_from(&self.dir.id);
        }
        self.rows.extend(rows);
        self.flush()
    }

    fn add_file(&mut self, name: &str, data: &[u8]) -> Result<()> {
        RunWriter::add_file(self, name, data)
    }
}
