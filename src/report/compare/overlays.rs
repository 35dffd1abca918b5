//! The groups overlaid, one line per group: a rate-against-size chart per
//! benchmark (per curve where a benchmark has more curves than a chart
//! reads well with), and a chart per named metric against its parameter.
//! A group of several runs is drawn as the median of its runs' medians,
//! its bars the lowest and highest run median (the run-to-run spread); a
//! group of one run as its median with its 95 % interval. Each chart goes
//! in its benchmark's family section ([`crate::vocab::benches::CompareFamily`]).

use std::collections::{BTreeMap, BTreeSet};

use polars::prelude::IntoLazy;

use super::ChartRef;
use crate::analysis::compare::groups::{combine, group_metrics};
use crate::analysis::compare::LoadedRun;
use crate::analysis::{point_stats, Curve};
use crate::error::Result;
use crate::plot::{bandwidth_chart, Chart, Line, MetricChart};
use crate::vocab::benches::CompareFamily as Family;

/// Lines a chart holds before a benchmark is drawn one curve per chart.
const MAX_LINES: usize = 8;

/// Every overlay chart, with the family section it belongs to.
pub fn overlay_charts(
    groups: &[Vec<LoadedRun>],
    names: &[String],
    charts: &mut Vec<Box<dyn Chart>>,
) -> Result<Vec<(Family, ChartRef)>> {
    // Per group: its runs' curves, and its metrics as one run's.
    let mut group_curves: Vec<BTreeMap<(String, String), Vec<Curve>>> = Vec::new();
    let mut metrics = Vec::new();
    for (g, name) in groups.iter().zip(names) {
        let mut by_curve: BTreeMap<(String, String), Vec<Curve>> = BTreeMap::new();
        let mut run_metrics = Vec::new();
        for r in g {
            // The analysis' series (no catalog: a comparison holds no
            // roofline), joined across runs by bench and series name.
            for s in crate::analysis::series::series_of(&point_stats(r.df.clone().lazy())?, |_| None) {
                by_curve.entry((s.bench.clone(), s.name().to_string())).or_default().push(s.curve);
            }
            run_metrics.push(crate::analysis::workload::metric_stats(&r.df)?);
        }
        group_curves.push(by_curve);
        metrics.extend(group_metrics(name, &run_metrics));
    }
    // Curves two groups or more measured: those the comparisons are about.
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for g in &group_curves {
        for k in g.keys() {
            *seen.entry(k.clone()).or_default() += 1;
        }
    }
    let shared: BTreeSet<(String, String)> = seen.into_iter().filter(|(_, n)| *n >= 2).map(|(k, _)| k).collect();
    let benches: BTreeSet<&str> = shared.iter().map(|(b, _)| b.as_str()).collect();
    let mut out = Vec::new();
    let several_runs = groups.iter().any(|g| g.len() > 1);
    // What the bars are: the caption's words, and the legend's shorter ones.
    let (bars, bars_legend) = if several_runs {
        (
            "bars: the lowest and highest run median of a group of runs, the rerun 95 % interval of a single run",
            "bars: lowest to highest run median",
        )
    } else {
        ("bars: rerun 95 % intervals", "bars: rerun 95 % interval")
    };
    for bench in benches {
        let labels: Vec<&str> = shared.iter().filter(|(b, _)| b == bench).map(|(_, l)| l.as_str()).collect();
        let lines_needed = labels.len() * groups.len();
        // One chart for the benchmark, or one per curve when that is too many lines.
        let charts_of: Vec<Vec<&str>> =
            if lines_needed <= MAX_LINES { vec![labels.clone()] } else { labels.iter().map(|l| vec![*l]).collect() };
        for (k, these) in charts_of.iter().enumerate() {
            let mut lines = Vec::new();
            let mut drawn: Vec<&str> = Vec::new();
            let mut axis = "GB/s";
            for (gi, g) in group_curves.iter().enumerate() {
                for label in these {
                    let Some(cs) = g.get(&(bench.to_string(), label.to_string())) else { continue };
                    axis = cs[0].rate_axis();
                    let runs: Vec<_> = cs
                        .iter()
                        .map(|c| c.rate_with_ci().into_iter().map(|(s, r, ci)| (s, r, ci.bounded())).collect())
                        .collect();
                    let name = if these.len() > 1 { format!("{}: {label}", names[gi]) } else { names[gi].clone() };
                    lines.push(Line::with_errors(name, combine(&runs)).of(names[gi].as_str(), *label));
                    if !drawn.contains(&names[gi].as_str()) {
                        drawn.push(names[gi].as_str());
                    }
                }
            }
            let id = if charts_of.len() == 1 { format!("overlay-{bench}") } else { format!("overlay-{bench}-{k}") };
            let what = if these.len() == 1 { these[0].to_string() } else { bench.to_string() };
            charts.push(Box::new(bandwidth_chart(&id, &format!("{what}: {}", drawn.join(" vs ")), axis, lines, None)));
            out.push((
                Family::of(bench),
                ChartRef {
                    id: id.clone(),
                    alt: format!("{what} rate against size, one line per group"),
                    caption: format!("{what}: median rate per size of {}; {axis}; {bars}.", drawn.join(", ")),
                },
            ));
        }
    }
    // Only the charts are read here: no GPU peaks to set figures against.
    if let Some(w) = crate::report::context::workload_section(&metrics, &[]) {
        for c in &w.charts {
            // Only metrics two groups or more reported.
            let groups_with: BTreeSet<&str> =
                metrics.iter().filter(|s| s.metric == c.metric).map(|s| s.run_id.as_str()).collect();
            if groups_with.len() < 2 {
                continue;
            }
            let id = format!("overlay-{}", c.name);
            let bench = metrics.iter().find(|s| s.metric == c.metric).map_or("exec", |s| s.bench.as_str());
            let mut chart = MetricChart::of(&id, &c.title, &metrics, &c.metric, &c.x, &|g| g.to_string());
            chart.bars_note = bars_legend.into();
            charts.push(Box::new(chart));
            out.push((
                Family::of(bench),
                ChartRef {
                    id: id.clone(),
                    alt: c.title.clone(),
                    caption: format!("{}: the median of each group, one line per group; {bars}.", c.title),
                },
            ));
        }
    }
    Ok(out)
}
