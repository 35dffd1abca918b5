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
use crate::vocab::metrics::{params_label, Better};
use crate::vocab::units::format_sig3;

use super::said::{Level, Said};

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
        stats.iter().filter(|s| !s.params.is_empty() && !s.params.contains_key("step")).collect();
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
    let (observations, levels) = observations(stats, &metrics);
    Some(WorkloadSection { observations, levels, table, scaling: scaling_rows, charts, by_config: config_table(stats) })
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

/// The axis a training log's points follow, when they have one.
const STEP_AXES: [&str; 2] = ["iteration", "step"];

/// A step number as printed: `30`, not `30.0`.
fn step(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format_sig3(v)
    }
}

/// Where a metric's points came from: the imported file (without its
/// `import:tool:source-N-` prefix) or the run.
fn origin(s: &MetricStat) -> String {
    s.file_name().map_or_else(|| s.run_id.clone(), str::to_string)
}

/// Per metric and per file or run (never averaged across systems): with a
/// step axis, the median of the steady state, leaving out the first tenth
/// of the logged steps (at least one) as warm-up, and the best step;
/// otherwise its best point and the range of its point medians (different settings: no one level).
fn observations(stats: &[MetricStat], metrics: &[&str]) -> (Vec<Said>, Vec<LevelRow>) {
    let mut out = Vec::new();
    let mut rows = Vec::new();
    // Every file (or run) of the report: a metric only one of them logged
    // still names it where there are several.
    let mut every: Vec<String> = stats.iter().map(origin).collect();
    every.sort();
    every.dedup();
    for metric in metrics {
        let all: Vec<&MetricStat> = stats.iter().filter(|s| s.metric == *metric).collect();
        let mut origins: Vec<String> = all.iter().map(|s| origin(s)).collect();
        origins.sort();
        origins.dedup();
        for from in &origins {
            let pts: Vec<&MetricStat> = all.iter().copied().filter(|s| origin(s) == *from).collect();
            let Some(first) = pts.first() else { continue };
            let unit = first.unit.as_str();
            let whose = (every.len() > 1).then(|| from.clone());
            if pts.len() == 1 {
                let s = first;
                rows.push(LevelRow {
                    metric: metric.to_string(),
                    from: from.clone(),
                    best: with_unit(s.median, unit),
                    at: params_label(&s.params),
                    level: format!("{} samples", s.samples),
                });
                out.push(Said::MetricSingle {
                    metric: metric.to_string(),
                    from: whose,
                    median: s.median,
                    unit: unit.into(),
                    samples: s.samples,
                    ci: s.ci,
                });
                continue;
            }
            let best = match first.better {
                Better::Higher => pts.iter().max_by(|a, b| a.median.total_cmp(&b.median)),
                Better::Lower => pts.iter().min_by(|a, b| a.median.total_cmp(&b.median)),
            };
            let Some(best) = best else { continue };
            let axis = STEP_AXES.iter().find(|a| pts.iter().all(|p| p.param_f64(a).is_some()));
            let (level, level_cell) = match axis {
                Some(axis) if pts.len() >= 3 => step_level(&pts, axis, unit),
                _ => settings_level(&pts, unit),
            };
            rows.push(LevelRow {
                metric: metric.to_string(),
                from: from.clone(),
                best: with_unit(best.median, unit),
                at: params_label(&best.params),
                level: level_cell,
            });
            out.push(Said::MetricBest {
                metric: metric.to_string(),
                from: whose,
                higher: first.better == Better::Higher,
                best: best.median,
                unit: unit.into(),
                at: params_label(&best.params),
                level,
            });
        }
    }
    (out, rows)
}

/// The level of points logged along a step axis (`step`, `iteration`):
/// their steady state after the warm-up, or the direction they still move.
fn step_level(pts: &[&MetricStat], axis: &str, unit: &str) -> (Level, String) {
    let mut by_step: Vec<(f64, f64)> = pts.iter().map(|p| (p.param_f64(axis).unwrap_or(0.0), p.median)).collect();
    by_step.sort_by(|a, b| a.0.total_cmp(&b.0));
    let warm = (by_step.len() / 10).max(1);
    let after: Vec<f64> = by_step[warm..].iter().map(|(_, v)| *v).collect();
    let mut steady = after.clone();
    steady.sort_by(f64::total_cmp);
    let median = with_unit(crate::vocab::stats::quantile_sorted(&steady, 0.5), unit);
    let (a, b) = (step(by_step[warm].0), step(by_step[by_step.len() - 1].0));
    // A steady state holds the plateau rule: its first and
    // last halves agree within the tolerance, and it does
    // not move one way at every logged step (a loss that
    // falls at each of 4 steps by more than half the
    // tolerance in all is still falling).
    let half = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        crate::vocab::stats::quantile_sorted(&v, 0.5)
    };
    let (early, late) = (half(&after[..after.len() / 2]), half(&after[after.len() / 2..]));
    let tolerance = crate::vocab::stats::PLATEAU_TOLERANCE;
    let monotone = after.len() >= 4
        && (after.windows(2).all(|w| w[1] < w[0]) || after.windows(2).all(|w| w[1] > w[0]))
        && (after[after.len() - 1] - after[0]).abs() > tolerance / 2.0 * after[0].abs();
    if after.len() >= 2 && ((late - early).abs() > tolerance * early.abs().max(late.abs()) || monotone) {
        let direction = if late < early { "falling" } else { "rising" };
        let cell = format!(
                "still {direction} after the warm-up: median {} over the first half of {axis} {a} to {b}, {} over the second",
                with_unit(early, unit),
                with_unit(late, unit)
            );
        let level =
            Level::Moving { axis: axis.to_string(), first: a, last: b, early, late, direction: direction.into() };
        (level, cell)
    } else {
        let level = Level::Steady {
            axis: axis.to_string(),
            first: a.clone(),
            last: b.clone(),
            points: steady.len(),
            warmup: warm,
            median: crate::vocab::stats::quantile_sorted(&steady, 0.5),
        };
        (level, format!("steady-state median {median}, {axis} {a} to {b} ({warm} warm-up left out)"))
    }
}

/// Points of different settings (model sizes, worker counts): no one level
/// describes them, so their range is stated, never a median across
/// configurations (F18).
fn settings_level(pts: &[&MetricStat], unit: &str) -> (Level, String) {
    let mut medians: Vec<f64> = pts.iter().map(|p| p.median).collect();
    medians.sort_by(f64::total_cmp);
    let (low, high) = (medians[0], medians[medians.len() - 1]);
    let level = Level::Points { points: pts.len(), low, high };
    let cell = format!("{} settings: {} to {} (no one level)", pts.len(), with_unit(low, unit), with_unit(high, unit));
    (level, cell)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn point(file: &str, iteration: u64, v: f64) -> MetricStat {
        let mut params = crate::vocab::metrics::Params::new();
        params.insert("iteration".into(), iteration.into());
        MetricStat {
            run_id: "r".into(),
            point: iteration as u32,
            bench: "megatron".into(),
            device: "unknown".into(),
            source: format!("import:megatron:source-1-{file}"),
            metric: "tflops_per_gpu".into(),
            unit: "TFLOP/s/GPU".into(),
            better: Better::Higher,
            params,
            samples: 1,
            median: v,
            mean: v,
            min: v,
            max: v,
            std_dev: 0.0,
            peak: v,
            ci: None,
        }
    }

    #[test]
    fn systems_are_never_averaged_and_warm_up_is_left_out() {
        // Two logs: a slow warm-up first iteration, then a steady level.
        let mut stats: Vec<MetricStat> =
            [(10, 100.0), (20, 400.0), (30, 410.0), (40, 405.0)].iter().map(|&(i, v)| point("a.log", i, v)).collect();
        stats.extend([(10, 800.0), (20, 880.0), (30, 870.0)].iter().map(|&(i, v)| point("b.log", i, v)));
        let said = observations(&stats, &["tflops_per_gpu"]).0;
        let of = |log: &str| {
            said.iter()
                .find_map(|s| match s {
                    Said::MetricBest { from, best, level, higher: true, .. } if from.as_deref() == Some(log) => {
                        Some((*best, level.clone()))
                    }
                    _ => None,
                })
                .unwrap_or_else(|| panic!("no line for {log}: {said:?}"))
        };
        let steady = |first: &str, last: &str, points, median| Level::Steady {
            axis: "iteration".into(),
            first: first.into(),
            last: last.into(),
            points,
            warmup: 1,
            median,
        };
        assert_eq!(of("a.log"), (410.0, steady("20", "40", 3, 405.0)));
        // No figure mixes the two logs (the old 'average of its 7 points').
        assert_eq!(of("b.log"), (880.0, steady("20", "30", 2, 875.0)));
        assert_eq!(said.len(), 2, "{said:?}");
    }
}
