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

/// When to stop sampling a point, and how a sweep is scheduled.
///
/// A sweep visits every point once per round, in a shuffled order, for up
/// to `rounds` rounds. Inside a round the sampler follows nvbench: samples
/// until their relative standard deviation is under `target_rsd`, or the
/// round's share of the point's time is spent. After `min_rounds` rounds a
/// point stops as soon as the 95 % interval of its median
/// ([`crate::vocab::interval`]) is within ±`target_ci`. `max_seconds`
/// bounds each point and `budget_seconds` the whole sweep.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StopRule {
    /// Untimed warm-up per point, in seconds.
    pub warmup_seconds: f64,
    /// Never stop before this many samples.
    pub min_samples: usize,
    /// Never stop (on noise) before this many seconds were measured.
    pub min_seconds: f64,
    /// Each point's share of time, in seconds of timed operations over all
    /// its rounds (warm-up included; buffer setup and validation are not).
    /// Its minimum rounds are owed when its first round shows they fit; a
    /// point that meets `target_ci` early leaves the rest to others.
    pub max_seconds: f64,
    /// Stop once rel. std. dev. of the per-operation times is at most this.
    pub target_rsd: f64,
    /// Batch enough operations that one sample lasts about this long.
    pub sample_seconds: f64,
    /// Hard cap on samples per point.
    pub max_samples: usize,
    /// Most rounds per point (runs before schema v5 read as 1).
    #[serde(default = "one")]
    pub rounds: u32,
    /// Fewest rounds before a point may stop on its interval.
    #[serde(default = "one")]
    pub min_rounds: u32,
    /// Stop a point once the 95 % interval of its median is within ± this
    /// fraction of the median (0.01 = ±1 %).
    #[serde(default = "default_target_ci")]
    pub target_ci: f64,
    /// Seconds for the whole sweep (warm-up, allocation and validation
    /// included); `None`: only `max_seconds` per point bounds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_seconds: Option<f64>,
    /// Under a budget, measure as many points as it reaches, in fewer
    /// rounds if need be (`--budget-prefers points`). By default (false) a
    /// budget measures only the points it can give their minimum rounds,
    /// and skips the rest, saying what budget would include them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub budget_prefers_points: bool,
    /// Fewest samples a sampler keeps when its time runs out: 2, or 1 in a
    /// round of a rounds schedule (a point whose operations are slow gets
    /// rounds of one sample each, and its spread from the rounds). Set by
    /// the schedule, never stored.
    #[serde(skip, default = "two")]
    pub min_samples_on_time: usize,
}

fn one() -> u32 {
    1
}

fn two() -> usize {
    2
}

fn default_target_ci() -> f64 {
    0.01
}

impl Default for StopRule {
    fn default() -> Self {
        StopRule {
            warmup_seconds: 0.2,
            min_samples: 10,
            min_seconds: 0.5,
            max_seconds: 1.0,
            target_rsd: 0.005,
            sample_seconds: 0.001,
            max_samples: 10_000,
            rounds: 5,
            min_rounds: 3,
            target_ci: 0.01,
            budget_seconds: None,
            budget_prefers_points: false,
            min_samples_on_time: 2,
        }
    }
}

impl StopRule {
    /// Human-readable one-liner for reports and `--help`.
    pub fn describe(&self) -> String {
        let within = format!(
            "samples of ≥ {:.1} ms each until their relative standard deviation is ≤ {:.2} %",
            self.sample_seconds * 1e3,
            self.target_rsd * 100.0,
        );
        if self.rounds <= 1 {
            return format!(
                "warm-up {:.2} s; then {within} with ≥ {} samples and ≥ {:.2} s measured, or {:.1} s have passed",
                self.warmup_seconds, self.min_samples, self.min_seconds, self.max_seconds
            );
        }
        let budget = match self.budget_seconds {
            Some(b) if self.budget_prefers_points => {
                format!("; the whole sweep within {b:.1} s, as many points as it reaches, in fewer rounds if need be")
            }
            Some(b) => format!(
                "; the whole sweep within {b:.1} s, measuring only the points it can give {} rounds (the rest skipped, \
                 with the budget that would include them)",
                self.min_rounds
            ),
            None => String::new(),
        };
        format!(
            "every point once per round, in a shuffled order, for {}–{} rounds; in each round {within}, or the round's \
             share of the point's time is spent; a point stops once the 95 % interval of its median is within \
             ±{:.1} % (after {} rounds), or after {:.1} s{budget}",
            self.min_rounds,
            self.rounds,
            self.target_ci * 100.0,
            self.min_rounds,
            self.max_seconds
        )
    }

    /// The rule the sampler follows in one round of a point: `slice` seconds
    /// at most, the point's minimums spread over its rounds, and a full
    /// warm-up only in the first round (later ones start from its batch).
    pub fn for_round(&self, round: u32, slice: f64) -> StopRule {
        let rounds = self.rounds.max(1);
        StopRule {
            warmup_seconds: if round == 0 { self.warmup_seconds.min(slice * 0.3) } else { 0.0 },
            min_samples: if rounds == 1 { self.min_samples } else { self.min_samples.div_ceil(rounds as usize).max(3) },
            min_seconds: (self.min_seconds / rounds as f64).min(slice),
            max_seconds: slice,
            max_samples: self.max_samples.div_ceil(rounds as usize).max(2),
            rounds: 1,
            min_rounds: 1,
            budget_seconds: None,
            min_samples_on_time: if rounds == 1 { self.min_samples_on_time } else { 1 },
            ..self.clone()
        }
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
    /// `run exec --partitions N`: each instance's CPU set (empty: one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<Vec<usize>>,
    /// `run exec --partition-devices LIST` (manifest v6): each instance's
    /// GPU, one per CPU set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition_devices: Vec<String>,
    /// Milliseconds between readings of the GPUs' sensors during each
    /// repetition (0: none; manifests before v8 read 0).
    #[serde(default)]
    pub telemetry_ms: u32,
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
