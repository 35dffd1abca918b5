//! Bundles: runs packed into one portable file (a tar stream compressed
//! with zstd) that can be mailed, attached to a paper or kept next to a
//! report, and unpacked into any archive with every byte checked.
//!
//! A bundle holds `bundle.json` first (the bundle's version and, per run,
//! every file with its size and sha256), then `runs/<id>/manifest.json`,
//! `runs/<id>/results.parquet`, the run's other files (imported logs) and,
//! where one exists, its report as `reports/<id>/…`. Entries carry no
//! owner or time, so the same runs always give the same bytes.
//!
//! Unpacking reads and checks everything before it writes anything: the
//! stream must decompress and parse to the end, every entry must be a plain
//! file at a path of that shape, every file must match the size and sha256
//! `bundle.json` gives, each run must verify against its own (sealed)
//! manifest, and a run id already in the archive must hold the same bytes.
//! Only then is each new run written, through a staging folder renamed
//! into place.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::manifest::{content_sha256, sha256_hex, SEAL_FIELD};
use super::store::{write_atomic, Archive, RunDir, MANIFEST_FILE, STAGING_PREFIX};
use super::verify::verify_run;
use crate::error::{Error, IoContext, Result};

/// Layout version of `bundle.json`.
pub const BUNDLE_VERSION: u32 = 1;
const INDEX: &str = "bundle.json";
/// zstd level: Parquet is compressed already; 3 is zstd's default.
const ZSTD_LEVEL: i32 = 3;

/// `bundle.json`: what the bundle holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BundleIndex {
    pub bundle_version: u32,
    /// The benchbook that packed it.
    pub created_by: String,
    pub runs: Vec<BundledRun>,
}

/// One run in a bundle.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BundledRun {
    pub run_id: String,
    /// Files under `runs/<id>/` (the manifest included).
    pub files: Vec<BundledFile>,
    /// Files of its report, under `reports/<id>/`.
    #[serde(default)]
    pub report_files: Vec<BundledFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BundledFile {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

impl BundledFile {
    fn of(path: &str, data: &[u8]) -> Self {
        BundledFile { path: path.into(), bytes: data.len() as u64, sha256: sha256_hex(data) }
    }
}

fn bad(path: &Path, message: impl Into<String>) -> Error {
    Error::Bundle { path: path.to_path_buf(), message: message.into() }
}

/// The plain files of a folder, by name (no subfolders, no links).
fn files_of(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut out = BTreeMap::new();
    for e in fs::read_dir(dir).at(dir)? {
        let e = e.at(dir)?;
        let name = e.file_name().to_string_lossy().into_owned();
        let ty = e.file_type().at(e.path())?;
        if ty.is_file() && !super::store::is_side_file(&name) {
            out.insert(name, fs::read(e.path()).at(e.path())?);
        }
    }
    Ok(out)
}

fn append(tar: &mut tar::Builder<impl Write>, path: &str, data: &[u8], out: &Path) -> Result<()> {
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut h, path, data).at(out)
}

/// Pack `runs` (and each one's report from `reports_dir/<id>/`, where it
/// exists) into `out`. Each run must verify first: a damaged run is never
/// packed, so a bundle cannot launder it. The file is written atomically.
pub fn bundle(runs: &[RunDir], reports_dir: &Path, out: &Path) -> Result<BundleIndex> {
    let mut index = BundleIndex {
        bundle_version: BUNDLE_VERSION,
        created_by: format!("benchbook {}", env!("CARGO_PKG_VERSION")),
        runs: Vec::new(),
    };
    let mut payload: Vec<(String, Vec<u8>)> = Vec::new();
    for run in runs {
        let check = verify_run(run);
        if let Some(f) = check.findings.first() {
            return Err(Error::config(
                "RUN",
                format!(
                    "{} does not verify ({f}); a damaged run is not bundled. `benchbook verify {}` lists every change.",
                    run.id, run.id
                ),
            ));
        }
        if index.runs.iter().any(|r| r.run_id == run.id) {
            continue;
        }
        let mut entry = BundledRun { run_id: run.id.clone(), files: Vec::new(), report_files: Vec::new() };
        for (name, data) in files_of(&run.path)? {
            entry.files.push(BundledFile::of(&name, &data));
            payload.push((format!("runs/{}/{name}", run.id), data));
        }
        let report = reports_dir.join(&run.id);
        if report.is_dir() {
            for (name, data) in files_of(&report)? {
                entry.report_files.push(BundledFile::of(&name, &data));
                payload.push((format!("reports/{}/{name}", run.id), data));
            }
        }
        index.runs.push(entry);
    }
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), ZSTD_LEVEL).at(out)?;
    {
        let mut tar = tar::Builder::new(&mut encoder);
        let json = serde_json::to_vec_pretty(&index).expect("a bundle index always serializes");
        append(&mut tar, INDEX, &json, out)?;
        for (path, data) in &payload {
            append(&mut tar, path, data, out)?;
        }
        tar.finish().at(out)?;
    }
    let bytes = encoder.finish().at(out)?;
    write_atomic(out, &bytes)?;
    Ok(index)
}

/// What unpacking did with each run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Unbundled {
    pub run_id: String,
    /// `added`, or `present` when the archive already held the same bytes.
    pub action: &'static str,
    pub files: usize,
    /// Where its report was written, if the bundle held one.
    pub report: Option<PathBuf>,
}

/// A plain file or folder name: no separators, no leading dot (so no `.`,
/// `..` or hidden staging folder), nothing a terminal would interpret.
fn plain(s: &str) -> bool {
    !s.is_empty() && !s.starts_with('.') && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// A path inside a bundle: `bundle.json`, `runs/<id>/<file>` or
/// `reports/<id>/<file>`, each part a plain name. Anything else (absolute,
/// `..`, deeper folders, odd characters) is refused.
fn split_entry(path: &str) -> Option<(&str, &str, &str)> {
    let mut parts = path.split('/');
    let (Some(top), Some(id), Some(name), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    ((top == "runs" || top == "reports") && plain(id) && plain(name)).then_some((top, id, name))
}

/// Unpack `file` into `archive` (reports into `reports_dir`), checking
/// everything first; on any error nothing has been written.
pub fn unbundle(file: &Path, archive: &Archive, reports_dir: &Path) -> Result<Vec<Unbundled>> {
    let raw = fs::read(file).at(file)?;
    let mut tar_bytes = Vec::new();
    zstd::stream::Decoder::new(&raw[..])
        .and_then(|mut d| d.read_to_end(&mut tar_bytes))
        .map_err(|e| bad(file, format!("not a complete zstd stream ({e}): the file is truncated or damaged")))?;
    let mut entries: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut first: Option<String> = None;
    let mut reader = tar::Archive::new(&tar_bytes[..]);
    for entry in reader.entries().map_err(|e| bad(file, format!("not a tar stream: {e}")))? {
        let mut entry = entry.map_err(|e| bad(file, format!("damaged tar entry: {e}")))?;
        let path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(bad(file, format!("`{path}` is not a plain file; bundles hold only files")));
        }
        if path != INDEX && split_entry(&path).is_none() {
            return Err(bad(
                file,
                format!("`{path}` is not a path a bundle may hold (runs/<id>/<file>, reports/<id>/<file>)"),
            ));
        }
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| bad(file, format!("`{path}`: truncated ({e})")))?;
        first.get_or_insert_with(|| path.clone());
        if entries.insert(path.clone(), data).is_some() {
            return Err(bad(file, format!("`{path}` appears twice")));
        }
    }
    if first.as_deref() != Some(INDEX) {
        return Err(bad(file, "no bundle.json at the start: not a benchbook bundle"));
    }
    let index: BundleIndex = serde_json::from_slice(&entries.remove(INDEX).unwrap_or_default())
        .map_err(|e| bad(file, format!("bundle.json: {e}")))?;
    if index.bundle_version > BUNDLE_VERSION {
        return Err(bad(
            file,
            format!(
                "bundle version {} is newer than this benchbook reads ({BUNDLE_VERSION}); upgrade benchbook",
                index.bundle_version
            ),
        ));
    }

    // Every file hashed once; every listed file present with its hash,
    // and nothing unlisted.
    let hashes: BTreeMap<&str, String> = entries.iter().map(|(p, d)| (p.as_str(), sha256_hex(d))).collect();
    let mut listed: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for run in &index.runs {
        if !plain(&run.run_id) {
            return Err(bad(file, format!("run id `{}` is not a plain name", run.run_id)));
        }
        let groups = [("runs", &run.files), ("reports", &run.report_files)];
        for (top, list) in groups {
            for f in list.iter() {
                let path = format!("{top}/{}/{}", run.run_id, f.path);
                let data = entries.get(&path).ok_or_else(|| bad(file, format!("`{path}` is listed but missing")))?;
                let found = &hashes[path.as_str()];
                if data.len() as u64 != f.bytes || *found != f.sha256 {
                    return Err(bad(
                        file,
                        format!("`{path}`: sha256 {found} ({} bytes), but bundle.json lists {} ({} bytes): the bundle was changed after it was made", data.len(), f.sha256, f.bytes),
                    ));
                }
                listed.insert(path);
            }
        }
        let manifest = entries
            .get(&format!("runs/{}/{MANIFEST_FILE}", run.run_id))
            .ok_or_else(|| bad(file, format!("run {} has no manifest.json", run.run_id)))?;
        check_manifest(file, &run.run_id, manifest, &hashes)?;
    }
    if let Some(extra) = entries.keys().find(|p| !listed.contains(*p)) {
        return Err(bad(file, format!("`{extra}` is not listed in bundle.json")));
    }

    // Runs already in the archive must hold the same bytes.
    let mut plan = Vec::new();
    for run in &index.runs {
        let target = archive.runs_dir().join(&run.run_id);
        let present = if target.exists() {
            let have = files_of(&target)?;
            let same = have.len() == run.files.len()
                && run.files.iter().all(|f| have.get(&f.path).is_some_and(|d| sha256_hex(d) == f.sha256));
            if !same {
                return Err(bad(
                    file,
                    format!(
                        "run {} already exists in {} with different content; it is never overwritten. Unbundle into another archive (--archive DIR) to compare them.",
                        run.run_id,
                        archive.root.display()
                    ),
                ));
            }
            true
        } else {
            false
        };
        plan.push((run, present));
    }

    // Everything checked: write.
    let mut done = Vec::new();
    for (run, present) in plan {
        if !present {
            let staging = archive.runs_dir().join(format!("{STAGING_PREFIX}{}", run.run_id));
            if staging.exists() {
                fs::remove_dir_all(&staging).at(&staging)?;
            }
            fs::create_dir_all(&staging).at(&staging)?;
            for f in &run.files {
                write_atomic(&staging.join(&f.path), &entries[&format!("runs/{}/{}", run.run_id, f.path)])?;
            }
            let target = archive.runs_dir().join(&run.run_id);
            fs::rename(&staging, &target).at(&target)?;
            super::remote::enqueue(&archive.root, &run.run_id)?;
        }
        let report = (!run.report_files.is_empty()).then(|| reports_dir.join(&run.run_id));
        if let Some(dir) = &report {
            fs::create_dir_all(dir).at(dir)?;
            for f in &run.report_files {
                write_atomic(&dir.join(&f.path), &entries[&format!("reports/{}/{}", run.run_id, f.path)])?;
            }
        }
        done.push(Unbundled {
            run_id: run.run_id.clone(),
            action: if present { "present" } else { "added" },
            files: run.files.len(),
            report,
        });
    }
    Ok(done)
}

/// A bundled run's manifest must be its own (same id), sealed and intact,
/// and list exactly the run's other files with their hashes.
fn check_manifest(file: &Path, id: &str, manifest: &[u8], hashes: &BTreeMap<&str, String>) -> Result<()> {
    let value: serde_json::Value =
        serde_json::from_slice(manifest).map_err(|e| bad(file, format!("runs/{id}/manifest.json: {e}")))?;
    if value.get("run_id").and_then(|v| v.as_str()) != Some(id) {
        return Err(bad(file, format!("runs/{id}/manifest.json belongs to another run")));
    }
    if let Some(seal) = value.get(SEAL_FIELD).and_then(|v| v.as_str()) {
        if content_sha256(&value) != seal {
            return Err(bad(file, format!("runs/{id}/manifest.json was edited after the run was written")));
        }
    }
    let files = value.get("files").and_then(|v| v.as_array()).cloned().unwrap_or_default();
    for f in files {
        let (Some(path), Some(sha)) =
            (f.get("path").and_then(|v| v.as_str()), f.get("sha256").and_then(|v| v.as_str()))
        else {
            continue;
        };
        let found = hashes
            .get(format!("runs/{id}/{path}").as_str())
            .ok_or_else(|| bad(file, format!("runs/{id}/{path} is in the run's manifest but not in the bundle")))?;
        if found != sha {
            return Err(bad(file, format!("runs/{id}/{path} does not match the run's manifest")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::split_entry;

    #[test]
    fn only_plain_paths_are_accepted() {
        assert_eq!(split_entry("runs/20261121T000000Z-a-0001/results.parquet").map(|p| p.0), Some("runs"));
        assert!(split_entry("reports/r1/report.html").is_some());
        for hostile in [
            "/etc/passwd",
            "runs/../../x",
            "runs/r1/../x",
            "runs/r1/a/b",
            "runs/r1",
            "runs/.staging-r1/x",
            "other/r1/x",
            "runs/r1/\u{1b}[2J",
            "runs/r1/",
        ] {
            assert!(split_entry(hostile).is_none(), "{hostile:?}");
        }
    }
}
