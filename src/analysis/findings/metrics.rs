//! What a report says of workload metrics: per metric and per file or run
//! (never averaged across systems), its best point and the level it holds.
//! Along a step axis that level is the steady state after the warm-up, or
//! the direction the metric still moves; points of different settings get
//! the range of their medians, never a median across configurations.

use super::{MetricLevel, Said};
use crate::analysis::workload::MetricStat;
use crate::vocab::metrics::{params_label, Better};
use crate::vocab::units::format_sig3;

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
pub fn origin(s: &MetricStat) -> String {
    s.file_name().map_or_else(|| s.run_id.clone(), str::to_string)
}

/// One finding per metric and per file or run, with where it is from:
/// with a step axis, the median of the steady state, leaving out the first
/// tenth of the logged steps (at least one) as warm-up, and the best step;
/// otherwise its best point and the range of its point medians.
pub fn metric_findings(stats: &[MetricStat], metrics: &[&str]) -> Vec<(String, Said)> {
    let mut out = Vec::new();
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
                out.push((
                    from.clone(),
                    Said::MetricSingle {
                        metric: metric.to_string(),
                        from: whose,
                        median: first.median,
                        unit: unit.into(),
                        samples: first.samples,
                        ci: first.ci,
                        at: params_label(&first.params),
                    },
                ));
                continue;
            }
            let best = match first.better {
                Better::Higher => pts.iter().max_by(|a, b| a.median.total_cmp(&b.median)),
                Better::Lower => pts.iter().min_by(|a, b| a.median.total_cmp(&b.median)),
            };
            let Some(best) = best else { continue };
            let axis = STEP_AXES.iter().find(|a| pts.iter().all(|p| p.param_f64(a).is_some()));
            let level = match axis {
                Some(axis) if pts.len() >= 3 => step_level(&pts, axis),
                _ => settings_level(&pts),
            };
            out.push((
                from.clone(),
                Said::MetricBest {
                    metric: metric.to_string(),
                    from: whose,
                    higher: first.better == Better::Higher,
                    best: best.median,
                    unit: unit.into(),
                    at: params_label(&best.params),
                    level,
                },
            ));
        }
    }
    out
}

/// The level of points logged along a step axis (`step`, `iteration`):
/// their steady state after the warm-up, or the direction they still move.
fn step_level(pts: &[&MetricStat], axis: &str) -> MetricLevel {
    let mut by_step: Vec<(f64, f64)> = pts.iter().map(|p| (p.param_f64(axis).unwrap_or(0.0), p.median)).collect();
    by_step.sort_by(|a, b| a.0.total_cmp(&b.0));
    let warm = (by_step.len() / 10).max(1);
    let after: Vec<f64> = by_step[warm..].iter().map(|(_, v)| *v).collect();
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        crate::vocab::stats::quantile_sorted(&v, 0.5)
    };
    let (first, last) = (step(by_step[warm].0), step(by_step[by_step.len() - 1].0));
    // A steady state holds the plateau rule: its first and last halves
    // agree within the tolerance, and it does not move one way at every
    // logged step (a loss that falls at each of 4 steps by more than half
    // the tolerance in all is still falling).
    let (early, late) = (median(&after[..after.len() / 2]), median(&after[after.len() / 2..]));
    let tolerance = crate::vocab::stats::PLATEAU_TOLERANCE;
    let monotone = after.len() >= 4
        && (after.windows(2).all(|w| w[1] < w[0]) || after.windows(2).all(|w| w[1] > w[0]))
        && (after[after.len() - 1] - after[0]).abs() > tolerance / 2.0 * after[0].abs();
    let axis = axis.to_string();
    if after.len() >= 2 && ((late - early).abs() > tolerance * early.abs().max(late.abs()) || monotone) {
        let direction = if late < early { "falling" } else { "rising" };
        MetricLevel::Moving { axis, first, last, early, late, direction: direction.into() }
    } else {
        MetricLevel::Steady { axis, first, last, points: after.len(), warmup: warm, median: median(&after) }
    }
}

/// Points of different settings (model sizes, worker counts): no one level
/// describes them, so their range is stated, never a median across
/// configurations (F18).
fn settings_level(pts: &[&MetricStat]) -> MetricLevel {
    let mut medians: Vec<f64> = pts.iter().map(|p| p.median).collect();
    medians.sort_by(f64::total_cmp);
    MetricLevel::Points { points: pts.len(), low: medians[0], high: medians[medians.len() - 1] }
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
        let said: Vec<Said> = metric_findings(&stats, &["tflops_per_gpu"]).into_iter().map(|(_, s)| s).collect();
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
        let steady = |first: &str, last: &str, points, median| MetricLevel::Steady {
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
