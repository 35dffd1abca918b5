//! `verify`: re-hash every file a manifest lists and say exactly what
//! changed: a missing file, a new size, and which 64 KiB blocks differ,
//! plus files in the run directory the manifest does not know, and a
//! manifest that is missing, unreadable or edited since it was written.

use std::fs;

use super::manifest::{FileEntry, HASH_BLOCK_BYTES};
use super::store::{RunDir, Seal, MANIFEST_FILE};

/// One discrepancy between a run directory and its manifest.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    Missing {
        path: String,
    },
    SizeChanged {
        path: String,
        expected: u64,
        actual: u64,
    },
    /// Same size, different content, in these byte ranges.
    ContentChanged {
        path: String,
        ranges: Vec<(u64, u64)>,
    },
    Unlisted {
        path: String,
    },
    /// The run folder has no manifest: nothing in it can be trusted.
    ManifestMissing,
    /// The manifest cannot be read (not JSON, unknown version, ...).
    ManifestUnreadable {
        message: String,
    },
    /// The manifest's content no longer matches its `manifest_sha256`.
    ManifestChanged {
        expected: String,
        found: String,
    },
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Missing { path } => write!(f, "{path}: missing"),
            Finding::SizeChanged { path, expected, actual } => {
                write!(f, "{path}: size changed from {expected} to {actual} bytes")
            }
            Finding::ContentChanged { path, ranges } => {
                let r: Vec<String> = ranges.iter().map(|(a, b)| format!("{a}..{b}")).collect();
                write!(f, "{path}: content changed in bytes {}", r.join(", "))
            }
            Finding::Unlisted { path } => write!(f, "{path}: not listed in the manifest"),
            Finding::ManifestMissing => write!(f, "{MANIFEST_FILE}: missing, so no file of the run can be checked"),
            Finding::ManifestUnreadable { message } => write!(f, "{MANIFEST_FILE}: unreadable: {message}"),
            Finding::ManifestChanged { expected, found } => write!(
                f,
                "{MANIFEST_FILE}: edited after it was written (its content hashes to {found}, its manifest_sha256 says {expected})"
            ),
        }
    }
}

fn check(dir: &RunDir, entry: &FileEntry) -> Option<Finding> {
    let path = entry.path.clone();
    let Ok(data) = fs::read(dir.path.join(&entry.path)) else {
        return Some(Finding::Missing { path });
    };
    if data.len() as u64 != entry.bytes {
        return Some(Finding::SizeChanged { path, expected: entry.bytes, actual: data.len() as u64 });
    }
    let now = FileEntry::of(&entry.path, &data);
    if now.sha256 == entry.sha256 {
        return None;
    }
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for (i, (a, b)) in now.block_sha256.iter().zip(&entry.block_sha256).enumerate() {
        if a != b {
            let start = (i * HASH_BLOCK_BYTES) as u64;
            let end = (start + HASH_BLOCK_BYTES as u64).min(entry.bytes);
            match ranges.last_mut() {
                Some(last) if last.1 == start => last.1 = end,
                _ => ranges.push((start, end)),
            }
        }
    }
    Some(Finding::ContentChanged { path, ranges })
}

/// What `verify` found in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCheck {
    /// Everything that differs; empty means the run verifies.
    pub findings: Vec<Finding>,
    /// Files whose hashes were checked.
    pub files: usize,
    /// Whether the manifest carries its own hash (v1 manifests do not).
    pub sealed: bool,
}

/// Check every file of a run against its manifest, and the manifest against
/// its own hash. A damaged run is reported, never an error.
pub fn verify_run(dir: &RunDir) -> RunCheck {
    if !dir.manifest_path().exists() {
        return RunCheck { findings: vec![Finding::ManifestMissing], files: 0, sealed: false };
    }
    let (manifest, seal) = match dir.manifest_unsealed() {
        Ok(m) => m,
        Err(e) => {
            return RunCheck {
                findings: vec![Finding::ManifestUnreadable { message: e.to_string() }],
                files: 0,
                sealed: false,
            }
        }
    };
    let mut findings = Vec::new();
    if let Seal::Broken { expected, found } = &seal {
        findings.push(Finding::ManifestChanged { expected: expected.clone(), found: found.clone() });
    }
    findings.extend(manifest.files.iter().filter_map(|e| check(dir, e)));
    if let Ok(entries) = fs::read_dir(&dir.path) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name != MANIFEST_FILE
                && !super::store::is_side_file(&name)
                && !manifest.files.iter().any(|f| f.path == name)
            {
                findings.push(Finding::Unlisted { path: name });
            }
        }
    }
    RunCheck { findings, files: manifest.files.len(), sealed: seal != Seal::Absent }
}
