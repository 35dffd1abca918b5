//! The workload section (schema v4 named metrics, seeds 002 and 004):
//! every metric point with its median and the 95 % interval of the median
//! where the samples support one, scaling efficiency along the GPU / node /
//! worker axis, a metric-vs-parameter chart per metric that varies along a
//! numeric parameter (the loss against the step is one), and sentences on
//! peaks and averages computed from the table.
//!
//! The file is longer than 400 lines because the section's tables (every
//! point, levels, scaling, by configuration) and their tests stay together.

use serde::Serialize;

use crate::analysis::workload::{numeric_axes, scaling, MetricStat};
use crate::vocab::metrics::params_label;
use crate::vocab::units::format_sig3;

use crate::analysis::findings::metrics::metric_findings;
use crate::analysis::findings::{MetricLevel, Said};

/// One metric point, formatted.
#[derive(Debug, Clone, Serialize)]
pub struct MetricRow {
    pub metric: String,
    pub params: String,
    pub unit: String,
    pub median: String,
    /// `a – b`, or why there is none (`n/a (3 samples)`).
    pub ci: String,
    pub mean: String,
    /// The best sample in the metric's direction.
    pub peak: String,
    pub samples: usize,
    pub better: String,
}

/// One row of a scaling table, formatted.
#[derive(Debug, Clone, Serialize)]
pub struct ScalingView {
    pub axis: String,
    pub metric: String,
    pub group: String,
    pub n: String,
    pub median: String,
    pub speedup: String,
    pub efficiency_pct: String,
}

/// A chart of the section: `metric` against parameter `x`.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadChart {
    pub name: String,
    pub title: String,
    pub metric: String,
    pub x: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSection {
    pub observations: Vec<Said>,
    pub table: Vec<MetricRow>,
    pub scaling: Vec<ScalingView>,
    pub charts: Vec<WorkloadChart>,
    /// Per metric and source: best point and level.
    pub levels: Vec<LevelRow>,
    /// One row per configuration (a model size, a batch), one column per
    /// metric it reported, as the seeds' results tables are.
    pub by_config: Option<ConfigTable>,
    /// TFLOP/s figures whose logs name no GPU, against every known GPU's
    /// dense 16-bit peak ([`crate::analysis::findings::plausibility`]).
    pub peak_shares: Vec<PeakShareRow>,
}

/// One figure against every known GPU, as the table prints it: one row
/// per log, the GPUs in one cell.
#[derive(Debug, Clone, Serialize)]
pub struct PeakShareRow {
    pub metric: String,
    pub from: String,
    pub figure: String,
    /// `NVIDIA H100 SXM5 80GB (989): 88.9 %`, one per GPU, joined.
    pub shares: String,
}

/// Metrics side by side per configuration.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigTable {
    /// `tokens_per_s (tokens/s)`.
    pub columns: Vec<String>,
    /// (configuration, one cell per column: `median (n samples)` or `-`).
    pub rows: Vec<(String, Vec<String>)>,
}

/// The configuration table of the metrics reported once per configuration
/// (not per step), when at least two configurations share two metrics.
fn config_table(stats: &[MetricStat]) -> Option<ConfigTable> {
    let once: Vec<&MetricStat> =
        // A point along a step axis is one step of a log, not a configuration.
        stats
            .iter()
            .filter(|s| !s.params.is_empty())
            .filter(|s| !crate::analysis::findings::metrics::STEP_AXES.iter().any(|a| s.params.contains_key(*a)))
            .collect();
    let mut configs: Vec<(String, &crate::vocab::metrics::Params)> = Vec::new();
    for s in &once {
        if !configs.iter().any(|(r, p)| *r == s.run_id && *p == &s.params) {
            configs.push((s.run_id.clone(), &s.params));
        }
    }
    let mut columns: Vec<(String, String)> = once.iter().map(|s| (s.metric.clone(), s.unit.clone())).collect();
    columns.sort();
    columns.dedup();
    if configs.len() < 2 || columns.len() < 2 {
        return None;
    }
    // Smallest first by the first numeric parameter all of them have.
    let numeric = |p: &crate::vocab::metrics::Params, k: &str| match p.get(k) {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        _ => None,
    };
    let keys: Vec<String> = configs[0].1.keys().cloned().collect();
    let axis = keys.into_iter().find(|k| configs.iter().all(|(_, p)| numeric(p, k).is_some()));
    if let Some(k) = &axis {
        configs.sort_by(|a, b| numeric(a.1, k).unwrap_or(0.0).total_cmp(&numeric(b.1, k).unwrap_or(0.0)));
    }
    let rows = configs
        .iter()
        .map(|(run, params)| {
            let cells = columns
                .iter()
                .map(|(m, _)| match once.iter().find(|s| s.run_id == *run && &s.params == *params && s.metric == *m) {
                    Some(s) if s.samples > 1 => format!("{} ({} samples)", format_sig3(s.median), s.samples),
                    Some(s) => format!("{} (one sample)", format_sig3(s.median)),
                    None => "-".into(),
                })
                .collect();
            (params_label(params), cells)
        })
        .collect();
    let columns =
        columns.into_iter().map(|(m, u)| if u.is_empty() || u == "1" { m } else { format!("{m} ({u})") }).collect();
    Some(ConfigTable { columns, rows })
}

/// Parameters that count workers of a data-parallel job, in the order a
/// scaling table prefers them.
pub const SCALING_AXES: [&str; 6] = ["gpus", "nodes", "world_size", "workers", "ranks", "partitions"];

/// Charts per report at most: one per metric, the most varied first.
const MAX_CHARTS: usize = 8;

/// The section, or `None` for a run without named metrics.
/// `gpu_peaks`: the report's known GPUs ([`crate::analysis::Catalog::gpu_peaks`]),
/// which a TFLOP/s figure from a GPU no log names is set against.
pub fn workload_section(stats: &[MetricStat], gpu_peaks: &[(String, f64)]) -> Option<WorkloadSection> {
    if stats.is_empty() {
        return None;
    }
    let table = stats
        .iter()
        .map(|s| MetricRow {
            metric: s.metric.clone(),
            params: params_label(&s.params),
            unit: s.unit.clone(),
            median: format_sig3(s.median),
            ci: match s.ci {
                Some((lo, hi)) => format!("{} – {}", format_sig3(lo), format_sig3(hi)),
                None if s.samples == 1 => "n/a (one sample)".into(),
                None => format!("n/a ({} samples; 6 needed)", s.samples),
            },
            mean: format_sig3(s.mean),
            peak: format_sig3(s.peak),
            samples: s.samples,
            better: s.better.as_str().into(),
        })
        .collect();
    let mut scaling_rows = Vec::new();
    for axis in SCALING_AXES {
        for r in scaling(stats, axis) {
            scaling_rows.push(ScalingView {
                axis: axis.into(),
                metric: r.metric.clone(),
                group: if r.group.is_empty() { "-".into() } else { r.group.clone() },
                n: crate::vocab::units::format_axis(r.n),
                median: with_unit(r.median, &r.unit),
                speedup: format!("{:.2}×", r.speedup),
                efficiency_pct: format!("{:.1} %", 100.0 * r.efficiency),
            });
        }
    }
    let mut metrics: Vec<&str> = stats.iter().map(|s| s.metric.as_str()).collect();
    metrics.sort_unstable();
    metrics.dedup();
    let mut charts = Vec::new();
    for metric in &metrics {
        let Some(x) = numeric_axes(stats, metric).into_iter().next() else { continue };
        charts.push(WorkloadChart {
            name: format!("metric-{}", chart_slug(metric)),
            title: format!("{metric} against {x}"),
            metric: metric.to_string(),
            x,
        });
        if charts.len() == MAX_CHARTS {
            break;
        }
    }
    let found = metric_findings(stats, &metrics);
    let levels = found.iter().filter_map(|(from, said)| level_row(from, said)).collect();
    let observations = found.into_iter().map(|(_, s)| s).collect();
    let mut peak_shares: Vec<PeakShareRow> = Vec::new();
    for p in crate::analysis::findings::plausibility::unnamed_peak_shares(stats, gpu_peaks) {
        let cell = format!("{} ({}): {:.1} %", p.gpu, format_sig3(p.peak), 100.0 * p.share);
        match peak_shares.iter_mut().find(|r| r.metric == p.metric && r.from == p.from) {
            Some(r) => r.shares.push_str(&format!(" · {cell}")),
            None => peak_shares.push(PeakShareRow {
                figure: with_unit(p.value, &p.unit),
                metric: p.metric,
                from: p.from,
                shares: cell,
            }),
        }
    }
    Some(WorkloadSection {
        observations,
        levels,
        table,
        scaling: scaling_rows,
        charts,
        by_config: config_table(stats),
        peak_shares,
    })
}

/// A value and its unit; a dimensionless unit (`1`) is not printed.
fn with_unit(v: f64, unit: &str) -> String {
    match unit {
        "" | "1" => format_sig3(v),
        u => format!("{} {u}", format_sig3(v)),
    }
}

/// A file-name-safe chart name.
fn chart_slug(metric: &str) -> String {
    metric.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

/// The table row of a metric finding: its best point and its level.
fn level_row(from: &str, said: &Said) -> Option<LevelRow> {
    let row = |metric: &str, best: f64, unit: &str, at: &str, level: String| LevelRow {
        metric: metric.into(),
        from: from.into(),
        best: with_unit(best, unit),
        at: at.into(),
        level,
    };
    match said {
        Said::MetricSingle { metric, median, unit, samples, at, .. } => {
            Some(row(metric, *median, unit, at, format!("{samples} samples")))
        }
        Said::MetricBest { metric, best, unit, at, level, .. } => {
            Some(row(metric, *best, unit, at, level_cell(level, unit)))
        }
        _ => None,
    }
}

/// A metric's level as its table cell.
fn level_cell(level: &MetricLevel, unit: &str) -> String {
    match level {
        MetricLevel::Steady { axis, first, last, warmup, median, .. } => format!(
            "steady-state median {}, {axis} {first} to {last} ({warmup} warm-up left out)",
            with_unit(*median, unit)
        ),
        MetricLevel::Moving { axis, first, last, early, late, direction } => format!(
            "still {direction} after the warm-up: median {} over the first half of {axis} {first} to {last}, {} over the second",
            with_unit(*early, unit),
            with_unit(*late, unit)
        ),
        MetricLevel::Points { points, low, high } => {
            format!("{points} settings: {} to {} (no one level)", with_unit(*low, unit), with_unit(*high, unit))
        }
    }
}

/// Per metric and file or run: its best point and the level it holds, the
/// figures the observations state.
#[derive(Debug, Clone, Serialize)]
pub struct LevelRow {
    pub metric: String,
    pub from: String,
    pub best: String,
    pub at: String,
    pub level: String,
}

/// How a `run exec` run was made, for the methodology.
#[derive(Debug, Clone, Serialize)]
pub struct ExecInfo {
    pub command: String,
    pub repeat: u64,
    pub params: String,
    /// Versions of the tools found when it ran (Python, torch, drivers).
    pub tools: Vec<super::KeyValue>,
}

/// What a `run exec` run ran, as its manifest recorded it.
pub(super) fn exec_spec(manifest: &crate::archive::manifest::Manifest) -> Option<crate::vocab::facts::ExecSpec> {
    manifest.config.exec().map(|e| e.exec.clone())
}

pub fn exec_info(manifest: &crate::archive::manifest::Manifest) -> Option<ExecInfo> {
    let spec = exec_spec(manifest)?;
    let tools = manifest.config.exec().map(|e| e.tools.clone()).unwrap_or_default();
    Some(ExecInfo {
        command: crate::vocab::units::shell_join(&spec.command),
        repeat: u64::from(spec.repeat),
        params: params_label(&spec.params),
        tools: tools.iter().map(|(k, v)| super::kv(k, v.clone())).collect(),
    })
}
