//! Typed facts a run records about where and how it measured: what each
//! backend found ([`Probe`], [`BackendInfo`]), each GPU ([`GpuFacts`]), and
//! the stopping rule, and what a `run exec` run ran ([`ExecSpec`]).
//! Backends produce them, the manifest stores them and
//! reports read them back as these types, never by string key.

use serde::{Deserialize, Serialize};

/// What a backend found on this machine.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Probe {
    /// Usable, with these device names.
    Available { devices: Vec<String> },
    /// Not usable here; every benchmark on it is recorded as skipped with
    /// this reason.
    Unavailable { reason: String },
}

/// A backend as probed at the start of the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BackendInfo {
    pub name: String,
    pub probe: Probe,
    /// Device facts the backend reported (GPU name, UUID, memory, L2,
    /// clocks, power limit, driver versions, peer-access matrix, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<serde_json::Value>,
}

impl BackendInfo {
    /// The typed facts of a GPU backend (CUDA, HIP), if this backend's
    /// facts are of that shape.
    pub fn gpu_facts(&self) -> Option<GpuBackendFacts> {
        self.facts.as_ref().and_then(|v| serde_json::from_value(v.clone()).ok())
    }
}

/// What a GPU backend records in the manifest: its devices, the
/// peer-access matrix (`peer_access[a][b]`: from GPU a to GPU b) and
/// version strings (driver, runtime, bindings), by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuBackendFacts {
    #[serde(default)]
    pub devices: Vec<GpuFacts>,
    #[serde(default)]
    pub peer_access: Vec<Vec<PeerAccess>>,
    /// Everything else, e.g. `driver_version`, `hip_runtime_version`.
    #[serde(flatten)]
    pub versions: std::collections::BTreeMap<String, serde_json::Value>,
}

/// What is known about peer access from one GPU to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerAccess {
    /// Peer access is enabled: copies go GPU to GPU over the fabric.
    Enabled,
    /// The driver says these GPUs cannot access each other; copies are
    /// staged by the driver (usually through host memory).
    Unsupported,
}

/// Facts about one device, for the manifest and reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuFacts {
    pub ordinal: usize,
    pub name: String,
    pub uuid: Option<String>,
    /// `sm_90` (CUDA) or `gfx942` (HIP).
    pub arch: Option<String>,
    pub memory_bytes: Option<u64>,
    /// SMs (CUDA) or compute units (HIP).
    pub multiprocessors: Option<u32>,
    pub l2_bytes: Option<u64>,
    pub pci_bus_id: Option<String>,
    /// Anything else the backend reads (clocks, power limit, partition mode).
    #[serde(default)]
    pub extra: std::collections::BTreeMap<String, String>,
}

/// When to stop sampling a point. Defaults follow nvbench: stop when the
/// relative standard deviation is under 0.5 % and at least 0.5 s was measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StopRule {
    /// Untimed warm-up per point, in seconds.
    pub warmup_seconds: f64,
    /// Never stop before this many samples.
    pub min_samples: usize,
    /// Never stop (on noise) before this many seconds were measured.
    pub min_seconds: f64,
    /// Always stop after this many wall seconds on one point.
    pub max_seconds: f64,
    /// Stop once rel. std. dev. of the per-operation times is at most this.
    pub target_rsd: f64,
    /// Batch enough operations that one sample lasts about this long.
    pub sample_seconds: f64,
    /// Hard cap on samples per point.
    pub max_samples: usize,
}

impl Default for StopRule {
    fn default() -> Self {
        StopRule {
            warmup_seconds: 0.2,
            min_samples: 10,
            min_seconds: 0.5,
            max_seconds: 5.0,
            target_rsd: 0.005,
            sample_seconds: 0.001,
            max_samples: 10_000,
        }
    }
}

impl StopRule {
    /// Human-readable one-liner for reports and `--help`.
    pub fn describe(&self) -> String {
        format!(
            "warm-up {:.2} s; then samples of ≥ {:.1} ms each until the relative standard deviation is ≤ {:.2} % \
             with ≥ {} samples and ≥ {:.2} s measured, or {:.1} s have passed",
            self.warmup_seconds,
            self.sample_seconds * 1e3,
            self.target_rsd * 100.0,
            self.min_samples,
            self.min_seconds,
            self.max_seconds
        )
    }
}

/// What `run exec` runs, as the manifest records it (and `rerun` reads it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecSpec {
    /// The command and its arguments, exactly as given (no shell).
    pub command: Vec<String>,
    pub repeat: u32,
    /// Parameters of every row (`--param k=v`); a metric line's own
    /// parameters add to them and win on a clash.
    pub params: crate::vocab::metrics::Params,
    /// Go on after a repetition that exits non-zero.
    #[serde(default)]
    pub ignore_failure: bool,
}

impl ExecSpec {
    pub fn validate(&self) -> crate::error::Result<()> {
        if self.command.is_empty() || self.command[0].is_empty() {
            return Err(crate::error::Error::config(
                "run exec",
                "no command given: `benchbook run exec [OPTIONS] -- CMD ARGS...`",
            ));
        }
        if self.repeat == 0 {
            return Err(crate::error::Error::config("--repeat", "must be at least 1"));
        }
        Ok(())
    }

    /// The label a run gets when the user gives none: the script's name
    /// (`train_mlp` for `python3 scripts/train_mlp.py`), else the command's.
    pub fn default_label(&self) -> String {
        let script = self
            .command
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-') && [".py", ".sh", ".pl", ".rb", ".js"].iter().any(|e| a.ends_with(e)));
        let word = script.unwrap_or(&self.command[0]);
        let base = std::path::Path::new(word).file_stem().and_then(|s| s.to_str()).unwrap_or("exec");
        let clean: String = base.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')).collect();
        if clean.is_empty() {
            "exec".into()
        } else {
            clean
        }
    }
}
