//! The command line: clap definitions, resolution of raw flags into a
//! validated [`BenchConfig`] (preset < flags), and one function per command.
//! Each returns an exit code; errors bubble up typed and `main` prints them.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use crate::analysis::{point_stats, SpecBook};
use crate::archive::{verify_run, Archive, RunStatus};
use crate::bench::config::{known_bench, known_benches, parse_shapes, MPI_BENCHES};
use crate::bench::{BenchConfig, Preset};
use crate::error::{Error, Result};
use crate::prelude::IntoLazy;
use crate::report::{self, Format, ReportOptions};
use crate::units::{format_bytes, format_seconds, format_sig3, parse_counts, parse_sizes};

const AFTER_HELP: &str = "\
Examples:
  benchbook run quick --report          measure this machine (~1 min), archive it, write a report
  benchbook run memcpy --sizes 4K..2G --threads 1,8
  benchbook backends                    which GPUs (CUDA, HIP) were found, or why not
  benchbook run memcpy memcpy-peer h2d d2h --backend cuda --sizes 4K..2G --cache warm,cold
  benchbook run gemm --backend cuda --gpu-shapes 4096,llama70b --gpu-dtypes bf16,fp8
  benchbook list                        runs in the archive
  benchbook show latest                 one run's manifest and per-point statistics
  benchbook report latest --format html
  benchbook verify latest               re-hash a run's files

The archive is data/ unless --archive or BENCHBOOK_ARCHIVE says otherwise.
Its Parquet schema is documented in docs/schema.md.";

/// Reproducible GPU/HPC benchmarks: measure, archive as Parquet, analyze, report.
#[derive(Debug, Parser)]
#[command(name = "benchbook", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Cli {
    /// Archive root (holds runs/ and specs/).
    #[arg(long, global = true, env = "BENCHBOOK_ARCHIVE", default_value = "data", value_name = "DIR")]
    pub archive: PathBuf,

    /// No progress bars or chatter; results and errors only.
    #[arg(long, short, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure this machine and archive the run under <archive>/runs/<run-id>/.
    Run(RunArgs),
    /// List the runs in the archive.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show a run's manifest and per-point statistics.
    Show {
        /// Run id, a unique part of one, or `latest`.
        run: String,
        #[arg(long)]
        json: bool,
    },
    /// Write the Markdown/HTML report of one or more runs.
    Report(ReportArgs),
    /// Re-hash a run's files and say exactly what changed since it was written.
    Verify {
        /// Run ids (or unique parts, or `latest`).
        #[arg(required = true)]
        runs: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Import other tools' output (nccl-tests, perftest, OSU, nvbandwidth, BabelStream, ...) as a run.
    #[command(long_about = IMPORT_HELP)]
    Import(ImportArgs),
    /// List the hardware specs (rooflines) known to this archive.
    Specs,
    /// Say which backends (cpu, cuda, hip) this build has, what each found here, and why not.
    #[command(alias = "list-backends")]
    Backends {
        /// Print JSON (probe results and device facts) instead of text.
        #[arg(long)]
        json: bool,
    },
}

const IMPORT_HELP: &str = "\
Import other tools' output as one run in the archive: rows in the same schema
as native runs, a manifest naming the tool, version and command line where the
log carries them, and each original file kept inside the run with its sha256.

Every file is parsed before anything is written: a file that fails leaves the
archive untouched. Each row's note says how its numbers were read and
converted. GB/s = 10^9 bytes/s, MB/s = 10^6, MiB/s = 2^20, Gb/s = 10^9 bits/s.

The tool is detected from the content unless --tool names it:
  nccl-tests        nccl-tests / rccl-tests text (*_perf), old and new layouts, tagged lines
  rccl-tests-json   rccl-tests --output_file JSON lines
  perftest          ib_{write,read,send}_{bw,lat}, -a sweeps, -b bidirectional
  osu               osu_bw, osu_bibw, osu_latency, collective latency tests
  nvbandwidth       nvbandwidth text; nvbandwidth-json: nvbandwidth -j
  babelstream       BabelStream text; babelstream-csv: BabelStream --csv
  seed-json         the seed write-ups' memcpy scripts' JSON (bytes counted once)";

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files to import (one run holds them all).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Force a format instead of detecting it.
    #[arg(long)]
    pub tool: Option<String>,
    /// A label for the run.
    #[arg(long)]
    pub label: Option<String>,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A preset (`quick`, `full`) and/or benchmarks: `memcpy`, `gemm` (CPU and GPU), `stream`
    /// (CPU), `memcpy-peer`, `h2d`, `d2h` (GPU); with the `mpi` feature, under mpirun/srun:
    /// `p2p`, `collective`. A preset sets sizes and stopping rules; naming benchmarks runs
    /// only those. Default: `quick`. GPU benchmarks without a usable GPU are recorded as
    /// skipped, with the reason (see `benchbook backends`).
    #[arg(value_name = "PRESET|BENCH")]
    pub what: Vec<String>,

    /// memcpy sizes: powers of two `4K..2G`, or a list `1M,64M` (K/M/G = 1024^n).
    #[arg(long, value_name = "SIZES")]
    pub sizes: Option<String>,

    /// p2p ping-pong latency sizes, e.g. `8..1M`.
    #[arg(long, value_name = "SIZES")]
    pub latency_sizes: Option<String>,

    /// STREAM bytes per array (three arrays are allocated), e.g. `64M..1G`.
    #[arg(long, value_name = "SIZES")]
    pub stream_sizes: Option<String>,

    /// Thread counts, e.g. `1,8` or `1..16` (doubling).
    #[arg(long, value_name = "COUNTS")]
    pub threads: Option<String>,

    /// GEMM shapes: `N` for N×N×N, or `MxNxK`, comma-separated.
    #[arg(long, value_name = "SHAPES")]
    pub shapes: Option<String>,

    /// GEMM dtypes: `f32,f64`.
    #[arg(long, value_name = "DTYPES")]
    pub dtypes: Option<String>,

    /// Backends to run on: `cpu`, `cuda`, `hip` (comma-separated). Default: every one built in.
    #[arg(long, value_name = "NAMES")]
    pub backend: Option<String>,

    /// GPU GEMM shapes (`N` or `MxNxK`; `llama70b` adds the seed 002 training shapes).
    #[arg(long, value_name = "SHAPES")]
    pub gpu_shapes: Option<String>,

    /// GPU GEMM dtypes: `f32,tf32,f16,bf16,fp8` (fp8 = E4M3, cuBLASLt).
    #[arg(long, value_name = "DTYPES")]
    pub gpu_dtypes: Option<String>,

    /// GPU device copies: `copy_engine` (DMA), `sm_kernel` (a copy kernel), or both.
    #[arg(long, value_name = "METHODS")]
    pub copy_methods: Option<String>,

    /// GPU device memcpy cache state: `warm`, `cold` (L2 flushed before every copy), or `warm,cold`.
    #[arg(long, value_name = "MODES")]
    pub cache: Option<String>,

    /// Stop sampling a point when the relative std. dev. falls to this (0.005 = 0.5 %).
    #[arg(long, value_name = "FRACTION")]
    pub target_rsd: Option<f64>,

    /// Take at least this many samples per point.
    #[arg(long, value_name = "N")]
    pub min_samples: Option<usize>,

    /// Measure at least this many seconds per point before stopping on noise.
    #[arg(long, value_name = "SECONDS")]
    pub min_time: Option<f64>,

    /// Give up on noise after this many seconds per point (the CV is recorded).
    #[arg(long, value_name = "SECONDS")]
    pub max_time: Option<f64>,

    /// Untimed warm-up per point, seconds.
    #[arg(long, value_name = "SECONDS")]
    pub warmup: Option<f64>,

    /// A label for the run (kept in the manifest and the run id).
    #[arg(long)]
    pub label: Option<String>,

    /// Also write the report when the run ends.
    #[arg(long)]
    pub report: bool,

    /// Report formats with --report.
    #[arg(long, value_enum, default_value_t = Format::Both)]
    pub format: Format,

    /// Where reports go (a <run-id>/ folder is made inside).
    #[arg(long, default_value = "reports", value_name = "DIR")]
    pub reports_dir: PathBuf,

    /// Also write PNG charts with --report.
    #[arg(long)]
    pub png: bool,

    /// Print a JSON summary on stdout at the end.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run ids (or unique parts, or `latest`).
    #[arg(required = true)]
    pub runs: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Both)]
    pub format: Format,
    /// Output folder; default reports/<run-id>/ (one folder per run).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Use this spec as roofline (see `benchbook specs`); default: matched from the device name.
    #[arg(long)]
    pub spec: Option<String>,
    /// Also write PNG charts.
    #[arg(long)]
    pub png: bool,
    /// Folder whose run.md / page.html / style.css override the built-in templates.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
}

/// Resolve `run` flags into a validated configuration.
pub fn resolve_config(a: &RunArgs) -> Result<BenchConfig> {
    let mut preset = Preset::Quick;
    let mut benches: Vec<String> = Vec::new();
    for w in &a.what {
        match w.as_str() {
            "quick" => preset = Preset::Quick,
            "full" => preset = Preset::Full,
            b if known_bench(b) => benches.push(b.into()),
            other => {
                return Err(Error::config(
                    "PRESET|BENCH",
                    format!("`{other}` is neither a preset (quick, full) nor a benchmark ({})", known_benches()),
                ))
            }
        }
    }
    let mut cfg = BenchConfig::preset(preset);
    if !benches.is_empty() {
        cfg.benches = benches;
    }
    if let Some(s) = &a.sizes {
        // One --sizes for whichever size-swept benchmarks run.
        cfg.memcpy_sizes = parse_sizes("--sizes", s)?;
        cfg.p2p_sizes = cfg.memcpy_sizes.clone();
        cfg.collective_sizes = cfg.memcpy_sizes.clone();
    }
    if let Some(s) = &a.latency_sizes {
        cfg.latency_sizes = parse_sizes("--latency-sizes", s)?;
    }
    if let Some(s) = &a.stream_sizes {
        cfg.stream_sizes = parse_sizes("--stream-sizes", s)?;
    }
    if let Some(s) = &a.threads {
        cfg.threads = parse_counts("--threads", s)?;
    }
    if let Some(s) = &a.shapes {
        cfg.gemm_shapes = parse_shapes(s)?;
    }
    let list = |s: &str| s.split(',').map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).collect::<Vec<_>>();
    if let Some(s) = &a.dtypes {
        cfg.gemm_dtypes = list(s);
    }
    if let Some(s) = &a.backend {
        cfg.backends = list(s);
        for b in &cfg.backends {
            if !["cpu", "cuda", "hip"].contains(&b.as_str()) {
                return Err(Error::config("--backend", format!("`{b}` is not a backend; use cpu, cuda, hip")));
            }
        }
    }
    if let Some(s) = &a.gpu_shapes {
        let mut shapes = Vec::new();
        let rest: Vec<String> = list(s).into_iter().filter(|p| p != "llama70b").collect();
        if s.split(',').any(|p| p.trim() == "llama70b") {
            shapes.extend(crate::bench::config::LLAMA70B_SHAPES);
        }
        if !rest.is_empty() {
            shapes.extend(parse_shapes(&rest.join(",")).map_err(|e| e.with_flag("--gpu-shapes"))?);
        }
        cfg.gpu_gemm_shapes = shapes;
    }
    if let Some(s) = &a.gpu_dtypes {
        cfg.gpu_gemm_dtypes = list(s);
    }
    if let Some(s) = &a.copy_methods {
        cfg.gpu_copy_methods = list(s);
    }
    if let Some(s) = &a.cache {
        cfg.gpu_cache_modes = list(s);
    }
    let st = &mut cfg.stop;
    if let Some(v) = a.target_rsd {
        st.target_rsd = v;
    }
    if let Some(v) = a.min_samples {
        st.min_samples = v;
    }
    if let Some(v) = a.min_time {
        st.min_seconds = v;
    }
    if let Some(v) = a.max_time {
        st.max_seconds = v;
    }
    if let Some(v) = a.warmup {
        st.warmup_seconds = v;
    }
    cfg.validate()?;
    Ok(cfg)
}

fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} points  {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb
}

/// Run the CLI; returns the process exit code.
pub fn main_with(cli: Cli) -> Result<u8> {
    let archive = Archive::new(&cli.archive);
    match cli.command {
        Command::Run(a) => cmd_run(&archive, &a, cli.quiet),
        Command::List { json } => cmd_list(&archive, json),
        Command::Show { run, json } => cmd_show(&archive, &run, json),
        Command::Report(a) => cmd_report(&archive, &a, cli.quiet),
        Command::Verify { runs, json } => cmd_verify(&archive, &runs, json),
        Command::Import(a) => cmd_import(&archive, &a, cli.quiet),
        Command::Specs => cmd_specs(&archive),
        Command::Backends { json } => cmd_backends(json),
    }
}

fn cmd_run(archive: &Archive, a: &RunArgs, quiet: bool) -> Result<u8> {
    let cfg = resolve_config(a)?;
    let pb = progress_bar(quiet);
    let result = if cfg.benches.iter().any(|b| MPI_BENCHES.contains(&b.as_str())) {
        match run_mpi(archive, &cfg, a.label.as_deref(), &pb)? {
            Some(r) => r,
            // Ranks other than 0 measure, hand their rows to rank 0, and exit quietly.
            None => return Ok(0),
        }
    } else {
        crate::session::run(archive, &cfg, a.label.as_deref(), &pb)?
    };
    pb.finish_and_clear();
    let o = result.outcome;
    let mut report_paths = Vec::new();
    if a.report && o.measured > 0 {
        let opts = ReportOptions { format: a.format, png: a.png, ..ReportOptions::default() };
        let out = a.reports_dir.join(&result.run.id);
        let r = report::build(&result.run, &archive.root, &opts)?;
        report_paths = report::write(&r, &out, &opts)?;
    }
    if a.json {
        println!(
            "{}",
            json!({
                "run_id": result.run.id,
                "status": result.status.as_str(),
                "run_dir": result.run.path,
                "outcome": o,
                "report": report_paths,
            })
        );
    } else if !quiet {
        eprintln!(
            "{} run {}: {} points ({} measured, {} skipped, {} failed)",
            result.status.as_str(),
            result.run.id,
            o.points,
            o.measured,
            o.skipped,
            o.failed
        );
        eprintln!("archive: {}", result.run.path.display());
        for p in &report_paths {
            eprintln!("report:  {}", p.display());
        }
    }
    Ok(match result.status {
        RunStatus::Interrupted => 130,
        _ if o.failed > 0 => 1,
        _ => 0,
    })
}

#[cfg(feature = "mpi")]
fn run_mpi(
    archive: &Archive,
    cfg: &BenchConfig,
    label: Option<&str>,
    pb: &ProgressBar,
) -> Result<Option<crate::session::RunResult>> {
    // Only rank 0 draws progress; the others would interleave on the terminal.
    let rank0 = ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .is_none_or(|r| r == "0");
    let hidden = ProgressBar::hidden();
    crate::backend::mpi::run(archive, cfg, label, if rank0 { pb } else { &hidden })
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(
    _archive: &Archive,
    cfg: &BenchConfig,
    _label: Option<&str>,
    _pb: &ProgressBar,
) -> Result<Option<crate::session::RunResult>> {
    Err(Error::config(
        "PRESET|BENCH",
        format!(
            "`{}` needs MPI, and this benchbook was built without it; rebuild with `cargo build --release --features mpi` (needs an MPI library, e.g. Debian's libopenmpi-dev, and libclang)",
            cfg.benches.join(" ")
        ),
    ))
}

fn cmd_list(archive: &Archive, json: bool) -> Result<u8> {
    let runs = archive.runs()?;
    let mut out = Vec::new();
    for r in &runs {
        match r.manifest() {
            Ok(m) => out.push(json!({
                "run_id": r.id, "status": m.effective_status().as_str(), "started_at": m.started_at,
                "host": m.host.hostname, "source": m.source, "label": m.label,
                "benches": m.config.get("benches"), "points": m.counts.points, "rows": m.counts.rows,
            })),
            Err(e) => out.push(json!({"run_id": r.id, "error": e.to_string()})),
        }
    }
    if json {
        println!("{}", serde_json::Value::Array(out));
        return Ok(0);
    }
    if runs.is_empty() {
        eprintln!("no runs in {}; `benchbook run quick` makes one", archive.runs_dir().display());
        return Ok(0);
    }
    let mut w = std::io::stdout().lock();
    let _ = writeln!(
        w,
        "{:<40} {:<12} {:<21} {:>7} {:>8}  {}",
        "RUN", "STATUS", "STARTED", "POINTS", "ROWS", "HOST / SOURCE"
    );
    for v in out {
        if let Some(e) = v.get("error") {
            let _ = writeln!(w, "{:<40} unreadable: {}", v["run_id"].as_str().unwrap_or(""), e.as_str().unwrap_or(""));
            continue;
        }
        let _ = writeln!(
            w,
            "{:<40} {:<12} {:<21} {:>7} {:>8}  {} / {}",
            v["run_id"].as_str().unwrap_or(""),
            v["status"].as_str().unwrap_or(""),
            v["started_at"].as_str().unwrap_or(""),
            v["points"],
            v["rows"],
            v["host"].as_str().unwrap_or(""),
            v["source"].as_str().unwrap_or("")
        );
    }
    Ok(0)
}

fn cmd_show(archive: &Archive, query: &str, json: bool) -> Result<u8> {
    let run = archive.resolve(query)?;
    let m = run.manifest()?;
    let stats = point_stats(run.dataframe()?.lazy())?;
    if json {
        println!("{}", json!({"manifest": m, "points": stats}));
        return Ok(0);
    }
    let mut w = std::io::stdout().lock();
    let _ = writeln!(w, "run      {}", m.run_id);
    let _ = writeln!(
        w,
        "status   {}{}",
        m.effective_status().as_str(),
        m.status_detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default()
    );
    let _ = writeln!(w, "started  {}   ended {}", m.started_at, m.ended_at.as_deref().unwrap_or("-"));
    let _ = writeln!(
        w,
        "host     {} — {} ({} CPUs), {}",
        m.host.hostname,
        m.host.cpu_model,
        m.host.logical_cpus,
        m.host.memory_bytes.map(format_bytes).unwrap_or_default()
    );
    let _ = writeln!(w, "os       {} / {}", m.host.os, m.host.kernel);
    let _ = writeln!(
        w,
        "tool     {} {} {}",
        m.tool.name,
        m.tool.version,
        m.tool.git_commit.as_deref().unwrap_or("(no git commit)")
    );
    let _ = writeln!(w, "command  {}", crate::report::context::shell_join(&m.argv));
    let _ = writeln!(
        w,
        "points   {} ({} measured, {} skipped, {} failed), {} rows",
        m.counts.points, m.counts.measured, m.counts.skipped, m.counts.failed, m.counts.rows
    );
    let _ = writeln!(w);
    let _ = writeln!(
        w,
        "{:<34} {:>12} {:>11} {:>11} {:>11} {:>8} {:>6}",
        "POINT", "MEDIAN", "GB/s moved", "GB/s once", "GFLOP/s", "CV", "N"
    );
    for p in &stats {
        let label = p.params().label();
        let f = |v: Option<f64>| v.map(format_sig3).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            w,
            "{:<34} {:>12} {:>11} {:>11} {:>11} {:>7.2}% {:>6}",
            label,
            format_seconds(p.summary.median),
            f(p.gbps_moved),
            f(p.gbps_copied),
            f(p.gflops.filter(|g| *g > 0.0)),
            p.summary.cv * 100.0,
            p.samples
        );
    }
    Ok(0)
}

fn cmd_report(archive: &Archive, a: &ReportArgs, quiet: bool) -> Result<u8> {
    let opts = ReportOptions { format: a.format, spec: a.spec.clone(), png: a.png, templates: a.templates.clone() };
    for q in &a.runs {
        let run = archive.resolve(q)?;
        let out = match &a.out {
            Some(o) if a.runs.len() == 1 => o.clone(),
            Some(o) => o.join(&run.id),
            None => PathBuf::from("reports").join(&run.id),
        };
        let r = report::build(&run, &archive.root, &opts)?;
        for p in report::write(&r, &out, &opts)? {
            if !quiet {
                println!("{}", p.display());
            }
        }
    }
    Ok(0)
}

fn cmd_verify(archive: &Archive, runs: &[String], json: bool) -> Result<u8> {
    let mut code = 0;
    let mut all = Vec::new();
    for q in runs {
        let run = archive.resolve(q)?;
        let findings = verify_run(&run)?;
        if !findings.is_empty() {
            code = 1;
        }
        if json {
            all.push(json!({"run_id": run.id, "ok": findings.is_empty(), "findings": findings}));
        } else if findings.is_empty() {
            println!("{}: OK ({} files match their sha256)", run.id, run.manifest()?.files.len());
        } else {
            println!("{}: CHANGED", run.id);
            for f in findings {
                println!("  {f}");
            }
        }
    }
    if json {
        println!("{}", serde_json::Value::Array(all));
    }
    Ok(code)
}

fn cmd_import(archive: &Archive, a: &ImportArgs, quiet: bool) -> Result<u8> {
    let (run, parsed) = crate::import::import_files(archive, &a.files, a.tool.as_deref(), a.label.as_deref())?;
    if a.json {
        println!(
            "{}",
            json!({
                "run_id": run.id,
                "run_dir": run.path,
                "files": parsed.iter().zip(&a.files).map(|(p, f)| json!({
                    "file": f, "tool": p.tool, "rows": p.records.len(), "warnings": p.warnings,
                })).collect::<Vec<_>>(),
            })
        );
        return Ok(0);
    }
    for (p, f) in parsed.iter().zip(&a.files) {
        if !quiet {
            eprintln!("{}: {} rows as {}", f.display(), p.records.len(), p.tool);
        }
        for w in &p.warnings {
            eprintln!("warning: {}: {w}", f.display());
        }
    }
    if !quiet {
        eprintln!("imported run {} ({})", run.id, run.path.display());
    }
    Ok(0)
}

fn cmd_backends(json: bool) -> Result<u8> {
    use crate::backend::{self, Probe};
    let found: Vec<(String, Probe, Option<serde_json::Value>)> =
        backend::all().iter().map(|b| (b.name().to_string(), b.probe(), b.facts())).collect();
    if json {
        let mut v: Vec<serde_json::Value> = found
            .iter()
            .map(|(n, p, f)| serde_json::json!({"name": n, "built": true, "probe": p, "facts": f}))
            .collect();
        for (n, why) in backend::missing() {
            v.push(serde_json::json!({"name": n, "built": false, "probe": Probe::Unavailable { reason: why.into() }}));
        }
        println!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialize"));
        return Ok(0);
    }
    for (name, probe, _) in &found {
        match probe {
            Probe::Available { devices } => {
                println!("{name:<5} available: {} device(s)", devices.len());
                for (i, d) in devices.iter().enumerate() {
                    // GPU names already carry their ordinal ("GPU 0: ...").
                    if d.starts_with("GPU ") {
                        println!("      {d}");
                    } else {
                        println!("      {i}: {d}");
                    }
                }
            }
            Probe::Unavailable { reason } => println!("{name:<5} unavailable: {reason}"),
        }
    }
    for (name, why) in backend::missing() {
        println!("{name:<5} not built: {why}");
    }
    #[cfg(feature = "mpi")]
    println!("mpi   built: run `p2p` / `collective` under mpirun or srun");
    #[cfg(not(feature = "mpi"))]
    println!("mpi   not built: cargo build --release --features mpi (needs an MPI library; see README)");
    Ok(0)
}

fn cmd_specs(archive: &Archive) -> Result<u8> {
    let book = SpecBook::load(&archive.root)?;
    println!("{:<10} {:<28} {:>10} {:>10} {:>10}", "ID", "NAME", "HBM GB/s", "BF16 TF/s", "LINK GB/s");
    for s in book.specs.values() {
        let f = |v: Option<f64>| v.map(format_sig3).unwrap_or_else(|| "-".into());
        println!(
            "{:<10} {:<28} {:>10} {:>10} {:>10}",
            s.id,
            s.name,
            f(s.memory.as_ref().map(|m| m.bandwidth_gbps)),
            f(s.peak_tflops("bf16")),
            f(s.link.as_ref().map(|l| l.total_gbps))
        );
    }
    println!(
        "\nAdd your own: a TOML file in {}/specs/ (same layout as data/specs/h100-sxm.toml).",
        archive.root.display()
    );
    Ok(0)
}
