//! Named metrics (schema v4): per-point statistics of `value`, parameters
//! as columns for polars, scaling efficiency, and the series behind
//! metric-vs-parameter charts and loss curves.
//!
//! A metric point is one (run, metric, parameters); its samples are its
//! measured rows (repetitions of `run exec`, or one row per imported
//! number). Every statistic states how many samples it rests on; a 95 %
//! interval of the median is given only where the samples can support one
//! (six or more, distribution-free).

use std::collections::{BTreeMap, BTreeSet};

use polars::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::vocab::interval::Interval;
use crate::vocab::metrics::{self, Better, Params};
use crate::vocab::stats;

impl MetricStat {
    /// The file another tool wrote it to, as a reader knows it (without
    /// the archive's stored-name prefix); `None` for benchbook's own.
    pub fn file_name(&self) -> Option<&str> {
        match crate::vocab::source::RowOrigin::parse(Some(&self.source)) {
            crate::vocab::source::RowOrigin::Import { file, .. } => {
                Some(crate::vocab::source::stored_file_parts(file).map_or(file, |(_, name)| name))
            }
            crate::vocab::source::RowOrigin::Native => None,
        }
    }
}

/// One metric point of one run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MetricStat {
    pub run_id: String,
    pub point: u32,
    pub bench: String,
    pub device: String,
    pub source: String,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    pub params: Params,
    pub samples: usize,
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub std_dev: f64,
    /// The best sample in the metric's direction (max for higher-better).
    pub peak: f64,
    /// 95 % distribution-free interval of the median; `None` below six samples.
    pub ci: Option<(f64, f64)>,
}

impl MetricStat {
    /// `tokens_per_s gpus=8 model=7b`.
    pub fn label(&self) -> String {
        let p = metrics::params_label(&self.params);
        if p.is_empty() {
            self.metric.clone()
        } else {
            format!("{} {p}", self.metric)
        }
    }

    /// A parameter as a number, when it is one.
    pub fn param_f64(&self, name: &str) -> Option<f64> {
        match self.params.get(name)? {
            serde_json::Value::Number(n) => n.as_f64(),
            serde_json::Value::String(s) => s.parse().ok(),
            _ => None,
        }
    }
}

/// Metric rows of a frame: measured, `metric` set.
pub fn metric_rows(rows: LazyFrame) -> LazyFrame {
    rows.filter(col("status").eq(lit("measured")).and(col("metric").is_not_null()).and(col("value").is_not_null()))
}

/// Per-point statistics of every named metric in `df` (one or more runs).
pub fn metric_stats(df: &DataFrame) -> Result<Vec<MetricStat>> {
    metric_stats_lazy(df.clone().lazy())
}

/// [`metric_stats`] of a lazy frame: only the columns it names are read.
pub fn metric_stats_lazy(rows: LazyFrame) -> Result<Vec<MetricStat>> {
    let names = ["run_id", "point", "bench", "device", "source", "metric", "unit", "better", "axes", "value"];
    let m = metric_rows(rows).select(names.iter().map(|n| col(*n)).collect::<Vec<_>>());
    let m = m.collect().map_err(Error::analysis)?;
    use crate::archive::schema::columns as c;
    let (run, point) = (c::strings(&m, "run_id")?, c::u32s(&m, "point")?);
    let (bench, device, source) = (c::strings(&m, "bench")?, c::strings(&m, "device")?, c::strings(&m, "source")?);
    let (metric, unit, better, axes) =
        (c::strings(&m, "metric")?, c::strings(&m, "unit")?, c::strings(&m, "better")?, c::strings(&m, "axes")?);
    let value = c::f64s(&m, "value")?;
    let mut groups: BTreeMap<(String, u32), (usize, Vec<f64>)> = BTreeMap::new();
    for i in 0..m.height() {
        let (Some(r), Some(p), Some(v)) = (&run[i], point[i], value[i]) else { continue };
        groups.entry((r.clone(), p)).or_insert_with(|| (i, Vec::new())).1.push(v);
    }
    let text = |col: &[Option<String>], i: usize| col[i].clone().unwrap_or_default();
    let mut out = Vec::with_capacity(groups.len());
    for ((run_id, point), (i, mut values)) in groups {
        values.sort_by(f64::total_cmp);
        let better = better[i].as_deref().and_then(Better::parse).unwrap_or(Better::Higher);
        let (min, max) = (values[0], values[values.len() - 1]);
        out.push(MetricStat {
            run_id,
            point,
            bench: text(&bench, i),
            device: text(&device, i),
            source: text(&source, i),
            metric: text(&metric, i),
            unit: text(&unit, i),
            better,
            params: metrics::parse_params(axes[i].as_deref()),
            samples: values.len(),
            median: stats::quantile_sorted(&values, 0.5),
            mean: stats::mean(&values),
            min,
            max,
            std_dev: stats::std_dev(&values),
            peak: if better == Better::Higher { max } else { min },
            ci: stats::median_ci(&values, 0.95).map(|(lo, hi, _)| (lo, hi)),
        });
    }
    Ok(out)
}

/// `df` with one column per named parameter, `axis.<name>`: Int64 where
/// every value of that name is an integer, Float64 where every value is a
/// number, String otherwise (null where a row does not name it). Polars
/// can then filter and group by any parameter a user gave.
pub fn with_axis_columns(df: &DataFrame) -> Result<DataFrame> {
    let axes = crate::archive::schema::columns::strings(df, "axes")?;
    let parsed: Vec<Params> = axes.iter().map(|a| metrics::parse_params(a.as_deref())).collect();
    let names: BTreeSet<&String> = parsed.iter().flat_map(|p| p.keys()).collect();
    let mut out = df.clone();
    for name in names {
        let values: Vec<Option<&serde_json::Value>> = parsed.iter().map(|p| p.get(name)).collect();
        let col_name: PlSmallStr = format!("axis.{name}").into();
        let present = || values.iter().flatten();
        let series = if present().all(|v| v.is_i64()) {
            Series::new(col_name, values.iter().map(|v| v.and_then(|v| v.as_i64())).collect::<Vec<_>>())
        } else if present().all(|v| v.is_number()) {
            Series::new(col_name, values.iter().map(|v| v.and_then(|v| v.as_f64())).collect::<Vec<_>>())
        } else {
            Series::new(col_name, values.iter().map(|v| v.map(metrics::value_text)).collect::<Vec<_>>())
        };
        out.with_column(series.into_column()).map_err(Error::analysis)?;
    }
    Ok(out)
}

/// One row of a scaling table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScalingRow {
    pub run_id: String,
    pub metric: String,
    pub unit: String,
    /// The other parameters, e.g. `model=7b`.
    pub group: String,
    /// The scaled parameter's value (GPUs, nodes, workers).
    pub n: f64,
    pub median: f64,
    /// median(N) / median(N₀), N₀ the smallest N measured.
    pub speedup: f64,
    /// speedup / (N / N₀): 1 is perfect linear scaling.
    pub efficiency: f64,
}

/// Scaling efficiency along parameter `axis` for higher-better metrics:
/// throughput at N / ((N / N₀) × throughput at N₀), per run, metric and
/// combination of the other parameters. With N₀ = 1 this is the textbook
/// T(N) / (N × T(1)).
pub fn scaling(stats: &[MetricStat], axis: &str) -> Vec<ScalingRow> {
    let mut groups: BTreeMap<(String, String, metrics::ParamsKey), (String, Vec<&MetricStat>)> = BTreeMap::new();
    for s in stats.iter().filter(|s| s.better == Better::Higher) {
        if s.param_f64(axis).is_none_or(|n| n <= 0.0) {
            continue;
        }
        let mut others = s.params.clone();
        others.remove(axis);
        let key = (s.run_id.clone(), s.metric.clone(), metrics::params_key(&others));
        groups.entry(key).or_insert_with(|| (metrics::params_label(&others), Vec::new())).1.push(s);
    }
    let mut out = Vec::new();
    for ((run_id, metric, _), (group, mut points)) in groups {
        points.sort_by(|a, b| a.param_f64(axis).partial_cmp(&b.param_f64(axis)).unwrap_or(std::cmp::Ordering::Equal));
        let distinct: BTreeSet<u64> = points.iter().filter_map(|p| p.param_f64(axis)).map(f64::to_bits).collect();
        if distinct.len() < 2 {
            continue;
        }
        let base = points[0];
        let (n0, t0) = (base.param_f64(axis).unwrap_or(1.0), base.median);
        for p in points {
            let n = p.param_f64(axis).unwrap_or(n0);
            let speedup = p.median / t0;
            out.push(ScalingRow {
                run_id: run_id.clone(),
                metric: metric.clone(),
                unit: p.unit.clone(),
                group: group.clone(),
                n,
                median: p.median,
                speedup,
                efficiency: speedup / (n / n0),
            });
        }
    }
    out
}

/// What makes one line of a metric chart: its run, the file it was read
/// from (where the run imported several), and the other parameters.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct MetricKey {
    pub run_id: String,
    pub file: Option<String>,
    pub params: metrics::ParamsKey,
}

/// One line of a metric-vs-parameter chart.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MetricSeries {
    pub key: MetricKey,
    /// Its name: the run's label, the file, and the other parameters.
    pub label: String,
    /// (x, median, interval of the median if any), sorted by x.
    pub points: Vec<(f64, f64, Option<Interval>)>,
}

/// The numeric parameters a metric varies along (more than one value),
/// most distinct values first: the x axis candidates of its chart.
pub fn numeric_axes(stats: &[MetricStat], metric: &str) -> Vec<String> {
    let mut values: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    let mut non_numeric: BTreeSet<String> = BTreeSet::new();
    for s in stats.iter().filter(|s| s.metric == metric) {
        for k in s.params.keys() {
            match s.param_f64(k) {
                Some(v) => {
                    values.entry(k.clone()).or_default().insert(v.to_bits());
                }
                None => {
                    non_numeric.insert(k.clone());
                }
            }
        }
    }
    let mut axes: Vec<(usize, String)> = values
        .into_iter()
        .filter(|(k, v)| v.len() > 1 && !non_numeric.contains(k))
        .map(|(k, v)| (v.len(), k))
        .collect();
    axes.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    axes.into_iter().map(|(_, k)| k).collect()
}

/// `metric` against parameter `x`: one series per run (named by
/// `run_label`), file (where the run imported several) and combination of
/// the other parameters.
/// The parameters that only name `x`'s value (`model=small` at
/// `params_m=124`): within each run, one value of the parameter for each
/// value of `x` and the other way round, over two values or more. They do
/// not split a series: one line across the model sizes, not a dot per size.
fn names_of(stats: &[MetricStat], metric: &str, x: &str) -> BTreeSet<String> {
    let ours: Vec<&MetricStat> = stats.iter().filter(|s| s.metric == metric && s.params.contains_key(x)).collect();
    let keys: BTreeSet<&String> = ours.iter().flat_map(|s| s.params.keys()).filter(|k| *k != x).collect();
    keys.into_iter()
        .filter(|k| {
            // (run, x value) → parameter values, and (run, value) → x values.
            let mut forward: BTreeMap<(&str, String), BTreeSet<String>> = BTreeMap::new();
            let mut back: BTreeMap<(&str, String), BTreeSet<String>> = BTreeMap::new();
            for s in &ours {
                let (xv, pv) = (s.params[x].to_string(), s.params.get(*k).map_or("-".into(), |v| v.to_string()));
                forward.entry((s.run_id.as_str(), xv.clone())).or_default().insert(pv.clone());
                back.entry((s.run_id.as_str(), pv)).or_default().insert(xv);
            }
            forward.len() >= 2 && forward.values().all(|v| v.len() == 1) && back.values().all(|v| v.len() == 1)
        })
        .map(|k| k.to_string())
        .collect()
}

pub fn series(stats: &[MetricStat], metric: &str, x: &str, run_label: &dyn Fn(&str) -> String) -> Vec<MetricSeries> {
    type Line = (String, Vec<(f64, f64, Option<Interval>)>);
    let mut groups: BTreeMap<MetricKey, Line> = BTreeMap::new();
    let mut files: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
    for s in stats {
        files.entry(s.run_id.as_str()).or_default().insert(s.source.as_str());
    }
    let aliases = names_of(stats, metric, x);
    for s in stats.iter().filter(|s| s.metric == metric) {
        let Some(xv) = s.param_f64(x) else { continue };
        let mut others = s.params.clone();
        others.remove(x);
        others.retain(|k, _| !aliases.contains(k));
        let file = s.file_name().filter(|_| files.get(s.run_id.as_str()).is_some_and(|f| f.len() > 1));
        let key =
            MetricKey { run_id: s.run_id.clone(), file: file.map(String::from), params: metrics::params_key(&others) };
        let label = || {
            let name = match &key.file {
                Some(file) => format!("{}: {file}", run_label(&s.run_id)),
                None => run_label(&s.run_id),
            };
            let rest = metrics::params_label(&others);
            if rest.is_empty() {
                name
            } else {
                format!("{name} {rest}")
            }
        };
        let entry = groups.entry(key.clone()).or_insert_with(|| (label(), Vec::new()));
        entry.1.push((xv, s.median, s.ci));
    }
    let mut out: Vec<MetricSeries> = groups
        .into_iter()
        .map(|(key, (label, mut points))| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            MetricSeries { key, label, points }
        })
        .collect();
    // Ordered by name, as charts list them.
    out.sort_by(|a, b| a.label.cmp(&b.label));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::benches::Bench;

    fn stat(metric: &str, params: &[(&str, serde_json::Value)], median: f64) -> MetricStat {
        MetricStat {
            run_id: "r".into(),
            point: 0,
            bench: Bench::Exec.name().into(),
            device: "cpu".into(),
            source: "native".into(),
            metric: metric.into(),
            unit: "samples/s".into(),
            better: Better::Higher,
            params: params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            samples: 1,
            median,
            mean: median,
            min: median,
            max: median,
            std_dev: 0.0,
            peak: median,
            ci: None,
        }
    }

    #[test]
    fn a_parameter_that_only_names_x_does_not_split_its_line() {
        let model = |m: &str, p: i64, t: f64| stat("tflops", &[("model", m.into()), ("params_m", p.into())], t);
        let stats = [model("small", 124, 16.0), model("medium", 350, 45.0), model("large", 774, 123.0)];
        let lines = series(&stats, "tflops", "params_m", &|r| r.to_string());
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].points.len(), 3);
        // A parameter that takes two values at one x still splits.
        let batch = |b: i64, p: i64, t: f64| stat("tflops", &[("batch", b.into()), ("params_m", p.into())], t);
        let stats = [batch(8, 124, 16.0), batch(16, 124, 20.0), batch(8, 350, 45.0), batch(16, 350, 50.0)];
        assert_eq!(series(&stats, "tflops", "params_m", &|r| r.to_string()).len(), 2);
    }

    #[test]
    fn scaling_efficiency_is_throughput_over_n_times_one() {
        let s: Vec<MetricStat> = [(1, 100.0), (2, 190.0), (4, 340.0), (8, 560.0)]
            .iter()
            .map(|(g, t)| stat("samples_per_s", &[("gpus", (*g).into()), ("model", "7b".into())], *t))
            .collect();
        let rows = scaling(&s, "gpus");
        assert_eq!(rows.len(), 4);
        let eff: Vec<f64> = rows.iter().map(|r| r.efficiency).collect();
        assert_eq!(eff[0], 1.0);
        assert!((eff[1] - 0.95).abs() < 1e-12 && (eff[3] - 0.7).abs() < 1e-12, "{eff:?}");
        assert_eq!(rows[0].group, "model=7b");
        assert!(scaling(&s[..1], "gpus").is_empty(), "one N is no scaling");
    }

    #[test]
    fn series_split_by_other_params() {
        let s = vec![
            stat("tps", &[("batch", 1.into()), ("model", "a".into())], 1.0),
            stat("tps", &[("batch", 2.into()), ("model", "a".into())], 2.0),
            stat("tps", &[("batch", 1.into()), ("model", "b".into())], 3.0),
        ];
        assert_eq!(numeric_axes(&s, "tps"), vec!["batch".to_string()]);
        let lines = series(&s, "tps", "batch", &|r| r.to_string());
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].label, "r model=a");
        assert_eq!(lines[0].points.iter().map(|p| p.1).collect::<Vec<_>>(), vec![1.0, 2.0]);
    }
}
