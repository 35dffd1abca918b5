//! Runs on disk: the archive's folders, finding runs, and reading a run's
//! manifest and rows with their hashes checked. Writing is
//! [`super::writer::RunWriter`]'s.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::manifest::{content_sha256, Manifest, RunStatus, READABLE_MANIFEST_VERSIONS, SEAL_FIELD};
use super::schema;
use super::writer::RunWriter;
use crate::error::{Error, IoContext, Result};
use crate::vocab::rows::Row;

pub const RESULTS_FILE: &str = "results.parquet";
pub const MANIFEST_FILE: &str = "manifest.json";
/// Prefix of the folder an all-or-nothing run is built in.
pub const STAGING_PREFIX: &str = ".staging-";

/// Whether a file in a run's folder is not one of the run's files: a
/// temporary file mid-write, or what a bucket's mirror keeps beside a run
/// (its node's heartbeat).
pub fn is_side_file(name: &str) -> bool {
    name.ends_with(".tmp") || name == super::remote::HEARTBEAT_FILE
}

/// Write `data` to `path` atomically: temp file in the same directory,
/// fsync, rename over the target.
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    let tmp = path.with_extension(format!("{}.tmp", path.extension().and_then(|e| e.to_str()).unwrap_or("")));
    let mut f = fs::File::create(&tmp).at(&tmp)?;
    f.write_all(data).at(&tmp)?;
    f.sync_all().at(&tmp)?;
    drop(f);
    fs::rename(&tmp, path).at(path)?;
    Ok(())
}

/// A name as a file name: letters, digits, `.`, `-` and `_` kept, the rest
/// `_`, with a short hash where anything was replaced (two names never
/// share a file).
pub fn file_name(name: &str) -> String {
    let clean: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    if clean == name && !name.starts_with('.') && !name.is_empty() {
        return clean;
    }
    use sha2::Digest;
    let h = sha2::Sha256::digest(name.as_bytes());
    format!("{}-{:02x}{:02x}{:02x}{:02x}", clean.trim_start_matches('.'), h[0], h[1], h[2], h[3])
}

/// Whether a manifest's content still matches its own hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seal {
    Intact,
    /// A v1 manifest, written before manifests were hashed.
    Absent,
    /// Edited after benchbook wrote it.
    Broken {
        expected: String,
        found: String,
    },
}

/// An archive root.
#[derive(Debug, Clone)]
pub struct Archive {
    pub root: PathBuf,
}

/// One run's directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    pub id: String,
    pub path: PathBuf,
}

impl RunDir {
    pub fn manifest_path(&self) -> PathBuf {
        self.path.join(MANIFEST_FILE)
    }
    pub fn results_path(&self) -> PathBuf {
        self.path.join(RESULTS_FILE)
    }

    /// Read and parse the manifest, refusing unknown versions and a
    /// manifest whose content no longer matches its `manifest_sha256`.
    pub fn manifest(&self) -> Result<Manifest> {
        let (manifest, seal) = self.manifest_unsealed()?;
        match seal {
            Seal::Broken { expected, found } => {
                Err(Error::ManifestChanged { path: self.manifest_path(), run: self.id.clone(), expected, found })
            }
            Seal::Intact | Seal::Absent => Ok(manifest),
        }
    }

    /// The manifest and the state of its seal, without refusing a broken
    /// one (`verify` reports it as a finding).
    pub fn manifest_unsealed(&self) -> Result<(Manifest, Seal)> {
        let path = self.manifest_path();
        let text = fs::read_to_string(&path).at(&path)?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| Error::Manifest {
            path: path.clone(),
            message: format!("line {}, column {}: {e}", e.line(), e.column()),
        })?;
        let version = |key: &str| value.get(key).and_then(|v| v.as_u64());
        if let Some(v) = version("manifest_version") {
            if !READABLE_MANIFEST_VERSIONS.contains(&(v as u32)) {
                return Err(Error::ManifestVersion {
                    path,
                    found: v,
                    supported: READABLE_MANIFEST_VERSIONS.map(|v| v.to_string()).join(", "),
                });
            }
        }
        if let Some(v) = version("schema_version") {
            if !schema::READABLE_VERSIONS.contains(&(v as u32)) {
                return Err(Error::SchemaVersion {
                    path,
                    found: v.to_string(),
                    supported: schema::READABLE_VERSIONS.map(|v| v.to_string()).join(", "),
                });
            }
        }
        let seal = match value.get(SEAL_FIELD).and_then(|v| v.as_str()) {
            None => Seal::Absent,
            Some(expected) => {
                let found = content_sha256(&value);
                if found == expected {
                    Seal::Intact
                } else {
                    Seal::Broken { expected: expected.to_string(), found }
                }
            }
        };
        let mut manifest: Manifest =
            serde_json::from_value(value).map_err(|e| Error::Manifest { path, message: e.to_string() })?;
        let seen = self.path.join(super::remote::HEARTBEAT_FILE);
        manifest.seen_alive = fs::read(seen).ok().and_then(|d| serde_json::from_slice(&d).ok());
        Ok((manifest, seal))
    }

    /// The run's rows as a DataFrame, after checking the results file
    /// against the sha256 its manifest recorded (and its schema version).
    pub fn dataframe(&self) -> Result<polars::prelude::DataFrame> {
        Ok(self.read(false)?.1)
    }

    /// The manifest and the rows, both checked against their hashes, or
    /// neither (`no_verify`: forensic reads of a damaged run).
    pub fn read(&self, no_verify: bool) -> Result<(Manifest, polars::prelude::DataFrame)> {
        if no_verify {
            Ok((self.manifest_unsealed()?.0, self.dataframe_unverified()?))
        } else {
            let (manifest, data) = self.verified_results()?;
            Ok((manifest, schema::read_parquet_bytes(&self.results_path(), data)?))
        }
    }

    /// [`RunDir::read`] as a lazy frame: the hash is checked on the whole
    /// file, then queries decode only the columns and rows they use.
    pub fn scan(&self, no_verify: bool) -> Result<(Manifest, polars::prelude::LazyFrame)> {
        let path = self.results_path();
        if no_verify {
            let data = fs::read(&path).at(&path)?;
            Ok((self.manifest_unsealed()?.0, schema::scan_parquet_bytes(&path, data)?))
        } else {
            let (manifest, data) = self.verified_results()?;
            Ok((manifest, schema::scan_parquet_bytes(&path, data)?))
        }
    }

    /// The rows without the hash check: forensic reads (`--no-verify`).
    pub fn dataframe_unverified(&self) -> Result<polars::prelude::DataFrame> {
        schema::read_parquet(&self.results_path())
    }

    /// The (sealed) manifest and the results file's bytes, refused if they
    /// differ from the sha256 that manifest recorded. A running run rewrites
    /// its file and then its manifest, so a mismatch there is re-checked
    /// after a moment first.
    fn verified_results(&self) -> Result<(Manifest, Vec<u8>)> {
        let path = self.results_path();
        let mut attempt = 0;
        loop {
            let manifest = self.manifest()?;
            let data = fs::read(&path).at(&path)?;
            // A run begun by a version that did not hash: `verify` says so.
            let Some(expected) = manifest.files.iter().find(|f| f.path == RESULTS_FILE).map(|f| f.sha256.clone())
            else {
                return Ok((manifest, data));
            };
            let found = super::manifest::sha256_hex(&data);
            if found == expected {
                return Ok((manifest, data));
            }
            attempt += 1;
            if manifest.status != RunStatus::Running || attempt == 3 {
                return Err(Error::Tampered { path, run: self.id.clone(), expected, found });
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// The run's rows.
    pub fn rows(&self) -> Result<Vec<Row>> {
        schema::from_dataframe(&self.dataframe()?)
    }
}

impl Archive {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Archive { root: root.into() }
    }

    /// The folder of run `id` (which may not exist).
    pub fn run_dir(&self, id: &str) -> RunDir {
        RunDir { id: id.to_string(), path: self.runs_dir().join(id) }
    }

    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    /// Every run directory, sorted by id (ids start with their UTC start
    /// time), damaged ones included: a folder under `runs/` whose manifest
    /// is missing or unreadable is still listed, so `list` can say why.
    /// Hidden folders (staging) are not runs.
    pub fn runs(&self) -> Result<Vec<RunDir>> {
        let dir = self.runs_dir();
        if !dir.exists() {
            return Ok(Vec::new());
        }
        let mut runs: Vec<RunDir> = fs::read_dir(&dir)
            .at(&dir)?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir() && !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| RunDir { id: e.file_name().to_string_lossy().into_owned(), path: e.path() })
            .collect();
        runs.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(runs)
    }

    /// Every run labelled `label`, oldest first (from the catalog); an
    /// error naming the labels there are when none is.
    pub fn runs_labelled(&self, label: &str) -> Result<Vec<RunDir>> {
        let catalog = super::Catalog::open(self)?;
        let out: Vec<RunDir> = catalog
            .entries
            .iter()
            .filter(|e| e.label.as_deref() == Some(label) && e.damaged.is_none())
            .map(|e| self.run_dir(&e.run_id))
            .collect();
        if out.is_empty() {
            let labels: std::collections::BTreeSet<&str> =
                catalog.entries.iter().filter_map(|e| e.label.as_deref()).collect();
            let known: Vec<&str> = labels.into_iter().take(12).collect();
            return Err(Error::RunNotFound {
                query: format!("label:{label}"),
                archive: self.root.clone(),
                hint: if known.is_empty() {
                    "No run there has a label; `benchbook run --label NAME` gives one.".into()
                } else {
                    format!("Labels there include: {}.", known.join(", "))
                },
            });
        }
        Ok(out)
    }

    /// Find a run by exact id, unique prefix, or `latest`.
    pub fn resolve(&self, query: &str) -> Result<RunDir> {
        let runs = self.runs()?;
        if query == "latest" {
            // The newest run that has a manifest: a damaged folder is not "latest".
            return runs.iter().rev().find(|r| r.manifest_path().exists()).cloned().ok_or_else(|| Error::RunNotFound {
                query: query.into(),
                archive: self.root.clone(),
                hint: "The archive has no runs yet; `benchbook run quick` makes one.".into(),
            });
        }
        if let Some(r) = runs.iter().find(|r| r.id == query) {
            return Ok(r.clone());
        }
        let matches: Vec<&RunDir> = runs.iter().filter(|r| r.id.starts_with(query) || r.id.contains(query)).collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(Error::RunNotFound {
                query: query.into(),
                archive: self.root.clone(),
                hint: if runs.is_empty() {
                    "The archive has no runs yet; `benchbook run quick` makes one.".into()
                } else {
                    "`benchbook list` shows the runs there; pass --archive DIR for another archive.".into()
                },
            }),
            many => Err(Error::AmbiguousRun {
                query: query.into(),
                candidates: many.iter().map(|r| r.id.as_str()).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// Start an all-or-nothing run in `runs/.staging-<id>`, hidden from
    /// [`Archive::runs`] until [`RunWriter::finish`] renames it into place.
    pub fn create_run_staged(&self, mut manifest: Manifest) -> Result<RunWriter> {
        let mut attempt = 0;
        while self.runs_dir().join(&manifest.run_id).exists() {
            attempt += 1;
            manifest.run_id = super::manifest::reroll_run_id(&manifest.run_id, attempt);
        }
        let staging = self.runs_dir().join(format!("{STAGING_PREFIX}{}", manifest.run_id));
        if staging.exists() {
            fs::remove_dir_all(&staging).at(&staging)?;
        }
        fs::create_dir_all(&staging).at(&staging)?;
        self.start_run(manifest, staging, true)
    }

    /// Staging folders left by a killed import (none after a clean exit).
    pub fn stale_staging(&self) -> Vec<PathBuf> {
        let Ok(entries) = fs::read_dir(self.runs_dir()) else { return Vec::new() };
        entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(STAGING_PREFIX))
            .map(|e| e.path())
            .collect()
    }

    /// Create the directory of a new run and write its first manifest. The
    /// folder is claimed with one `mkdir`, so two runs started at once
    /// never share it: when the id is taken, the run gets a fresh suffix.
    pub fn create_run(&self, mut manifest: Manifest) -> Result<RunWriter> {
        let runs = self.runs_dir();
        fs::create_dir_all(&runs).at(&runs)?;
        for attempt in 1..=64 {
            let path = runs.join(&manifest.run_id);
            match fs::create_dir(&path) {
                Ok(()) => return self.start_run(manifest, path, false),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    manifest.run_id = super::manifest::reroll_run_id(&manifest.run_id, attempt);
                }
                Err(e) => return Err(Error::io(path, e)),
            }
        }
        Err(Error::config("run id", format!("no free run id like {} in {}", manifest.run_id, runs.display())))
    }

    /// A writer for a run built in `path` (already created): the run's own
    /// folder, or a staging folder that becomes it when `staged`.
    fn start_run(&self, manifest: Manifest, path: PathBuf, staged: bool) -> Result<RunWriter> {
        let target = self.runs_dir().join(&manifest.run_id);
        super::remote::enqueue(&self.root, &manifest.run_id)?;
        RunWriter::start(RunDir { id: manifest.run_id.clone(), path }, manifest, staged.then_some(target))
    }
}
