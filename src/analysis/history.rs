//! History: each node's run medians of a point over time (its memcpy at
//! 64 MiB, night after night), with each median's 95 % interval, and the
//! change points of every series ([`super::changepoints`]), each with its
//! run, date, before and after levels and significance.

use std::collections::BTreeMap;

use polars::prelude::*;
use serde::Serialize;

use super::changepoints::{change_points, ChangeRule};
use crate::error::Result;

/// One run's median of the point.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryRun {
    pub run_id: String,
    pub started_at: String,
    /// GB/s of the bytes copied once where the point counts bytes, else
    /// operations per second.
    pub value: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// A change in a series: from run `run_id` on, the level moved.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryChange {
    pub index: usize,
    pub run_id: String,
    pub started_at: String,
    pub before: f64,
    pub after: f64,
    /// `after / before - 1`.
    pub change: f64,
    pub p_value: f64,
}

impl std::fmt::Display for HistoryChange {
    /// `2026-11-20 (RUN): 24.1 → 21.9 (−9.1 %, p 2.0e-4)`: what `history`
    /// prints and a site's pages show, unescaped.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::vocab::units::format_sig3;
        write!(
            f,
            "{} ({}): {} → {} ({:+.1} %, p {:.1e})",
            self.started_at.get(..10).unwrap_or(&self.started_at),
            self.run_id,
            format_sig3(self.before),
            format_sig3(self.after),
            100.0 * self.change,
            self.p_value
        )
    }
}

impl ChangeRule {
    /// The rule in words: `E-divisive means, pooled t-test, p < 0.001, at least 3.0 %, MBIC penalty 3 ln n`.
    pub fn describe(&self) -> String {
        format!(
            "E-divisive means, pooled t-test, p < {}, at least {:.1} %, MBIC penalty {} ln n",
            self.alpha,
            100.0 * self.min_effect,
            self.penalty
        )
    }
}

/// One node's series of one point.
#[derive(Debug, Clone, Serialize)]
pub struct HistorySeries {
    pub node: String,
    pub point: String,
    pub unit: String,
    pub runs: Vec<HistoryRun>,
    pub changes: Vec<HistoryChange>,
}

/// The series of every (node, point) in `rows` (an [`crate::archive::Archive::scan`]
/// frame, whose `runs` gives each run's node and start), oldest run first,
/// with their change points under `rule`. `bench` keeps one benchmark.
pub fn history(
    rows: LazyFrame,
    runs: &DataFrame,
    bench: Option<&str>,
    rule: &ChangeRule,
) -> Result<Vec<HistorySeries>> {
    let strs = |name: &str| crate::archive::schema::columns::strings(runs, name);
    let (ids, nodes, starts) = (strs("run_id")?, strs("node")?, strs("started_at")?);
    let facts: BTreeMap<String, (String, String)> = ids
        .into_iter()
        .zip(nodes.into_iter().zip(starts))
        .filter_map(|(id, (n, s))| Some((id?, (n.unwrap_or_default(), s.unwrap_or_default()))))
        .collect();
    let rows = match bench {
        Some(b) => rows.filter(col("bench").eq(lit(b.to_string()))),
        None => rows,
    };
    let stats = super::point_stats(rows)?;
    let mut points = Vec::new();
    for p in &stats {
        let Some((node, started_at)) = facts.get(&p.run_id) else { continue };
        if let Some(point) = HistoryPoint::of(p, node, started_at) {
            points.push(point);
        }
    }
    Ok(series_of_points(points, rule))
}

/// One run's median of one point on one node, as a series holds it: what
/// [`series_of_points`] groups (and a static site caches per run).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct HistoryPoint {
    pub node: String,
    /// The point's label ([`crate::vocab::rows::Point::label`]).
    pub point: String,
    pub unit: String,
    pub run_id: String,
    pub started_at: String,
    pub value: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

impl HistoryPoint {
    /// A point's median as a rate: GB/s of the bytes copied once where it
    /// counts bytes, else operations per second, with its rerun interval.
    pub fn of(p: &super::PointStat, node: &str, started_at: &str) -> Option<HistoryPoint> {
        let (value, unit, low, high) = match (p.gbps_copied, p.params().bytes_copied) {
            (Some(g), Some(bytes)) => {
                let rate = |s: f64| bytes as f64 / s / 1e9;
                (g, "GB/s (bytes copied once)", p.ci_high_seconds.map(rate), p.ci_low_seconds.map(rate))
            }
            _ => (
                1.0 / p.median_seconds,
                "operations/s",
                p.ci_high_seconds.map(|s| 1.0 / s),
                p.ci_low_seconds.map(|s| 1.0 / s),
            ),
        };
        value.is_finite().then(|| HistoryPoint {
            node: node.into(),
            point: p.params().label(),
            unit: unit.into(),
            run_id: p.run_id.clone(),
            started_at: started_at.into(),
            value,
            low,
            high,
        })
    }
}

/// The series of every (node, point) among `points`, oldest run first,
/// with their change points under `rule`.
pub fn series_of_points(points: Vec<HistoryPoint>, rule: &ChangeRule) -> Vec<HistorySeries> {
    let mut series: BTreeMap<(String, String), (String, Vec<HistoryRun>)> = BTreeMap::new();
    for h in points {
        series.entry((h.node, h.point)).or_insert_with(|| (h.unit, Vec::new())).1.push(HistoryRun {
            run_id: h.run_id,
            started_at: h.started_at,
            value: h.value,
            low: h.low,
            high: h.high,
        });
    }
    series
        .into_iter()
        .map(|((node, point), (unit, mut runs))| {
            runs.sort_by(|a, b| (&a.started_at, &a.run_id).cmp(&(&b.started_at, &b.run_id)));
            let values: Vec<f64> = runs.iter().map(|r| r.value).collect();
            let changes = change_points(&values, rule)
                .into_iter()
                .map(|c| HistoryChange {
                    index: c.at,
                    run_id: runs[c.at].run_id.clone(),
                    started_at: runs[c.at].started_at.clone(),
                    before: c.mean_before,
                    after: c.mean_after,
                    change: c.change,
                    p_value: c.p_value,
                })
                .collect();
            HistorySeries { node, point, unit, runs, changes }
        })
        .collect()
}
