//! `manifest.json`: everything needed to trust, compare and repeat a run:
//! which code (version, commit, dirty flag), which command and resolved
//! configuration, which machine and environment, when, how it ended, and a
//! sha256 (whole file and per 64 KiB block) of every file in the run.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::host::HostInfo;

/// Version of the manifest's own layout.
pub const MANIFEST_VERSION: u32 = 1;
/// Size of the blocks hashed separately so `verify` can say where a file changed.
pub const HASH_BLOCK_BYTES: usize = 64 * 1024;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Still being written (or killed without a chance to say so).
    Running,
    Complete,
    /// Stopped early (Ctrl-C, SIGTERM, or a killed process); finished points are kept.
    Interrupted,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }
}

/// The code that produced the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    pub git_commit: Option<String>,
    pub git_dirty: Option<bool>,
}

impl ToolInfo {
    /// This build of benchbook.
    pub fn current() -> Self {
        let commit = env!("BENCHBOOK_GIT_COMMIT");
        let dirty = env!("BENCHBOOK_GIT_DIRTY");
        ToolInfo {
            name: "benchbook".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_commit: (!commit.is_empty()).then(|| commit.to_string()),
            git_dirty: dirty.parse().ok(),
        }
    }
}

pub use crate::vocab::facts::BackendInfo;

/// One file of the run and its hashes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileEntry {
    /// Relative to the run directory.
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
    /// sha256 of each consecutive [`HASH_BLOCK_BYTES`] block.
    pub block_sha256: Vec<String>,
}

impl FileEntry {
    /// Hash `data` as the file `path`.
    pub fn of(path: &str, data: &[u8]) -> Self {
        FileEntry {
            path: path.into(),
            bytes: data.len() as u64,
            sha256: sha256_hex(data),
            block_sha256: data.chunks(HASH_BLOCK_BYTES).map(sha256_hex).collect(),
        }
    }
}

/// The sha256 of `data`, as lowercase hex.
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Row counts, kept in the manifest so `list` need not open Parquet files.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Counts {
    pub rows: u64,
    pub points: u32,
    pub measured: u32,
    pub skipped: u32,
    pub failed: u32,
}

/// The manifest of one run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub manifest_version: u32,
    pub schema_version: u32,
    pub run_id: String,
    pub label: Option<String>,
    /// `native`, or `import:<tool>` for imported runs.
    pub source: String,
    pub tool: ToolInfo,
    pub argv: Vec<String>,
    /// The resolved configuration (flags, preset and defaults applied).
    pub config: serde_json::Value,
    pub host: HostInfo,
    pub backends: Vec<BackendInfo>,
    /// Environment variables that change how benchmarks behave.
    pub env: BTreeMap<String, String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: RunStatus,
    pub status_detail: Option<String>,
    pub pid: u32,
    pub counts: Counts,
    pub files: Vec<FileEntry>,
}

/// Prefixes of environment variables worth recording: thread pinning,
/// GPU visibility, communication libraries, launchers.
const ENV_PREFIXES: [&str; 21] = [
    "OMP_",
    "GOMP_",
    "KMP_",
    "MKL_",
    "OPENBLAS_",
    "RAYON_",
    "CUDA_",
    "NVIDIA_",
    "HIP_",
    "ROCR_",
    "HSA_",
    "NCCL_",
    "RCCL_",
    "UCX_",
    "FI_",
    "OMPI_",
    "PMIX_",
    "PMI_",
    "SLURM_",
    "BENCHBOOK_",
    "MATMUL_",
];
/// Name fragments that mark a secret: such variables are never recorded.
const SECRET_MARKERS: [&str; 5] = ["TOKEN", "SECRET", "PASSWORD", "KEY", "CREDENTIAL"];

/// The relevant, non-secret environment.
pub fn relevant_env() -> BTreeMap<String, String> {
    std::env::vars()
        .filter(|(k, _)| {
            (ENV_PREFIXES.iter().any(|p| k.starts_with(p)) || k == "LD_LIBRARY_PATH")
                && !SECRET_MARKERS.iter().any(|m| k.to_ascii_uppercase().contains(m))
        })
        .collect()
}

/// Now, as RFC 3339 UTC with seconds.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A fresh, sortable run id: `20261121T071500Z-quick-3fa9`.
pub fn new_run_id(label: &str) -> String {
    let now = chrono::Utc::now();
    let salt = (now.timestamp_subsec_nanos() ^ std::process::id().rotate_left(16)) & 0xffff;
    let clean: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c.to_ascii_lowercase() } else { '-' })
        .take(32)
        .collect();
    format!("{}-{}-{salt:04x}", now.format("%Y%m%dT%H%M%SZ"), clean.trim_matches('-'))
}

impl Manifest {
    /// A manifest for a run starting now on this host.
    pub fn begin(run_id: &str, source: &str, config: serde_json::Value, backends: Vec<BackendInfo>) -> Self {
        Manifest {
            manifest_version: MANIFEST_VERSION,
            schema_version: super::schema::SCHEMA_VERSION,
            run_id: run_id.into(),
            label: None,
            source: source.into(),
            tool: ToolInfo::current(),
            argv: std::env::args().collect(),
            config,
            host: HostInfo::detect(),
            backends,
            env: relevant_env(),
            started_at: now_rfc3339(),
            ended_at: None,
            status: RunStatus::Running,
            status_detail: None,
            pid: std::process::id(),
            counts: Counts::default(),
            files: Vec::new(),
        }
    }

    /// The status to show: a `running` manifest whose process is gone (on
    /// this host) was killed, so it reads as interrupted.
    pub fn effective_status(&self) -> RunStatus {
        if self.status == RunStatus::Running
            && self.host.hostname == crate::host::hostname()
            && !std::path::Path::new(&format!("/proc/{}", self.pid)).exists()
            && std::path::Path::new("/proc/self").exists()
        {
            RunStatus::Interrupted
        } else {
            self.status
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_clean_and_sortable() {
        let id = new_run_id("My Run/../x");
        assert!(id.len() > 20);
        assert!(id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'), "{id}");
        assert!(!id.contains(".."));
    }

    #[test]
    fn block_hashes_cover_the_file() {
        let data = vec![7u8; HASH_BLOCK_BYTES * 2 + 1];
        let e = FileEntry::of("x", &data);
        assert_eq!(e.block_sha256.len(), 3);
        assert_eq!(e.bytes, data.len() as u64);
        assert_eq!(e.sha256.len(), 64);
    }

    #[test]
    fn secrets_are_not_recorded() {
        std::env::set_var("NCCL_TEST_TOKEN_X", "secret");
        std::env::set_var("NCCL_DEBUG_TEST", "INFO");
        let env = relevant_env();
        assert!(!env.contains_key("NCCL_TEST_TOKEN_X"));
        assert_eq!(env.get("NCCL_DEBUG_TEST").map(String::as_str), Some("INFO"));
    }
}
