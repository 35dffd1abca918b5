//! Peer matrices as heatmaps: nvbandwidth's GPU(row) → GPU(column) tables
//! and benchbook's own peer copies at their largest size, one cell per
//! ordered pair. A matrix shows every pair at once, where a chart of 56
//! pair curves shows none of them. Template: `sections/matrix.md`.

use crate::vocab::benches::Bench;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::analysis::specs::LinkLine;
use crate::analysis::PointStat;
use crate::plot::HeatmapChart;
use crate::vocab::units::{format_bytes, format_sig3};

#[derive(Debug, Clone, Serialize)]
pub struct MatrixView {
    pub title: String,
    /// The heatmap chart (`matrix-1`).
    pub chart: String,
    pub unit: String,
    /// How the cells were read, e.g. the size they are taken at.
    pub note: String,
    pub pairs: usize,
    pub min: String,
    pub max: String,
    pub source: String,
    /// The run its cells came from.
    pub run_id: String,
    /// The range as a share of the GPU link's published figure, when one
    /// is known (`82–83 % of NVLink 4, 8 links one way: 450 GB/s`).
    pub link: Option<String>,
}

/// The sort key of a GPU name: numbers numerically (`2` before `10`),
/// then names.
pub(super) fn gpu_key(name: &str) -> (u64, String) {
    (name.parse::<u64>().unwrap_or(u64::MAX), name.to_string())
}

fn order(names: BTreeSet<String>) -> Vec<String> {
    let mut v: Vec<String> = names.into_iter().collect();
    v.sort_by_key(|n| gpu_key(n));
    v
}

/// The matrices of `stats` and their heatmaps, named `matrix-N`; a
/// bandwidth matrix is held against `pair`, the GPU's link to one peer,
/// where its spec names one (seed 000's roofline).
pub fn matrices(stats: &[PointStat], pair: Option<&LinkLine>) -> (Vec<MatrixView>, Vec<HeatmapChart>) {
    // (run, title, unit, note, source, whether the row pulls) → pair → value.
    type Key = (String, String, String, String, String, bool);
    let mut groups: BTreeMap<Key, BTreeMap<(String, String), f64>> = BTreeMap::new();
    let mut largest: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for p in stats.iter().filter(|p| p.bench == Bench::MemcpyPeer) {
        let k = (p.op.clone(), p.method.clone().unwrap_or_default(), p.variant.clone().unwrap_or_default());
        let e = largest.entry(k).or_insert(0);
        *e = (*e).max(p.size_bytes.unwrap_or(0));
    }
    for p in stats {
        let Some((from, to)) = p.peer.as_deref().and_then(|q| q.split_once("->")) else { continue };
        let source = p.source.clone().unwrap_or_else(|| "measured by benchbook".into());
        let run = p.run_id.clone();
        let pulls = crate::vocab::ops::pulls(&p.bench, &p.op);
        let (key, value) = match Bench::of(&p.bench) {
            Some(Bench::Nvbandwidth) if p.variant.as_deref().is_some_and(|v| v.contains("latency")) => (
                (run, p.op.clone(), "µs".to_string(), "latency, as nvbandwidth printed it".to_string(), source, pulls),
                p.median_seconds * 1e6,
            ),
            Some(Bench::Nvbandwidth) => match p.gbps_copied {
                Some(g) => {
                    ((run, p.op.clone(), "GB/s".into(), "bytes copied once, as nvbandwidth counts".into(), source, pulls), g)
                }
                None => continue,
            },
            Some(Bench::MemcpyPeer) => {
                let k = (p.op.clone(), p.method.clone().unwrap_or_default(), p.variant.clone().unwrap_or_default());
                if p.size_bytes != largest.get(&k).copied() {
                    continue;
                }
                let Some(g) = p.gbps_copied else { continue };
                let title = format!("memcpy-peer {} {} {}", k.0, k.1, k.2).trim().to_string();
                let note =
                    format!("at {}, the largest size; bytes copied once", format_bytes(p.size_bytes.unwrap_or(0)));
                ((run, title, "GB/s".into(), note, source, pulls), g)
            }
            _ => continue,
        };
        groups.entry(key).or_default().insert((from.to_string(), to.to_string()), value);
    }
    let mut views = Vec::new();
    let mut charts = Vec::new();
    for (i, ((run_id, title, unit, note, source, reads), cells)) in
        groups.into_iter().filter(|(_, c)| c.len() >= 2).enumerate()
    {
        let rows = order(cells.keys().map(|k| k.0.clone()).collect());
        let cols = order(cells.keys().map(|k| k.1.clone()).collect());
        let (lo, hi) = cells.values().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(*v), b.max(*v)));
        let name = format!("matrix-{}", i + 1);
        let line = pair.filter(|_| unit == "GB/s");
        let link = line.map(|l| format!("{:.0}–{:.0} % of {}", lo / l.gbps * 100.0, hi / l.gbps * 100.0, l.label));
        charts.push(HeatmapChart {
            name: name.clone(),
            title: if reads {
                format!("{title}: GPU (row) reads GPU (column)")
            } else {
                format!("{title}: GPU (row) → GPU (column)")
            },
            unit: match line {
                Some(l) => format!("{unit}, {note}; red tick: {}", l.label),
                None => format!("{unit}, {note}"),
            },
            link: line.map(|l| l.gbps),
            row_label: if reads { "to GPU (reads)" } else { "from GPU" }.into(),
            col_label: if reads { "from GPU (read)" } else { "to GPU" }.into(),
            cells: rows
                .iter()
                .map(|r| cols.iter().map(|c| cells.get(&(r.clone(), c.clone())).copied()).collect())
                .collect(),
            rows,
            cols,
        });
        views.push(MatrixView {
            title,
            chart: name.clone(),
            unit,
            note,
            pairs: cells.len(),
            min: format_sig3(lo),
            max: format_sig3(hi),
            source,
            run_id,
            link,
        });
    }
    (views, charts)
}
/// A headline for a peer matrix: every GPU pair's bandwidth at once, the
/// range they span and its share of the GPU's link (seed 000's answer,
/// which leads a report that has one).
#[derive(Debug, Clone, Serialize)]
pub struct MatrixKey {
    pub subject: String,
    pub run: String,
    /// Whether another tool printed the cells rather than benchbook.
    pub imported: bool,
    pub pairs: usize,
    pub min: String,
    pub max: String,
    /// How the cells count and at which size (`bytes copied once, as
    /// nvbandwidth counts`).
    pub note: String,
    /// The range as a share of the GPU's link to one peer.
    pub link: Option<String>,
}

/// The matrices' headlines: bandwidth ones only (a latency matrix has no
/// figure to be held against).
pub fn of_matrices(views: &[MatrixView], run_name: &dyn Fn(&str) -> String) -> Vec<MatrixKey> {
    views
        .iter()
        .filter(|m| m.unit == "GB/s")
        .map(|m| MatrixKey {
            subject: format!("GPU peer copies, {}", m.title),
            run: run_name(&m.run_id),
            imported: crate::vocab::source::RowOrigin::parse(Some(&m.source)) != crate::vocab::source::RowOrigin::Native,
            pairs: m.pairs,
            min: m.min.clone(),
            max: m.max.clone(),
            note: m.note.clone(),
            link: m.link.clone(),
        })
        .collect()
}
