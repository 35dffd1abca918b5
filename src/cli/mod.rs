//! The command line, shaped like ripgrep's: flags (here, with clap) become
//! a resolved, validated configuration ([`config`]); each command is one
//! file under [`commands`] and returns a value that serializes; one printer
//! ([`print`]) renders that value as text (tables through comfy-table) or
//! as JSON. Progress is drawn by [`progress`], which listens to the
//! library's [`crate::vocab::progress::Progress`] events.
//!
//! This file is longer than 400 lines because it holds every command's
//! clap declaration, from which `--help` is generated, in one place.

mod commands;
mod config;
mod dispatch;
mod help;
mod print;
mod progress;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::report::Format;
pub use dispatch::main_with;
pub(crate) use help::import_help;
use help::{parse_fleet, parse_fraction, what_help};

pub use config::resolve_config;
pub use print::terminal_safe;

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
  benchbook verify latest               re-hash a run's files (and the manifest's own hash)
  benchbook rerun latest                measure a run again here, linked to it, and compare
  benchbook compare BASE NEW            point-by-point ratio, 95 % CI and verdict; exit 1 on a regression
  benchbook bundle latest -o run.tar.zst    one portable, hash-checked file; `unbundle` it anywhere

The archive is data/ unless --archive or BENCHBOOK_ARCHIVE says otherwise.
Its Parquet schema is documented in docs/schema.md.";

/// Reproducible GPU/HPC benchmarks: measure, archive as Parquet, analyze, report.
#[derive(Debug, Parser)]
#[command(name = "benchbook", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Cli {
    /// Archive root (holds runs/ and specs/): a folder, or a bucket of
    /// S3-compatible storage, s3://BUCKET/PREFIX (credentials and endpoint
    /// as AWS tools take them: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_REGION, AWS_ENDPOINT_URL, or AWS_PROFILE; see docs/object-store.md).
    #[arg(
        long,
        global = true,
        env = "BENCHBOOK_ARCHIVE",
        default_value = "data",
        value_name = "DIR|s3://BUCKET/PREFIX"
    )]
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
    Run(Box<RunArgs>),
    /// List the runs in the archive.
    List {
        #[command(flatten)]
        filter: RunFilterArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// A node's (or a fleet's) run medians of each point over time, with
    /// the change points of every series (E-divisive means, pooled t-test,
    /// MBIC penalty).
    #[command(after_help = HISTORY_AFTER_HELP)]
    History {
        #[command(flatten)]
        filter: RunFilterArgs,
        /// Only this benchmark (`memcpy`, `stream`, ...).
        #[arg(long, value_name = "BENCH")]
        bench: Option<String>,
        /// Only points whose label contains this text (`64 MiB`).
        #[arg(long, value_name = "TEXT")]
        point: Option<String>,
        /// The p-value a change must be below.
        #[arg(long, default_value_t = 0.001)]
        alpha: f64,
        /// The relative change a change point must reach, e.g. `3%`.
        #[arg(long, default_value = "3%", value_parser = parse_fraction)]
        min_effect: f64,
        /// Only series with a change point.
        #[arg(long)]
        changed: bool,
        /// Also draw the series (those with a change first, at most 8) to
        /// this SVG file: each run's median with its 95 % interval.
        #[arg(long, value_name = "FILE.svg")]
        chart: Option<std::path::PathBuf>,
        /// Print JSON: every series with its runs and changes.
        #[arg(long)]
        json: bool,
    },
    /// Write a static site over the archive into OUT: an index of every
    /// run (sortable, filterable), a page per run, per node (each point's
    /// history with its change points) and per point across nodes, and the
    /// example reports. A second build rewrites only what changed.
    #[command(after_help = SITE_AFTER_HELP)]
    Site {
        /// The folder to write (created; pages already there are updated).
        out: std::path::PathBuf,
        #[command(flatten)]
        filter: RunFilterArgs,
        /// Copy the reports under this folder (each `NAME/report.html`) into
        /// the site [default: ./reports, where it exists].
        #[arg(long, value_name = "DIR")]
        reports: Option<std::path::PathBuf>,
        /// Print JSON: what the build did.
        #[arg(long)]
        json: bool,
    },
    /// Show a run's manifest and per-point statistics.
    Show {
        /// Run id, a unique part of one, or `latest`.
        run: String,
        #[arg(long)]
        json: bool,
        /// Read the results even if their sha256 no longer matches the
        /// manifest (forensics; the numbers may be corrupt).
        #[arg(long)]
        no_verify: bool,
    },
    /// Write the Markdown/HTML report of one or more runs.
    Report(ReportArgs),
    /// Judge the nodes of a fleet (`run --fleet NAME` on each node) against
    /// each other and name the slow ones with a confidence.
    Fleet {
        #[command(subcommand)]
        command: commands::fleet::FleetCommand,
    },
    /// Re-hash a run's files and say exactly what changed since it was written.
    Verify {
        /// Run ids (or unique parts, or `latest`).
        #[arg(required_unless_present = "all")]
        runs: Vec<String>,
        /// Every run of the archive (of a bucket: every run's objects,
        /// each against the sha256 its sealed manifest recorded).
        #[arg(long, conflicts_with = "runs")]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Import other tools' output (nccl-tests, perftest, OSU, nvbandwidth, BabelStream, ...) as a run.
    #[command(long_about = import_help())]
    Import(ImportArgs),
    /// Measure again, on this machine, exactly what a run measured (its
    /// recorded configuration) as a new run linked to it; then print what
    /// differs in the environment and each point's ratio with a verdict.
    /// Imported runs cannot be re-run: the error quotes their log's command.
    Rerun {
        #[arg(value_name = "RUN")]
        run: String,
        /// The relative change a verdict needs, e.g. `2%` or `0.02`.
        #[arg(long, default_value = "2%", value_parser = parse_fraction)]
        threshold: f64,
        #[arg(long)]
        json: bool,
    },
    /// Compare two runs point by point: ratio of medians, 95 % CI, verdict;
    /// exits 1 on a regression (for CI).
    #[command(after_help = COMPARE_AFTER_HELP)]
    Compare {
        /// The baseline run (id, unique part, or `latest`); repeated runs
        /// of one configuration as a comma-separated group (`R1,R2,R3`),
        /// or every run of one label (`label:bare`).
        #[arg(value_name = "BASE", requires = "new_pos", conflicts_with_all = ["base", "new"])]
        base_pos: Option<String>,
        /// The run (or comma-separated group) compared with it.
        #[arg(value_name = "NEW")]
        new_pos: Option<String>,
        /// Repeated baseline runs: their run-to-run variability goes into
        /// every interval. Use with --new.
        #[arg(long, num_args = 1.., value_name = "RUN", requires = "new")]
        base: Vec<String>,
        /// Repeated new runs, compared with --base.
        #[arg(long, num_args = 1.., value_name = "RUN", requires = "base")]
        new: Vec<String>,
        /// The relative change a verdict needs, e.g. `2%` or `0.02`.
        #[arg(long, default_value = "2%", value_parser = parse_fraction)]
        threshold: f64,
        /// Which verdicts make the exit code 1.
        #[arg(long, value_enum, default_value_t = commands::compare::FailOn::Slower)]
        fail_on: commands::compare::FailOn,
        /// Print JSON: {base: [run ids], new: [run ids], threshold, fail_on, points: [{label, size_bytes, ratio, ci_low, ci_high, verdict, ...}], summary: [{curve, verdict, ratio, ci_low, ci_high, within, ...}], verdicts, environment, variability}.
        #[arg(long)]
        json: bool,
    },
    /// Pack runs (Parquet, manifests, imported logs, reports) into one
    /// portable zstd-compressed tar file; each run must verify first.
    #[command(
        after_help = "Example:\n  benchbook bundle latest 20261121T200308Z -o results.benchbook.tar.zst\n  benchbook unbundle results.benchbook.tar.zst --archive other/"
    )]
    Bundle {
        #[arg(required = true, value_name = "RUN")]
        runs: Vec<String>,
        /// The bundle file to write.
        #[arg(long, short, value_name = "FILE")]
        out: PathBuf,
        /// Where reports live (`reports/<run-id>/`); a run's report is packed when it exists.
        #[arg(long, default_value = "reports", value_name = "DIR")]
        reports_dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Unpack a bundle into the archive. Every file is checked against its
    /// sha256 before anything is written; a damaged or altered bundle is
    /// refused whole, and a run id already present with other content is
    /// never overwritten.
    Unbundle {
        file: PathBuf,
        /// Where the bundle's reports go (`<DIR>/<run-id>/`).
        #[arg(long, default_value = "reports", value_name = "DIR")]
        reports_dir: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// List the hardware specs (rooflines) known to this archive.
    Specs,
    /// With `--archive s3://BUCKET/PREFIX`: send this node's runs that the
    /// bucket lacks (a run cut off mid-upload is completed), bring the local
    /// mirror up to date, and rewrite the bucket's catalog. Every command
    /// given a bucket does the first two on its own.
    #[command(
        after_help = "Example:\n  benchbook --archive s3://bench/fleet sync\n  benchbook --archive s3://bench/fleet sync --upload-from /shared/benchbook"
    )]
    Sync(commands::sync::SyncArgs),
    /// Say which backends (cpu, cuda, hip) this build has, what each found here, and why not.
    #[command(alias = "list-backends")]
    Backends {
        /// Print JSON (probe results and device facts) instead of text.
        #[arg(long)]
        json: bool,
    },
}

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
    /// The device the files measured (e.g. `MI300X`), for rows whose file
    /// does not name it; otherwise reports say `unknown`.
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// The host the files came from, for rows whose file does not name it.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Put the run in fleet NAME: an imported run joins as the node its
    /// rows name (the log's host, or --host), so per-node logs of
    /// nccl-tests, nvbandwidth or perftest are judged like `run --fleet`.
    #[arg(long, value_name = "NAME", value_parser = parse_fleet)]
    pub fleet: Option<String>,
    /// Write nothing (no archive is touched): print, for each file, which
    /// importer claims it, at which line and why (the line is quoted), the
    /// version the file states, the blocks of lines that give rows, and why
    /// a file would be refused. Exit 0 when every file would import, 1 when
    /// any would be refused (an unreadable file included).
    #[arg(long)]
    pub explain: bool,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, after_help = RUN_AFTER_HELP)]
pub struct RunArgs {
    #[command(subcommand)]
    pub sub: Option<RunCommand>,

    /// A preset (`quick`, `full`) and/or benchmarks (`--help` lists them). A preset sets sizes
    /// and stopping rules; naming benchmarks runs only those. Default: `quick`.
    #[arg(value_name = "PRESET|BENCH", long_help = what_help())]
    pub what: Vec<String>,

    /// Sizes of every size-swept benchmark that runs: memcpy, memcpy-peer, h2d, d2h, and under
    /// MPI p2p and collective (not STREAM: --stream-sizes; not latency: --latency-sizes). Powers
    /// of two `4K..2G`, or a list `1M,64M` (K/M/G = 1024^n).
    #[arg(long, value_name = "SIZES")]
    pub sizes: Option<String>,

    /// Run N instances of the suite at once, each pinned to its own
    /// disjoint set of this process's CPUs, as one run whose rows carry
    /// their partition in `axes` (seed 004's partitioned devices, on CPUs).
    #[arg(long, value_name = "N")]
    pub partitions: Option<usize>,

    /// One instance per GPU, GPU partition or MIG instance, each seeing only
    /// its own (CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES), on its own
    /// CPU set: `0,1,2,3`, or MIG UUIDs from `nvidia-smi -L`. Implies
    /// --partitions with as many instances as devices.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub partition_devices: Vec<String>,

    /// The resolved configuration as JSON, instead of flags (what
    /// --partitions hands each instance).
    #[arg(long, value_name = "FILE", hide = true)]
    pub from_config: Option<PathBuf>,

    /// p2p ping-pong latency sizes, e.g. `8..1M`.
    #[arg(long, value_name = "SIZES")]
    pub latency_sizes: Option<String>,

    /// One-sided put channels, e.g. `1,2,4`: N > 1 runs each size both ways, `split` (one
    /// message cut into N concurrent puts) and `round_robin` (N whole buffers, one per channel).
    #[arg(long, value_name = "COUNTS")]
    pub channels: Option<String>,

    /// One-sided put/get: operations between two flushes, e.g. `1,64` (1 = flush after every
    /// operation, like a quiet per write; 64 = one flush per batch of 64).
    #[arg(long, value_name = "COUNTS")]
    pub sync_every: Option<String>,

    /// STREAM bytes per array (three arrays are allocated), e.g. `64M..1G`.
    #[arg(long, value_name = "SIZES")]
    pub stream_sizes: Option<String>,

    /// Thread counts, e.g. `1,8` or `1..16` (doubling).
    #[arg(long, value_name = "COUNTS")]
    pub threads: Option<String>,

    /// Allow more threads than this machine's logical CPUs.
    #[arg(long)]
    pub oversubscribe: bool,

    /// `run gpu`: seconds for the PyTorch pass after the sweep (PyTorch `copy_`, `torch.matmul`,
    /// `F.linear`, `torch._scaled_mm` on the same GPU, imported as the run LABEL-torch); 0 skips
    /// it. It runs only where python3 imports a CUDA-enabled torch.
    #[arg(long, value_name = "SECONDS", default_value_t = 150.0)]
    pub torch_seconds: f64,

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

    /// GPU GEMM operand layouts, as the column-major BLAS call sees them: `nn` (default: what
    /// `torch.matmul` runs on row-major tensors), `tn` (`F.linear`, `torch._scaled_mm`), `nt`, or a
    /// list. FP8 always runs `tn`, the one layout Hopper's FP8 tensor cores take.
    #[arg(long, value_name = "LAYOUTS")]
    pub layout: Option<String>,

    /// GPU GEMM: time the top N algorithms of cuBLASLt's heuristic before measuring and keep the
    /// fastest (its id goes in the point's note). 1 (default) runs the heuristic's first choice, as
    /// PyTorch does; 4-8 is how a benchmark gets ahead of a framework.
    #[arg(long, value_name = "N")]
    pub gemm_algos: Option<u32>,

    /// Read the devices' sensors (clock, power, temperature, throttle reasons, energy) every MS
    /// milliseconds beside every point: NVML for NVIDIA GPUs, cpufreq or /proc/cpuinfo and RAPL for
    /// CPUs. Each sample row records its round's readings; 0 turns telemetry off.
    #[arg(long, value_name = "MS")]
    pub telemetry_ms: Option<u32>,

    /// Measure the telemetry sampler's own cost: each point's rounds alternate with the sampler on
    /// and paused, in one run (`scripts/telemetry_overhead.py ARCHIVE RUN` compares them).
    #[arg(long)]
    pub telemetry_ab: bool,

    /// FP8 GEMM accumulation: `promoted` (default; partial sums added in FP32, as
    /// `torch._scaled_mm(use_fast_accum=False)`), `fast` (the tensor cores' accumulator over the
    /// whole k), or `promoted,fast`. The result check's tolerance follows the mode.
    #[arg(long, value_name = "MODES")]
    pub fp8_accum: Option<String>,

    /// GPU device copies: `copy_engine` (DMA), `sm_kernel` (a copy kernel), or both.
    #[arg(long, value_name = "METHODS")]
    pub copy_methods: Option<String>,

    /// GPU device memcpy cache state: `warm`, `cold` (L2 flushed before every copy), or `warm,cold`.
    #[arg(long, value_name = "MODES")]
    pub cache: Option<String>,

    /// memcpy-peer with `sm_kernel`: kernel grids (blocks) for the peer-write sweep, e.g.
    /// `1,16,128` or `1..256` (doubling). Each GPU's kernel writes into the next GPU's memory.
    #[arg(long, value_name = "COUNTS")]
    pub grid: Option<String>,

    /// memcpy-peer with `sm_kernel`: threads per block for the peer-write sweep, e.g. `64,256,1024`.
    #[arg(long, value_name = "COUNTS")]
    pub block: Option<String>,

    /// Stop sampling a point when the relative std. dev. falls to this (0.005 = 0.5 %).
    #[arg(long, value_name = "FRACTION")]
    pub target_rsd: Option<f64>,

    /// Take at least this many samples per point.
    #[arg(long, value_name = "N")]
    pub min_samples: Option<usize>,

    /// Measure at least this many seconds per point before stopping on noise.
    #[arg(long, value_name = "SECONDS")]
    pub min_time: Option<f64>,

    /// Each point's share of time over all its rounds, in timed operations (fresh buffers and validation not counted; under MPI, the wall time of its sampling, barriers included). Every point still gets 3 rounds if its first round shows they fit, even at one sample each; a point that meets --target-ci early hands the rest to the points with the widest intervals.
    #[arg(long, value_name = "SECONDS")]
    pub max_time: Option<f64>,

    /// Untimed warm-up per point, seconds (first round only; later rounds start from its batch).
    #[arg(long, value_name = "SECONDS")]
    pub warmup: Option<f64>,

    /// Seconds for the whole sweep, warm-up and allocation included: each point gets its share, and points that meet --target-ci early pass theirs on. Every measured point still gets 3 rounds: the budget measures the points it can afford at 3 rounds each and skips the rest, naming the budget that would include them (see --budget-prefers). Without it, --max-time bounds each point.
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,

    /// What a --budget too small for every point gives up: `rounds` (default) keeps 3 rounds for every measured point and skips the points it cannot afford; `points` measures as many points as the budget reaches, some in fewer than 3 rounds (their intervals then rest on fewer rounds, and say so).
    #[arg(long, value_enum, value_name = "WHAT", requires = "budget")]
    pub budget_prefers: Option<BudgetPrefers>,

    /// Most rounds: every point is measured once per round, in a shuffled order, so that a burst of noise spreads across points and the interval of each median includes run-to-run drift (1: one pass, as before schema v5).
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,

    /// Stop a point once the within-run 95 % interval of its median is within ± this fraction (0.01 = ±1 %), after 3 rounds. Reports state the wider rerun interval beside it (where a second run's median falls).
    #[arg(long, value_name = "FRACTION")]
    pub target_ci: Option<f64>,

    #[command(flatten)]
    pub out: RecordFlags,
}

/// What a recording command (`run`, `run exec`) does with the run it made.
#[derive(Debug, Args)]
pub struct RecordFlags {
    /// A label for the run (kept in the manifest and the run id; `run exec`: default the script's name).
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

    /// Also write PNG charts with --report: 2× the SVG's pixels, marked
    /// 300 dpi, rasterised from the same SVG (for slides and posts).
    #[arg(long)]
    pub png: bool,

    /// Print a JSON summary on stdout at the end.
    #[arg(long)]
    pub json: bool,

    /// Put the run in fleet NAME, with its node (Slurm's node name, else
    /// the host name), job and step: `benchbook fleet check NAME` judges
    /// each node against the others. Same as BENCHBOOK_FLEET=NAME.
    #[arg(long, value_name = "NAME", value_parser = parse_fleet)]
    pub fleet: Option<String>,

    /// Measure only while no other `--take-turns` run on this archive is
    /// measuring (an exclusive lock on ARCHIVE/.turns.lock): for nodes
    /// that share CPUs, such as several `slurmd -N` on one host, so that
    /// no node measures another's load. Real nodes measure at once. With
    /// a bucket as archive, each node's mirror is its own: BENCHBOOK_TURNS
    /// names a lock file they share.
    #[arg(long)]
    pub take_turns: bool,
}

impl RecordFlags {
    /// Make `--fleet` the process's fleet, which the run's manifest records.
    fn join_fleet(&self) {
        if let Some(f) = &self.fleet {
            std::env::set_var(crate::host::placement::FLEET_ENV, f);
        }
    }
}

const RUN_AFTER_HELP: &str = "\
Examples:
  benchbook run quick --report
  benchbook run memcpy --sizes 4K..1G --threads 1,2
  benchbook run exec --repeat 10 --param model=tiny -- python3 scripts/train_mlp.py --steps 50";

/// Which runs of the archive (`list`, `history`): every flag given must hold.
#[derive(Debug, Clone, clap::Args)]
pub struct RunFilterArgs {
    /// Only the runs of this node (Slurm's node name, else the host name).
    #[arg(long, value_name = "NODE")]
    pub node: Option<String>,
    /// Only the runs of this fleet (`run --fleet NAME`).
    #[arg(long, value_name = "NAME")]
    pub fleet: Option<String>,
    /// Only the runs with this label.
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Only the runs started at or after this time (RFC 3339, or a date: `2026-11-01`).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
}

impl From<RunFilterArgs> for crate::archive::ScanFilter {
    fn from(a: RunFilterArgs) -> Self {
        crate::archive::ScanFilter { node: a.node, fleet: a.fleet, label: a.label, since: a.since, runs: None }
    }
}

const SITE_AFTER_HELP: &str = "\
Examples:
  benchbook site site/                      every run of ./data, with ./reports
  benchbook --archive /shared/bench site /srv/www/bench --fleet h100-prod
  python3 -m http.server -d site/           or open site/index.html directly

The pages need no server, no network and no script from elsewhere; one
small script of our own sorts and filters the tables, and every page reads
whole without it. site/site-state.json remembers what was built: run the
same command after new runs and only their pages, the pages of the nodes and
points they touch, and the index are rewritten.";

const HISTORY_AFTER_HELP: &str = "\
Each series is one node's median of one point per run, oldest first: GB/s of
the bytes copied once where the point counts bytes, else operations per
second. A change point splits a series where E-divisive means finds the two
sides most different; it is kept when Student's t-test between them
(variances pooled) gives a p-value below --alpha, their means differ by
--min-effect or more, and the split reduces the squared error by 3 ln n in
units of the series' variance (binary segmentation's MBIC penalty); each
side is then searched again. These defaults lead the Turing Change Point
Detection Benchmark's default experiment (docs/changepoints.md). Runs are selected from the archive's
catalog, and each results file's hash is checked once and remembered.

Examples:
  benchbook history --node node17 --bench memcpy
  benchbook history --fleet nightly --changed --json";

const COMPARE_AFTER_HELP: &str = "\
Points match on every parameter (method, device and a metric's named
parameters included). The ratio says how many times better NEW is: BASE time
/ NEW time, or for a named metric, in the direction it improves. A verdict
(faster, slower) needs the whole 95 % bootstrap interval beyond the
threshold; `same` needs it inside; anything else is `inconclusive`. Points
with one sample (imported logs) have no interval: the output says \"no
uncertainty: one sample\" and the verdict rests on the ratio alone.

Repeated runs: `compare R1,R2,R3 R4,R5,R6` or `--base R1 R2 R3 --new R4 R5 R6`
estimate each point by the median of its per-run medians and bootstrap runs,
then samples, so the interval holds the run-to-run variability that samples
inside one run do not show.

Exit codes: 0 no regression; 1 a point is slower beyond the threshold
(--fail-on slower, the default) or differs at all (--fail-on any); 2 the runs
share no point (the message says what differs).

Examples:
  benchbook compare baseline latest
  benchbook compare quick repeat --threshold 5% --json
  benchbook compare bare-metal container --fail-on never
  benchbook compare --base run1 run2 run3 --new run4 run5 run6";

/// `benchbook run` subcommands.
#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// Run any command N times (as hyperfine does) and archive its wall time and the metrics it reports.
    #[command(after_help = EXEC_AFTER_HELP)]
    Exec(ExecArgs),
}

const EXEC_AFTER_HELP: &str = "\
The command reports metrics by appending JSON lines to the file named by
$BENCHBOOK_METRICS_FILE (one file per repetition), e.g. in Python:

  import json, os
  with open(os.environ[\"BENCHBOOK_METRICS_FILE\"], \"a\") as f:
      print(json.dumps({\"metric\": \"tokens_per_s\", \"value\": 4242.5, \"unit\": \"tokens/s\",
                        \"params\": {\"model\": \"7b\", \"gpus\": 8}}), file=f)

Fields: metric (a name), value (a finite number), unit (always; e.g. tokens/s,
samples/s, ms, GB, 1), params (optional: name -> string/number/bool), better
(\"higher\" or \"lower\"; optional for rates (unit ending in /s) and times,
required otherwise). Every repetition also records `wall_time_s`.
$BENCHBOOK_RUN_ID and $BENCHBOOK_REPETITION are set too.

A command that cannot run here (no GPU, no PyTorch) exits with code 77 and
prints the reason as its last stderr line: the run records a skipped point
with that reason. Each repetition's stdout, stderr and metrics file are kept
in the run. A
malformed line or a non-zero exit keeps what was recorded, marks the run
failed and names the line and field or the exit code. Ctrl-C stops the
command (SIGINT, then SIGTERM, then SIGKILL) and keeps every finished
repetition.

Examples:
  benchbook run exec --repeat 5 -- python3 scripts/train_mlp.py --steps 50
  benchbook run exec --param gpus=8 --label ddp8 -- torchrun --nproc-per-node 8 scripts/train_ddp.py
  benchbook run exec --repeat 10 --report -- ./my_benchmark.sh";

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Run the command this many times.
    #[arg(long, short = 'r', default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,

    /// A parameter of every row, NAME=VALUE (repeatable): `--param gpus=8 --param model=7b`.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,

    /// Go on after a repetition that exits non-zero (it is recorded as failed).
    #[arg(long, short = 'i')]
    pub ignore_failure: bool,

    /// Read every GPU's sensors (NVML: clocks, power, energy, throttle reasons) every MS
    /// milliseconds while the command runs: each repetition records its GPU energy and mean power,
    /// and each tokens/s line a tokens_per_j. 0 turns it off.
    #[arg(long, value_name = "MS", default_value_t = crate::vocab::config::TELEMETRY_MS)]
    pub telemetry_ms: u32,

    #[command(flatten)]
    pub out: RecordFlags,

    /// The command and its arguments, after `--` (run directly, not through a shell).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// Run N copies at once, each pinned to its own disjoint set of this
    /// process's CPUs, as one run; each copy sees BENCHBOOK_PARTITION (0..N)
    /// and BENCHBOOK_PARTITION_CPUS (`0-3`) in its environment.
    #[arg(long, value_name = "N")]
    pub partitions: Option<usize>,
    /// One copy per GPU, GPU partition or MIG instance, each seeing only
    /// its own (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and
    /// BENCHBOOK_PARTITION_DEVICE), on its own CPU set: `0,1` or MIG UUIDs.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub partition_devices: Vec<String>,
    /// The resolved spec as JSON (what --partitions hands each instance).
    #[arg(long, value_name = "FILE", hide = true)]
    pub from_spec: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = REPORT_EXAMPLES)]
pub struct ReportArgs {
    /// Run ids (or unique parts, or `latest`). With a write-up kind, one
    /// report sets them all side by side; with `--kind compare`, the first
    /// is the baseline and repeated runs of one side go comma-separated
    /// (`A1,A2,A3 B1,B2,B3`), or by label (`label:bare label:container`).
    #[arg(required_unless_present = "all")]
    pub runs: Vec<String>,
    /// The report kind; default: picked from the runs' contents (a run
    /// that mixes write-ups gets `run`).
    #[arg(long, value_enum)]
    pub kind: Option<crate::report::Kind>,
    /// With `--kind compare`: the relative change a verdict needs.
    #[arg(long, default_value = "2%", value_parser = parse_fraction)]
    pub threshold: f64,
    #[arg(long, value_enum, default_value_t = Format::Both)]
    pub format: Format,
    /// Output folder; default reports/<run-id>/ (one folder per run), or
    /// reports/<kind>-<run>/ for a write-up of several runs, or
    /// reports/compare-<run>-vs-<run>/.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Use this spec as roofline (see `benchbook specs`); default: matched from the device name.
    #[arg(long)]
    pub spec: Option<String>,
    /// Also write PNG charts beside the SVGs: 2× their pixels, marked 300
    /// dpi, rasterised from the same SVG with resvg (for slides and posts).
    #[arg(long)]
    pub png: bool,
    /// A Markdown file of prose: its `## Introduction`, `## Setup`,
    /// `## Limitations` (and any other) sections go where a write-up has them.
    #[arg(long, value_name = "FILE.md")]
    pub notes: Option<PathBuf>,
    /// GPU pairs the peer-copy charts draw, FROM-TO separated by commas
    /// (`0-1,0-2`); default: all up to 8 pairs, else those from the lowest
    /// GPU. The peer matrix always shows every pair.
    #[arg(long, value_name = "PAIRS")]
    pub pairs: Option<String>,
    /// The link the transfers crossed, by id (ib-qdr, ib-fdr, ib-edr,
    /// ib-hdr, ib-ndr, eth-25g, eth-100g, eth-200g, roce-400g, efa-100g,
    /// nvlink3-x4, mi250-gcd-if, or one added to <archive>/specs/): rates
    /// are then stated as a share of it. `ID` names it for every run;
    /// `RUN=ID,RUN=ID` one per run (RUN: a run id, a unique part of one,
    /// or a label), e.g. `--link osu-a100=nvlink3-x4,osu-mi250=mi250-gcd-if`.
    /// Logs name a link's type, never its rate (and an MPI log between two
    /// GPUs names neither), so without it no share is given.
    #[arg(long, value_name = "ID|RUN=ID,...")]
    pub link: Option<String>,
    /// Let points measured while throttled (a thermal or hardware slowdown, a power brake, or a
    /// clock below 75 % of the device's reference) set plateaus and key results; by default they
    /// are held out and flagged in the telemetry table.
    #[arg(long)]
    pub keep_throttled: bool,
    /// Regenerate every example report listed in <reports-dir>/examples.toml
    /// from the archive.
    #[arg(long, conflicts_with_all = ["runs", "out"])]
    pub all: bool,
    /// Where `--all` finds examples.toml and writes the reports.
    #[arg(long, default_value = "reports", value_name = "DIR")]
    pub reports_dir: PathBuf,
    /// Folder whose templates override the built-in ones of the same name
    /// (copy them from the repository's templates/): a kind's page
    /// (memcpy.md, ...), a section (sections/gpu.md), a sentence
    /// (sentences/plateau.md), page.html or style.css.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
    /// Report results even if their sha256 no longer matches the manifest
    /// (forensics; the numbers may be corrupt).
    #[arg(long)]
    pub no_verify: bool,
}

const REPORT_EXAMPLES: &str = "\
Kinds (--kind; default: picked from what the runs measured):
  run          every section the run's data supports (runs that mix write-ups)
  memcpy       device memcpy against size, HBM roofline, saturation (seed 001)
  memcpy-peer  GPU peer copies and MPI send/recv against the link, peer matrix (seed 000)
  gemm         GEMM against published peaks, training throughput, scaling (seed 002)
  network      one-sided vs two-sided in Gb/s against EFA/RoCE, collectives, latency (seed 003)
  compare      runs against the first: ratios with 95 % intervals, verdicts (seed 004)

Examples:
  benchbook report latest
  benchbook report MPI_RUN GPU_RUN --kind memcpy-peer --notes notes.md --pairs 0-1,0-7
  benchbook report BASE NEW --kind compare --threshold 3%
  benchbook report --all        regenerate every example in reports/";

/// What `--budget-prefers` keeps when a budget cannot hold every point at
/// its minimum rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BudgetPrefers {
    /// Every measured point gets its minimum rounds; points the budget
    /// cannot afford are skipped, with the budget that would include them.
    Rounds,
    /// As many points as the budget reaches, some in fewer rounds.
    Points,
}
