//! `run` flags → a validated [`BenchConfig`]: the preset the words name
//! (`quick` by default), then every flag that was given, each read by the
//! helper for its kind (sizes, counts, shapes, names from a closed
//! vocabulary, plain numbers), then the checks only the whole config can
//! make ([`BenchConfig::validate`]). Errors name the flag and the fix.

use super::RunArgs;
use crate::bench::config::{
    known_benches, parse_names, parse_shapes, runnable_bench, BACKENDS, CPU_GEMM_DTYPES, LLAMA70B_SHAPES,
};
use crate::bench::gpu::GPU_DTYPES;
use crate::bench::{BenchConfig, Preset};
use crate::error::{Error, Result};
use crate::vocab::benches::Bench;
use crate::vocab::kinds::{CacheMode, CopyMethod, Fp8Accum, GemmLayout};
use crate::vocab::units::{parse_counts, parse_sizes};

/// Resolve `run` flags into a validated configuration (preset < flags).
pub fn resolve_config(a: &RunArgs) -> Result<BenchConfig> {
    if let Some(path) = &a.from_config {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let cfg: BenchConfig = serde_json::from_str(&text)
            .map_err(|e| Error::config("--from-config", format!("{}: {e}", path.display())))?;
        cfg.validate()?;
        return Ok(cfg);
    }
    let mut cfg = resolve_flags(a)?;
    (cfg.partitions, cfg.partition_devices) = partition_plan(a.partitions, &a.partition_devices)?;
    if !cfg.partitions.is_empty() && cfg.benches.iter().any(|b| b.is_mpi()) {
        return Err(Error::config(
            "--partitions",
            "MPI benchmarks run across ranks; partitions are for one machine's CPUs and GPUs",
        ));
    }
    Ok(cfg)
}

/// `--partitions N` and `--partition-devices LIST` as CPU sets and devices:
/// one instance per device when devices are named (N, if given, must
/// match), each on its own share of this process's CPUs. Nothing for one.
pub fn partition_plan(n: Option<usize>, devices: &[String]) -> Result<(Vec<Vec<usize>>, Vec<String>)> {
    let devices: Vec<String> = devices.iter().map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).collect();
    let n = match (n, devices.len()) {
        (Some(n), d) if d > 0 && n != d => {
            return Err(Error::config(
                "--partitions",
                format!("--partitions {n} but --partition-devices names {d} devices: one instance runs per device; drop --partitions"),
            ))
        }
        (_, d) if d > 0 => d,
        (Some(n), _) => n,
        (None, _) => 1,
    };
    if n < 2 {
        return Ok((Vec::new(), Vec::new()));
    }
    let cpus = crate::session::partitions::split_cpus(&crate::session::partitions::allowed_cpus(), n)?;
    Ok((cpus, devices))
}

fn resolve_flags(a: &RunArgs) -> Result<BenchConfig> {
    let (preset, benches) = presets_and_benches(&a.what)?;
    let mut cfg = BenchConfig::preset(preset);
    if !benches.is_empty() {
        cfg.benches = benches;
    }

    // Valued flags, in the order their errors are reported.
    set(&mut cfg.memcpy_sizes, &a.sizes, |s| parse_sizes("--sizes", s))?;
    if a.sizes.is_some() {
        // One --sizes for whichever size-swept benchmarks run.
        cfg.p2p_sizes = cfg.memcpy_sizes.clone();
        cfg.collective_sizes = cfg.memcpy_sizes.clone();
    }
    set(&mut cfg.latency_sizes, &a.latency_sizes, |s| parse_sizes("--latency-sizes", s))?;
    set(&mut cfg.stream_sizes, &a.stream_sizes, |s| parse_sizes("--stream-sizes", s))?;
    set(&mut cfg.threads, &a.threads, |s| parse_counts("--threads", s))?;
    set(&mut cfg.p2p_channels, &a.channels, |s| parse_counts("--channels", s))?;
    set(&mut cfg.p2p_sync_every, &a.sync_every, |s| parse_counts("--sync-every", s))?;
    set(&mut cfg.gemm_shapes, &a.shapes, parse_shapes)?;
    // Closed vocabularies become typed names here, once; the error names
    // the flag, the value and the choices.
    set(&mut cfg.gemm_dtypes, &a.dtypes, |s| parse_names("--dtypes", "CPU GEMM dtype", CPU_GEMM_DTYPES, s))?;
    set(&mut cfg.backends, &a.backend, |s| parse_names("--backend", "backend", BACKENDS, s))?;
    set(&mut cfg.gpu_gemm_shapes, &a.gpu_shapes, gpu_shapes)?;
    set(&mut cfg.gpu_gemm_dtypes, &a.gpu_dtypes, |s| parse_names("--gpu-dtypes", "GPU GEMM dtype", &GPU_DTYPES, s))?;
    set(&mut cfg.gpu_gemm_layouts, &a.layout, |s| parse_names("--layout", "GEMM layout", GemmLayout::ALL, s))?;
    set(&mut cfg.gpu_fp8_accum, &a.fp8_accum, |s| parse_names("--fp8-accum", "FP8 accumulation", Fp8Accum::ALL, s))?;
    if let Some(n) = a.gemm_algos {
        if !(1..=64).contains(&n) {
            return Err(Error::config("--gemm-algos", format!("{n} algorithms: give 1 to 64 (4-8 is usual)")));
        }
        cfg.gpu_gemm_algos = n;
    }
    if let Some(ms) = a.telemetry_ms {
        if ms > 10_000 {
            return Err(Error::config(
                "--telemetry-ms",
                format!("{ms} ms between readings: give 0 (off) to 10000 (20 is usual)"),
            ));
        }
        cfg.telemetry_ms = ms;
    }
    if a.telemetry_ab {
        if cfg.telemetry_ms == 0 {
            return Err(Error::config("--telemetry-ab", "needs the sampler on: drop --telemetry-ms 0"));
        }
        cfg.telemetry_ab = true;
    }
    set(&mut cfg.gpu_copy_methods, &a.copy_methods, |s| {
        parse_names("--copy-methods", "copy method", CopyMethod::ALL, s)
    })?;
    set(&mut cfg.gpu_cache_modes, &a.cache, |s| parse_names("--cache", "cache mode", CacheMode::ALL, s))?;
    set(&mut cfg.gpu_peer_grids, &a.grid, |s| parse_counts("--grid", s))?;
    set(&mut cfg.gpu_peer_blocks, &a.block, |s| parse_counts("--block", s))?;

    // The stopping rule: plain numbers, checked together by `validate`.
    let st = &mut cfg.stop;
    for (slot, given) in [
        (&mut st.target_rsd, a.target_rsd),
        (&mut st.min_seconds, a.min_time),
        (&mut st.max_seconds, a.max_time),
        (&mut st.warmup_seconds, a.warmup),
    ] {
        if let Some(v) = given {
            *slot = v;
        }
    }
    if let Some(n) = a.min_samples {
        st.min_samples = n;
    }
    if let Some(r) = a.rounds {
        st.rounds = r;
        st.min_rounds = st.min_rounds.min(r);
    }
    if let Some(t) = a.target_ci {
        st.target_ci = t;
    }
    if let Some(b) = a.budget {
        st.budget_seconds = Some(b);
        // A budget spreads over the points; a per-point cap the user did
        // not ask for must not leave it unspent.
        if a.max_time.is_none() {
            st.max_seconds = st.max_seconds.max(b);
        }
        st.budget_prefers_points = a.budget_prefers == Some(super::BudgetPrefers::Points);
    }
    cfg.validate()?;
    let cpus = crate::host::usable_cpus();
    if let Some(&t) = cfg.threads.iter().max().filter(|&&t| t as usize > cpus && !a.oversubscribe) {
        return Err(Error::config(
            "--threads",
            format!(
                "{t} threads on {cpus} logical CPUs: the extra threads time the scheduler, not the memory system. Use at most {cpus}, or pass --oversubscribe to measure it anyway"
            ),
        ));
    }
    Ok(cfg)
}

/// Read a flag's text into `slot` when the flag was given.
fn set<T>(slot: &mut T, given: &Option<String>, read: impl FnOnce(&str) -> Result<T>) -> Result<()> {
    if let Some(text) = given {
        *slot = read(text)?;
    }
    Ok(())
}

/// The positional words: presets (`quick`, `full`; the last one wins) and
/// benchmarks, in order.
fn presets_and_benches(words: &[String]) -> Result<(Preset, Vec<Bench>)> {
    let mut preset = Preset::Quick;
    let mut benches = Vec::new();
    for w in words {
        match w.as_str() {
            "quick" => preset = Preset::Quick,
            "full" => preset = Preset::Full,
            "gpu" => preset = Preset::Gpu,
            other => match runnable_bench(other) {
                Some(b) => benches.push(b),
                None => {
                    return Err(Error::config(
                        "PRESET|BENCH",
                        format!(
                            "`{other}` is neither a preset (quick, full, gpu) nor a benchmark ({})",
                            known_benches()
                        ),
                    ))
                }
            },
        }
    }
    Ok((preset, benches))
}

/// A comma-separated list, trimmed, without empty items.
fn list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
}

/// `--gpu-shapes`: shapes as for `--shapes`, and `llama70b` for the seed
/// 002 Llama-70B training shapes.
fn gpu_shapes(text: &str) -> Result<Vec<[u64; 3]>> {
    let (llama, rest): (Vec<String>, Vec<String>) = list(text).into_iter().partition(|p| p == "llama70b");
    let mut shapes = Vec::new();
    if !llama.is_empty() {
        shapes.extend(LLAMA70B_SHAPES);
    }
    if !rest.is_empty() {
        shapes.extend(parse_shapes(&rest.join(",")).map_err(|e| e.with_flag("--gpu-shapes"))?);
    }
    Ok(shapes)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn resolve(args: &[&str]) -> Result<BenchConfig> {
        let argv = ["benchbook", "run"].iter().chain(args);
        match Cli::try_parse_from(argv).expect("flags parse").command {
            Command::Run(a) => resolve_config(&a),
            other => panic!("not a run: {other:?}"),
        }
    }

    #[test]
    fn flags_override_the_preset() {
        let c = resolve(&["full", "memcpy", "--sizes", "4K,8K", "--gpu-shapes", "llama70b,64", "--min-samples", "3"])
            .unwrap();
        assert_eq!(c.preset, Preset::Full);
        assert_eq!(c.benches, vec![Bench::Memcpy]);
        assert_eq!(c.memcpy_sizes, vec![4096, 8192]);
        assert_eq!(c.p2p_sizes, c.memcpy_sizes);
        assert_eq!(c.collective_sizes, c.memcpy_sizes);
        assert_eq!(c.gpu_gemm_shapes.len(), LLAMA70B_SHAPES.len() + 1);
        assert_eq!(c.gpu_gemm_shapes.last(), Some(&[64, 64, 64]));
        assert_eq!(c.stop.min_samples, 3);
    }

    #[test]
    fn closed_lists_name_the_flag_and_the_choices() {
        let e = resolve(&["--backend", "cpu,mpi"]).unwrap_err().to_string();
        assert_eq!(e, "--backend: unknown backend `mpi`; choose from: cpu, cuda, hip");
        let e = resolve(&["--gpu-dtypes", "bf16, f64"]).unwrap_err().to_string();
        assert_eq!(e, "--gpu-dtypes: unknown GPU GEMM dtype `f64`; choose from: f32, tf32, f16, bf16, fp8");
        let c = resolve(&["--cache", " cold ,warm,", "--copy-methods", "sm_kernel"]).unwrap();
        assert_eq!(c.gpu_cache_modes, vec![CacheMode::Cold, CacheMode::Warm]);
        assert_eq!(c.gpu_copy_methods, vec![CopyMethod::SmKernel]);
        assert!(resolve(&["--dtypes", "bf16"]).unwrap_err().to_string().starts_with("--dtypes"));
        assert!(resolve(&["--gpu-shapes", "2x3"]).unwrap_err().to_string().starts_with("--gpu-shapes"));
    }

    #[test]
    fn impossible_numbers_are_refused_naming_the_flag() {
        let cpus = crate::host::usable_cpus();
        let too_many = (cpus * 4 + 1).to_string();
        let e = resolve(&["--threads", &too_many]).unwrap_err().to_string();
        assert!(
            e.starts_with("--threads") && e.contains("--oversubscribe") && e.contains(&format!("{cpus} logical CPUs")),
            "{e}"
        );
        assert!(resolve(&["--threads", &too_many, "--oversubscribe"]).is_ok());
        let e = resolve(&["--threads", "0"]).unwrap_err().to_string();
        assert!(e.starts_with("--threads: counts must be positive"), "{e}");
        for (flag, value) in [("--warmup", "-1"), ("--min-time", "-0.5"), ("--max-time", "inf"), ("--max-time", "NaN")]
        {
            let e = resolve(&[&format!("{flag}={value}")]).unwrap_err().to_string();
            assert!(e.starts_with(flag) && e.contains("finite value"), "{flag} {value}: {e}");
        }
        let e = resolve(&["--target-rsd=inf"]).unwrap_err().to_string();
        assert!(e.starts_with("--target-rsd"), "{e}");
    }
}
