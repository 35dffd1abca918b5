//! The catalog: one Parquet file (`<archive>/catalog.parquet`) with a row
//! per run, holding the manifest facts that select runs (label, node,
//! fleet, job, time, status, source, commit) and what is known of its
//! results file (size, modification time, and whether its sha256 was
//! checked against the manifest). Listing or filtering 10^4 runs then
//! reads one file and stats the run folders, instead of parsing 10^4
//! manifests.
//!
//! It is a cache, never the truth: `runs/<id>/` stays the archive. An
//! entry is reused only while its manifest's and results file's size and
//! modification time are the ones it recorded; anything else is read
//! again, and runs that are gone leave. A results file hashed once is not
//! hashed again until it changes (`verify` always re-hashes). Deleting the
//! catalog loses nothing.
//!
//! Why a catalog beside `runs/<id>/` rather than hive-style folders
//! (`node=…/fleet=…/`): a run belongs to one folder but is selected by many
//! facts (node, fleet, label, job, time), and a run's id must stay its
//! path for every command, bundle and report that names it; a catalog
//! answers any of those filters with one read, and other tools read it
//! (and each run's Parquet) as they are.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::UNIX_EPOCH;

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use super::store::{Archive, RunDir};
use crate::error::{Error, Result};

/// The catalog's file, in the archive root.
pub const CATALOG_FILE: &str = "catalog.parquet";
/// The catalog layout's version (its Parquet metadata); another version
/// is rebuilt, never read.
pub const CATALOG_VERSION: u32 = 1;
const VERSION_KEY: &str = "benchbook.catalog_version";

/// One run, as the catalog holds it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CatalogEntry {
    pub run_id: String,
    pub label: Option<String>,
    /// Slurm's node name, else the host name.
    pub node: Option<String>,
    pub fleet: Option<String>,
    pub job_id: Option<String>,
    pub host: Option<String>,
    pub source: Option<String>,
    pub started_at: Option<String>,
    pub status: Option<String>,
    pub git_commit: Option<String>,
    pub schema_version: Option<u32>,
    pub rows: Option<u64>,
    pub points: Option<u32>,
    /// The benchmarks its configuration asked for, comma-separated.
    pub benches: Option<String>,
    /// The sha256 the manifest records for `results.parquet`.
    pub results_sha256: Option<String>,
    /// What the catalog saw of the two files (size, mtime in ns).
    pub manifest_stamp: String,
    pub results_stamp: String,
    /// The results file hashed and found equal to `results_sha256`, at
    /// `results_stamp`.
    pub verified: bool,
    /// Why the run cannot be read (a broken manifest, a changed file).
    pub damaged: Option<String>,
}

/// A file's size and modification time, as one comparable string.
fn stamp(path: &Path) -> String {
    match fs::metadata(path) {
        Ok(m) => {
            let ns = m.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
            format!("{}:{ns}", m.len())
        }
        Err(_) => "missing".into(),
    }
}

fn entry_of(run: &RunDir, manifest_stamp: String, results_stamp: String) -> CatalogEntry {
    let mut e = CatalogEntry { run_id: run.id.clone(), manifest_stamp, results_stamp, ..CatalogEntry::default() };
    match run.manifest() {
        Ok(m) => {
            e.node = Some(m.node().to_string());
            e.fleet = m.fleet().map(String::from);
            e.job_id = m.placement.as_ref().and_then(|p| p.job_id.clone());
            e.host = Some(m.host.hostname.clone());
            e.source = Some(m.source.to_string());
            e.started_at = Some(m.started_at.clone());
            e.status = Some(m.status.as_str().to_string());
            e.git_commit = m.tool.git_commit.clone();
            e.schema_version = Some(m.schema_version);
            e.rows = Some(m.counts.rows);
            e.points = Some(m.counts.points);
            e.benches = m.config.benches().map(|b| b.iter().map(|b| b.name()).collect::<Vec<_>>().join(","));
            e.results_sha256 = m.files.iter().find(|f| f.path == super::RESULTS_FILE).map(|f| f.sha256.clone());
            e.label = m.label;
        }
        Err(err) => e.damaged = Some(err.to_string()),
    }
    e
}

/// Every run of an archive, from the catalog where it is current.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub entries: Vec<CatalogEntry>,
    /// Whether anything changed since it was read (then it is written back).
    changed: bool,
}

impl Catalog {
    /// A catalog of these entries (to hand on as a table).
    pub fn of(entries: Vec<CatalogEntry>) -> Catalog {
        Catalog { entries, changed: false }
    }

    /// The archive's catalog, brought up to date with its `runs/` folder
    /// (and written back when anything changed). A catalog that cannot be
    /// read is rebuilt.
    pub fn open(archive: &Archive) -> Result<Catalog> {
        let path = archive.root.join(CATALOG_FILE);
        let old: BTreeMap<String, CatalogEntry> =
            read(&path).unwrap_or_default().into_iter().map(|e| (e.run_id.clone(), e)).collect();
        let runs = archive.runs()?;
        let mut changed = old.len() != runs.len();
        let mut entries = Vec::with_capacity(runs.len());
        for run in &runs {
            let (ms, rs) = (stamp(&run.manifest_path()), stamp(&run.results_path()));
            match old.get(&run.id) {
                Some(e) if e.manifest_stamp == ms && e.results_stamp == rs => entries.push(e.clone()),
                _ => {
                    changed = true;
                    entries.push(entry_of(run, ms, rs));
                }
            }
        }
        let mut c = Catalog { entries, changed };
        c.save(archive)?;
        Ok(c)
    }

    /// Write the catalog back if it changed (atomically). An archive that
    /// cannot be written (read-only media) keeps working without it.
    pub fn save(&mut self, archive: &Archive) -> Result<()> {
        if !self.changed {
            return Ok(());
        }
        let path = archive.root.join(CATALOG_FILE);
        let mut df = self.dataframe()?;
        let tmp = archive.root.join(format!(".{CATALOG_FILE}.{}", std::process::id()));
        let written = fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e)).and_then(|f| {
            ParquetWriter::new(f)
                .with_key_value_metadata(Some(KeyValueMetadata::from_static(vec![(
                    VERSION_KEY.to_string(),
                    CATALOG_VERSION.to_string(),
                )])))
                .finish(&mut df)
                .map_err(|e| Error::io(&tmp, std::io::Error::other(e.to_string())))
        });
        match written.and_then(|_| fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))) {
            Ok(()) => self.changed = false,
            Err(_) => {
                let _ = fs::remove_file(&tmp);
            }
        }
        Ok(())
    }

    /// Hash each of `ids`' results file not yet checked at its current
    /// size and time, against the sha256 its manifest records; a mismatch
    /// marks the run damaged. Returns the damaged among `ids`, with why.
    pub fn verify(&mut self, archive: &Archive, ids: &[&str]) -> Vec<(String, String)> {
        let ids: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
        let mut damaged = Vec::new();
        for e in self.entries.iter_mut().filter(|e| ids.contains(e.run_id.as_str())) {
            if e.damaged.is_none() && !e.verified {
                let path = archive.runs_dir().join(&e.run_id).join(super::RESULTS_FILE);
                match (fs::read(&path), &e.results_sha256) {
                    (Ok(data), Some(want)) => {
                        let found = super::manifest::sha256_hex(&data);
                        if &found == want {
                            e.verified = true;
                        } else {
                            e.damaged = Some(
                                Error::Tampered { path, run: e.run_id.clone(), expected: want.clone(), found }
                                    .to_string(),
                            );
                        }
                    }
                    // A run of a version that did not hash: nothing to check against.
                    (Ok(_), None) => e.verified = true,
                    (Err(err), _) => e.damaged = Some(Error::io(&path, err).to_string()),
                }
                self.changed = true;
            }
            if let Some(why) = &e.damaged {
                damaged.push((e.run_id.clone(), why.clone()));
            }
        }
        damaged
    }

    /// The catalog as a table: one row per run, a column per field.
    pub fn dataframe(&self) -> Result<DataFrame> {
        let e = &self.entries;
        let s = |name: &str, f: &dyn Fn(&CatalogEntry) -> Option<String>| {
            Column::new(name.into(), e.iter().map(f).collect::<Vec<_>>())
        };
        let cols = vec![
            Column::new("run_id".into(), e.iter().map(|x| x.run_id.clone()).collect::<Vec<_>>()),
            s("label", &|x| x.label.clone()),
            s("node", &|x| x.node.clone()),
            s("fleet", &|x| x.fleet.clone()),
            s("job_id", &|x| x.job_id.clone()),
            s("host", &|x| x.host.clone()),
            s("source", &|x| x.source.clone()),
            s("started_at", &|x| x.started_at.clone()),
            s("status", &|x| x.status.clone()),
            s("git_commit", &|x| x.git_commit.clone()),
            Column::new("schema_version".into(), e.iter().map(|x| x.schema_version).collect::<Vec<_>>()),
            Column::new("rows".into(), e.iter().map(|x| x.rows).collect::<Vec<_>>()),
            Column::new("points".into(), e.iter().map(|x| x.points).collect::<Vec<_>>()),
            s("benches", &|x| x.benches.clone()),
            s("results_sha256", &|x| x.results_sha256.clone()),
            Column::new("manifest_stamp".into(), e.iter().map(|x| x.manifest_stamp.clone()).collect::<Vec<_>>()),
            Column::new("results_stamp".into(), e.iter().map(|x| x.results_stamp.clone()).collect::<Vec<_>>()),
            Column::new("verified".into(), e.iter().map(|x| x.verified).collect::<Vec<_>>()),
            s("damaged", &|x| x.damaged.clone()),
        ];
        DataFrame::new(e.len(), cols).map_err(|err| Error::io(CATALOG_FILE, std::io::Error::other(err.to_string())))
    }
}

/// The entries of a catalog file, or `None` when it is missing, of
/// another version, or unreadable (then it is rebuilt).
fn read(path: &Path) -> Option<Vec<CatalogEntry>> {
    let file = fs::File::open(path).ok()?;
    let mut reader = ParquetReader::new(file);
    let meta = reader.get_metadata().ok()?.key_value_metadata().clone()?;
    let version = meta.iter().find(|kv| kv.key == VERSION_KEY)?.value.clone()?;
    if version != CATALOG_VERSION.to_string() {
        return None;
    }
    let df = reader.finish().ok()?;
    use super::schema::columns::{strings, u32s, u64s};
    let strs = |name: &str| strings(&df, name).ok();
    let n = df.height();
    let (
        run_id,
        label,
        node,
        fleet,
        job_id,
        host,
        source,
        started_at,
        status,
        git_commit,
        sha,
        ms,
        rs,
        damaged,
        benches,
    ) = (
        strs("run_id")?,
        strs("label")?,
        strs("node")?,
        strs("fleet")?,
        strs("job_id")?,
        strs("host")?,
        strs("source")?,
        strs("started_at")?,
        strs("status")?,
        strs("git_commit")?,
        strs("results_sha256")?,
        strs("manifest_stamp")?,
        strs("results_stamp")?,
        strs("damaged")?,
        strs("benches")?,
    );
    let (points, schema_version, rows) =
        (u32s(&df, "points").ok()?, u32s(&df, "schema_version").ok()?, u64s(&df, "rows").ok()?);
    let verified: Vec<Option<bool>> = df.column("verified").ok()?.bool().ok()?.iter().collect();
    (0..n)
        .map(|i| {
            Some(CatalogEntry {
                run_id: run_id[i].clone()?,
                label: label[i].clone(),
                node: node[i].clone(),
                fleet: fleet[i].clone(),
                job_id: job_id[i].clone(),
                host: host[i].clone(),
                source: source[i].clone(),
                started_at: started_at[i].clone(),
                status: status[i].clone(),
                git_commit: git_commit[i].clone(),
                schema_version: schema_version[i],
                rows: rows[i],
                points: points[i],
                benches: benches[i].clone(),
                results_sha256: sha[i].clone(),
                manifest_stamp: ms[i].clone()?,
                results_stamp: rs[i].clone()?,
                verified: verified[i].unwrap_or(false),
                damaged: damaged[i].clone(),
            })
        })
        .collect()
}
