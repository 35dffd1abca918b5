//! Imported files as the source of one run: every file is parsed before
//! the run exists (a file that fails leaves the archive untouched), then
//! parsed again as its rows are written, a batch at a time: neither pass
//! holds a file's records, so a log of millions of lines imports in
//! bounded memory (`scripts/import_memory.sh`).

use std::path::PathBuf;

use super::{parse_each, Parsed, Record};
use crate::error::{Error, Result};
use crate::vocab::config::{ImportedFile, RunConfig};
use crate::vocab::facts::{BackendInfo, Probe};
use crate::vocab::progress::{PointEnd, Progress};
use crate::vocab::rows::{Row, RowSink, RunOutcome, Status};
use crate::vocab::source::{RowOrigin, RunOrigin};
use crate::vocab::source::{Source, SourceInfo};

/// Other tools' output files as the source of one run. [`Source::describe`]
/// parses every file before the run exists, so a file that fails leaves the
/// archive untouched.
pub struct ImportSource {
    files: Vec<PathBuf>,
    tool: Option<String>,
    parsed: Vec<Parsed>,
    originals: Vec<Vec<u8>>,
    /// The device and host the user says the files came from, for rows
    /// whose file does not name them (`import --device/--host`).
    device: Option<String>,
    host: Option<String>,
}

impl ImportSource {
    pub fn new(files: Vec<PathBuf>, tool: Option<String>) -> Self {
        ImportSource { files, tool, parsed: Vec::new(), originals: Vec::new(), device: None, host: None }
    }

    /// Name the device and host of rows whose file does not.
    pub fn with_origin(mut self, device: Option<String>, host: Option<String>) -> Self {
        self.device = device;
        self.host = host;
        self
    }

    /// What each file held (after the run was recorded): tool, version,
    /// warnings and `record_count`; the records themselves went to the
    /// archive and are not kept.
    pub fn into_parsed(self) -> Vec<Parsed> {
        self.parsed
    }

    fn tools(&self) -> Vec<String> {
        let mut t: Vec<String> = self.parsed.iter().map(|p| p.tool.clone()).collect();
        t.dedup();
        t
    }

    /// The archive row of one record of `p`, point number `point`.
    fn row(&self, run_id: &str, p: &Parsed, stored: &str, point: u32, r: &Record) -> Row {
        let iterations = r.iterations.unwrap_or(1).max(1);
        let measured = r.status == Status::Measured;
        let metric = r.params.metric.is_some();
        Row {
            run_id: run_id.into(),
            backend: p.backend.clone(),
            device: r.device.clone().or_else(|| self.device.clone()).unwrap_or_else(|| "unknown".into()),
            host: r.host.clone().or_else(|| self.host.clone()).unwrap_or_else(|| "unknown".into()),
            rank: 0,
            point,
            params: r.params.clone(),
            sample: measured.then_some(0),
            round: None,
            iterations: (measured && !metric).then_some(iterations),
            seconds: (measured && !metric).then_some(r.seconds_per_op * iterations as f64),
            value: if measured { r.value } else { None },
            timer: Some(p.tool.clone()),
            status: r.status,
            note: Some(format!("{} (line {})", r.note, r.line)),
            stop: None,
            source: RowOrigin::Import { tool: &p.tool, file: stored }.text(),
            telemetry: None,
        }
    }
}

impl Source for ImportSource {
    fn describe(&mut self) -> Result<SourceInfo> {
        self.parsed.clear();
        self.originals.clear();
        for path in &self.files {
            let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
            let (text, note) = super::decode(path, &data)?;
            let mut parsed = parse_each(path, &text, self.tool.as_deref(), &mut |_| {})?;
            parsed.warnings.extend(note);
            self.parsed.push(parsed);
            self.originals.push(data);
        }
        let tools = self.tools();
        let config = RunConfig::Import {
            import: self
                .parsed
                .iter()
                .zip(&self.files)
                .map(|(p, f)| ImportedFile {
                    file: f.display().to_string(),
                    tool: p.tool.clone(),
                    tool_version: p.tool_version.clone(),
                    command: p.command.clone(),
                    settings: p.settings.clone(),
                    records: p.record_count,
                    device_given: self.device.clone(),
                    host_given: self.host.clone(),
                    warnings: p.warnings.clone(),
                    family: p.family,
                    link: p.link.clone(),
                })
                .collect(),
        };
        let backends = self
            .parsed
            .iter()
            .map(|p| BackendInfo {
                name: p.backend.clone(),
                probe: Probe::Unavailable {
                    reason: format!("imported from {} output, not measured by benchbook", p.tool),
                },
                facts: None,
            })
            .collect();
        Ok(SourceInfo {
            kind: RunOrigin::Import(tools.clone()),
            config,
            backends,
            default_label: format!("import-{}", tools.join("-")),
        })
    }

    fn all_or_nothing(&self) -> bool {
        true
    }

    fn produce(&mut self, run_id: &str, sink: &mut dyn RowSink, progress: &dyn Progress) -> Result<RunOutcome> {
        let mut outcome = RunOutcome::default();
        progress.planned(self.parsed.iter().map(|p| p.record_count as u64).sum());
        for (i, (p, path)) in self.parsed.iter().zip(&self.files).enumerate() {
            if crate::vocab::interrupt::requested() {
                outcome.interrupted = true;
                return Ok(outcome);
            }
            let base = path.file_name().and_then(|n| n.to_str()).unwrap_or("input");
            let stored = crate::vocab::source::stored_file_name(i + 1, &sanitize(base));
            sink.add_file(&stored, &self.originals[i])?;
            // The second pass reads what the first read: the same bytes.
            let (text, _) = super::decode(path, &self.originals[i])?;
            let mut rows = Vec::new();
            let mut failed: Option<crate::error::Error> = None;
            let mut each = |r: Record| {
                if failed.is_some() {
                    return;
                }
                rows.push(self.row(run_id, p, &stored, outcome.points, &r));
                outcome.count(r.status);
                if rows.len() >= ROWS_PER_BATCH {
                    // A row group: the archive streams it and drops it.
                    if let Err(e) = sink.write_point(std::mem::take(&mut rows)) {
                        failed = Some(e);
                    }
                }
                progress.point_finished(
                    &r.params.label(),
                    match r.status {
                        Status::Measured => PointEnd::Measured,
                        Status::Skipped => PointEnd::Skipped(&r.note),
                        Status::Failed => PointEnd::Failed(&r.note),
                    },
                );
            };
            parse_each(path, &text, self.tool.as_deref(), &mut each)?;
            if let Some(e) = failed {
                return Err(e);
            }
            if crate::vocab::interrupt::requested() {
                outcome.interrupted = true;
                return Ok(outcome);
            }
            sink.write_point(rows)?;
        }
        Ok(outcome)
    }

    fn completion_note(&self) -> Option<String> {
        let warnings: usize = self.parsed.iter().map(|p| p.warnings.len()).sum();
        (warnings > 0).then(|| format!("{warnings} warning(s) while importing"))
    }
}

/// Rows handed to the archive at once: a Parquet row group.
const ROWS_PER_BATCH: usize = 16_384;

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' { c } else { '_' }).collect()
}
