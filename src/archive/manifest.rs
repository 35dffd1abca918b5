//! `manifest.json`: everything needed to trust, compare and repeat a run:
//! which code (version, commit, dirty flag), which command and resolved
//! configuration, which machine and environment, when, how it ended, and a
//! sha256 (whole file and per 64 KiB block) of every file in the run, and
//! a sha256 of the manifest's own content (`manifest_sha256`), so an edit
//! to the manifest is caught like an edit to the results.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::host::HostInfo;
pub use crate::vocab::config::RunConfig;
pub use crate::vocab::source::RunOrigin;

/// Version of the manifest's own layout. Each version adds fields and
/// every older one reads with them absent (v1: unsealed; v4: its node is its
/// host name; v5: "in a container" not recorded, which is not "bare metal";
/// v6: its GPU GEMMs ran the one layout there was, `tn`).
/// The whole history, field by field, is in docs/schema.md.
pub const MANIFEST_VERSION: u32 = 9;
/// Manifest versions this build reads.
pub const READABLE_MANIFEST_VERSIONS: [u32; 9] = [1, 2, 3, 4, 5, 6, 7, 8, 9];
/// The field that holds the hash of the rest of the manifest.
pub const SEAL_FIELD: &str = "manifest_sha256";
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
    /// The status a word names, as [`Self::as_str`] writes it.
    pub fn parse(word: &str) -> Option<RunStatus> {
        [Self::Running, Self::Complete, Self::Interrupted, Self::Failed].into_iter().find(|s| s.as_str() == word)
    }

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
    /// `native`, `exec`, or `import:<tool>[,<tool>…]` for imported runs.
    pub source: RunOrigin,
    pub tool: ToolInfo,
    pub argv: Vec<String>,
    /// The resolved configuration (flags, preset and defaults applied),
    /// typed by kind of run.
    pub config: RunConfig,
    pub host: HostInfo,
    /// Where in a cluster the run ran (v4; `None` before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::host::Placement>,
    pub backends: Vec<BackendInfo>,
    /// Environment variables that change how benchmarks behave.
    pub env: BTreeMap<String, String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: RunStatus,
    pub status_detail: Option<String>,
    pub pid: u32,
    /// When `pid` started, in clock ticks since boot (`/proc/<pid>/stat`
    /// field 22), so a reused pid is not taken for the run's process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_start_ticks: Option<u64>,
    /// The run this one repeats (`benchbook rerun`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<String>,
    pub counts: Counts,
    /// What each device's sensors gave, or why nothing (v8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub telemetry: Vec<crate::vocab::telemetry::TelemetryInfo>,
    pub files: Vec<FileEntry>,
    /// sha256 of this manifest without this field (compact JSON, as
    /// [`content_sha256`] computes it); absent in v1 manifests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_sha256: Option<String>,
    /// For a run read from a bucket's mirror: when its node last showed it
    /// was alive (never part of the manifest's content or hash).
    #[serde(skip)]
    pub seen_alive: Option<super::remote::SeenAlive>,
}

/// The hash a manifest's `manifest_sha256` must hold: sha256 of the
/// compact JSON of every other field, as parsed. Parsing and re-serializing
/// is deterministic (same key order, shortest round-trip floats), so the
/// writer and every later reader compute the same bytes.
pub fn content_sha256(manifest: &serde_json::Value) -> String {
    let mut v = manifest.clone();
    if let Some(map) = v.as_object_mut() {
        map.remove(SEAL_FIELD);
    }
    sha256_hex(&serde_json::to_vec(&v).expect("a JSON value always serializes"))
}

/// Prefixes of environment variables worth recording: thread pinning,
/// GPU visibility, communication libraries, launchers, and the C library's
/// tunables (glibc picks its memcpy strategy and malloc behaviour from
/// `GLIBC_TUNABLES`).
const ENV_PREFIXES: [&str; 23] = [
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
    "GLIBC_",
    "MALLOC_",
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

/// The same run id with a fresh 4-hex suffix, for when the id is taken
/// (two runs with one label started in the same second).
pub fn reroll_run_id(id: &str, attempt: u32) -> String {
    let stem = id.rsplit_once('-').map(|(stem, _)| stem).unwrap_or(id);
    let nanos = chrono::Utc::now().timestamp_subsec_nanos();
    let salt = (nanos.rotate_left(attempt * 7) ^ std::process::id().wrapping_mul(0x9e37_79b9) ^ attempt) & 0xffff;
    format!("{stem}-{salt:04x}")
}

impl Manifest {
    /// A manifest for a run starting now on this host.
    pub fn begin(run_id: &str, source: RunOrigin, config: RunConfig, backends: Vec<BackendInfo>) -> Self {
        let host = HostInfo::detect();
        Manifest {
            manifest_version: MANIFEST_VERSION,
            schema_version: super::schema::SCHEMA_VERSION,
            run_id: run_id.into(),
            label: None,
            source,
            tool: ToolInfo::current(),
            argv: std::env::args().collect(),
            config,
            placement: Some(crate::host::Placement::detect(&host.hostname)),
            host,
            backends,
            env: relevant_env(),
            started_at: now_rfc3339(),
            ended_at: None,
            status: RunStatus::Running,
            status_detail: None,
            pid: std::process::id(),
            pid_start_ticks: super::liveness::process_start_ticks(std::process::id()),
            repeats: None,
            counts: Counts::default(),
            telemetry: Vec::new(),
            files: Vec::new(),
            manifest_sha256: None,
            seen_alive: None,
        }
    }

    /// The manifest as written to disk: pretty JSON with `manifest_sha256`
    /// set to the hash of everything else.
    pub fn sealed_json(&mut self) -> Vec<u8> {
        self.manifest_sha256 = None;
        let value = serde_json::to_value(&*self).expect("a manifest always serializes");
        self.manifest_sha256 = Some(content_sha256(&value));
        serde_json::to_vec_pretty(&*self).expect("a manifest always serializes")
    }

    /// Whether the run's rows were imported from other tools' files
    /// (`import:<tools>`), not measured by benchbook.
    pub fn is_import(&self) -> bool {
        self.source.is_import()
    }

    /// The node the run ran on: its placement's, else (before v4) its host name.
    pub fn node(&self) -> &str {
        self.placement.as_ref().map_or(self.host.hostname.as_str(), |p| p.node.as_str())
    }

    /// The fleet the run belongs to, if any.
    pub fn fleet(&self) -> Option<&str> {
        self.placement.as_ref().and_then(|p| p.fleet.as_deref())
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

    fn manifest() -> Manifest {
        Manifest::begin(
            "20261121T000000Z-t-0000",
            RunOrigin::Native,
            crate::vocab::config::RunConfig::Import { import: Vec::new() },
            Vec::new(),
        )
    }

    #[test]
    fn the_seal_covers_every_field_and_survives_a_round_trip() {
        let mut m = manifest();
        let json = m.sealed_json();
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(value[SEAL_FIELD].as_str(), m.manifest_sha256.as_deref());
        assert_eq!(content_sha256(&value), m.manifest_sha256.clone().unwrap());
        // Any edit, even one digit of a count, changes the hash.
        let edited = String::from_utf8(json).unwrap().replace("\"rows\": 0", "\"rows\": 5");
        let edited: serde_json::Value = serde_json::from_str(&edited).unwrap();
        assert_ne!(content_sha256(&edited), m.manifest_sha256.unwrap());
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
