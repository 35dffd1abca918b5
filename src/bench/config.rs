//! The resolved, validated run configuration and the named presets. Raw CLI
//! flags are turned into a [`BenchConfig`] once (in `cli`), and the config is
//! stored verbatim in the manifest so a run can be repeated exactly.

use std::fmt::Display;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::gpu::{GPU_BENCHES, GPU_DTYPES, GPU_ONLY_BENCHES};
use super::sampler::StopRule;
use crate::error::{Error, Result};
use crate::vocab::kinds::{BackendKind, CacheMode, CopyMethod, UnknownName};

/// Benchmarks the CPU backend knows.
pub const CPU_BENCHES: [&str; 3] = ["memcpy", "stream", "gemm"];
/// Benchmarks a default run asks for: the CPU's, plus the GPU-only ones
/// (skipped, with the reason, where no GPU backend is usable).
pub const DEFAULT_BENCHES: [&str; 6] = ["memcpy", "stream", "gemm", "memcpy-peer", "h2d", "d2h"];
/// Benchmarks that run across MPI ranks (the `mpi` feature).
pub const MPI_BENCHES: [&str; 2] = ["p2p", "collective"];

/// Everything a run needs to know, after flags, presets and defaults.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchConfig {
    /// The preset the run started from.
    pub preset: String,
    /// Benchmarks to run, in order.
    pub benches: Vec<String>,
    /// Backends to run on (`cpu`, `cuda`, `hip`); empty means every one compiled in.
    #[serde(default)]
    pub backends: Vec<String>,
    /// memcpy: bytes copied per operation.
    pub memcpy_sizes: Vec<u64>,
    /// stream: bytes per array (three arrays are allocated).
    pub stream_sizes: Vec<u64>,
    /// Thread counts for CPU benchmarks.
    pub threads: Vec<u32>,
    /// gemm: (m, n, k) shapes.
    pub gemm_shapes: Vec<[u64; 3]>,
    /// gemm: element types (`f32`, `f64`).
    pub gemm_dtypes: Vec<String>,
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
    pub gpu_copy_methods: Vec<String>,
    /// GPU device copies: `warm` and/or `cold` (L2 flushed before each operation). GEMMs run warm.
    #[serde(default = "default_cache_modes")]
    pub gpu_cache_modes: Vec<String>,
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
    pub gpu_gemm_dtypes: Vec<String>,
    pub stop: StopRule,
}

fn default_copy_methods() -> Vec<String> {
    CopyMethod::ALL.iter().map(|m| m.name().to_string()).collect()
}

/// What `backends` may name (MPI is chosen by benchmark, not by backend).
const BACKENDS: &[BackendKind] = &[BackendKind::Cpu, BackendKind::Cuda, BackendKind::Hip];

/// Every value must name one of `allowed`, a part of a closed vocabulary
/// `K`; the error names the flag, the value and the choices.
fn check_names<K>(flag: &str, what: &'static str, allowed: &[K], values: &[String]) -> Result<()>
where
    K: FromStr<Err = UnknownName> + Display + Copy + PartialEq,
{
    for v in values {
        if !v.parse::<K>().is_ok_and(|k| allowed.contains(&k)) {
            let choices = allowed.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
            return Err(Error::config(flag, UnknownName { what, value: v.trim().to_string(), choices }.to_string()));
        }
    }
    Ok(())
}

fn one_channel() -> Vec<u32> {
    vec![1]
}

fn default_sync_every() -> Vec<u32> {
    vec![1, 64]
}

fn default_peer_grids() -> Vec<u32> {
    vec![1, 16, 128]
}

fn default_peer_blocks() -> Vec<u32> {
    vec![256]
}

fn default_cache_modes() -> Vec<String> {
    vec!["warm".into()]
}

/// The seed `002_*` Llama-70B training GEMM shapes (m × n × k).
pub const LLAMA70B_SHAPES: [[u64; 3]; 7] = [
    [8192, 8192, 8192],
    [16384, 8192, 7168],
    [16384, 16384, 16384],
    [16384, 1024, 8192],
    [16384, 3584, 8192],
    [4096, 4096, 4096],
    [16384, 8192, 1280],
];

/// Named starting points for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Preset {
    /// About a minute: memcpy 4 KiB..256 MiB, STREAM at three sizes, small GEMMs.
    Quick,
    /// The seed write-ups' sweeps: memcpy 4 KiB..2 GiB, every thread count, larger GEMMs.
    Full,
}

impl Preset {
    pub fn name(self) -> &'static str {
        match self {
            Preset::Quick => "quick",
            Preset::Full => "full",
        }
    }
}

fn default_threads(all: bool) -> Vec<u32> {
    let n = crate::host::logical_cpus().max(1) as u32;
    let mut t: Vec<u32> = if all { (0..).map(|i| 1u32 << i).take_while(|&t| t < n).collect() } else { vec![1] };
    t.push(n);
    t.sort_unstable();
    t.dedup();
    t
}

impl BenchConfig {
    /// The configuration a preset stands for on this machine.
    pub fn preset(p: Preset) -> Self {
        let pow2 = |lo: u32, hi: u32| (lo..=hi).map(|e| 1u64 << e).collect::<Vec<_>>();
        match p {
            Preset::Quick => BenchConfig {
                preset: p.name().into(),
                backends: Vec::new(),
                benches: DEFAULT_BENCHES.iter().map(|s| s.to_string()).collect(),
                memcpy_sizes: pow2(12, 28),
                stream_sizes: vec![1 << 23, 1 << 26, 1 << 28],
                threads: default_threads(false),
                gemm_shapes: vec![[256, 256, 256], [512, 512, 512], [1024, 1024, 1024]],
                gemm_dtypes: vec!["f32".into(), "f64".into()],
                p2p_sizes: pow2(12, 24),
                latency_sizes: pow2(3, 20),
                collective_sizes: pow2(12, 24),
                p2p_channels: one_channel(),
                p2p_sync_every: default_sync_every(),
                gpu_copy_methods: default_copy_methods(),
                gpu_cache_modes: default_cache_modes(),
                gpu_peer_grids: default_peer_grids(),
                gpu_peer_blocks: default_peer_blocks(),
                gpu_gemm_shapes: vec![[1024, 1024, 1024], [4096, 4096, 4096], [8192, 8192, 8192]],
                gpu_gemm_dtypes: vec!["f32".into(), "tf32".into(), "bf16".into()],
                stop: StopRule {
                    warmup_seconds: 0.05,
                    min_samples: 10,
                    min_seconds: 0.1,
                    max_seconds: 0.5,
                    ..StopRule::default()
                },
            },
            Preset::Full => BenchConfig {
                preset: p.name().into(),
                backends: Vec::new(),
                benches: DEFAULT_BENCHES.iter().map(|s| s.to_string()).collect(),
                // The seeds sweep powers of two up to the Llama-3 embedding
                // table (2_101_346_304 bytes), i.e. up to 1 GiB; 2 GiB is the
                // issue's "4 KiB .. 2 GiB".
                memcpy_sizes: pow2(12, 31),
                stream_sizes: pow2(20, 30),
                threads: default_threads(true),
                gemm_shapes: vec![
                    [256, 256, 256],
                    [512, 512, 512],
                    [1024, 1024, 1024],
                    [2048, 2048, 2048],
                    [4096, 4096, 4096],
                ],
                gemm_dtypes: vec!["f32".into(), "f64".into()],
                // The seed's MPI sweep: 4 KiB .. 1 GiB.
                p2p_sizes: pow2(12, 30),
                latency_sizes: pow2(3, 20),
                collective_sizes: pow2(12, 30),
                p2p_channels: vec![1, 2, 4],
                p2p_sync_every: default_sync_every(),
                gpu_copy_methods: default_copy_methods(),
                gpu_cache_modes: vec!["warm".into(), "cold".into()],
                // The write-up's IPC sweep: 1 to 256 blocks, 64 to 1024 threads each.
                gpu_peer_grids: vec![1, 4, 16, 64, 128, 256],
                gpu_peer_blocks: vec![64, 256, 1024],
                // The squares 1024..16384, then the seed's Llama-70B shapes.
                gpu_gemm_shapes: (10..=14)
                    .map(|e| [1u64 << e; 3])
                    .chain(LLAMA70B_SHAPES.iter().copied().filter(|s| s[0] != s[1] || s[1] != s[2]))
                    .collect(),
                gpu_gemm_dtypes: GPU_DTYPES.iter().map(|d| d.name().to_string()).collect(),
                stop: StopRule::default(),
            },
        }
    }

    /// Check what flags cannot check one by one.
    pub fn validate(&self) -> Result<()> {
        for b in &self.benches {
            if !known_bench(b) {
                return Err(Error::config("BENCH", format!("unknown benchmark `{b}`; known: {}", known_benches())));
            }
        }
        let mpi = self.benches.iter().filter(|b| MPI_BENCHES.contains(&b.as_str())).count();
        if mpi > 0 && mpi < self.benches.len() {
            return Err(Error::config(
                "BENCH",
                "MPI benchmarks (p2p, collective) run in their own job under mpirun; run the CPU benchmarks separately",
            ));
        }
        if self.threads.iter().any(|&t| t == 0) {
            return Err(Error::config("--threads", "thread counts must be at least 1"));
        }
        for d in &self.gemm_dtypes {
            if d != "f32" && d != "f64" {
                return Err(Error::config("--dtypes", format!("`{d}` is not a CPU GEMM type; use f32 or f64")));
            }
        }
        check_names("--backend", "backend", BACKENDS, &self.backends)?;
        check_names("--gpu-dtypes", "GPU GEMM dtype", &GPU_DTYPES, &self.gpu_gemm_dtypes)?;
        check_names("--copy-methods", "copy method", CopyMethod::ALL, &self.gpu_copy_methods)?;
        check_names("--cache", "cache mode", CacheMode::ALL, &self.gpu_cache_modes)?;
        if let Some(b) = self.gpu_peer_blocks.iter().find(|&&b| b == 0 || b > crate::vocab::launch::MAX_BLOCK) {
            return Err(Error::config(
                "--block",
                format!("{b} threads per block: a block has 1 to {} threads", crate::vocab::launch::MAX_BLOCK),
            ));
        }
        if self.gpu_peer_grids.contains(&0) {
            return Err(Error::config("--grid", "a grid has at least one block"));
        }
        let s = &self.stop;
        if !(s.target_rsd > 0.0 && s.target_rsd.is_finite()) {
            return Err(Error::config("--target-rsd", "must be a positive fraction, e.g. 0.005 for 0.5 %"));
        }
        for (flag, v) in [("--min-time", s.min_seconds), ("--max-time", s.max_seconds), ("--warmup", s.warmup_seconds)]
        {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::config(
                    flag,
                    format!("{v} is not a number of seconds; give a finite value ≥ 0, e.g. 0.5"),
                ));
            }
        }
        if s.max_seconds < s.min_seconds {
            return Err(Error::config(
                "--max-time",
                format!("{} s is below --min-time {} s", s.max_seconds, s.min_seconds),
            ));
        }
        if s.rounds == 0 {
            return Err(Error::config("--rounds", "must be at least 1"));
        }
        if !(s.target_ci > 0.0 && s.target_ci.is_finite()) {
            return Err(Error::config("--target-ci", "must be a positive fraction, e.g. 0.01 for ±1 %"));
        }
        if let Some(b) = s.budget_seconds {
            if !(b.is_finite() && b > 0.0) {
                return Err(Error::config(
                    "--budget",
                    format!("{b} is not a number of seconds; give a finite value > 0, e.g. 17"),
                ));
            }
        }
        if s.min_samples == 0 {
            return Err(Error::config("--min-samples", "must be at least 1"));
        }
        Ok(())
    }
}

/// Whether `name` is a benchmark some backend implements.
pub fn known_bench(name: &str) -> bool {
    CPU_BENCHES.contains(&name) || MPI_BENCHES.contains(&name) || GPU_BENCHES.contains(&name)
}

/// Every benchmark name, for error messages.
pub fn known_benches() -> String {
    let all: Vec<&str> = CPU_BENCHES.iter().chain(&GPU_ONLY_BENCHES).chain(&MPI_BENCHES).copied().collect();
    all.join(", ")
}

/// Parse `MxNxK` or `N` (a cube) shape lists: `1024,4096x4096x1024`.
pub fn parse_shapes(text: &str) -> Result<Vec<[u64; 3]>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let dims: Vec<&str> = part.split(['x', 'X']).collect();
        let parse = |s: &str| {
            crate::vocab::units::parse_size(s).ok().filter(|&v| v > 0).ok_or_else(|| {
                Error::config("--shapes", format!("`{part}`: `{s}` is not a positive integer; write N or MxNxK"))
            })
        };
        let shape = match dims.as_slice() {
            [n] => {
                let n = parse(n)?;
                [n, n, n]
            }
            [m, n, k] => [parse(m)?, parse(n)?, parse(k)?],
            _ => return Err(Error::config("--shapes", format!("`{part}`: write N or MxNxK"))),
        };
        out.push(shape);
    }
    if out.is_empty() {
        return Err(Error::config("--shapes", "no shapes given; write e.g. 1024,4096x4096x1024"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate() {
        BenchConfig::preset(Preset::Quick).validate().unwrap();
        BenchConfig::preset(Preset::Full).validate().unwrap();
        assert_eq!(*BenchConfig::preset(Preset::Full).memcpy_sizes.last().unwrap(), 2 << 30);
    }

    #[test]
    fn shapes_parse() {
        assert_eq!(parse_shapes("8").unwrap(), vec![[8, 8, 8]]);
        assert_eq!(parse_shapes("2x3x4, 1K").unwrap(), vec![[2, 3, 4], [1024, 1024, 1024]]);
        let e = parse_shapes("2x3").unwrap_err().to_string();
        assert!(e.contains("--shapes") && e.contains("MxNxK"), "{e}");
    }

    #[test]
    fn bad_config_names_the_flag() {
        let mut c = BenchConfig::preset(Preset::Quick);
        c.benches.push("nope".into());
        assert!(c.validate().unwrap_err().to_string().contains("unknown benchmark `nope`"));
        let mut c = BenchConfig::preset(Preset::Quick);
        c.gemm_dtypes = vec!["bf16".into()];
        assert!(c.validate().unwrap_err().to_string().starts_with("--dtypes"));
    }
}
