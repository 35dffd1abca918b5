//! What a report says of workload metrics: per metric and per file or run
//! (never averaged across systems), its best point and the level it holds.
//! Along a step axis that level is the steady state after the warm-up, or
//! the direction the metric still moves; points of different settings get
//! the range of their medians, never a median across configurations.

use super::{MetricLevel, Said};
use crate::analysis::workload::MetricStat;
use crate::vocab::metrics::{params_label, Better};
use crate::vocab::units::format_axis;

/// The axis a training log's points follow, when they have one.
pub const STEP_AXES: [&str; 2] = ["iteration", "step"];

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
    // One warm-up per log and configuration: its steady state starts where
    // every metric it logs along the step axis is logged, so a throughput
    // a log prints from its third step on and a loss it prints from its
    // first are read over the same steps.
    let mut starts: std::collections::BTreeMap<(String, Option<String>), f64> = Default::default();
    for g in metrics.iter().flat_map(|m| groups(stats, m)) {
        let Some(axis) = g.axis else { continue };
        let first = g.pts.iter().filter_map(|p| p.param_f64(axis)).fold(f64::INFINITY, f64::min);
        let start = starts.entry((g.from.clone(), g.config.clone())).or_insert(f64::NEG_INFINITY);
        *start = start.max(first);
    }
    for metric in metrics {
        for g in groups(stats, metric) {
            let whose = match (&g.config, every.len() > 1) {
                (Some(c), true) => Some(format!("{}, {c}", g.from)),
                (Some(c), false) => Some(c.clone()),
                (None, true) => Some(g.from.clone()),
                (None, false) => None,
            };
            let row = g.config.as_ref().map_or_else(|| g.from.clone(), |c| format!("{}, {c}", g.from));
            let start = starts.get(&(g.from.clone(), g.config.clone())).copied();
            let by_config = g.config.is_some();
            out.extend(
                finding(metric, &g.pts, g.axis.map(|a| (a, start)), whose, by_config)
                    .into_iter()
                    .map(|s| (row.clone(), s)),
            );
        }
    }
    // A loss no vocabulary allows comes first: every other figure of that
    // run is read after the warning, not before it.
    out.sort_by_key(|(_, s)| !matches!(s, Said::LossAboveUniform { .. }));
    out
}

/// One metric's points of one origin (file or run) and configuration.
struct Group<'a> {
    from: String,
    axis: Option<&'static str>,
    config: Option<String>,
    pts: Vec<&'a MetricStat>,
}

/// `metric`'s points per origin and, along a step axis, per configuration
/// (a model size, a batch): each is its own level, never one median
/// across configurations.
fn groups<'a>(stats: &'a [MetricStat], metric: &str) -> Vec<Group<'a>> {
    let all: Vec<&MetricStat> = stats.iter().filter(|s| s.metric == metric).collect();
    let mut origins: Vec<String> = all.iter().map(|s| origin(s)).collect();
    origins.sort();
    origins.dedup();
    let mut out = Vec::new();
    for from in origins {
        let pts: Vec<&MetricStat> = all.iter().copied().filter(|s| origin(s) == from).collect();
        let axis = STEP_AXES.iter().copied().find(|a| pts.iter().all(|p| p.param_f64(a).is_some()));
        for (config, pts) in configurations(&pts, axis) {
            out.push(Group { from: from.clone(), axis, config, pts });
        }
    }
    out
}

/// The points of one origin per configuration: the parameters other than
/// the step axis (`None`, one group, without a step axis or with one
/// configuration).
fn configurations<'a>(pts: &[&'a MetricStat], axis: Option<&str>) -> Vec<(Option<String>, Vec<&'a MetricStat>)> {
    let Some(axis) = axis else { return vec![(None, pts.to_vec())] };
    let mut groups: Vec<(crate::vocab::metrics::ParamsKey, String, Vec<&MetricStat>)> = Vec::new();
    for p in pts {
        let mut rest = p.params.clone();
        rest.remove(axis);
        let key = crate::vocab::metrics::params_key(&rest);
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.2.push(p),
            None => groups.push((key, params_label(&rest), vec![p])),
        }
    }
    if groups.len() == 1 {
        return vec![(None, pts.to_vec())];
    }
    groups.into_iter().map(|(_, label, ps)| (Some(label), ps)).collect()
}

/// The findings of one metric's points of one origin and configuration:
/// its best point and level, and a loss above any vocabulary's uniform guess.
/// `axis`: the step axis, with the step its log's steady state may start
/// at (where all its metrics are logged).
fn finding(
    metric: &str,
    pts: &[&MetricStat],
    axis: Option<(&str, Option<f64>)>,
    whose: Option<String>,
    by_config: bool,
) -> Vec<Said> {
    let Some(first) = pts.first() else { return Vec::new() };
    let (axis, start) = (axis.map(|a| a.0), axis.and_then(|a| a.1));
    // Where a point is: its step, when its configuration is already named.
    let at_of = |p: &MetricStat| match axis.filter(|_| by_config) {
        Some(a) => format!("{a}={}", format_axis(p.param_f64(a).unwrap_or(0.0))),
        None => params_label(&p.params),
    };
    let unit = first.unit.as_str();
    let mut out = Vec::new();
    if crate::vocab::metrics::is_loss(metric, unit) {
        let worst = pts.iter().max_by(|a, b| a.median.total_cmp(&b.median));
        // A run that recorded its vocabulary is held against a uniform
        // guess over it; else over a million tokens, more than any has.
        let vocab = first.param_f64("vocab").filter(|v| *v >= 2.0).map(|v| v as u64);
        let bound = vocab.map_or(crate::vocab::metrics::LOSS_BOUND, |v| (v as f64).ln());
        if let Some(w) = worst.filter(|w| w.median > bound) {
            out.push(Said::LossAboveUniform {
                metric: metric.to_string(),
                from: whose.clone(),
                value: w.median,
                at: at_of(w),
                bound,
                vocab,
            });
        }
    }
    if pts.len() == 1 {
        out.insert(
            0,
            Said::MetricSingle {
                metric: metric.to_string(),
                from: whose,
                median: first.median,
                unit: unit.into(),
                samples: first.samples,
                ci: first.ci,
                at: params_label(&first.params),
            },
        );
        return out;
    }
    let best = match first.better {
        Better::Higher => pts.iter().max_by(|a, b| a.median.total_cmp(&b.median)),
        Better::Lower => pts.iter().min_by(|a, b| a.median.total_cmp(&b.median)),
    };
    let Some(best) = best else { return out };
    let level = match axis {
        Some(axis) if pts.len() >= 3 => step_level(pts, axis, start),
        _ => settings_level(pts),
    };
    out.insert(
        0,
        Said::MetricBest {
            metric: metric.to_string(),
            from: whose,
            higher: first.better == Better::Higher,
            best: best.median,
            unit: unit.into(),
            at: at_of(best),
            level,
        },
    );
    out
}

/// The level of points logged along a step axis (`step`, `iteration`):
/// their steady state after the warm-up, or the direction they still move.
/// `start`: the first step every metric of its log is logged at; steps
/// before it are left out, with the warm-up counted from there (unless
/// that leaves fewer than 3 steps).
fn step_level(pts: &[&MetricStat], axis: &str, start: Option<f64>) -> MetricLevel {
    let mut by_step: Vec<(f64, f64)> = pts.iter().map(|p| (p.param_f64(axis).unwrap_or(0.0), p.median)).collect();
    by_step.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some(start) = start {
        let from: Vec<(f64, f64)> = by_step.iter().copied().filter(|(step, _)| *step >= start).collect();
        if from.len() >= 3 {
            by_step = from;
        }
    }
    let warm = (by_step.len() / 10).max(1);
    let after: Vec<f64> = by_step[warm..].iter().map(|(_, v)| *v).collect();
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        crate::vocab::stats::quantile_sorted(&v, 0.5)
    };
    let (first, last) = (format_axis(by_step[warm].0), format_axis(by_step[by_step.len() - 1].0));
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
pub(super) mod tests {
    use super::*;

    /// A TFLOP/s/GPU point of an imported log, at one iteration.
    pub(in crate::analysis::findings) fn point(file: &str, iteration: u64, v: f64) -> MetricStat {
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

    #[test]
    fn a_loss_is_held_against_the_vocabulary_its_run_recorded() {
        let loss = |step: u64, v: f64, vocab: Option<u64>| {
            let mut p = point("gpt.log", step, v);
            p.metric = "loss".into();
            p.unit = "1".into();
            p.better = Better::Lower;
            p.params.clear();
            p.params.insert("step".into(), step.into());
            if let Some(v) = vocab {
                p.params.insert("vocab".into(), v.into());
            }
            p
        };
        // 11.2 is above ln(8192) = 9.01, not above ln(10^6) = 13.8.
        let flagged = |vocab| {
            let stats: Vec<MetricStat> =
                [(1, 11.2), (2, 9.5), (3, 8.0)].iter().map(|&(i, v)| loss(i, v, vocab)).collect();
            metric_findings(&stats, &["loss"]).into_iter().find_map(|(_, s)| match s {
                Said::LossAboveUniform { vocab, bound, .. } => Some((vocab, bound)),
                _ => None,
            })
        };
        let (vocab, bound) = flagged(Some(8192)).expect("flagged against ln(8192)");
        assert_eq!(vocab, Some(8192));
        assert!((bound - 8192f64.ln()).abs() < 1e-12);
        assert!(flagged(None).is_none(), "no vocabulary: only above ln(10^6)");
    }

    #[test]
    fn metrics_of_one_log_share_one_warm_up() {
        // Primus prints TFLOP/s from iteration 1 and tokens/s only from 3:
        // both are read from iteration 3 on, the warm-up counted from there.
        let mut stats: Vec<MetricStat> = [(1, 10.5), (2, 20.6), (3, 449.5), (4, 616.7), (5, 611.4), (6, 602.2)]
            .iter()
            .map(|&(i, v)| point("primus.log", i, v))
            .collect();
        stats.extend([(3, 6870.0), (4, 9427.0), (5, 9345.0), (6, 9205.0)].iter().map(|&(i, v)| {
            let mut p = point("primus.log", i, v);
            p.metric = "tokens_per_s_per_gpu".into();
            p
        }));
        let levels: Vec<MetricLevel> = metric_findings(&stats, &["tflops_per_gpu", "tokens_per_s_per_gpu"])
            .into_iter()
            .filter_map(|(_, s)| match s {
                Said::MetricBest { level, .. } => Some(level),
                _ => None,
            })
            .collect();
        assert_eq!(levels.len(), 2, "{levels:?}");
        for l in &levels {
            assert!(matches!(l, MetricLevel::Steady { first, warmup: 1, .. } if first == "4"), "{levels:?}");
        }
    }

    #[test]
    fn each_configuration_has_its_own_level_and_a_loss_above_any_vocabulary_is_flagged() {
        // One run logs the loss of two model sizes along the step axis.
        let loss = |model: &str, step: u64, v: f64| {
            let mut p = point("gpt.log", step, v);
            p.metric = "loss".into();
            p.unit = "1".into();
            p.better = Better::Lower;
            p.params.clear();
            p.params.insert("model".into(), model.into());
            p.params.insert("step".into(), step.into());
            p
        };
        let mut stats: Vec<MetricStat> = (1..=6).map(|s| loss("small", s, 7.0 - s as f64)).collect();
        stats.extend((1..=6).map(|s| loss("large", s, 61.0 - s as f64)));
        let said: Vec<Said> = metric_findings(&stats, &["loss"]).into_iter().map(|(_, s)| s).collect();
        let best: Vec<(Option<String>, f64)> = said
            .iter()
            .filter_map(|s| match s {
                Said::MetricBest { from, best, .. } => Some((from.clone(), *best)),
                _ => None,
            })
            .collect();
        // Two levels, one per model: no median across the two.
        assert_eq!(best, vec![(Some("model=small".into()), 1.0), (Some("model=large".into()), 55.0)], "{said:?}");
        let flagged: Vec<&Said> = said.iter().filter(|s| matches!(s, Said::LossAboveUniform { .. })).collect();
        assert_eq!(flagged.len(), 1, "{said:?}");
        assert!(matches!(flagged[0], Said::LossAboveUniform { value, .. } if *value == 60.0));
    }
}
