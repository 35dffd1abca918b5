//! A group of runs as one line of a comparison: per size (or metric and
//! parameters) the median of its runs' medians, its bars the range of those
//! medians (the run-to-run spread); a group of one run keeps its median
//! and its 95 % interval.

use std::collections::BTreeMap;

use crate::analysis::compare::LoadedRun;
use crate::analysis::workload::MetricStat;
use crate::vocab::stats;

/// A median and its bars (an interval, or a range of run medians).
pub type Bars = Option<(f64, f64)>;
/// (size, median, bars) of one group's curve.
pub type GroupPoints = Vec<(f64, f64, Bars)>;
/// One run's curve: (size, median, its interval).
pub type RunPoints = Vec<(u64, f64, Bars)>;

/// Per size: the median of the runs' medians, and the range of the runs'
/// medians (several runs) or the one run's interval.
pub fn combine(runs: &[RunPoints]) -> GroupPoints {
    let mut by_size: BTreeMap<u64, Vec<(f64, Bars)>> = BTreeMap::new();
    for r in runs {
        for &(s, v, ci) in r {
            by_size.entry(s).or_default().push((v, ci));
        }
    }
    by_size
        .into_iter()
        .map(|(s, vs)| {
            if vs.len() == 1 {
                return (s as f64, vs[0].0, vs[0].1);
            }
            let mut xs: Vec<f64> = vs.iter().map(|v| v.0).collect();
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (s as f64, stats::median_unsorted(&mut xs), Some((lo, hi)))
        })
        .collect()
}

/// One group's metric statistics as one run's: per metric and parameters,
/// the median of its runs' medians, with the range of the runs' medians
/// (or the one run's interval), under the group's name.
pub fn group_metrics(name: &str, runs: &[Vec<MetricStat>]) -> Vec<MetricStat> {
    let mut by_key: BTreeMap<(String, crate::vocab::metrics::ParamsKey), Vec<&MetricStat>> = BTreeMap::new();
    for s in runs.iter().flatten() {
        by_key.entry((s.metric.clone(), crate::vocab::metrics::params_key(&s.params))).or_default().push(s);
    }
    by_key
        .into_values()
        .map(|ss| {
            let mut g = ss[0].clone();
            g.run_id = name.to_string();
            if ss.len() > 1 {
                let mut xs: Vec<f64> = ss.iter().map(|s| s.median).collect();
                g.median = stats::median_unsorted(&mut xs);
                g.ci = Some((
                    xs.iter().copied().fold(f64::INFINITY, f64::min),
                    xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ));
                g.samples = ss.iter().map(|s| s.samples).sum();
            }
            g
        })
        .collect()
}

/// How many of a group's runs measured each of its points (the repeats a
/// point's verdict rests on), fewest and most: a group of 9 runs of 3
/// benchmarks holds each point 3 times.
pub fn repeats_per_point(g: &[LoadedRun]) -> (usize, usize) {
    let mut count: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for r in g {
        let mut mine: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        for row in &r.rows {
            mine.insert(row.params.label());
        }
        for l in mine {
            *count.entry(l).or_default() += 1;
        }
    }
    let lo = count.values().copied().min().unwrap_or(0);
    (lo, count.values().copied().max().unwrap_or(0))
}

/// Each group's name: its first run's label (or id), with the repeats each
/// point rests on; made unique by the run id where two groups share a label.
pub fn group_names(groups: &[Vec<LoadedRun>]) -> Vec<String> {
    let base = |g: &Vec<LoadedRun>| {
        let m = &g[0].manifest;
        let name = m.label.clone().unwrap_or_else(|| m.run_id.clone());
        match repeats_per_point(g) {
            _ if g.len() < 2 => name,
            (_, 1) => name,
            (lo, hi) if lo == hi => format!("{name} ({lo} runs per point)"),
            (lo, hi) => format!("{name} ({lo}–{hi} runs per point)"),
        }
    };
    let names: Vec<String> = groups.iter().map(base).collect();
    names
        .iter()
        .zip(groups)
        .map(|(n, g)| if names.iter().filter(|x| *x == n).count() > 1 { g[0].id.clone() } else { n.clone() })
        .collect()
}

/// Groups of runs read for a comparison, each run read (and verified)
/// once, with each group's name, its first run's manifest, and the catalog
/// of those first runs (whose rows, which card, which spec, by the rule
/// every report uses).
pub struct Loaded {
    pub groups: Vec<Vec<LoadedRun>>,
    pub names: Vec<String>,
    pub firsts: Vec<crate::archive::manifest::Manifest>,
    pub catalog: crate::analysis::Catalog,
}

/// Read `groups` (the first the baseline) against the specs of their
/// archive (`specs/` beside `runs/`, over the built-in ones).
pub fn load(groups: &[Vec<crate::archive::RunDir>]) -> crate::error::Result<Loaded> {
    let root = groups.first().and_then(|g| g.first()).and_then(|r| Some(r.path.parent()?.parent()?.to_path_buf()));
    let book = match root {
        Some(root) => crate::analysis::SpecBook::load(&root)?,
        None => crate::analysis::SpecBook::builtin(),
    };
    let groups: Vec<Vec<LoadedRun>> = groups
        .iter()
        .map(|g| g.iter().map(LoadedRun::read).collect::<crate::error::Result<Vec<_>>>())
        .collect::<crate::error::Result<_>>()?;
    let names = group_names(&groups);
    let firsts: Vec<crate::archive::manifest::Manifest> = groups.iter().map(|g| g[0].manifest.clone()).collect();
    let mut first_points = Vec::new();
    for g in &groups {
        first_points.extend(crate::analysis::point_stats(polars::prelude::IntoLazy::lazy(g[0].df.clone()))?);
    }
    let catalog = crate::analysis::Catalog::build(&first_points, &firsts, &book, None);
    Ok(Loaded { groups, names, firsts, catalog })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_is_the_median_of_its_runs_with_their_range() {
        let runs =
            vec![vec![(1, 10.0, Some((9.0, 11.0))), (2, 20.0, None)], vec![(1, 12.0, None)], vec![(1, 11.0, None)]];
        let g = combine(&runs);
        assert_eq!(g, vec![(1.0, 11.0, Some((10.0, 12.0))), (2.0, 20.0, None)]);
        assert_eq!(combine(&runs[..1])[0], (1.0, 10.0, Some((9.0, 11.0))));
    }
}
