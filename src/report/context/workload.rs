//! The workload section (schema v4 named metrics, seeds 002 and 004):
//! every metric point with its median and the 95 % interval of the median
//! where the samples support one, scaling efficiency along the GPU / node /
//! worker axis, a metric-vs-parameter chart per metric that varies along a
//! numeric parameter (the loss against the step is one), and sentences on
//! peaks and averages computed from the table.

use serde::Serialize;

use crate::analysis::workload::{numeric_axes, scaling, MetricStat};
use crate::vocab::metrics::{params_label, Better};
use crate::vocab::units::format_sig3;

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
    pub observations: Vec<String>,
    pub table: Vec<MetricRow>,
    pub scaling: Vec<ScalingView>,
    pub charts: Vec<WorkloadChart>,
}

/// Parameters that count workers of a data-parallel job, in the order a
/// scaling table prefers them.
pub const SCALING_AXES: [&str; 6] = ["gpus", "nodes", "world_size", "workers", "ranks", "partitions"];

/// Charts per report at most: one per metric, the most varied first.
const MAX_CHARTS: usize = 8;

/// The section, or `None` for a run without named metrics.
pub fn workload_section(stats: &[MetricStat]) -> Option<WorkloadSection> {
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
    Some(WorkloadSection { observations: observations(stats, &metrics), table, scaling: scaling_rows, charts })
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

/// Per metric with more than one point: its best point (peak) and the
/// average of the point medians.
fn observations(stats: &[MetricStat], metrics: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for metric in metrics {
        let pts: Vec<&MetricStat> = stats.iter().filter(|s| s.metric == *metric).collect();
        let Some(first) = pts.first() else { continue };
        let unit = first.unit.as_str();
        if pts.len() == 1 {
            let s = first;
            out.push(format!(
                "{metric}: median {} over {} sample(s){}.",
                with_unit(s.median, unit),
                s.samples,
                s.ci.map(|(lo, hi)| format!(" (95 % CI of the median {} – {})", format_sig3(lo), format_sig3(hi)))
                    .unwrap_or_default()
            ));
            continue;
        }
        let best = match first.better {
            Better::Higher => pts.iter().max_by(|a, b| a.median.total_cmp(&b.median)),
            Better::Lower => pts.iter().min_by(|a, b| a.median.total_cmp(&b.median)),
        };
        let Some(best) = best else { continue };
        let avg = pts.iter().map(|s| s.median).sum::<f64>() / pts.len() as f64;
        let word = if first.better == Better::Higher { "peaks at" } else { "is lowest at" };
        let at = params_label(&best.params);
        out.push(format!(
            "{metric} {word} {}{}; the average of its {} points' medians is {}.",
            with_unit(best.median, unit),
            if at.is_empty() { String::new() } else { format!(" ({at})") },
            pts.len(),
            with_unit(avg, unit)
        ));
    }
    out
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
