//! Writing one run. [`RunWriter`] rewrites `results.parquet` and
//! `manifest.json` after every point, each through a temporary file, fsync
//! and rename, so at every instant both files on disk are complete: a run
//! killed at any moment keeps every finished point.
//!
//! A staged run (an import: all or nothing, invisible until it is whole)
//! streams instead: each batch of rows becomes a row group of a temporary
//! Parquet file and is dropped, so that a file of millions of rows never
//! holds them all in memory; the file is completed and renamed at finish.

use std::fs;
use std::path::PathBuf;
use std::time::Instant;

use super::manifest::{now_rfc3339, Counts, FileEntry, Manifest, RunStatus};
use super::schema;
use super::store::{write_atomic, RunDir, RESULTS_FILE};
use crate::error::{Error, IoContext, Result};
use crate::vocab::rows::{Row, RowSink, Status};

/// The manifest's counts, kept up to date row by row.
#[derive(Default)]
struct Tally {
    rows: u64,
    /// Each point's status: failed if any of its rows failed.
    status_of: std::collections::BTreeMap<u32, Status>,
}

impl Tally {
    fn add(&mut self, rows: &[Row]) {
        self.rows += rows.len() as u64;
        for r in rows {
            let s = self.status_of.entry(r.point).or_insert(r.status);
            if r.status == Status::Failed {
                *s = Status::Failed;
            }
        }
    }

    fn counts(&self) -> Counts {
        let mut counts = Counts { rows: self.rows, ..Counts::default() };
        for s in self.status_of.values() {
            counts.points += 1;
            match s {
                Status::Measured => counts.measured += 1,
                Status::Skipped => counts.skipped += 1,
                Status::Failed => counts.failed += 1,
            }
        }
        counts
    }
}

/// Writes one run, durably after every point.
pub struct RunWriter {
    pub dir: RunDir,
    pub manifest: Manifest,
    /// The rows so far (a run written point by point; a staged run streams).
    rows: Vec<Row>,
    tally: Tally,
    /// A staged run's results, written a batch at a time.
    stream: Option<schema::ParquetRows>,
    /// How many rows the results file on disk holds (None: not yet written).
    written_rows: Option<usize>,
    /// Other files of the run (imported logs, ...) with their hashes.
    extra_files: Vec<FileEntry>,
    /// Where a staged run moves when it finishes.
    final_path: Option<PathBuf>,
    /// When the results were last rewritten, and what that took.
    last_flush: Option<(Instant, f64)>,
}

/// A run written point by point rewrites its results file (a Parquet file
/// is only readable once whole), so that a killed run leaves every point
/// written so far. Rewriting after every point costs time in the number of
/// rows so far, which made a 4-rank sweep of 450,000 rows spend most of its
/// time rewriting (200 ms a point by its end). The file is rewritten after a
/// point once this long has passed since the last rewrite, and never more
/// often than [`FLUSH_COST_SHARE`] of the time allows: a SIGKILL loses at
/// most the points of the last few seconds; Ctrl-C and errors lose nothing
/// (the run's end writes everything).
pub const FLUSH_EVERY_SECONDS: f64 = 1.0;

/// The most of a run's time that rewriting its results may take (5 %).
pub const FLUSH_COST_SHARE: f64 = 0.05;

impl RunWriter {
    /// A writer for a run in `dir` (already created), which moves to
    /// `final_path` when it finishes if it was staged. Writes the first
    /// manifest at once.
    pub(crate) fn start(dir: RunDir, manifest: Manifest, final_path: Option<PathBuf>) -> Result<RunWriter> {
        let mut w = RunWriter {
            dir,
            manifest,
            rows: Vec::new(),
            tally: Tally::default(),
            stream: None,
            written_rows: None,
            extra_files: Vec::new(),
            final_path,
            last_flush: None,
        };
        w.flush()?;
        Ok(w)
    }

    /// Store an extra file (e.g. an imported tool's original log) in the run.
    pub fn add_file(&mut self, name: &str, data: &[u8]) -> Result<()> {
        write_atomic(&self.dir.path.join(name), data)?;
        self.extra_files.retain(|f| f.path != name);
        self.extra_files.push(FileEntry::of(name, data));
        Ok(())
    }

    /// Whether a point's rows are due on disk now ([`FLUSH_EVERY_SECONDS`]).
    fn flush_due(&self) -> bool {
        self.last_flush
            .is_none_or(|(at, cost)| at.elapsed().as_secs_f64() >= FLUSH_EVERY_SECONDS.max(cost / FLUSH_COST_SHARE))
    }

    /// Rewrite results and manifest from what is held now.
    pub fn flush(&mut self) -> Result<()> {
        let started = Instant::now();
        let r = self.flush_now();
        self.last_flush = Some((Instant::now(), started.elapsed().as_secs_f64()));
        r
    }

    fn flush_now(&mut self) -> Result<()> {
        let results = self.dir.results_path();
        let tmp = results.with_extension("parquet.tmp");
        let entry = match (self.stream.take(), self.written_rows, self.manifest.files.first()) {
            (Some(stream), ..) => {
                stream.finish()?;
                Some(tmp.clone())
            }
            (None, Some(n), Some(e)) if n as u64 == self.tally.rows && e.path == RESULTS_FILE => None,
            (None, ..) => {
                schema::write_parquet(&tmp, &self.rows)?;
                Some(tmp.clone())
            }
        };
        let entry = match entry {
            Some(tmp) => {
                fs::File::open(&tmp).and_then(|f| f.sync_all()).at(&tmp)?;
                fs::rename(&tmp, &results).at(&results)?;
                self.written_rows = Some(self.tally.rows as usize);
                FileEntry::of(RESULTS_FILE, &fs::read(&results).at(&results)?)
            }
            None => self.manifest.files[0].clone(),
        };
        let mut files = vec![entry];
        files.extend(self.extra_files.iter().cloned());
        self.manifest.files = files;
        self.manifest.counts = self.tally.counts();
        self.write_manifest()
    }

    fn write_manifest(&mut self) -> Result<()> {
        let json = self.manifest.sealed_json();
        write_atomic(&self.dir.manifest_path(), &json)
    }

    /// Record what the run's telemetry samplers gave (written at [`Self::finish`]).
    pub fn set_telemetry(&mut self, telemetry: Vec<crate::vocab::telemetry::TelemetryInfo>) {
        self.manifest.telemetry = telemetry;
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
        self.tally.add(&rows);
        if self.final_path.is_some() {
            // Staged: a row group now, the manifest at finish.
            if self.stream.is_none() {
                self.stream =
                    Some(schema::ParquetRows::create(&self.dir.results_path().with_extension("parquet.tmp"))?);
            }
            return self.stream.as_mut().expect("opened above").write(&rows);
        }
        self.rows.extend(rows);
        if self.flush_due() {
            self.flush()?;
        }
        Ok(())
    }

    fn add_file(&mut self, name: &str, data: &[u8]) -> Result<()> {
        RunWriter::add_file(self, name, data)
    }
}
