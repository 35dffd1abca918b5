//! The typed run configuration a manifest records: a local sweep's
//! [`BenchConfig`], an MPI job's, an import's files, or a `run exec`
//! command ([`RunConfig`]). Written once by each source and read once by
//! every command that needs it; the JSON is the same as the untyped one it
//! replaced, so every stored manifest still reads (a test reads them all).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::vocab::benches::{Bench, Family};
use crate::vocab::facts::{ExecSpec, StopRule};
use crate::vocab::kinds::{BackendKind, CacheMode, CopyMethod, Dtype, Fp8Accum, GemmLayout};

/// Everything a run needs to know, after flags, presets and defaults.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchConfig {
    /// The preset the run started from.
    pub preset: Preset,
    /// Benchmarks to run, in order.
    pub benches: Vec<Bench>,
    /// Backends to run on (`cpu`, `cuda`, `hip`); empty means every one compiled in.
    #[serde(default)]
    pub backends: Vec<BackendKind>,
    /// memcpy: bytes copied per operation.
    pub memcpy_sizes: Vec<u64>,
    /// stream: bytes per array (three arrays are allocated).
    pub stream_sizes: Vec<u64>,
    /// Thread counts for CPU benchmarks.
    pub threads: Vec<u32>,
    /// gemm: (m, n, k) shapes.
    pub gemm_shapes: Vec<[u64; 3]>,
    /// gemm: element types (`f32`, `f64`).
    pub gemm_dtypes: Vec<Dtype>,
    /// p2p bandwidth message sizes.
    #[serde(default)]
    pub p2p_sizes: Vec<u64>,
    /// p2p ping-pong latency message sizes.
    #[serde(default)]
    pub latency_sizes: Vec<u64>,
    /// Collective sizes (nccl-tests' size: the bytes algbw divides by).
    #[serde(default)]
    pub collective_sizes: Vec<u64>,
    /// p2p one-sided `put`: concurrent channels to sweep (1 = one operation
    /// at a time; more are measured with both strategies, `split` and
    /// `round_robin`).
    #[serde(default = "one_channel")]
    pub p2p_channels: Vec<u32>,
    /// p2p one-sided `put`/`get`: operations issued between two flushes
    /// (1 = a flush after every operation, the write-up's blocking form).
    #[serde(default = "default_sync_every")]
    pub p2p_sync_every: Vec<u32>,
    /// GPU device copies: `copy_engine` and/or `sm_kernel`.
    #[serde(default = "default_copy_methods")]
    pub gpu_copy_methods: Vec<CopyMethod>,
    /// GPU device copies: `warm` and/or `cold` (L2 flushed before each operation). GEMMs run warm.
    #[serde(default = "default_cache_modes")]
    pub gpu_cache_modes: Vec<CacheMode>,
    /// memcpy-peer with `sm_kernel`: kernel grids (blocks) to sweep for the
    /// peer-write kernel, as the NVLink IPC write-up does (empty: none).
    #[serde(default = "default_peer_grids")]
    pub gpu_peer_grids: Vec<u32>,
    /// memcpy-peer with `sm_kernel`: threads per block to sweep (at most 1024).
    #[serde(default = "default_peer_blocks")]
    pub gpu_peer_blocks: Vec<u32>,
    /// GPU gemm: (m, n, k) shapes.
    #[serde(default)]
    pub gpu_gemm_shapes: Vec<[u64; 3]>,
    /// GPU gemm: `f32`, `tf32`, `f16`, `bf16`, `fp8` (E4M3).
    #[serde(default)]
    pub gpu_gemm_dtypes: Vec<Dtype>,
    /// GPU gemm: operand layouts (`nn`: what `torch.matmul` runs on
    /// row-major tensors; FP8 always runs `tn`). Runs before layouts were
    /// recorded read as `tn`, the one layout they ran.
    #[serde(default = "stored_layouts")]
    pub gpu_gemm_layouts: Vec<GemmLayout>,
    /// GPU gemm, FP8: accumulation modes to measure.
    #[serde(default = "default_fp8_accum")]
    pub gpu_fp8_accum: Vec<Fp8Accum>,
    /// GPU gemm: how many of the library heuristic's algorithms to time
    /// before measuring, keeping the fastest (1: the heuristic's first).
    #[serde(default = "one_algo")]
    pub gpu_gemm_algos: u32,
    /// Milliseconds between telemetry readings (clocks, power, throttle
    /// reasons, energy) beside every point; 0: no telemetry (runs before
    /// manifest v8 sampled none).
    #[serde(default)]
    pub telemetry_ms: u32,
    /// `--telemetry-ab`: every point's rounds alternate with the sampler
    /// on (even rounds) and paused (odd rounds), so that its cost can be
    /// read from one run (`scripts/telemetry_overhead.py`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub telemetry_ab: bool,
    pub stop: StopRule,
    /// `run --partitions N`: the CPU set of each concurrent instance (empty:
    /// one instance on every CPU the process may use).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<Vec<usize>>,
    /// `run --partition-devices LIST` (manifest v6): each instance's GPU (a
    /// device index, or a MIG instance's UUID), handed to it as
    /// `CUDA_VISIBLE_DEVICES` and `HIP_VISIBLE_DEVICES`; one per CPU set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition_devices: Vec<String>,
}

pub(crate) fn default_copy_methods() -> Vec<CopyMethod> {
    CopyMethod::ALL.to_vec()
}

pub(crate) fn default_layouts() -> Vec<GemmLayout> {
    vec![GemmLayout::Nn]
}

fn stored_layouts() -> Vec<GemmLayout> {
    vec![GemmLayout::Tn]
}

pub(crate) fn default_fp8_accum() -> Vec<Fp8Accum> {
    vec![Fp8Accum::Promoted]
}

pub(crate) fn one_algo() -> u32 {
    1
}

/// The telemetry sampler's default interval: 20 ms (the 10-50 ms;
/// NVML's power reading is itself averaged over about that).
pub const TELEMETRY_MS: u32 = 20;

pub(crate) fn one_channel() -> Vec<u32> {
    vec![1]
}

pub(crate) fn default_sync_every() -> Vec<u32> {
    vec![1, 64]
}

pub(crate) fn default_peer_grids() -> Vec<u32> {
    vec![1, 16, 128]
}

pub(crate) fn default_peer_blocks() -> Vec<u32> {
    vec![256]
}

pub(crate) fn default_cache_modes() -> Vec<CacheMode> {
    vec![CacheMode::Warm]
}

/// Named starting points for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// About a minute: memcpy 4 KiB..256 MiB, STREAM at three sizes, small GEMMs.
    Quick,
    /// The seed write-ups' sweeps: memcpy 4 KiB..2 GiB, every thread count, larger GEMMs.
    Full,
    /// One GPU node in one command (seeds 001 and 002): device copies (copy
    /// engine and SM kernel, warm and cold L2), h2d/d2h (pinned and
    /// pageable), GEMM over the squares and Llama-70B shapes in every dtype
    /// the GPU supports, within a 420 s budget.
    Gpu,
}

impl Preset {
    pub fn name(self) -> &'static str {
        match self {
            Preset::Quick => "quick",
            Preset::Full => "full",
            Preset::Gpu => "gpu",
        }
    }
}

/// One rank of an MPI job, as the manifest lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RankInfo {
    pub rank: u32,
    /// The rank's node: Slurm's node name when srun started it, else the
    /// host name.
    pub host: String,
    pub pid: u32,
    /// The rank's CPU (or GPU) as it saw it.
    pub device: String,
}

/// What an MPI job found: the library, the ranks and GPU awareness.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MpiFacts {
    pub library: String,
    pub ranks: Vec<RankInfo>,
    #[serde(default)]
    pub cuda_aware: Option<bool>,
    #[serde(default)]
    pub rocm_aware: Option<bool>,
    /// The GPU backend whose buffers the ranks handed to MPI, if any.
    #[serde(default)]
    pub device_buffers: Option<String>,
}

impl MpiFacts {
    /// Whether every rank ran on one host (their transfers went through
    /// shared memory, not a network port).
    pub fn one_host(&self) -> bool {
        let mut hosts: Vec<&str> = self.ranks.iter().map(|r| r.host.as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        hosts.len() == 1
    }
}

/// An MPI job's configuration: the MPI part of a [`BenchConfig`] and what
/// the job found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MpiConfig {
    pub preset: Preset,
    pub benches: Vec<Bench>,
    pub p2p_sizes: Vec<u64>,
    pub latency_sizes: Vec<u64>,
    pub collective_sizes: Vec<u64>,
    #[serde(default = "one_channel")]
    pub p2p_channels: Vec<u32>,
    #[serde(default = "default_sync_every")]
    pub p2p_sync_every: Vec<u32>,
    pub stop: StopRule,
    pub mpi: MpiFacts,
}

impl MpiConfig {
    /// The job's part of `cfg`, with what the job found.
    pub fn of(cfg: &BenchConfig, mpi: MpiFacts) -> Self {
        MpiConfig {
            preset: cfg.preset,
            benches: cfg.benches.clone(),
            p2p_sizes: cfg.p2p_sizes.clone(),
            latency_sizes: cfg.latency_sizes.clone(),
            collective_sizes: cfg.collective_sizes.clone(),
            p2p_channels: cfg.p2p_channels.clone(),
            p2p_sync_every: cfg.p2p_sync_every.clone(),
            stop: cfg.stop.clone(),
            mpi,
        }
    }
}

/// One file of an import, as the manifest records it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ImportedFile {
    /// The path given on the command line.
    pub file: String,
    /// The format that read it (`nccl-tests`, `perftest`, ...).
    pub tool: String,
    pub tool_version: Option<String>,
    /// The command line that produced the output, when the file holds it.
    pub command: Option<String>,
    /// The tool's own settings line.
    pub settings: Option<String>,
    pub records: usize,
    pub device_given: Option<String>,
    pub host_given: Option<String>,
    pub warnings: Vec<String>,
    /// The write-up family its importer declares (absent before
    /// manifests recorded it; the report then goes by the rows' `bench`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<Family>,
    /// The link the log names, by type (`IB (mlx5_0)`); absent where it
    /// names none, and in manifests written before this was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// A `run exec` run: the command and the tool versions seen.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ExecConfig {
    pub exec: ExecSpec,
    #[serde(default)]
    pub tools: BTreeMap<String, String>,
}

pub use super::gate::{GateConfig, GateRecord};

/// What a run was configured to do, by kind of run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RunConfig {
    /// `benchbook run` on this machine.
    Sweep(Box<BenchConfig>),
    /// `benchbook run p2p collective` under `mpirun`/`srun`.
    Mpi(Box<MpiConfig>),
    /// `benchbook import`.
    Import { import: Vec<ImportedFile> },
    /// `benchbook run exec`.
    Exec(ExecConfig),
    /// `benchbook fleet gate`'s verdict (manifest v9).
    Gate(GateConfig),
}

impl<'de> Deserialize<'de> for RunConfig {
    /// By the key each kind alone has, so that an error names the field
    /// of the kind it is (an untagged enum would only say "no variant").
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_json::Value::deserialize(d)?;
        let has = |k: &str| v.get(k).is_some();
        let e = |kind: &str, err: serde_json::Error| D::Error::custom(format!("{kind} configuration: {err}"));
        if has("import") {
            #[derive(Deserialize)]
            struct Import {
                import: Vec<ImportedFile>,
            }
            let i: Import = serde_json::from_value(v).map_err(|x| e("import", x))?;
            Ok(RunConfig::Import { import: i.import })
        } else if has("gate") {
            serde_json::from_value(v).map(RunConfig::Gate).map_err(|x| e("gate", x))
        } else if has("exec") {
            serde_json::from_value(v).map(RunConfig::Exec).map_err(|x| e("run exec", x))
        } else if has("mpi") {
            serde_json::from_value(v).map(|c| RunConfig::Mpi(Box::new(c))).map_err(|x| e("MPI", x))
        } else {
            serde_json::from_value(v).map(|c| RunConfig::Sweep(Box::new(c))).map_err(|x| e("run", x))
        }
    }
}

impl RunConfig {
    /// The devices of `--partition-devices` (empty: none named).
    pub fn partition_devices(&self) -> &[String] {
        match self {
            RunConfig::Sweep(c) => &c.partition_devices,
            RunConfig::Exec(e) => &e.exec.partition_devices,
            RunConfig::Mpi(_) | RunConfig::Import { .. } | RunConfig::Gate(_) => &[],
        }
    }

    /// The CPU sets of `--partitions N` (empty: one instance).
    pub fn partitions(&self) -> &[Vec<usize>] {
        match self {
            RunConfig::Sweep(c) => &c.partitions,
            RunConfig::Exec(e) => &e.exec.partitions,
            RunConfig::Mpi(_) | RunConfig::Import { .. } | RunConfig::Gate(_) => &[],
        }
    }

    /// The preset a measured run started from.
    pub fn preset(&self) -> Option<Preset> {
        match self {
            RunConfig::Sweep(c) => Some(c.preset),
            RunConfig::Mpi(c) => Some(c.preset),
            RunConfig::Import { .. } | RunConfig::Exec(_) | RunConfig::Gate(_) => None,
        }
    }

    /// The benchmarks a measured run asked for.
    pub fn benches(&self) -> Option<&[Bench]> {
        match self {
            RunConfig::Sweep(c) => Some(&c.benches),
            RunConfig::Mpi(c) => Some(&c.benches),
            RunConfig::Import { .. } | RunConfig::Exec(_) | RunConfig::Gate(_) => None,
        }
    }

    /// The stopping rule of a measured run.
    pub fn stop(&self) -> Option<&StopRule> {
        match self {
            RunConfig::Sweep(c) => Some(&c.stop),
            RunConfig::Mpi(c) => Some(&c.stop),
            RunConfig::Import { .. } | RunConfig::Exec(_) | RunConfig::Gate(_) => None,
        }
    }

    /// The files of an import (empty for any other run).
    pub fn imported(&self) -> &[ImportedFile] {
        match self {
            RunConfig::Import { import } => import,
            _ => &[],
        }
    }

    /// The MPI job's facts, for an MPI run.
    pub fn mpi(&self) -> Option<&MpiFacts> {
        match self {
            RunConfig::Mpi(c) => Some(&c.mpi),
            _ => None,
        }
    }

    /// The command of a `run exec` run.
    pub fn exec(&self) -> Option<&ExecConfig> {
        match self {
            RunConfig::Exec(c) => Some(c),
            _ => None,
        }
    }
}
