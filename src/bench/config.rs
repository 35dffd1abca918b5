//! The named presets and the checks of a run configuration ([`BenchConfig`],
//! declared in `vocab::config` so the manifest can hold it typed). Raw CLI
//! flags are turned into a `BenchConfig` once (in `cli`), and the config is
//! stored verbatim in the manifest so a run can be repeated exactly.

use std::fmt::Display;
use std::str::FromStr;

use super::gpu::GPU_DTYPES;
use crate::error::{Error, Result};
use crate::vocab::benches::Bench;
use crate::vocab::config::{
    default_cache_modes, default_copy_methods, default_fp8_accum, default_layouts, default_peer_blocks,
    default_peer_grids, default_sync_every, one_algo, one_channel, TELEMETRY_MS,
};
pub use crate::vocab::config::{BenchConfig, Preset};
use crate::vocab::facts::StopRule;
use crate::vocab::kinds::{BackendKind, CacheMode, Dtype, UnknownName};

/// What `backends` may name (MPI is chosen by benchmark, not by backend).
pub const BACKENDS: &[BackendKind] = &[BackendKind::Cpu, BackendKind::Cuda, BackendKind::Hip];
/// The CPU GEMM's element types.
pub const CPU_GEMM_DTYPES: &[Dtype] = &[Dtype::F32, Dtype::F64];

/// Parse a comma-separated `--flag` list of a closed vocabulary `K`, each
/// value one of `allowed`; the error names the flag, the value and the
/// choices. The one place flag text becomes typed names.
pub fn parse_names<K>(flag: &str, what: &'static str, allowed: &[K], text: &str) -> Result<Vec<K>>
where
    K: FromStr<Err = UnknownName> + Display + Copy + PartialEq,
{
    let mut out = Vec::new();
    for v in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match v.parse::<K>() {
            Ok(k) if allowed.contains(&k) => out.push(k),
            _ => return Err(not_one_of(flag, what, allowed, v)),
        }
    }
    Ok(out)
}

/// `value` given for `flag` is not one of `allowed`: the error names the
/// flag, the value and the choices.
fn not_one_of<K: Display>(flag: &str, what: &'static str, allowed: &[K], value: impl Display) -> Error {
    let choices = allowed.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
    Error::config(flag, UnknownName { what, value: value.to_string(), choices }.to_string())
}

/// The seed `002_*` Llama-70B training GEMM shapes (m × n × k), in the
/// order of [`crate::vocab::gemm::LLAMA70B_ROLES`], which names them.
pub const LLAMA70B_SHAPES: [[u64; 3]; 7] = {
    let r = crate::vocab::gemm::LLAMA70B_ROLES;
    [r[0].0, r[1].0, r[2].0, r[3].0, r[4].0, r[5].0, r[6].0]
};

fn default_threads(all: bool) -> Vec<u32> {
    let n = crate::host::usable_cpus().max(1) as u32;
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
                preset: p,
                backends: Vec::new(),
                benches: Bench::default_run(),
                memcpy_sizes: pow2(12, 28),
                stream_sizes: vec![1 << 23, 1 << 26, 1 << 28],
                threads: default_threads(false),
                gemm_shapes: vec![[256, 256, 256], [512, 512, 512], [1024, 1024, 1024]],
                gemm_dtypes: vec![Dtype::F32, Dtype::F64],
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
                gpu_gemm_dtypes: vec![Dtype::F32, Dtype::Tf32, Dtype::Bf16],
                gpu_gemm_layouts: default_layouts(),
                gpu_fp8_accum: default_fp8_accum(),
                gpu_gemm_algos: one_algo(),
                telemetry_ms: TELEMETRY_MS,
                telemetry_ab: false,
                stop: StopRule {
                    warmup_seconds: 0.05,
                    min_samples: 10,
                    min_seconds: 0.1,
                    max_seconds: 0.5,
                    ..StopRule::default()
                },
                partitions: Vec::new(),
                partition_devices: Vec::new(),
            },
            Preset::Full => BenchConfig {
                preset: p,
                backends: Vec::new(),
                benches: Bench::default_run(),
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
                gemm_dtypes: vec![Dtype::F32, Dtype::F64],
                // The seed's MPI sweep: 4 KiB .. 1 GiB.
                p2p_sizes: pow2(12, 30),
                latency_sizes: pow2(3, 20),
                collective_sizes: pow2(12, 30),
                p2p_channels: vec![1, 2, 4],
                p2p_sync_every: default_sync_every(),
                gpu_copy_methods: default_copy_methods(),
                gpu_cache_modes: vec![CacheMode::Warm, CacheMode::Cold],
                // The write-up's IPC sweep: 1 to 256 blocks, 64 to 1024 threads each.
                gpu_peer_grids: vec![1, 4, 16, 64, 128, 256],
                gpu_peer_blocks: vec![64, 256, 1024],
                // The squares 1024..16384, then the seed's Llama-70B shapes.
                gpu_gemm_shapes: (10..=14)
                    .map(|e| [1u64 << e; 3])
                    .chain(LLAMA70B_SHAPES.iter().copied().filter(|s| s[0] != s[1] || s[1] != s[2]))
                    .collect(),
                gpu_gemm_dtypes: GPU_DTYPES.to_vec(),
                gpu_gemm_layouts: default_layouts(),
                gpu_fp8_accum: default_fp8_accum(),
                gpu_gemm_algos: one_algo(),
                telemetry_ms: TELEMETRY_MS,
                telemetry_ab: false,
                stop: StopRule::default(),
                partitions: Vec::new(),
                partition_devices: Vec::new(),
            },
            Preset::Gpu => {
                let full = BenchConfig::preset(Preset::Full);
                BenchConfig {
                    preset: p,
                    // The GPU backends only: the host's own memcpy and GEMM
                    // are `run quick`'s business.
                    backends: vec![BackendKind::Cuda, BackendKind::Hip],
                    benches: vec![Bench::Memcpy, Bench::H2d, Bench::D2h, Bench::Gemm],
                    // 4 KiB..2 GiB, every other power of two below 1 MiB
                    // (small copies cost their latency, which is flat there).
                    memcpy_sizes: (12..=31).filter(|&e| e >= 20 || e % 2 == 0).map(|e| 1u64 << e).collect(),
                    gpu_cache_modes: vec![CacheMode::Warm, CacheMode::Cold],
                    gpu_gemm_algos: 4,
                    stop: StopRule { budget_seconds: Some(420.0), max_seconds: 420.0, ..StopRule::default() },
                    ..full
                }
            }
        }
    }

    /// Check what spans several fields, and what a stored configuration
    /// (read back for `rerun`) could hold that flags would have refused.
    pub fn validate(&self) -> Result<()> {
        if let Some(b) = self.benches.iter().find(|b| !b.is_runnable()) {
            return Err(Error::config(
                "BENCH",
                format!("`{b}` is imported from its tool's output, not run; benchmarks: {}", known_benches()),
            ));
        }
        let mpi = self.benches.iter().filter(|b| b.is_mpi()).count();
        if mpi > 0 && mpi < self.benches.len() {
            return Err(Error::config(
                "BENCH",
                "MPI benchmarks (p2p, collective) run in their own job under mpirun; run the CPU benchmarks separately",
            ));
        }
        if self.threads.contains(&0) {
            return Err(Error::config("--threads", "thread counts must be at least 1"));
        }
        if let Some(d) = self.gemm_dtypes.iter().find(|d| !CPU_GEMM_DTYPES.contains(d)) {
            return Err(Error::config("--dtypes", format!("`{d}` is not a CPU GEMM type; use f32 or f64")));
        }
        // Flags refuse these already; a stored configuration (rerun) may hold them.
        if let Some(b) = self.backends.iter().find(|b| !BACKENDS.contains(b)) {
            return Err(not_one_of("--backend", "backend", BACKENDS, b));
        }
        if let Some(d) = self.gpu_gemm_dtypes.iter().find(|d| !GPU_DTYPES.contains(d)) {
            return Err(not_one_of("--gpu-dtypes", "GPU GEMM dtype", &GPU_DTYPES, d));
        }
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

/// The benchmark `name` names, if `benchbook run` can measure it.
pub fn runnable_bench(name: &str) -> Option<Bench> {
    Bench::of(name).filter(|b| b.is_runnable())
}

/// Every benchmark `run` takes, for error messages.
pub fn known_benches() -> String {
    Bench::runnable().map(|b| b.name()).collect::<Vec<_>>().join(", ")
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
        c.benches.push(Bench::Rdma);
        assert!(c.validate().unwrap_err().to_string().contains("`rdma` is imported"));
        let mut c = BenchConfig::preset(Preset::Quick);
        c.gemm_dtypes = vec![Dtype::Bf16];
        assert!(c.validate().unwrap_err().to_string().starts_with("--dtypes"));
        let e = parse_names("--gpu-dtypes", "GPU GEMM dtype", &GPU_DTYPES, "bf16,int4").unwrap_err().to_string();
        assert!(e.starts_with("--gpu-dtypes") && e.contains("`int4`") && e.contains("fp8"), "{e}");
    }

    #[test]
    fn an_unknown_dtype_in_a_stored_configuration_is_refused_not_run_as_another() {
        // A manifest edited by hand (or written by a future version) that
        // asks for a GEMM type this build does not know must fail to read,
        // naming the value; before the configuration was typed, a GPU GEMM
        // of an unknown name ran as bf16 without a word.
        let mut v = serde_json::to_value(BenchConfig::preset(Preset::Quick)).unwrap();
        v["gpu_gemm_dtypes"] = serde_json::json!(["bf16", "int4"]);
        let e = serde_json::from_value::<BenchConfig>(v).unwrap_err().to_string();
        assert!(e.contains("int4"), "{e}");
    }
}
