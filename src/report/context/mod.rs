//! The report context: a Serialize struct built from a run's manifest and
//! its analysed rows. Templates only format what is here; every sentence of
//! "observations" is computed from the data, so a report never says more
//! than its numbers back.
//!
//! - this file: the view structs templates see, and [`build`];
//! - `prose`: sentence-making helpers (formatting, observations);
//! - `blocks`: the bandwidth (memcpy, STREAM, collective, p2p), GEMM,
//!   latency and other-points blocks;
//! - `gpu`: the GPU section (device facts, versions, peer access);
//! - `run`: the title, run counts, system table and import sources;
//! - `methodology`: timers, stop rule, convergence and the list of points
//!   not measured;
//! - `provenance`: the appendix giving each table and figure its run,
//!   parameters, samples, stopping rule, byte convention, build and command;
//! - `workload`: named metrics (tokens/s, latencies, loss), scaling
//!   efficiency and metric-vs-parameter charts.
//!
//! The file is longer than 400 lines because it declares every typed row the
//! run template renders (bandwidth, GEMM per dtype, libraries, GPU, host).

use serde::Serialize;

use crate::analysis::findings::Said;
use crate::analysis::{PointStat, Spec};
use crate::archive::manifest::Manifest;
use crate::vocab::benches::Bench;
use crate::vocab::rows::Row;

mod blocks;
mod gpu;
mod methodology;
mod peers;
pub(crate) mod prose;
mod provenance;
mod run;
pub mod said;
mod telemetry;
mod workload;

pub use gpu::l2_of;
pub use run::run_name;
pub(crate) use run::system;
pub use telemetry::{nominal_clock, Conditions};
pub use workload::{workload_section, WorkloadChart, WorkloadSection};

pub use crate::vocab::units::shell_join;

use crate::vocab::units::FlopUnit;
use blocks::{bandwidth_section, gemm_section};
use prose::kv;

/// The system each run ran on: a column per run (one when every run ran on
/// the same system, `same`), a row per property.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SystemTable {
    /// The runs' labels (or ids), in the report's order.
    pub runs: Vec<String>,
    pub rows: Vec<SystemRow>,
    pub same: bool,
    /// Each physical GPU card its runs measured, with those runs, where
    /// more than one (`NVIDIA H200 GPU-eece32e0 (run a, run b)`).
    pub cards: Vec<String>,
}

/// One property and its value in each run (empty where a run has none).
#[derive(Debug, Clone, Serialize)]
pub struct SystemRow {
    pub key: String,
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KeyValue {
    pub key: String,
    pub value: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunSection {
    pub id: String,
    pub status: String,
    pub status_detail: Option<String>,
    pub label: Option<String>,
    pub source: String,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub command: String,
    pub preset: Option<String>,
    pub points: u32,
    pub measured: u32,
    pub skipped: u32,
    pub failed: u32,
    pub rows: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RooflineRef {
    pub name: String,
    pub gbps: String,
    pub source: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SatRow {
    pub label: String,
    pub peak_gbps: String,
    pub peak_size: String,
    pub plateau_gbps: String,
    /// Peak / plateau (`14.8×`); empty where no level holds.
    pub peak_over_plateau: String,
    pub p50: String,
    pub p80: String,
    pub p90: String,
    pub roofline_pct: String,
    pub roofline_90: String,
    /// Its level (the plateau, else the peak) counted once, half of the
    /// read + written figure, as GPU copy tools and the seed 001 scripts
    /// print a copy, and that figure's share of the roofline.
    pub once_gbps: String,
    pub once_roofline_pct: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct BwRow {
    pub label: String,
    pub size: String,
    pub median_time: String,
    pub gbps_copied: String,
    /// The same rate in Gb/s (10^9 bits/s), as network tools print it.
    pub gbits_copied: String,
    pub gbps_moved: String,
    pub busbw: String,
    pub cv_pct: String,
    pub samples: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct BandwidthSection {
    pub chart: String,
    pub roofline: Option<RooflineRef>,
    pub observations: Vec<Said>,
    pub saturation: Vec<SatRow>,
    pub table: Vec<BwRow>,
    /// benchbook's curves beside other tools' on the same device.
    pub peers: Vec<peers::PeerPair>,
    /// benchbook's curves that differ in one setting, against each other.
    pub contrasts: Vec<peers::Contrast>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GemmRow {
    /// The run it belongs to (its label, else its id).
    pub run: String,
    pub dtype: String,
    pub shape: String,
    pub threads: String,
    /// The library call (GPU GEMMs), e.g. `cublas_gemm_ex`.
    pub method: String,
    pub gflops: String,
    pub best_gflops: String,
    pub median_time: String,
    pub cv_pct: String,
    pub samples: u32,
    pub peak_pct: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct GemmSection {
    pub chart: String,
    pub observations: Vec<Said>,
    pub table: Vec<GemmRow>,
    /// benchbook's GEMMs, one table per run and dtype.
    pub by_dtype: Vec<DtypeTable>,
    /// benchbook against other libraries' GEMMs of the same dtype and shape.
    pub libraries: Vec<LibraryRow>,
}

/// One run's GEMMs of one dtype, as seed 002 tabulates them.
#[derive(Debug, Clone, Serialize)]
pub struct DtypeTable {
    pub dtype: String,
    pub run: String,
    /// The dtype's dense peak (in the section's unit), and whose it is.
    pub peak: Option<String>,
    pub peak_of: Option<String>,
    pub rows: Vec<DtypeRow>,
    /// The mean of the shapes' medians, and its share of the peak.
    pub average: String,
    pub average_pct: String,
    /// The mean over the shapes its run measured in every dtype, with its
    /// share (`-` with one dtype or no shape in common), and how many.
    pub common_average: String,
    pub common_shapes: usize,
    /// The fastest shape's median rate, the shape, and its share.
    pub best: String,
    pub best_at: String,
    pub best_pct: String,
    pub shapes: usize,
    /// How many of its shapes rest on a single round.
    pub one_round: usize,
    /// How many shapes ran throttled and are left out of the average and
    /// peak (0 when all did: the figures are then theirs).
    pub left_out: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct DtypeRow {
    pub shape: String,
    /// What the shape is (`FFN GEMM 1`), where known.
    pub role: String,
    pub median_time: String,
    pub rate: String,
    pub peak_pct: String,
    pub rounds: u32,
    pub samples: u32,
}

/// One shape and dtype measured by benchbook and by another library.
#[derive(Debug, Clone, Serialize)]
pub struct LibraryRow {
    pub dtype: String,
    pub shape: String,
    pub run: String,
    pub ours: String,
    /// The library call and its operand layout (`cublaslt, tn`).
    pub ours_call: String,
    pub theirs: String,
    pub theirs_call: String,
    /// ours / theirs.
    pub ratio: String,
}

/// One ping-pong latency point.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyRow {
    /// The curve it belongs to, as the catalog names it (its system).
    pub curve: String,
    pub peer: String,
    pub size: String,
    pub median: String,
    pub p20: String,
    pub p80: String,
    pub samples: u32,
}

/// A point of a benchmark without a section of its own.
#[derive(Debug, Clone, Serialize)]
pub struct OtherRow {
    pub bench: String,
    pub op: String,
    pub variant: String,
    pub size: String,
    pub peer: String,
    pub median_time: String,
    /// The rate with its unit in the cell: GB/s, with Gb/s beside it for
    /// network rows (perftest-style), `-` for latency-only rows.
    pub rate: String,
    pub note: String,
}

/// Where an imported run came from.
#[derive(Debug, Clone, Serialize)]
pub struct ImportInfo {
    pub file: String,
    pub tool: String,
    pub tool_version: String,
    pub command: String,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SkippedRow {
    pub bench: String,
    pub point: String,
    pub status: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Methodology {
    pub timers: String,
    pub stop_rule: String,
    /// Which points reached the interval target, which did not.
    pub precision: Said,
    pub median_cv_pct: String,
    /// κ of the rerun interval ([`crate::vocab::interval::RERUN_SHARE`]).
    pub rerun_share: f64,
    /// What the sampling rule planned and the run did not give: (points
    /// with fewer than its fewest rounds, points measured, that fewest).
    pub short_of_rounds: Option<(usize, usize, u32)>,
}

/// Where one table or figure of the report comes from.
#[derive(Debug, Clone, Serialize)]
pub struct ProvenanceRow {
    /// The report section, as titled (`Host memcpy`, `GPUs: GPU GEMM`).
    pub section: String,
    pub run: String,
    /// Benchmarks, point count and their parameters.
    pub benchmark: String,
    pub samples: String,
    /// The stopping rule, or for imported numbers the file they came from.
    pub stopping: String,
    /// Which bytes (or FLOPs) its rates count.
    pub bytes: String,
    /// The benchbook version and commit that measured (or imported).
    pub build: String,
    pub reproduce: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileRow {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

/// One GPU as the backend described it at the start of the run.
#[derive(Debug, Clone, Serialize)]
pub struct GpuDeviceRow {
    pub backend: String,
    pub ordinal: String,
    pub name: String,
    pub arch: String,
    pub memory: String,
    pub multiprocessors: String,
    pub l2: String,
    /// The runs that used the card, by name.
    pub runs: String,
    pub details: String,
}

/// The GPU half of a run: device copies (seed 001), peer copies (seed
/// 000), host↔device transfers and GEMM (seed 002).
#[derive(Debug, Clone, Serialize)]
pub struct GpuSection {
    pub devices: Vec<GpuDeviceRow>,
    /// Driver/runtime versions and the peer-access matrix, per backend.
    pub versions: Vec<KeyValue>,
    pub memcpy: Option<BandwidthSection>,
    pub peer: Option<BandwidthSection>,
    pub host: Option<BandwidthSection>,
    pub gemm: Option<GemmSection>,
    pub roofline: Option<RooflineRef>,
    /// The GPU's host link (its spec's), which h2d/d2h copies cross, and
    /// each host curve's plateau as a share of it.
    pub host_link: Option<gpu::HostLink>,
    /// Whether benchbook measured any of these points itself (the timing
    /// and validation text applies only then).
    pub native: bool,
    /// The tools whose files the imported GPU points came from (`seed-json`).
    pub imported_from: Vec<String>,
}

/// Everything a run report template can use.
#[derive(Debug, Clone, Serialize)]
pub struct ReportContext {
    pub title: String,
    pub generated_at: String,
    pub benchbook_version: String,
    pub benchbook_commit: String,
    pub run: RunSection,
    pub system: SystemTable,
    pub memcpy: Option<BandwidthSection>,
    pub gpu: Option<GpuSection>,
    pub stream: Option<BandwidthSection>,
    pub gemm: Option<GemmSection>,
    pub collective: Option<BandwidthSection>,
    pub p2p: Option<BandwidthSection>,
    pub latency: Vec<LatencyRow>,
    /// Latency curves whose smaller message takes longer (`Said::LatencyInversion`).
    pub latency_notes: Vec<crate::analysis::findings::Said>,
    pub other: Vec<OtherRow>,
    /// Named metrics (schema v4): `run exec` runs and serving/training imports.
    pub workload: Option<WorkloadSection>,
    /// What the sensors read (schema v7), and what they could not.
    pub telemetry: Option<telemetry::TelemetrySection>,
    /// Set for `run exec` runs: the command, its repetitions and tool versions.
    pub exec: Option<workload::ExecInfo>,
    /// Set for imported runs: the numbers are the tool's, not benchbook's.
    pub imported: Vec<ImportInfo>,
    /// Whether benchbook measured any run here itself (its methodology
    /// applies), as opposed to imports and `run exec` only.
    pub native: bool,
    pub skipped: Vec<SkippedRow>,
    pub methodology: Methodology,
    pub provenance: Vec<ProvenanceRow>,
    pub files: Vec<FileRow>,
    /// The environment variables that set what was measured.
    pub env: Vec<KeyValue>,
    /// The launcher's own session variables (`OMPI_*`, `PMIX_*`, `PMI_*`,
    /// `SLURM_*`): kept, but folded away in the report.
    pub launcher_env: Vec<KeyValue>,
}

/// Whether a variable is a launcher's session bookkeeping (ranks, ports,
/// job ids) rather than a setting of what was measured.
fn is_launcher_env(name: &str) -> bool {
    ["OMPI_", "PMIX_", "PMI_", "SLURM_"].iter().any(|p| name.starts_with(p))
}

/// Build the context of a report of one run, or of several set side by
/// side (a write-up kind): the first manifest names the report and its
/// command; every run adds its import sources, provenance rows and files.
pub fn build(
    manifests: &[Manifest],
    all_stats: &[PointStat],
    metrics: &[crate::analysis::workload::MetricStat],
    not_measured: &[Row],
    spec: Option<&Spec>,
    gpu_spec: Option<&Spec>,
    catalog: &crate::analysis::Catalog,
) -> ReportContext {
    let series = &catalog.series[..];
    let manifest = &manifests[0];
    let (gpu_stats, stats): (Vec<PointStat>, Vec<PointStat>) = all_stats.iter().cloned().partition(PointStat::is_gpu);
    let stats = &stats[..];
    let (gpu_series, host_series): (Vec<&crate::analysis::Series>, Vec<&crate::analysis::Series>) =
        series.iter().partition(|s| s.points[0].is_gpu());
    let imported: Vec<ImportInfo> = manifests.iter().flat_map(run::imported).collect();
    let system = run::system(manifests, all_stats, catalog);
    let several = manifests.len() > 1;
    let of_run =
        |m: &Manifest| -> Vec<PointStat> { all_stats.iter().filter(|p| p.run_id == m.run_id).cloned().collect() };
    let metrics_of = |m: &Manifest| -> Vec<crate::analysis::workload::MetricStat> {
        metrics.iter().filter(|x| x.run_id == m.run_id).cloned().collect()
    };
    ReportContext {
        title: run::title(manifest),
        generated_at: crate::archive::manifest::now_rfc3339(),
        benchbook_version: manifest.tool.version.clone(),
        benchbook_commit: run::commit(manifest),
        run: run::run_section(manifest),
        system,
        memcpy: bandwidth_section(&host_series, &[Bench::Memcpy], Bench::Memcpy.name(), catalog),
        gpu: gpu::gpu_section(manifest, &gpu_stats, &gpu_series, gpu_spec, manifests, catalog),
        stream: bandwidth_section(&host_series, &[Bench::Stream], Bench::Stream.name(), catalog),
        gemm: gemm_section(stats, spec, Bench::Gemm.name(), FlopUnit::Giga, manifests),
        collective: bandwidth_section(&host_series, &[Bench::Collective], Bench::Collective.name(), catalog),
        p2p: bandwidth_section(&host_series, &[Bench::P2p], Bench::P2p.name(), catalog),
        latency: blocks::latency_rows(stats, catalog),
        latency_notes: blocks::latency_notes(stats, series),
        other: blocks::other_rows(stats),
        workload: workload::workload_section(metrics, &catalog.gpu_peaks),
        telemetry: telemetry::telemetry_section(manifests, all_stats, series),
        native: !manifests.iter().all(Manifest::is_import) && workload::exec_info(manifest).is_none(),
        imported,
        skipped: methodology::not_measured(not_measured),
        methodology: methodology::methodology(
            manifests.iter().find(|m| !m.is_import()).unwrap_or(manifest),
            all_stats,
            catalog,
        ),
        provenance: manifests
            .iter()
            .flat_map(|m| {
                provenance::provenance(m, &of_run(m), &methodology::stop_rule(m))
                    .into_iter()
                    .chain(provenance::workload_row(m, &metrics_of(m)))
            })
            .collect(),
        exec: workload::exec_info(manifest),
        files: manifests
            .iter()
            .flat_map(|m| {
                m.files.iter().map(move |f| FileRow {
                    path: if several { format!("{}/{}", m.run_id, f.path) } else { f.path.clone() },
                    bytes: f.bytes,
                    sha256: f.sha256.clone(),
                })
            })
            .collect(),
        env: manifest.env.iter().filter(|(k, _)| !is_launcher_env(k)).map(|(k, v)| kv(k, v.clone())).collect(),
        launcher_env: manifest.env.iter().filter(|(k, _)| is_launcher_env(k)).map(|(k, v)| kv(k, v.clone())).collect(),
    }
}
